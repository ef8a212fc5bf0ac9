"""The GPU ``tile-layout`` stage: distributed layouts, layout conversions, shared memory and barriers.

Target-neutral: a GPU target gives its warp (wave) size, the launch options give ``num_warps``.
In order:

0. one-hot histograms become ``tile.histogram`` (``passes.blockwide``), sorts of large blocks
   stay ``tile.sort`` and the others run their networks (``passes.decomposed``); fp32 products at
   "tf32x3", "bf16x3" or "bf16x6" become sums of narrow ones (``layout.split_products``);
1. the axis analysis (``passes.axis_info``) and the memory accesses choose one blocked layout per
   tensor rank (``layout.choose``);
2. every tensor gets a layout, ``tile.convert_layout`` where producer and consumer disagree
   (``layout.propagate``);
3. needless conversions go, cheap values are rebuilt in the layout wanted (``passes.convert_layout``);
4. loads feeding products on the matrix instruction are pipelined ``num_stages`` deep
   (``passes.software_pipeline``);
5. conversions and cross-warp reductions get shared-memory offsets, and barriers go where a
   scratch reuse needs one (``passes.shared_memory``).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from ..codegen.device import DeviceHooks, TensorCopy
from ..codegen.types import PointerBits, pointers_of_64_bits
from ..errors import TritiumError
from ..ir.mlir import ir
from ..layout.choose import crossing_layouts, default_layouts, operand_layouts
from ..layout.matrix import MatrixUnit, narrow_exact_operands, narrow_fp8_operands
from ..layout.propagate import propagate_layouts
from ..layout.split_products import split_products
from .axis_info import analyze
from .blockwide import raise_blockwide
from .convert_layout import remove_conversions
from .shared_memory import allocate_shared
from . import tensor_copies
from .decomposed import lower_decomposed
from .software_pipeline import pipeline_loops


#: a sort whose block gives each thread more elements than this runs in shared memory, in loops
#: (``codegen.threads.blockwide``); smaller ones run the network in registers and shuffles
NATIVE_SORT_ELEMENTS = 2


def _elements(op: ir.Operation) -> int:
    return math.prod(ir.RankedTensorType(op.operands[0].type).shape)


def assign_gpu_layouts(module: ir.Module, num_warps: int, warp_size: int,
                       pointer_bits: PointerBits = pointers_of_64_bits,
                       matrix_unit: MatrixUnit | None = None, num_stages: int = 1,
                       tensor_copy: TensorCopy | None = None) -> tuple[ir.Module, int]:
    """Lay out ``module`` (a ``tile-opt`` module, in place) for ``num_warps`` warps of ``warp_size``
    threads, ``tl.dot`` on ``matrix_unit`` (``DeviceHooks.warp_matrix_op``) where it can, its
    operands' loads ``num_stages`` deep (``passes.software_pipeline``), host descriptors' blocks
    copied by ``tensor_copy`` where it takes them (``passes.tensor_copies``); return it and the
    shared-memory bytes it needs."""
    for what, n in (("num_warps", num_warps), ("warp size", warp_size)):
        if n < 1 or n & (n - 1):
            raise TritiumError(f"{what} must be a power of two, not {n}")
    raise_blockwide(module)
    def native(op: ir.Operation) -> bool:
        if op.name == "tile.sort":
            return _elements(op) > NATIVE_SORT_ELEMENTS * num_warps * warp_size
        return tensor_copy is not None and tensor_copies.takes(op, matrix_unit, num_warps, num_stages,
                                                               tensor_copy.max_box, tensor_copy.swizzles)

    lower_decomposed(module, native)
    with module.context, ir.Location.unknown():
        split_products(module, matrix_unit, num_warps)
        narrow_fp8_operands(module, matrix_unit, num_warps)
        narrow_exact_operands(module, matrix_unit, num_warps)
        infos = analyze(module)
        own = operand_layouts(module, infos, num_warps, warp_size, pointer_bits)
        defaults = default_layouts(module, infos, num_warps, warp_size, pointer_bits, skip=own)
        own.update(crossing_layouts(module, infos, defaults, num_warps, warp_size, pointer_bits, skip=own))
        propagate_layouts(module, defaults, matrix_unit, own)
        remove_conversions(module)
        pipeline_loops(module, num_stages)
        shared = allocate_shared(module, pointer_bits)
        module.operation.verify()
    return module, shared


def layout_stage(hooks: DeviceHooks, max_shared: int | None = None) -> Callable[[ir.Module, Any], ir.Module]:
    """The ``tile-layout`` stage of the GPU that ``hooks`` (the target's code generation hooks)
    describe: warps of ``warp_size`` threads, its warp-level matrix instruction
    (``warp_matrix_op``), its tensor copy engine (``tensor_copy``), if any, and the width of
    pointers kept in memory (``pointer_bits``), the same that code generation uses. The metadata gets
    ``tensor_maps``: what the launcher encodes the engine's tensor maps from, appended to the
    kernel's parameters (``passes.tensor_copies.tensor_maps``). With ``max_shared`` (the bytes of
    shared memory a program may have), a kernel whose pipelines' rings would not fit is laid out
    again with fewer stages, down to none (``num_stages`` in the metadata says how many): the
    depth changes the speed, never the numbers."""

    def tile_layout(module: ir.Module, ctx: Any) -> ir.Module:
        """Distributed GPU layouts from axis info, layout conversions, shared memory and barriers."""
        num_warps, stages = ctx.options.num_warps, ctx.options.num_stages
        text = str(module) if max_shared is not None and stages > 1 else ""
        while True:
            module, shared = assign_gpu_layouts(module, num_warps, hooks.warp_size, hooks.pointer_bits,
                                                hooks.warp_matrix_op, stages, hooks.tensor_copy)
            if not text or shared <= max_shared or stages <= 1:
                break
            stages -= 1
            module = ir.Module.parse(text, module.context)
        if stages != ctx.options.num_stages:
            ctx.metadata["num_stages"] = stages
        ctx.metadata["shared"] = shared
        ctx.metadata["num_warps"] = num_warps
        maps = tensor_copies.tensor_maps(module.operation)
        if maps:
            ctx.metadata["tensor_maps"] = maps
        return module

    return tile_layout
