"""How much shared memory an op of the ``tile-layout`` stage uses: the contract between the
layout stage, which allocates it (``tile.shared_offset``), and the per-thread code generator
(``tritium.codegen.threads``), which uses it.

- ``tile.convert_layout`` between different distributions: the whole tensor, row-major.
- ``tile.reduce`` whose axis crosses warps: one partial per warp along the axis and per element of
  the result, row-major within each warp's block, one such region per operand (``reduce``).
- the re-indexing ops (``tile.reshape``, ``trans``, ``join``, ``split``, ``flip``) that move
  elements between threads (``reindexed.register_map``): each operand whole, row-major, one after
  the other (``codegen.threads.shape``).
- an atomic (``tile.atomic_rmw``, ``tile.atomic_cas``) whose old values are used and held by
  several threads (``shares_old_values``): the whole result, row-major; one element for a scalar.
- ``tile.gather`` and ``tile.sort``: the source whole, row-major; ``tile.histogram``: one i32
  counter per bin (``codegen.threads.blockwide``).
- a ``tile.descriptor_load`` a tensor copy engine copies outside a ring: the block as copied, then
  an 8-byte barrier object, padded to keep the block's alignment (``codegen.threads.tensor_copies``).
- ``tile.scan`` uses none: its layout keeps the whole axis inside each thread.
- ``tile.dot``: its operands, row-major, in their element type (``dot_scratch_bytes``): on the FMA
  path A transposed (``[K, M]``) then B (``[K, N]``), a 3-D product that for every batch index; on a
  matrix instruction (``layout.matrix``) A (``[M, K]``) then B (``[K, N]``), each swizzled, but for
  an operand a software pipeline's ring holds (``tile.local_load``).
- the ring ops of a software pipeline (``tile.ring``) use their ring, allocated by
  ``passes.shared_memory`` for the whole loop, not per op.

Every other op, and these where the data stays in the threads, uses none.
"""

from __future__ import annotations

import math

from ..codegen.types import PointerBits, pointers_of_64_bits
from ..ir import tile
from ..ir.mlir import ir
from .choose import element_bytes
from .distributed import Distribution, distribute, layout_of_type
from .reindexed import register_map


def axis_bits(bases: tuple[tuple[int, ...], ...], axis: int) -> list[int]:
    """The bits of ``bases`` whose basis lies along ``axis``."""
    return [bit for bit, basis in enumerate(bases) if basis[axis]]


def reduce_scratch_offsets(dist: Distribution, axis: int, element_bytes: list[int]) -> tuple[list[int], int]:
    """Where each operand's partials start in the scratch of a reduction of tensors distributed as
    ``dist`` along ``axis`` (one region per operand, 8-byte aligned), and the total bytes (0 when
    the axis stays inside each warp)."""
    warps = 1 << len(axis_bits(dist.warp_bases, axis))
    if warps == 1:
        return [0] * len(element_bytes), 0
    block = warps * math.prod(dist.shape[:axis] + dist.shape[axis + 1:])
    offsets, total = [], 0
    for size in element_bytes:
        offsets.append(total)
        total += -(-block * size // 8) * 8
    return offsets, total


#: the atomic ops: one thread per element does the atomic, the others may need its old value
ATOMICS = ("tile.atomic_rmw", "tile.atomic_cas")


def _elements(t: ir.Type) -> int:
    return math.prod(t.shape) if isinstance(t, ir.RankedTensorType) else 1


def shares_old_values(op: ir.Operation) -> bool:
    """Whether an atomic's old values pass through shared memory: they are used, and some element
    is held by several threads (a scalar by all of them) while only one of them does the atomic."""
    res = op.results[0]
    if not any(True for _ in res.uses):
        return False
    if not isinstance(res.type, ir.RankedTensorType):
        return True
    dist = distribute(layout_of_type(res.type), tuple(res.type.shape))
    return bool(dist.copies(dist.lane_bases) or dist.copies(dist.warp_bases))


def dot_scratch_bytes(m: int, n: int, k: int, element_bytes: int) -> int:
    """Shared memory a ``tile.dot`` of ``[m, k] x [k, n]`` operands of ``element_bytes`` uses: both
    operands (the accumulator stays in registers, in a matrix instruction's layout or the FMA path's)."""
    return (m + n) * k * element_bytes


def _in_ring(value: ir.Value) -> bool:
    """Whether ``value`` is a software pipeline's ring slot (``tile.local_load``), or its transpose
    kept in the threads' registers (the product reads the slot: ``codegen.threads.shape``)."""
    if isinstance(value.owner, ir.Block):
        return False
    op = value.owner.operation
    if op.name == "tile.trans" and register_map(op) is not None:
        return _in_ring(op.operands[0])
    return op.name == "tile.local_load"


def barrier_area(count: int, block_bytes: int) -> int:
    """Bytes after a block (or a ring's slots) of ``block_bytes`` for ``count`` barrier objects of 8
    bytes, keeping the whole a multiple of the block's alignment (up to 1024 bytes): the allocator
    aligns buffers by their size, and a copy engine wants its swizzled boxes aligned."""
    align = max(8, min(1024, block_bytes & -block_bytes))
    return -(-8 * count // align) * align


def scratch_bytes(op: ir.Operation, pointer_bits: PointerBits = pointers_of_64_bits) -> int:
    """Bytes of shared memory ``op`` uses from its ``tile.shared_offset`` (0: it needs none);
    ``pointer_bits`` sizes pointer elements (``DeviceHooks.pointer_bits``)."""
    if op.name in tile.REINDEXING:
        if register_map(op) is not None:
            return 0
        src = ir.RankedTensorType(op.operands[0].type)
        return len(op.operands) * math.prod(src.shape) * element_bytes(src, pointer_bits)
    if op.name == "tile.descriptor_load":  # kept for a tensor copy, outside a ring: the block, a barrier
        block = _elements(op.results[0].type) * element_bytes(op.results[0].type, pointer_bits)
        return block + barrier_area(1, block)
    if op.name in ("tile.gather", "tile.sort"):
        return _elements(op.operands[0].type) * element_bytes(op.operands[0].type, pointer_bits)
    if op.name == "tile.histogram":
        return 4 * _elements(op.results[0].type)
    if op.name in ATOMICS:
        return element_bytes(op.results[0].type, pointer_bits) * _elements(op.results[0].type) \
            if shares_old_values(op) else 0
    if op.name not in ("tile.convert_layout", "tile.reduce", "tile.dot"):
        return 0
    src = ir.RankedTensorType(op.operands[0].type)
    size = element_bytes(src, pointer_bits)
    if op.name == "tile.dot":  # a 3-D product holds every batch index's operands
        *batch, m, k = src.shape
        ringed = [_in_ring(v) for v in op.operands[:2]]
        if any(ringed):  # an operand a software pipeline left in its ring is read there
            return sum(math.prod(v.type.shape) * size for v, r in zip(op.operands[:2], ringed) if not r)
        return math.prod(batch) * dot_scratch_bytes(m, ir.RankedTensorType(op.operands[1].type).shape[-1], k, size)
    dist = distribute(layout_of_type(src), tuple(src.shape))
    if op.name == "tile.reduce":
        sizes = [element_bytes(o.type, pointer_bits) for o in op.operands]
        return reduce_scratch_offsets(dist, ir.IntegerAttr(op.attributes["axis"]).value, sizes)[1]
    res = ir.RankedTensorType(op.results[0].type)
    if distribute(layout_of_type(res), tuple(res.shape)) == dist:
        return 0
    return math.prod(src.shape) * size
