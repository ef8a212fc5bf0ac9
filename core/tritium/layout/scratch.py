"""How much shared memory an op of the ``tile-layout`` stage uses: the contract between the
layout stage, which allocates it (``tile.shared_offset``), and the per-thread code generator
(``tritium.codegen.threads``), which uses it.

- ``tile.convert_layout`` between different distributions: the whole tensor, row-major.
- ``tile.reduce`` whose axis crosses warps: one partial per warp along the axis and per element of
  the result, row-major within each warp's block (``reduce``).
- ``tile.dot``: its operands, A transposed (``[K, M]``) then B (``[K, N]``), row-major, in their
  element type (``dot_scratch_bytes``); a 3-D product, that for every batch index.

Every other op, and these where the data stays in the threads, uses none.
"""

from __future__ import annotations

import math

from ..codegen.types import PointerBits, pointers_of_64_bits
from ..ir.mlir import ir
from .choose import element_bytes
from .distributed import Distribution, distribute, layout_of_type


def axis_bits(bases: tuple[tuple[int, ...], ...], axis: int) -> list[int]:
    """The bits of ``bases`` whose basis lies along ``axis``."""
    return [bit for bit, basis in enumerate(bases) if basis[axis]]


def reduce_scratch_bytes(dist: Distribution, axis: int, element_bytes: int) -> int:
    """Shared memory a reduction of a tensor distributed as ``dist`` along ``axis`` uses."""
    warps = 1 << len(axis_bits(dist.warp_bases, axis))
    if warps == 1:
        return 0
    return warps * math.prod(dist.shape[:axis] + dist.shape[axis + 1:]) * element_bytes


def dot_scratch_bytes(m: int, n: int, k: int, element_bytes: int) -> int:
    """Shared memory a ``tile.dot`` of ``[m, k] x [k, n]`` operands of ``element_bytes`` uses."""
    return (m + n) * k * element_bytes


def scratch_bytes(op: ir.Operation, pointer_bits: PointerBits = pointers_of_64_bits) -> int:
    """Bytes of shared memory ``op`` uses from its ``tile.shared_offset`` (0: it needs none);
    ``pointer_bits`` sizes pointer elements (``Target.pointer_bits``)."""
    if op.name not in ("tile.convert_layout", "tile.reduce", "tile.dot"):
        return 0
    src = ir.RankedTensorType(op.operands[0].type)
    size = element_bytes(src, pointer_bits)
    if op.name == "tile.dot":  # a 3-D product holds every batch index's operands
        *batch, m, k = src.shape
        return math.prod(batch) * dot_scratch_bytes(m, ir.RankedTensorType(op.operands[1].type).shape[-1], k, size)
    dist = distribute(layout_of_type(src), tuple(src.shape))
    if op.name == "tile.reduce":
        return reduce_scratch_bytes(dist, ir.IntegerAttr(op.attributes["axis"]).value, size)
    res = ir.RankedTensorType(op.results[0].type)
    if distribute(layout_of_type(res), tuple(res.shape)) == dist:
        return 0
    return math.prod(src.shape) * size
