"""``tile.reduce`` over distributed tensors (one or several reduced together), in three steps as in Triton.

1. Inside a thread: the registers that share their coordinates off the axis combine, in order
   along the axis.
2. Across the lanes of a warp: a butterfly of ``shuffle_xor`` over each lane bit whose basis lies
   along the axis, the lower lane's values on the left of the combine; afterwards every lane of
   such a group holds the group's value.
3. Across warps, when warp bits lie along the axis: each warp writes its partials to shared memory
   at the op's ``tile.shared_offset``, a barrier, then every thread reads the partials of all warps
   along the axis for its result registers and combines them in warp order.

The result (``#tile.slice<axis, source layout>``, or a scalar for a rank-1 source) is then held by
every thread that holds its elements, the threads spread along the axis included. The scratch a
cross-warp reduction uses is in ``scratch``.
"""

from __future__ import annotations

import math

from llvmlite import ir as ll

from ...errors import TritiumError
from ...ir.mlir import ir
from ...layout.distributed import Distribution, Slice, layout_of_type
from ..types import memory_type, size_in_bytes
from .indexing import I32, row_major
from ...layout.scratch import axis_bits, reduce_scratch_offsets


#: arith ops whose two operands may be swapped
COMMUTATIVE = frozenset(f"arith.{name}" for name in (
    "addf", "addi", "mulf", "muli", "andi", "ori", "xori", "maxnumf", "minnumf", "maximumf", "minimumf",
    "maxsi", "minsi", "maxui", "minui"))


def commutative(op: ir.Operation) -> bool:
    """Whether ``op``'s combine region is one commutative arith op of its two arguments."""
    block = op.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    args = list(block.arguments)
    return (len(args) == 2 and len(ops) == 2 and ops[0].name in COMMUTATIVE
            and set(ops[0].operands) == set(args) and list(ops[1].operands) == [ops[0].result])


class Reductions:
    """Reductions of one or several tensors at once; mixed into the walker. Values travel as lists,
    one entry per reduced tensor."""

    def combine(self, op: ir.Operation, xs: list[ll.Value], ys: list[ll.Value]) -> list[ll.Value]:
        """The op's combine region applied to the values ``xs`` and ``ys`` (one per tensor)."""
        block = op.regions[0].blocks[0]
        term = self.emit_region(block, [*xs, *ys])
        return [self.env[v] for v in term.operands]

    def fold(self, op: ir.Operation, values: list[list[ll.Value]]) -> list[ll.Value]:
        """``values`` combined left to right (the same order in every thread, so copies agree)."""
        acc = values[0]
        for value in values[1:]:
            acc = self.combine(op, acc, value)
        return acc

    def emit_reduce(self, op: ir.Operation) -> None:
        srcs, results = list(op.operands), list(op.results)
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        dist = self.distribution(srcs[0].type)
        rank = len(dist.shape)
        for src, res in zip(srcs, results):
            self.same_distribution(op, src.type, srcs[0].type)
            if rank > 1 and layout_of_type(res.type) != Slice(axis, layout_of_type(src.type)):
                raise self.error(op, f"tile.reduce along {axis} of {src.type} to {res.type}: the result's layout "
                                     f"must be the source's sliced at {axis}")
        for basis in dist.lane_bases + dist.warp_bases:
            if basis[axis] and sum(1 for x in basis if x) > 1:
                raise self.error(op, f"tile.reduce: a thread basis {basis} of {srcs[0].type} crosses the axis")
        partials = self.within_thread(op, dist, axis)
        for bit in axis_bits(dist.lane_bases, axis):
            partials = {key: self.combine_lanes(op, vs, bit) for key, vs in partials.items()}
        if axis_bits(dist.warp_bases, axis):
            partials = self.across_warps(op, dist, axis, partials)
        for i, res in enumerate(results):
            if rank == 1:
                self.env[res] = partials[()][i]
            else:
                self.env[res] = [partials[offsets][i] for offsets in self.distribution(res.type).register_offsets]

    def combine_lanes(self, op: ir.Operation, mine: list[ll.Value], bit: int) -> list[ll.Value]:
        """Step 2 for one lane bit: this lane's values and its partner's (``lane ^ 1 << bit``),
        combined with the lower lane's on the left, so both lanes compute the same value even
        when the combine function is not commutative (argmax meeting a NaN); a single commutative
        arith op (a sum, a max) needs no ordering."""
        b = self.b
        theirs = [self.shuffle_xor(v, 1 << bit) for v in mine]
        if commutative(op):
            return self.combine(op, mine, theirs)
        upper = b.icmp_unsigned("!=", b.and_(self.index.ids["lane"], ll.Constant(I32, 1 << bit)), ll.Constant(I32, 0))
        left = [b.select(upper, t, m) for m, t in zip(mine, theirs)]
        right = [b.select(upper, m, t) for m, t in zip(mine, theirs)]
        return self.combine(op, left, right)

    def within_thread(self, op: ir.Operation, dist: Distribution, axis: int) -> dict[tuple, list[ll.Value]]:
        """Step 1: per off-axis register offset, the combination of the registers along the axis."""
        groups: dict[tuple, list[tuple[int, list[ll.Value]]]] = {}
        registers = zip(*(self.env[src] for src in op.operands))
        for offsets, values in zip(dist.register_offsets, registers):
            groups.setdefault(offsets[:axis] + offsets[axis + 1:], []).append((offsets[axis], list(values)))
        return {key: self.fold(op, [values for _, values in sorted(items, key=lambda item: item[0])])
                for key, items in groups.items()}

    def across_warps(self, op: ir.Operation, dist: Distribution, axis: int,
                     partials: dict[tuple, list[ll.Value]]) -> dict[tuple, list[ll.Value]]:
        """Step 3, through shared memory (see the module docstring); one region per operand."""
        b = self.b
        bits = axis_bits(dist.warp_bases, axis)
        some = next(iter(partials.values()))
        mems = [memory_type(v.type) for v in some]
        offsets, _ = reduce_scratch_offsets(dist, axis, [size_in_bytes(m, self.hooks.pointer_bits) for m in mems])
        base = self.scratch(op)
        bases = [b.gep(base, [ll.Constant(I32, off)], source_etype=ll.IntType(8)) if off else base for off in offsets]
        block = math.prod(dist.shape[:axis] + dist.shape[axis + 1:])
        warp = self.index.ids["warp"]
        mine: ll.Value = ll.Constant(I32, 0)
        for j, bit in enumerate(bits):
            mine = b.or_(mine, b.shl(b.and_(b.lshr(warp, ll.Constant(I32, bit)), ll.Constant(I32, 1)),
                                     ll.Constant(I32, j)))
        first_register = {}
        for r, offs in enumerate(dist.register_offsets):
            first_register.setdefault(offs[:axis] + offs[axis + 1:], r)
        positions = {}
        for key, values in partials.items():
            coords = self.index.coordinates(b, dist, first_register[key])
            positions[key] = row_major(b, coords[:axis] + coords[axis + 1:], dist.shape[:axis] + dist.shape[axis + 1:])
            slot = b.add(b.mul(mine, ll.Constant(I32, block)), positions[key])
            for value, at, mem in zip(values, bases, mems):
                b.store(self.to_memory(value), b.gep(at, [slot], source_etype=mem))
        self.hooks.barrier(b)
        out = {}
        for key, position in positions.items():
            slots = [b.add(position, ll.Constant(I32, k * block)) for k in range(1 << len(bits))]
            out[key] = self.fold(op, [[self.from_memory(b.load(b.gep(at, [slot], source_etype=mem), typ=mem), v.type)
                                       for v, at, mem in zip(partials[key], bases, mems)] for slot in slots])
        return out

    def shuffle_xor(self, value: ll.Value, lane_mask: int) -> ll.Value:
        """``hooks.shuffle_xor`` of any scalar of up to 64 bits, moved as one or two i32s."""
        b, t = self.b, value.type
        if isinstance(t, ll.PointerType):
            raise TritiumError("reductions of pointers are not supported")
        bits = t.width if isinstance(t, ll.IntType) else {"half": 16, "bfloat": 16, "float": 32, "double": 64}[str(t)]
        as_int = value if isinstance(t, ll.IntType) else b.bitcast(value, ll.IntType(bits))
        if bits <= 32:
            wide = as_int if bits == 32 else b.zext(as_int, I32)
            moved = self.hooks.shuffle_xor(b, wide, lane_mask)
            moved = moved if bits == 32 else b.trunc(moved, ll.IntType(bits))
        else:
            i64 = ll.IntType(64)
            lo = self.hooks.shuffle_xor(b, b.trunc(as_int, I32), lane_mask)
            hi = self.hooks.shuffle_xor(b, b.trunc(b.lshr(as_int, ll.Constant(i64, 32)), I32), lane_mask)
            moved = b.or_(b.zext(lo, i64), b.shl(b.zext(hi, i64), ll.Constant(i64, 32)))
        return moved if isinstance(t, ll.IntType) else b.bitcast(moved, t)
