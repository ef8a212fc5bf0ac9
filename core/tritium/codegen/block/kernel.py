"""The whole-block ``llir`` stage: MLIR at ``tile-layout`` to LLVM IR built with llvmlite.

Scalars stay SSA values. Tensors are computed in chunks of SIMD width (see ``chunks``): ops that
can be computed chunk by chunk stay *virtual* and are evaluated inside the loops that need them,
so a run of elementwise ops, loads and stores becomes one loop over chunks with every intermediate
in registers. Loops are emitted for *roots*: stores, prefetches (``passes.prefetch``), reductions,
and the few tensors that must be kept in memory (stack buffers allocated in the entry block): those
used again after a loop that would recompute something costly, those read after a store, and
loop-carried values.

Consecutive roots of one shape share one loop (a *group*); a group is flushed (emitted) before
anything that must see its results: a consumer of a reduction, a re-indexing op (broadcast,
expand_dims) over a tensor the group has not written yet, control flow, and scalar memory ops.

Within one loop, each chunk loads before it stores, so a kernel whose loads and stores of one tile
overlap at *different* positions sees some stored values, exactly as on a GPU, where such
accesses race.
"""

from __future__ import annotations

import math as pymath
from typing import Any, Callable

import numpy as np
from llvmlite import ir as ll

from ...errors import TritiumError
from ...ir import tile
from ..context import KernelContext
from ...ir.locations import compilation_error
from ...ir.mlir import ir
from ...language.elementwise_fns import unsupported_message
from ...passes.axis_info import AxisInfo, analyze
from .. import elementwise
from ..attributes import add_strings
from ..types import memory_type
from .atomics import ATOMIC_OPS, Atomics
from .bounds import BoundsChecks, sites_constant
from .chunks import I32, Index, counted_loop, mul, unflatten
from .control_flow import ControlFlow
from .debug import DebugOps
from .dot import Dots
from .evaluate import (BUFFER_ALIGN, CHUNK_OPS, HEAVY_OPS, REINDEXING_OPS, VIRTUAL, Buffer, ChunkEvaluator, RowBounds,
                       check_chunk_width, cpu_type, is_tensor, scalar_constant, shape_of)
from .gather import Gathers
from .hooks import BlockHooks
from .map_elementwise import MapElementwise
from .reductions import Reductions, unsupported
from .roots import Group, MaterializeRoot, PrefetchRoot, StoreRoot

TERMINATORS = frozenset({"scf.yield", "scf.condition", "func.return", "tile.reduce_return"})


class KernelCodegen(ControlFlow, Reductions, Dots, Gathers, DebugOps, BoundsChecks, Atomics, MapElementwise,
                    ChunkEvaluator):
    """Builds the LLVM function of one kernel (``func.func``) in ``module``."""

    def __init__(self, func_op: ir.Operation, module: ll.Module, hooks: BlockHooks,
                 axis: dict[ir.Value, AxisInfo], debug: bool = False):
        super().__init__()
        self.func_op, self.module, self.hooks, self.axis, self.debug = func_op, module, hooks, axis, debug
        self.env: dict[ir.Value, Any] = {}
        self.group: Group | None = None
        self.pending: set[ir.Value] = set()       # tensors a group will write, not yet written
        self.pending_deps: set[ir.Value] = set()  # virtual tensors that read pending ones
        self.pending_results: set[ir.Value] = set()  # reductions not yet computed
        self.summed: dict[ir.Value, ll.Value] = {}  # reductions a loop computed: the slot of each

    # -- function --------------------------------------------------------------------------------
    def build(self) -> ll.Function:
        """Emit the kernel body function and its ``_grid`` entry; returns the body."""
        name = self.kernel_name = ir.StringAttr(self.func_op.attributes["sym_name"]).value
        block = self.func_op.regions[0].blocks[0]
        params = [cpu_type(a.type) for a in block.arguments]
        if any(is_tensor(a) for a in block.arguments):
            raise TritiumError(f"kernel {name}: tensor arguments are not supported by the {self.hooks.target_name} target")
        extra = [ll.PointerType()] if self.debug else []  # the debug area (see ``bounds``)
        fn = ll.Function(self.module, ll.FunctionType(ll.VoidType(), params + [I32] * 6 + extra), name)
        fn.linkage = "internal"
        fn.attributes.add("alwaysinline")
        fn.attributes.add("nounwind")
        self.pids, self.nprogs = fn.args[len(params):len(params) + 3], fn.args[len(params) + 3:]
        self.hooks.kernel = KernelContext(name, fn, tuple(fn.args[:len(params)]), 1, self.debug,
                                          lambda b, axis: self.pids[axis])
        entry = fn.append_basic_block("entry")
        start = fn.append_basic_block("start")
        self.allocas = ll.IRBuilder(entry)
        self.b = ll.IRBuilder(start)
        self.setup_bounds(fn.args[-1] if self.debug else None, self.allocas, list(block.arguments), fn.args)
        for arg, value in zip(block.arguments, fn.args):
            self.env[arg] = value
        term = self.emit_block(block)
        if term.name != "func.return":
            raise unsupported(term.name, self.hooks.target_name)
        self.flush()
        self.b.ret_void()
        self.allocas.branch(start)
        for function in (fn, self.hooks.entry(self.module, fn, len(params), self.debug)):
            add_strings(function, KEEP_LOOPS)
        if self.debug:
            sites_constant(self.module, name, self.sites)
        return fn

    def alloca(self, t: ll.Type, align: int | None = None) -> ll.AllocaInstr:
        """A stack slot in the entry block (so it is allocated once, and mem2reg can promote it)."""
        slot = self.allocas.alloca(t)
        slot.type = ll.PointerType()  # opaque, as LLVM's IR has it
        if align:
            slot.align = align
        return slot

    def alloc_buffer(self, t: ir.RankedTensorType) -> ll.Value:
        """Stack memory for one tensor of type ``t``, in the entry block (allocated once)."""
        mem = memory_type(cpu_type(t.element_type))
        return self.alloca(ll.ArrayType(mem, pymath.prod(t.shape)), BUFFER_ALIGN)

    # -- blocks ----------------------------------------------------------------------------------
    def emit_block(self, block: ir.Block) -> ir.Operation:
        """Emit every op of ``block`` but its terminator, which is returned for the caller; roots may
        still be pending (the caller adds its own, e.g. a yield's copies, then flushes)."""
        keep, first = plan_buffers(block, self.axis)
        for op in block.operations:
            op = op.operation
            if op.name in TERMINATORS:
                if any(o in self.pending_results for o in op.operands):
                    self.flush()
                return op
            self.emit_op(op, keep)
            if op.results and op.results[0] in first:
                self.flush()
        raise TritiumError("block without terminator")

    def emit_op(self, op: ir.Operation, keep: set[ir.Value]) -> None:
        name = op.name
        operands = list(op.operands)
        if any(o in self.pending_results for o in operands):
            self.flush()
        elif (name in REINDEXING_OPS or name == "tile.reduce" and not self.along_last_axis(op)) and \
                any(o in self.pending or o in self.pending_deps for o in operands):
            self.flush()
        results = list(op.results)
        tensor_result = bool(results) and is_tensor(results[0])
        if name in CHUNK_OPS and tensor_result:
            self.record_virtual(op, results[0], results[0] in keep, operands)
        elif name == "tile.store" and is_tensor(operands[1]):
            self.add_root(StoreRoot(op), operands[1])
        elif name == "tile.prefetch":
            self.add_root(PrefetchRoot(op), operands[0])
        elif name == "tile.reduce":
            self.emit_reduce(op)
        elif name == "tile.scan":
            self.emit_scan(op)
        elif name == "tile.dot":
            self.emit_dot(op)
        elif name == "tile.gather":
            self.emit_gather(op)
        elif name == "tile.map_elementwise":
            self.emit_map_elementwise(op)
        elif name in ("scf.for", "scf.if", "scf.while"):
            self.flush()
            getattr(self, "emit_" + name[4:])(op)
        elif name in ("tile.print", "tile.assert"):
            getattr(self, "emit_" + name[5:])(op)
        elif name == "tile.barrier":  # one program is one thread: its earlier stores just go first
            self.flush()
        elif name in ATOMIC_OPS:
            self.emit_atomic(op)
        elif name == "tile.inline_asm":  # a GPU's assembly, which the host cannot run
            raise compilation_error(self.kernel_name, op, unsupported_message(self.hooks.target_name))
        elif not tensor_result:
            self.emit_scalar(op)
        else:
            raise unsupported(name, self.hooks.target_name)

    def record_virtual(self, op: ir.Operation, res: ir.Value, keep: bool, operands: list) -> None:
        check_chunk_width(res)
        if op.name == "arith.constant" and not ir.DenseElementsAttr(op.attributes["value"]).is_splat:
            self.env[res] = Buffer(self.constant_buffer(op))
            return
        self.env[res] = VIRTUAL
        if any(o in self.pending or o in self.pending_deps for o in operands):
            self.pending_deps.add(res)
        if keep:
            self.add_root(MaterializeRoot(res, self.alloc_buffer(res.type), kept=True), res)
            self.pending.add(res)

    def emit_scalar(self, op: ir.Operation) -> None:
        name, b = op.name, self.b
        ins = [self.env[o] for o in op.operands]
        res = op.results[0] if len(op.results) else None
        if name in elementwise.EMITTERS:
            attrs = {k: op.attributes[k] for k in op.attributes}
            self.env[res] = elementwise.emit(b, name, ins, cpu_type(res.type), attrs, self.hooks)
        elif name == "arith.constant":
            self.env[res] = scalar_constant(op.attributes["value"], res.type)
        elif name in ("tile.program_id", "tile.num_programs"):
            axis = ir.IntegerAttr(op.attributes["axis"]).value
            self.env[res] = (self.pids if name == "tile.program_id" else self.nprogs)[axis]
        elif name == "tile.addptr":
            self.env[res] = b.gep(ins[0], [ins[1]], source_etype=self.pointee(op.operands[0]))
        elif name == "tile.load":
            self.flush()
            view = op.opview
            mask = self.eval(view.mask, (), 1) if view.mask is not None else None
            other = self.eval(view.other, (), 1) if view.other is not None else None
            ptr = self.eval(view.ptr, (), 1)
            mask = self.guard(op, view.ptr, ptr, mask, self.pointee(view.ptr), 1)
            chunk = self.load_through(ptr, mask, other, self.pointee(view.ptr), 1)
            self.env[res] = self.from_memory(chunk.vec, cpu_type(res.type))
        elif name == "tile.store":
            self.flush()
            view = op.opview
            mem = self.pointee(view.ptr)
            mask = self.eval(view.mask, (), 1) if view.mask is not None else None
            ptr = self.eval(view.ptr, (), 1)
            mask = self.guard(op, view.ptr, ptr, mask, mem, 1)
            self.store_through(ptr, self.to_memory(self.env[view.value], mem), mask, mem, 1)
        else:
            raise unsupported(name, self.hooks.target_name)

    def constant_buffer(self, op: ir.Operation) -> ll.Value:
        """A non-splat dense tensor constant, as read-only global memory."""
        res = op.results[0]
        mem = memory_type(cpu_type(res.type.element_type))
        values = np.array(ir.DenseElementsAttr(op.attributes["value"])).reshape(-1).tolist()
        ty = ll.ArrayType(mem, len(values))
        g = ll.GlobalVariable(self.module, ty, self.module.get_unique_name("tensor_constant"))
        g.global_constant, g.linkage, g.align = True, "internal", BUFFER_ALIGN
        g.initializer = ll.Constant(ty, [ll.Constant(mem, int(v) if isinstance(mem, ll.IntType) else v)
                                         for v in values])
        return g

    # -- groups ----------------------------------------------------------------------------------
    def add_root(self, root, value: ir.Value) -> None:
        """Add ``root`` (computed over the shape of tensor ``value``) to the pending group."""
        shape = tuple(shape_of(value))
        if self.group is not None and self.group.shape != shape:
            self.flush()
        if self.group is None:
            self.group = Group(shape, check_chunk_width(value))
        self.group.roots.append(root)

    def flush(self) -> None:
        """Emit the pending group: for each row (all dims but the last), a loop over chunks."""
        group, self.group = self.group, None
        if group is None:
            return
        self.pending.clear()
        self.pending_deps.clear()
        self.pending_results.clear()
        lead, w = group.shape[:-1], group.width
        self.push_scope()

        def row_body(row: Index) -> None:
            lead_idx = unflatten(self.b, row, lead)

            def chunk_body(c: Index) -> None:
                self.push_scope()
                idx = lead_idx + (mul(self.b, c, w),)
                for root in group.roots:
                    root.emit(self, idx, w, c)
                self.pop_scope()

            chunks = group.shape[-1] // w
            if chunks == 1 or self.debug_area is not None:  # debug mode records each access site once
                counted_loop(self.b, chunks, chunk_body)
            else:
                self.versioned_loop(group.shape, lead_idx, w, lambda: counted_loop(self.b, chunks, chunk_body))
            for root in group.roots:
                root.finish_row(self, row)

        counted_loop(self.b, pymath.prod(lead), row_body, name="row")
        self.pop_scope()
        for root in group.roots:
            root.finish(self)

    def versioned_loop(self, shape: tuple[int, ...], lead_idx: tuple, w: int, loop: Callable[[], None]) -> None:
        """Emit ``loop`` (a row's loop over chunks) twice when the bounds masks it tests chunk by
        chunk (``row_bounds``) hold on the whole row or not at all by one test: a version where they
        are known to hold, with plain loads and stores and no test a chunk, taken when one test at
        the row's start says so, and the general one. A row kernel over a row that fits its block
        (the usual case) runs the first."""
        b = self.b
        before = b.block
        general, after = b.append_basic_block("row.general"), b.append_basic_block("row.after")
        b.position_at_end(general)
        self.row_bounds = bounds = RowBounds(shape, lead_idx)
        self.push_scope()
        loop()
        self.pop_scope()
        self.row_bounds = None
        b.branch(after)
        b.position_at_end(before)
        self.push_scope()
        held = self.row_in_bounds(bounds, w)
        self.pop_scope()
        if held is None:
            b.branch(general)
        else:
            bulk = b.append_basic_block("row.bulk")
            b.cbranch(held, bulk, general)
            b.position_at_end(bulk)
            self.held = frozenset(bounds.decided())
            self.push_scope()
            loop()
            self.pop_scope()
            self.held = frozenset()
            b.branch(after)
        b.position_at_end(after)


#: LLVM may not turn a loop that copies or fills a buffer into a ``memcpy`` or ``memset`` call: a
#: row's loop that copies it into a buffer also computes from it (a softmax's load and max), and a
#: call would take the copy out of the loop into a second pass over the row
KEEP_LOOPS = {"no-builtin-memcpy": "", "no-builtin-memset": ""}


def plan_buffers(block: ir.Block, axis: dict[ir.Value, AxisInfo]) -> tuple[set[ir.Value], set[ir.Value]]:
    """The chunk-computable tensors of ``block`` to keep in memory rather than recompute, and those
    of them to write whole before the next op.

    Kept: costly ones (a load, a division, a transcendental somewhere in what recomputing them would
    redo) used by several ops or inside a nested region (a loop body would recompute them on every
    iteration); those depending on a load that are used after a later store, so the load still
    happens before the store; and the costly or loaded operands of re-indexing ops, which read
    them out of order (a transpose stored over its own input must read it all first).

    A loop over chunks reads an element again for every position that repeats it: a broadcast
    loaded tensor, or a load whose addresses repeat across chunks (axis-info constancy). Where a
    store follows, an earlier chunk may already have overwritten what a later one reads again,
    while the program loaded it once, before the store; such loads are kept, and written whole
    before the next op (a kept broadcast operand is: the broadcast flushes the loop that writes it).
    So is a load from memory a later store writes through other pointers (``_stored_elsewhere``).
    """
    ops = [op.operation for op in block.operations]
    position = {op: i for i, op in enumerate(ops)}
    writes = [i for i, op in enumerate(ops)
              if op.name == "tile.store" or op.name in ATOMIC_OPS
              or (len(op.regions) and op.name not in ("tile.reduce", "tile.scan", "tile.map_elementwise"))]
    costly: dict[ir.Value, bool] = {}
    loads: dict[ir.Value, bool] = {}
    keep: set[ir.Value] = set()
    first: set[ir.Value] = set()
    for i, op in enumerate(ops):
        if op.name not in CHUNK_OPS or len(op.results) != 1 or not is_tensor(op.results[0]):
            continue
        res = op.results[0]
        store_follows = any(wpos > i for wpos in writes)
        if op.name in tile.REINDEXING:  # read out of order: from memory written before any store
            for o in op.operands:
                if costly.get(o) or loads.get(o):
                    keep.add(o)
                    costly[o] = loads[o] = False
        elif op.name == "tile.broadcast" and store_follows and loads.get(op.operands[0]):
            keep.add(op.operands[0])
            costly[op.operands[0]] = loads[op.operands[0]] = False
        ins = [o for o in op.operands if o in costly]
        costly[res] = op.name in HEAVY_OPS or any(costly[o] for o in ins)
        loads[res] = op.name == "tile.load" or any(loads[o] for o in ins)
        users = set()
        nested = False
        for use in res.uses:
            user = use.owner.operation
            while user.block != block:
                user, nested = user.parent, True
            users.add(position[user])
        last = max(users, default=i)
        if op.name == "tile.load" and store_follows and (
                _repeats_addresses(op, axis) or _stored_elsewhere(op, [ops[w] for w in writes if w > i])):
            first.add(res)
        hazard = loads[res] and any(i < wpos < last for wpos in writes) or res in first
        if (costly[res] and (len(users) > 1 or nested)) or hazard:
            keep.add(res)
            costly[res] = loads[res] = False
    return keep, first


#: ops whose pointer result points into the same memory as their first operand
_SAME_MEMORY = frozenset({"tile.addptr", "tile.splat", "tile.broadcast", "tile.expand_dims", "tile.convert_layout",
                          "tile.reshape", "tile.trans"})


def _pointer_root(ptr: ir.Value) -> ir.Value | None:
    """The kernel argument (or other block argument) ``ptr`` is computed from by pointer arithmetic
    and shape ops; None where it comes from anything else (a load, a select)."""
    while not isinstance(ptr.owner, ir.Block):
        if ptr.owner.name not in _SAME_MEMORY:
            return None
        ptr = ptr.owner.operands[0]
    return ptr


def _stored_elsewhere(load: ir.Operation, later: list[ir.Operation]) -> bool:
    """Whether a later store of the block writes into the memory ``load`` reads (the same pointer
    argument, or pointers of unknown origin) through other pointers than the load's: a chunk may
    then store over what a later chunk reads (``x = load(X + i); store(X + i + 1, x)``). A store
    through the load's own pointers writes each element after its own chunk read it, as in program
    order. Distinct pointer arguments are taken not to overlap."""
    ptr = load.opview.ptr
    root = _pointer_root(ptr)
    for op in later:
        if op.name != "tile.store" or op.opview.ptr == ptr:
            continue
        other = _pointer_root(op.opview.ptr)
        if root is None or other is None or root == other:
            return True
    return False


def _repeats_addresses(load: ir.Operation, axis: dict[ir.Value, AxisInfo]) -> bool:
    """Whether the pointers of ``load`` provably repeat across the chunks of a loop over them."""
    ptr = load.opview.ptr
    info = axis.get(ptr)
    if info is None:
        return False
    *lead, last = info.constancy
    return any(c > 1 for c in lead) or last > check_chunk_width(ptr)


def generate(module: ir.Module, hooks: BlockHooks, triple: str = "", data_layout: str = "",
             debug: bool = False) -> str:
    """LLVM IR text for every kernel (``func.func``) in ``module``; ``debug`` checks every access."""
    return str(generate_module(module, hooks, triple, data_layout, debug))


def generate_module(module: ir.Module, hooks: BlockHooks, triple: str = "", data_layout: str = "",
                    debug: bool = False) -> ll.Module:
    """``generate``'s llvmlite module, for a target that edits it before printing (functions' string
    attributes through ``codegen.attributes.StringAttributes``, metadata, more functions)."""
    llmod = ll.Module(name="tritium")
    llmod.triple, llmod.data_layout = triple, data_layout
    with module.context:
        axis = analyze(module)
        for op in module.body.operations:
            op = op.operation
            if op.name != "func.func":
                raise unsupported(op.name, hooks.target_name)
            KernelCodegen(op, llmod, hooks, axis, debug).build()
    return llmod
