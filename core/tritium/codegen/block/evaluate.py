"""Computing one chunk of a tensor: the ops the block code generator fuses into loops.

Every op here is "chunk-computable": the chunk of its result at a position needs only chunks of
its operands (at the same or a re-indexed position), so a whole group of such ops runs as one loop
over chunks and no intermediate tensor touches memory unless it is used again later. Tensors that
do live in memory (``Buffer``) are read a chunk at a time.

Whether a chunk of pointers is read or written with one vector access, one scalar access or a
gather/scatter, and how aligned it is, comes from core's axis-info analysis (``self.axis``, with the
rules of ``tritium.codegen.runs``), as on GPUs: ``tl.multiple_of``/``tl.max_contiguous`` hints and
the integer specialisation count. The address of a vector access is the chunk's first lane,
computed as scalar code where it takes arithmetic only (``first_lane``).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Sequence

from llvmlite import ir as ll

from ...errors import TritiumError
from ...ir import tile
from ...ir.mlir import ir
from ...passes.axis_info import AxisInfo
from .. import elementwise, intrinsics
from ..math import MathHooks
from ..runs import constant_run, contiguous_run, run_alignment
from ..types import const, llvm_type, memory_type, size_in_bytes, vector_of
from . import reshape
from .chunks import I32, Chunk, Index, as_value, index_key, linear_offset, ramp, uniform_chunk
from .layout import chunk_width

BUFFER_ALIGN = 64


@dataclasses.dataclass(frozen=True)
class Buffer:
    """A tensor held in memory, row-major, at ``ptr`` (private stack memory or a constant)."""

    ptr: ll.Value


class Virtual:
    """A tensor computed chunk by chunk where it is used; it never exists as a whole."""


VIRTUAL = Virtual()


def cpu_type(t: ir.Type) -> ll.Type:
    """LLVM type of a scalar MLIR type in whole-block code (one flat address space)."""
    return llvm_type(t, lambda addrspace: 0)


def shape_of(v: ir.Value) -> list[int]:
    return list(v.type.shape)


def is_tensor(v: ir.Value) -> bool:
    return isinstance(v.type, ir.RankedTensorType)


class RowBounds:
    """The bounds compares a row's loop over chunks evaluates (``ChunkEvaluator.row_bounds``), and
    which of them one test at the row's start decides: a compare of the loop's own shape, always
    evaluated in the loop's row (``lead``), of a range contiguous along the whole row with a bound
    constant along it, both computed by arithmetic alone. It then holds on every lane of the row
    exactly when it holds at the row's two ends."""

    def __init__(self, shape: tuple[int, ...], lead: tuple[Index, ...]):
        self.shape, self.lead = shape, tuple(lead)
        self.found: dict[ir.Value, tuple[ir.Value, ir.Value, tuple[str, str]]] = {}
        self.mixed: set[ir.Value] = set()  # compares also evaluated where one test cannot decide them

    def record(self, result: ir.Value, ranged: ir.Value, bound: ir.Value, predicate: tuple[str, str],
               idx: Sequence[Index], whole_row: bool) -> None:
        if whole_row and tuple(shape_of(result)) == self.shape and index_key(idx[:-1]) == index_key(self.lead):
            self.found[result] = (ranged, bound, predicate)
        else:
            self.mixed.add(result)

    def decided(self) -> dict[ir.Value, tuple[ir.Value, ir.Value, tuple[str, str]]]:
        return {r: found for r, found in self.found.items() if r not in self.mixed}


class ChunkEvaluator:
    """Evaluates tensors chunk by chunk; subclassed by the kernel code generator."""

    b: ll.IRBuilder
    env: dict[ir.Value, Any]
    hooks: MathHooks
    guard: Any  # ``bounds.BoundsChecks.guard``: the mask an access runs under
    axis: dict[ir.Value, AxisInfo]  # the module's axis info (``tritium.passes.axis_info.analyze``)

    def __init__(self) -> None:
        self._memo: list[dict] = [{}]
        self._arithmetic: dict[ir.Value, bool] = {}
        #: compares known to hold on every lane where the loop being emitted runs (``versioned_loop``)
        self.held: frozenset[ir.Value] = frozenset()
        #: while not None, the bounds compares the loop being emitted evaluates (``RowBounds``)
        self.row_bounds: RowBounds | None = None

    # -- scopes ----------------------------------------------------------------------------------
    def push_scope(self) -> None:
        """Chunks computed from now on are valid only in the LLVM blocks emitted until ``pop_scope``."""
        self._memo.append({})

    def pop_scope(self) -> None:
        self._memo.pop()

    # -- evaluation ------------------------------------------------------------------------------
    def eval(self, v: ir.Value, idx: Sequence[Index], w: int) -> Chunk:
        """The chunk of ``v`` at position ``idx`` (``w`` lanes from its last entry)."""
        entry = self.env[v]
        if not is_tensor(v):
            return uniform_chunk(self.b, entry, w)
        key = (v, index_key(idx), w)
        for memo in reversed(self._memo):
            hit = memo.get(key)
            if hit is not None:
                return hit
        if isinstance(entry, Buffer):
            chunk = self.load_buffer(entry, v, idx, w)
        elif v in self.held:
            chunk = uniform_chunk(self.b, ll.Constant(ll.IntType(1), 1), w)
        else:
            op = v.owner
            name = op.name
            fn = _EVALUATORS.get(name)
            chunk = fn(self, op, idx, w) if fn else self._elementwise(op, idx, w)
        self._memo[-1][key] = chunk
        return chunk

    def _elementwise(self, op: ir.Operation, idx: Sequence[Index], w: int) -> Chunk:
        name = op.name
        ins = [self.eval(o, idx, w) for o in op.operands]
        elem = cpu_type(op.results[0].type.element_type)
        attrs = {name: op.attributes[name] for name in op.attributes}
        if all(c.uniform is not None for c in ins):
            scalar = elementwise.emit(self.b, name, [c.uniform for c in ins], elem, attrs, self.hooks)
            return uniform_chunk(self.b, scalar, w)
        vals = [c.vec for c in ins]
        if name == "arith.select" and ins[0].uniform is not None:
            vals[0] = ins[0].uniform  # a scalar condition selects whole vectors
        chunk = Chunk(elementwise.emit(self.b, name, vals, vector_of(elem, w), attrs, self.hooks), w)
        if name == "arith.cmpi":
            chunk.all_on = self._range_compare_all_on(op, ins, idx, w)
            if self.row_bounds is not None and chunk.all_on is None:
                self.row_bounds.mixed.add(op.results[0])
        elif name == "arith.andi" and elem == ll.IntType(1):
            both = [c.all_on if c.all_on is not None else c.uniform for c in ins]
            if None not in both:
                chunk.all_on = self.b.and_(*both)
        return chunk

    def _range_compare_all_on(self, op: ir.Operation, ins: list[Chunk], idx: Sequence[Index], w: int) -> ll.Value | None:
        """For a chunk of ``range <, <=, >, >= bound`` (the range contiguous by the axis info, the
        bound the same in every lane), the scalar test that every lane holds: both end lanes do and
        the range does not wrap. A bounds mask's chunk then branches on scalar code (``all_on``)."""
        predicate = _ORDER_PREDICATES.get(ir.IntegerAttr(op.attributes["predicate"]).value)
        if predicate is None:
            return None
        operands = list(op.operands)
        ranged = [ins[k].uniform is None and (info := self.axis.get(operands[k])) is not None
                  and contiguous_run(info, -1, w) for k in (0, 1)]
        if ranged == [False, True]:  # bound > range: range < bound
            operands, ins, predicate = operands[::-1], ins[::-1], _SWAPPED[predicate]
        elif ranged != [True, False]:
            return None
        if ins[1].uniform is None:  # a bound that differs by lane (fuzz seed 1016: a boolean < a range)
            return None
        if self.row_bounds is not None:
            self.row_bounds.record(op.results[0], operands[0], operands[1], predicate, idx,
                                   self._decided_per_row(operands[0], operands[1]))
        return self._run_holds(predicate, self.first_lane(operands[0], idx, ins[0]), w, ins[1].uniform)

    def _decided_per_row(self, ranged: ir.Value, bound: ir.Value) -> bool:
        """Whether ``ranged`` is one contiguous run and ``bound`` one value along the whole last axis,
        both computed by arithmetic alone, so that a compare of them holds on a whole row exactly
        when it holds at the row's two ends."""
        length = shape_of(ranged)[-1]
        bound_info = self.axis.get(bound) if is_tensor(bound) else None
        return contiguous_run(self.axis[ranged], -1, length) and self.arithmetic(ranged) and \
            self.arithmetic(bound) and (not is_tensor(bound) or (bound_info is not None and
                                                                   constant_run(bound_info, -1, length)))

    def row_in_bounds(self, row_bounds: RowBounds, w: int) -> ll.Value | None:
        """One ``i1`` that holds when every compare ``row_bounds`` decides holds on every lane of its
        row; None when there is none, or a bound is not one scalar there."""
        held, idx = [], row_bounds.lead + (0,)
        for ranged, bound, predicate in row_bounds.decided().values():
            first_chunk, bound_chunk = self.eval(ranged, idx, w), self.eval(bound, idx, w)
            if bound_chunk.uniform is None:
                return None
            first = self.first_lane(ranged, idx, first_chunk)
            held.append(self._run_holds(predicate, first, shape_of(ranged)[-1], bound_chunk.uniform))
        return functools.reduce(self.b.and_, held) if held else None

    def _run_holds(self, predicate: tuple[str, str], first: ll.Value, length: int, bound: ll.Value) -> ll.Value:
        """``first + k  <predicate>  bound`` for every k below ``length``: both ends hold and the run
        does not wrap."""
        b = self.b
        last = b.add(first, ll.Constant(first.type, length - 1))
        compare = b.icmp_signed if predicate[0] == "s" else b.icmp_unsigned
        ends = b.and_(compare(predicate[1], first, bound), compare(predicate[1], last, bound))
        return b.and_(ends, compare("<=", first, last))

    def _constant(self, op, idx, w):
        attr = ir.DenseElementsAttr(op.attributes["value"])
        return uniform_chunk(self.b, scalar_constant(attr.get_splat_value(), attr.type.element_type), w)

    def _make_range(self, op, idx, w):
        start = ir.IntegerAttr(op.attributes["start"]).value
        first = idx[-1] + start if isinstance(idx[-1], int) else self.b.add(idx[-1], ll.Constant(I32, start))
        return ramp(self.b, as_value(first), w)

    def _splat(self, op, idx, w):
        return uniform_chunk(self.b, self.env[op.operands[0]], w)

    def _broadcast(self, op, idx, w):
        src = op.operands[0]
        src_shape, res_shape = shape_of(src), shape_of(op.results[0])
        src_idx = tuple(0 if s == 1 else i for i, s in zip(idx, src_shape))
        if src_shape[-1] == 1 and res_shape[-1] != 1:
            return uniform_chunk(self.b, self.eval(src, src_idx, 1).vec, w)
        return self.eval(src, src_idx, w)

    def _expand_dims(self, op, idx, w):
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        return self.eval(op.operands[0], tuple(idx[:axis]) + tuple(idx[axis + 1:]), w)

    def _convert_layout(self, op, idx, w):
        return self.eval(op.operands[0], idx, w)

    def _addptr(self, op, idx, w):
        ptr, off = (self.eval(o, idx, w) for o in op.operands)
        pointee = self.pointee(op.results[0])
        b = self.b
        if ptr.uniform is not None and off.uniform is not None:
            return uniform_chunk(b, b.gep(ptr.uniform, [off.uniform], source_etype=pointee), w)
        vec = b.gep(ptr.vec, [off.vec], source_etype=pointee)
        vec.type = ptr.vec.type
        return Chunk(vec, w)

    def _load(self, op, idx, w):
        view = op.opview
        ptr = self.eval(view.ptr, idx, w)
        mask = self.eval(view.mask, idx, w) if view.mask is not None else None
        other = self.eval(view.other, idx, w) if view.other is not None else None
        mask = self.guard(op, view.ptr, ptr, mask, self.pointee(view.ptr), w, idx)
        chunk = self.load_through(ptr, mask, other, self.pointee(view.ptr), w, (view.ptr, idx))
        elem = cpu_type(op.results[0].type.element_type)
        if elem != ll.IntType(1):
            return chunk
        if chunk.uniform is not None:
            return uniform_chunk(self.b, self.from_memory(chunk.uniform, elem), w)
        return Chunk(self.from_memory(chunk.vec, elem), w)

    # -- memory ----------------------------------------------------------------------------------
    def first_lane(self, v: ir.Value, idx: Sequence[Index], chunk: Chunk) -> ll.Value:
        """Lane 0 of ``chunk`` (``v`` at ``idx``) as a scalar: ``v`` computed at width 1 where that
        takes arithmetic only, so an address is scalar code; else extracted from the vector."""
        if chunk.uniform is not None:
            return chunk.uniform
        if self.arithmetic(v):
            return self.eval(v, idx, 1).vec
        return self.b.extract_element(chunk.vec, ll.Constant(I32, 0))

    def arithmetic(self, v: ir.Value) -> bool:
        """Whether ``v`` is computed from scalars, ranges and arithmetic alone (no load, no buffer)."""
        if not is_tensor(v):
            return True
        known = self._arithmetic.get(v)
        if known is None:
            known = self.env.get(v) is VIRTUAL and isinstance(v, ir.OpResult) and \
                v.owner.name != "tile.load" and all(self.arithmetic(o) for o in v.owner.operands)
            self._arithmetic[v] = known
        return known

    def vector_access(self, at: tuple[ir.Value, Sequence[Index]] | None, ptr: Chunk, mem: ll.Type,
                      w: int) -> tuple[ll.Value, int] | None:
        """The first address and its alignment when the chunk ``ptr`` (of the pointers ``at[0]`` at
        position ``at[1]``) is ``w`` contiguous elements by the axis info; None when it is not."""
        info = self.axis.get(at[0]) if at is not None else None
        if info is None or not contiguous_run(info, -1, w):
            return None
        return self.first_lane(*at, ptr), run_alignment(info, -1, w, size_in_bytes(mem))

    def uniform_access(self, at: tuple[ir.Value, Sequence[Index]] | None, ptr: Chunk, w: int) -> ll.Value | None:
        """The address every lane of the chunk ``ptr`` holds, when they are equal (see ``vector_access``)."""
        if ptr.uniform is not None:
            return ptr.uniform
        info = self.axis.get(at[0]) if at is not None else None
        return self.first_lane(*at, ptr) if info is not None and constant_run(info, -1, w) else None

    def pointee(self, v: ir.Value) -> ll.Type:
        """Memory type of what a (tensor of) pointer(s) points to."""
        t = v.type.element_type if is_tensor(v) else v.type
        return memory_type(cpu_type(tile.pointee(t)))

    def load_through(self, ptr: Chunk, mask: Chunk | None, other: Chunk | None, mem: ll.Type,
                     w: int, at: tuple[ir.Value, Sequence[Index]] | None = None) -> Chunk:
        """``tile.load`` of one chunk: one scalar load when the lanes are equal and unmasked, a
        vector load when they are contiguous (``at``: see ``vector_access``), else a gather."""
        b = self.b
        align = size_in_bytes(mem)
        vty = vector_of(mem, w)
        if mask is not None and mask.uniform is not None and _is_true(mask.uniform):
            mask = None
        if w == 1:
            value = b.load(ptr.vec, typ=mem, align=align) if mask is None else \
                self._masked_scalar_load(ptr.vec, mask.vec, other, mem)
            return Chunk(value, 1, uniform=value)
        uniform = self.uniform_access(at, ptr, w) if mask is None else None
        if uniform is not None:
            return uniform_chunk(b, b.load(uniform, typ=mem, align=align), w)
        passthru = other.vec if other is not None else const(vty, 0 if isinstance(mem, ll.IntType) else 0.0)
        if isinstance(mem, ll.IntType) and other is not None and other.vec.type != vty:
            passthru = b.zext(other.vec, vty)  # i1 values in byte-sized memory
        vector = self.vector_access(at, ptr, mem, w)
        if vector is not None:
            first, align = vector
            if mask is None:
                return Chunk(b.load(first, typ=vty, align=align), w)
            with b.if_else(self.all_on(mask), likely=True) as (bulk, tail):
                with bulk:
                    whole, whole_in = b.load(first, typ=vty, align=align), b.block
                with tail:
                    value = intrinsics.call_aligned(b, "llvm.masked.load", [first, mask.vec, passthru], vty,
                                                    [vty, first.type], align)
                    value_in = b.block
            phi = b.phi(vty)
            phi.add_incoming(whole, whole_in)
            phi.add_incoming(value, value_in)
            return Chunk(phi, w)
        m = mask.vec if mask is not None else const(ll.VectorType(ll.IntType(1), w), 1)
        value = intrinsics.call_aligned(b, "llvm.masked.gather", [ptr.vec, m, passthru], vty,
                                        [vty, ptr.vec.type], align)
        return Chunk(value, w)

    def store_through(self, ptr: Chunk, value: ll.Value, mask: Chunk | None, mem: ll.Type, w: int,
                      at: tuple[ir.Value, Sequence[Index]] | None = None) -> None:
        """``tile.store`` of one chunk: a vector store when contiguous (``at``: see
        ``vector_access``), else a scatter."""
        b = self.b
        align = size_in_bytes(mem)
        if mask is not None and mask.uniform is not None and _is_true(mask.uniform):
            mask = None
        if w == 1:
            if mask is None:
                b.store(value, ptr.vec, align=align)
            else:
                with b.if_then(mask.vec):
                    b.store(value, ptr.vec, align=align)
            return
        vector = self.vector_access(at, ptr, mem, w)
        if vector is not None:
            first, align = vector
            if mask is None:
                b.store(value, first, align=align)
                return
            with b.if_else(self.all_on(mask), likely=True) as (bulk, tail):
                with bulk:
                    b.store(value, first, align=align)
                with tail:
                    intrinsics.call_aligned(b, "llvm.masked.store", [value, first, mask.vec], ll.VoidType(),
                                            [value.type, first.type], align, pointer_arg=1)
            return
        m = mask.vec if mask is not None else const(ll.VectorType(ll.IntType(1), w), 1)
        intrinsics.call_aligned(b, "llvm.masked.scatter", [value, ptr.vec, m], ll.VoidType(),
                                [value.type, ptr.vec.type], align, pointer_arg=1)

    def all_on(self, mask: Chunk) -> ll.Value:
        """An ``i1``: every lane of ``mask`` is on. A contiguous access branches on it to a plain
        vector load or store, so only chunks that are partly masked (the tail of a bounds mask) pay
        for masked memory instructions, which AMD's x86 cores microcode and run slowly. The accesses
        of one chunk under one mask test it once: LLVM threads their branches into one."""
        if mask.uniform is not None:
            return mask.uniform
        if mask.all_on is not None:
            return mask.all_on
        return intrinsics.call(self.b, "llvm.vector.reduce.and", [mask.vec], ll.IntType(1), [mask.vec.type])

    def _masked_scalar_load(self, ptr: ll.Value, mask: ll.Value, other: Chunk | None, mem: ll.Type) -> ll.Value:
        b = self.b
        fallback = other.vec if other is not None else const(mem, 0 if isinstance(mem, ll.IntType) else 0.0)
        if fallback.type != mem:
            fallback = b.zext(fallback, mem)
        before = b.block
        with b.if_then(mask):
            loaded = b.load(ptr, typ=mem, align=size_in_bytes(mem))
            loaded_in = b.block
        phi = b.phi(mem)
        phi.add_incoming(loaded, loaded_in)
        phi.add_incoming(fallback, before)
        return phi

    def load_buffer(self, buf: Buffer, v: ir.Value, idx: Sequence[Index], w: int) -> Chunk:
        elem = cpu_type(v.type.element_type)
        mem = memory_type(elem)
        addr = self.b.gep(buf.ptr, [as_value(linear_offset(self.b, idx, shape_of(v)))], source_etype=mem)
        value = self.b.load(addr, typ=vector_of(mem, w), align=min(size_in_bytes(mem) * w, BUFFER_ALIGN))
        value = self.from_memory(value, elem)
        return Chunk(value, w, uniform=value if w == 1 else None)

    def store_buffer(self, ptr: ll.Value, v: ir.Value, idx: Sequence[Index], w: int, value: ll.Value) -> None:
        """Write one chunk of ``v`` (a tensor of ``v``'s type) into the buffer at ``ptr``."""
        mem = memory_type(cpu_type(v.type.element_type))
        addr = self.b.gep(ptr, [as_value(linear_offset(self.b, idx, shape_of(v)))], source_etype=mem)
        self.b.store(self.to_memory(value, mem), addr, align=min(size_in_bytes(mem) * w, BUFFER_ALIGN))

    def from_memory(self, value: ll.Value, elem: ll.Type) -> ll.Value:
        """Booleans live in memory as bytes."""
        if elem == ll.IntType(1):
            return self.b.icmp_unsigned("!=", value, const(value.type, 0))
        return value

    def to_memory(self, value: ll.Value, mem: ll.Type) -> ll.Value:
        scalar = value.type.element if isinstance(value.type, ll.VectorType) else value.type
        if scalar == ll.IntType(1) and mem == ll.IntType(8):
            width = value.type.count if isinstance(value.type, ll.VectorType) else 1
            return self.b.zext(value, vector_of(mem, width))
        return value


def _is_true(v: ll.Value) -> bool:
    return isinstance(v, ll.Constant) and v.type == ll.IntType(1) and v.constant in (1, True)


def scalar_constant(attr: ir.Attribute, t: ir.Type) -> ll.Constant:
    """The LLVM constant of a scalar MLIR integer or float attribute of MLIR type ``t``."""
    return elementwise.scalar_constant(attr, cpu_type(t))


_EVALUATORS = {
    "arith.constant": ChunkEvaluator._constant,
    "tile.make_range": ChunkEvaluator._make_range,
    "tile.splat": ChunkEvaluator._splat,
    "tile.broadcast": ChunkEvaluator._broadcast,
    "tile.expand_dims": ChunkEvaluator._expand_dims,
    "tile.convert_layout": ChunkEvaluator._convert_layout,
    "tile.addptr": ChunkEvaluator._addptr,
    "tile.load": ChunkEvaluator._load,
    **{name: reshape.evaluate for name in tile.REINDEXING},
}

#: ops the code generator may leave virtual (computed where used)
CHUNK_OPS = frozenset(_EVALUATORS) | frozenset(elementwise.EMITTERS)
#: chunk ops worth keeping in memory when their result is used more than once
#: ``arith.cmpi``'s ordering predicates (by their MLIR number): signedness and comparison
_ORDER_PREDICATES = {2: ("s", "<"), 3: ("s", "<="), 4: ("s", ">"), 5: ("s", ">="),
                     6: ("u", "<"), 7: ("u", "<="), 8: ("u", ">"), 9: ("u", ">=")}
_SWAPPED = {("s", "<"): ("s", ">"), ("s", "<="): ("s", ">="), ("s", ">"): ("s", "<"), ("s", ">="): ("s", "<="),
            ("u", "<"): ("u", ">"), ("u", "<="): ("u", ">="), ("u", ">"): ("u", "<"), ("u", ">="): ("u", "<=")}

HEAVY_OPS = frozenset({"tile.load"}) | elementwise.EXPENSIVE
#: chunk ops that read their operand at a different position than their result
REINDEXING_OPS = frozenset({"tile.broadcast", "tile.expand_dims"}) | tile.REINDEXING


def check_chunk_width(v: ir.Value) -> int:
    """The layout's chunk width of tensor ``v``; fails clearly if the layout stage did not run."""
    if v.type.encoding is None:
        raise TritiumError("the whole-block code generator needs tensors with layouts: run the tile-layout stage first")
    return chunk_width(v.type)
