"""The walker: one ``func.func`` of the ``tile-layout`` stage to one LLVM kernel run by every thread.

Scalars are single LLVM values, the same in every thread. A tensor is the list of the values this
thread holds, one per register of its distribution (``tritium.layout.distributed``): register ``r``
holds the element at ``Distribution.coordinates(lane, warp)[r]``. Elementwise ops therefore apply
per register, shape ops re-index registers of the same thread, and only memory, reductions and
layout conversions need to know where the registers lie (``indexing``). The op lowerings that need
more than a few lines live in mixins: ``memory``, ``atomics``, ``reduce``, ``scan``, ``convert``,
``blockwide``, ``dot``, ``inline_asm``, ``map_elementwise`` and ``control_flow``.
"""

from __future__ import annotations

from typing import Callable, Union

import numpy as np
from llvmlite import ir as ll

from ...errors import CompilationError, TargetLimitation, TritiumError
from ...ir import tile
from ...ir.locations import compilation_error
from ...ir.mlir import ir
from ...layout.distributed import Distribution, Slice, distribute, layout_of_type, threads
from ...passes import axis_info
from .. import elementwise
from ..context import KernelContext
from ..device import DeviceHooks
from ..math import MathUnavailable
from ..types import llvm_type, memory_type
from .atomics import Atomics
from .blockwide import BlockwideOps
from .control_flow import ControlFlow
from .convert import Conversions
from .debug import DebugOps
from .dot import Dots
from .indexing import I32, Indexing
from .inline_asm import InlineAsm
from .map_elementwise import MapElementwise
from .memory import Memory
from .reduce import Reductions
from .rings import Rings
from .shape import ShapeOps
from .warp_matrix import WarpMatrixDots
from .warpgroup_matrix import WarpgroupDots
from .scan import Scans
from .tensor_copies import TensorCopies

#: an MLIR value's lowering: an LLVM scalar, or a tensor's registers
Value = Union[ll.Value, list]

TERMINATORS = frozenset({"func.return", "scf.yield", "scf.condition", "tile.reduce_return"})


def is_tensor(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType)


class Walker(ControlFlow, Memory, Atomics, Reductions, Scans, Conversions, ShapeOps, BlockwideOps, Dots,
             WarpMatrixDots, WarpgroupDots, Rings, TensorCopies, DebugOps, InlineAsm, MapElementwise):
    """Builds the LLVM kernel of one ``func.func`` (see the module docstring)."""

    def __init__(self, func_op: ir.Operation, module: ll.Module, hooks: DeviceHooks, num_warps: int,
                 infos: dict[ir.Value, axis_info.AxisInfo], debug: bool = False):
        self.func_op, self.module, self.hooks, self.num_warps = func_op, module, hooks, num_warps
        self.debug = debug
        self.axis = infos
        self.name = ir.StringAttr(func_op.attributes["sym_name"]).value
        self.env: dict[ir.Value, Value] = {}
        self._distributions: dict[str, Distribution] = {}
        #: where a ``tile.local_load``'s slot starts in shared memory (``rings``)
        self.ring_views: dict[ir.Value, ll.Value] = {}
        #: per ``scf.for``, what its body's ops need done on its results after it (``control_flow``)
        self.loop_exits: dict[ir.Operation, list[Callable[[list], list]]] = {}

    # -- function --------------------------------------------------------------------------------
    def build(self) -> ll.Function:
        block = self.func_op.regions[0].blocks[0]
        for arg in block.arguments:
            if is_tensor(arg.type):
                raise TritiumError(f"kernel '{self.name}': tensor arguments are not supported on GPU targets")
        params = [self.lltype(a.type) for a in block.arguments]
        bases = self.tensor_map_parameters(self.func_op)
        self.fn = self.hooks.kernel(self.module, self.name, params + [ll.PointerType()] * len(bases),
                                    self.num_warps * self.hooks.warp_size)
        maps = self.fn.args[len(params):len(params) + len(bases)]
        self.hooks.kernel = KernelContext(self.name, self.fn, tuple(self.fn.args[:len(params)]), self.num_warps,
                                          self.debug, self.hooks.program_id)
        for arg in maps:
            self.hooks.tensor_copy.parameter(arg)
        self.tensor_maps = dict(zip(bases, maps))
        entry = ll.IRBuilder(self.fn.append_basic_block("entry"))
        body = self.fn.append_basic_block("body")
        self.b = ll.IRBuilder(body)
        self.index = Indexing(self.hooks, entry)
        self.env.update(zip(block.arguments, self.fn.args))
        term = self.emit_block(block)
        if term.name != "func.return":
            raise self.error(term, f"op {term.name} cannot end a kernel")
        self.b.ret_void()
        entry.branch(body)
        return self.fn

    def emit_block(self, block: ir.Block) -> ir.Operation:
        """Emit every op of ``block`` but its terminator, which is returned to the caller."""
        for op in block.operations:
            op = op.operation
            if op.name in TERMINATORS:
                return op
            self.emit_op(op)
        raise TritiumError(f"kernel '{self.name}': a block without terminator")

    def emit_region(self, block: ir.Block, args: list[Value]) -> ir.Operation:
        """Bind ``block``'s arguments to ``args`` and emit it; returns its terminator."""
        self.env.update(zip(block.arguments, args))
        return self.emit_block(block)

    def emit_op(self, op: ir.Operation) -> None:
        name = op.name
        method = _LOWERINGS.get(name)
        if method is not None:
            method(self, op)
        elif name in elementwise.EMITTERS:
            try:
                self.emit_elementwise(op)
            except MathUnavailable as e:
                raise compilation_error(self.name, op, str(e), TargetLimitation) from None
        else:
            raise self.error(op, f"op {name} is not supported on this target yet")

    # -- errors ----------------------------------------------------------------------------------
    def error(self, op: ir.Operation, message: str) -> CompilationError:
        """``message`` about ``op``, located at its source line when it has one."""
        return compilation_error(self.name, op, message)

    # -- types and layouts -----------------------------------------------------------------------
    def lltype(self, t: ir.Type) -> ll.Type:
        """The LLVM type of one element of ``t``; tile pointers live in the global address space."""
        elem = t.element_type if is_tensor(t) else t
        return llvm_type(elem, lambda space: self.hooks.global_address_space if space == 1 else space)

    def distribution(self, t: ir.RankedTensorType) -> Distribution:
        """Where the elements of a tensor of type ``t`` lie; the layout must fit this program's threads."""
        key = str(t)
        dist = self._distributions.get(key)
        if dist is None:
            try:
                layout = layout_of_type(t)
            except ValueError as e:
                raise TritiumError(f"kernel '{self.name}': {e}: the tile-layout stage gives every tensor "
                                   f"a layout before code generation") from None
            if threads(layout) != (self.hooks.warp_size, self.num_warps):
                raise TritiumError(f"kernel '{self.name}': layout {layout} is for {threads(layout)} (threads "
                                   f"per warp, warps), the kernel runs {self.hooks.warp_size} x {self.num_warps}")
            dist = self._distributions[key] = distribute(layout, tuple(t.shape))
        return dist

    def same_distribution(self, op: ir.Operation, a: ir.Type, b: ir.Type) -> Distribution:
        """The distribution of ``a``, which must be ``b``'s (the layout stage converts otherwise)."""
        dist = self.distribution(a)
        if dist != self.distribution(b):
            raise self.error(op, f"{op.name} on tensors of different layouts ({a} and {b}): the tile-layout "
                                 f"stage inserts tile.convert_layout there")
        return dist

    def shared_offset(self, op: ir.Operation) -> int:
        """Where ``op``'s scratch starts in the program's shared memory (bytes; the tile-layout stage
        allocates it, ``layout.scratch.scratch_bytes`` says how much)."""
        if "tile.shared_offset" not in op.attributes:
            raise self.error(op, f"{op.name} needs shared memory, but the tile-layout stage gave it no "
                                 f"tile.shared_offset")
        return ir.IntegerAttr(op.attributes["tile.shared_offset"]).value

    def scratch(self, op: ir.Operation) -> ll.Value:
        """A pointer to ``op``'s scratch in shared memory."""
        base = self.b.gep(self.hooks.shared_memory(self.module), [ll.Constant(I32, self.shared_offset(op))],
                          source_etype=ll.IntType(8))
        base.type = ll.PointerType(addrspace=self.hooks.shared_address_space)  # opaque, as LLVM's IR has it
        return base

    def registers(self, t: ir.Type) -> int:
        """How many LLVM values a value of type ``t`` is in one thread."""
        return self.distribution(t).registers if is_tensor(t) else 1

    # -- simple ops ------------------------------------------------------------------------------
    def emit_elementwise(self, op: ir.Operation) -> None:
        res = op.results[0]
        ins = [self.env[o] for o in op.operands]
        attrs = {name: op.attributes[name] for name in op.attributes}
        elem = self.lltype(res.type)
        if not is_tensor(res.type):
            self.env[res] = elementwise.emit(self.b, op.name, ins, elem, attrs, self.hooks)
            return
        for o in op.operands:
            if is_tensor(o.type):
                self.same_distribution(op, o.type, res.type)
        self.env[res] = [elementwise.emit(self.b, op.name, [x[r] if isinstance(x, list) else x for x in ins],
                                          elem, attrs, self.hooks)
                         for r in range(self.registers(res.type))]

    def emit_constant(self, op: ir.Operation) -> None:
        res = op.results[0]
        attr = op.attributes["value"]
        if not is_tensor(res.type):
            self.env[res] = elementwise.scalar_constant(attr, self.lltype(res.type))
            return
        dense = ir.DenseElementsAttr(attr)
        elem = self.lltype(res.type)
        if dense.is_splat:
            self.env[res] = [elementwise.scalar_constant(dense.get_splat_value(), elem)] * self.registers(res.type)
            return
        table = self.constant_table(np.array(dense).reshape(-1), memory_type(elem))
        dist = self.distribution(res.type)
        self.env[res] = [self.from_memory(self.b.load(self.b.gep(table, [self.index.linear_index(self.b, dist, r)],
                                                                   source_etype=memory_type(elem)),
                                                      typ=memory_type(elem)), elem)
                         for r in range(dist.registers)]

    def constant_table(self, values: np.ndarray, mem: ll.Type) -> ll.GlobalVariable:
        """A non-splat tensor constant as a read-only array in global memory (row-major)."""
        ty = ll.ArrayType(mem, len(values))
        g = ll.GlobalVariable(self.module, ty, self.module.get_unique_name("tensor_constant"),
                              addrspace=self.hooks.global_address_space)
        g.global_constant, g.linkage = True, "internal"
        g.initializer = ll.Constant(ty, [ll.Constant(mem, int(v) if isinstance(mem, ll.IntType) else float(v))
                                         for v in values.tolist()])
        return g

    def emit_program_id(self, op: ir.Operation) -> None:
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        getter = self.hooks.program_id if op.name == "tile.program_id" else self.hooks.num_programs
        self.env[op.results[0]] = getter(self.b, axis)

    def emit_splat(self, op: ir.Operation) -> None:
        res = op.results[0]
        self.env[res] = [self.env[op.operands[0]]] * self.registers(res.type)

    def emit_make_range(self, op: ir.Operation) -> None:
        res = op.results[0]
        start = ir.IntegerAttr(op.attributes["start"]).value
        dist = self.distribution(res.type)
        coords = (self.index.coordinates(self.b, dist, r)[0] for r in range(dist.registers))
        self.env[res] = [self.b.add(c, ll.Constant(I32, start)) if start else c for c in coords]

    def emit_broadcast(self, op: ir.Operation) -> None:
        """Each result register reads the source register at its coordinates with the broadcast
        dimensions at 0 (the source has the result's layout, so it is in the same thread)."""
        src, res = op.operands[0], op.results[0]
        dist = self.distribution(res.type)
        src_dist = self.distribution(src.type)
        if src.type.encoding != res.type.encoding:
            raise self.error(op, f"tile.broadcast from {src.type} to {res.type}: both need the same layout")
        index = src_dist.register_index()
        regs = self.env[src]
        self.env[res] = [regs[index[tuple(o % s for o, s in zip(offsets, src_dist.shape))]]
                         for offsets in dist.register_offsets]

    def emit_expand_dims(self, op: ir.Operation) -> None:
        """The operand is ``slice(axis, result layout)``: its registers are the result's one to one."""
        src, res = op.operands[0], op.results[0]
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        if layout_of_type(src.type) != Slice(axis, layout_of_type(res.type)):
            raise self.error(op, f"tile.expand_dims at {axis} of {src.type} to {res.type}: the operand's layout "
                                 f"must be the result's sliced at {axis}")
        index = self.distribution(src.type).register_index()
        regs = self.env[src]
        self.env[res] = [regs[index[offsets[:axis] + offsets[axis + 1:]]]
                         for offsets in self.distribution(res.type).register_offsets]

    def emit_addptr(self, op: ir.Operation) -> None:
        ptr, off = (self.env[o] for o in op.operands)
        res = op.results[0]
        pointee = memory_type(self.lltype(tile.pointee(res.type.element_type if is_tensor(res.type) else res.type)))
        if not is_tensor(res.type):
            self.env[res] = self.b.gep(ptr, [off], source_etype=pointee)
            return
        for o in op.operands:
            self.same_distribution(op, o.type, res.type)
        self.env[res] = [self.b.gep(p, [o], source_etype=pointee) for p, o in zip(ptr, off)]

    def emit_barrier(self, op: ir.Operation) -> None:
        self.hooks.barrier(self.b)


_LOWERINGS = {
    "arith.constant": Walker.emit_constant,
    "tile.program_id": Walker.emit_program_id,
    "tile.num_programs": Walker.emit_program_id,
    "tile.splat": Walker.emit_splat,
    "tile.make_range": Walker.emit_make_range,
    "tile.broadcast": Walker.emit_broadcast,
    "tile.expand_dims": Walker.emit_expand_dims,
    "tile.addptr": Walker.emit_addptr,
    "tile.load": Walker.emit_load,
    "tile.store": Walker.emit_store,
    "tile.atomic_rmw": Walker.emit_atomic,
    "tile.atomic_cas": Walker.emit_atomic,
    "tile.reduce": Walker.emit_reduce,
    "tile.scan": Walker.emit_scan,
    "tile.dot": Walker.emit_dot,
    "tile.inline_asm": Walker.emit_inline_asm,
    "tile.map_elementwise": Walker.emit_map_elementwise,
    "tile.convert_layout": Walker.emit_convert_layout,
    "tile.gather": Walker.emit_gather,
    "tile.sort": Walker.emit_sort,
    "tile.histogram": Walker.emit_histogram,
    **{name: Walker.emit_reindex for name in tile.REINDEXING},
    "tile.barrier": Walker.emit_barrier,
    "tile.async_copy": Walker.emit_async_copy,
    "tile.async_commit": Walker.emit_async_commit,
    "tile.async_wait": Walker.emit_async_wait,
    "tile.local_load": Walker.emit_local_load,
    "tile.tensor_copy_init": Walker.emit_tensor_copy_init,
    "tile.async_tensor_copy": Walker.emit_async_tensor_copy,
    "tile.tensor_copy_wait": Walker.emit_tensor_copy_wait,
    "tile.tensor_copy_done": Walker.emit_tensor_copy_done,
    "tile.descriptor_load": Walker.emit_descriptor_load,
    "tile.print": Walker.emit_print,
    "tile.assert": Walker.emit_assert,
    "scf.for": Walker.emit_for,
    "scf.if": Walker.emit_if,
    "scf.while": Walker.emit_while,
}


def generate(module: ir.Module, hooks: DeviceHooks, triple: str, datalayout: str, num_warps: int,
             debug: bool = False) -> str:
    """LLVM IR text of ``module`` (the ``tile-layout`` stage): one kernel per ``func.func``, run by
    ``num_warps * hooks.warp_size`` threads per program. ``debug`` is the compile option of that
    name: its checks reach this generator as ``tile.assert`` ops in the module."""
    return str(generate_module(module, hooks, triple, datalayout, num_warps, debug))


def generate_module(module: ir.Module, hooks: DeviceHooks, triple: str, datalayout: str, num_warps: int,
                    debug: bool = False) -> ll.Module:
    """``generate``'s llvmlite module, for a target that edits it before printing (functions' string
    attributes through ``codegen.attributes.StringAttributes``, metadata, more functions)."""
    llmod = ll.Module(name="tritium")
    llmod.triple, llmod.data_layout = triple, datalayout
    with module.context:
        infos = axis_info.analyze(module)
        for op in module.body.operations:
            op = op.operation
            if op.name != "func.func":
                raise TritiumError(f"op {op.name} at module level is not supported on this target")
            Walker(op, llmod, hooks, num_warps, infos, debug).build()
    return llmod
