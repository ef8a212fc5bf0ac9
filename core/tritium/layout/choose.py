"""Choosing the blocked layouts of a GPU kernel from its memory accesses (Triton's Coalesce, simplified).

Each ``tile.load``/``tile.store`` of a tensor wants its threads to read neighbouring addresses
(coalescing) and each thread to move as many bytes as one vector instruction allows. The axis
analysis tells how many elements along each dimension are contiguous and how aligned their first
address is; from that an access gets an *order* (its dimensions, most contiguous first) and a
*vector* width along ``order[0]``:

    min(contiguity, divisibility in bytes / element bytes, 16 bytes / element bytes)

capped at ``elements / threads`` (at least 1) so a small tile does not leave threads idle, as in
Triton. One blocked layout per rank then serves every tensor of that rank (a blocked layout does
not depend on the shape): the largest access of the rank decides the order and how threads and
warps spread, the widest vector along that order its ``size_per_thread``.

One layout serves all accesses of a rank, so an access less aligned than the widest one (or masked
in shorter runs) must use narrower vectors than its ``size_per_thread``: the code generator takes
each access's own width from the axis info.

Except a load whose every use is an operand of a ``tile.dot``, or of one through a ``tile.trans``
(``operand_layouts``): its result goes through shared memory anyway, so it gets a blocked layout of
its own shape, its threads spread over it without holding copies (a matmul's A is narrower than the
tile its result is stored in: the rank's layout would have several threads load each element). Such
loads take no part in choosing the rank's layout. And an access whose addresses run along another
dimension than the rank's layout's (a column-major operand beside a row-major result) gets a layout
of its own too (``crossing_layouts``), as Triton coalesces each access on its own: its threads move
whole vectors, and its value is converted from or to the rank's layout.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Container, Iterator

from ..codegen.runs import widest_run
from ..codegen.types import PointerBits, llvm_type, pointers_of_64_bits, size_in_bytes
from ..ir import tile
from ..ir.mlir import ir
from ..passes.axis_info import AxisInfo, walk
from .distributed import Blocked, default_blocked

#: the widest access one thread makes with one instruction
VECTOR_BYTES = 16


@dataclasses.dataclass(frozen=True)
class Access:
    """One memory op's wish: its shape, the order of its dimensions and its vector width."""

    shape: tuple[int, ...]
    order: tuple[int, ...]
    vector: int


def element_bytes(t: ir.Type, pointer_bits: PointerBits = pointers_of_64_bits) -> int:
    """Bytes one element of ``t`` (a tensor or a scalar type) occupies in memory (``i1``: one byte;
    a pointer: ``pointer_bits`` of its address space)."""
    elem = t.element_type if isinstance(t, ir.RankedTensorType) else t
    return size_in_bytes(llvm_type(elem), pointer_bits)


def access_order(info: AxisInfo) -> tuple[int, ...]:
    """Dimensions by decreasing contiguity; ties put the later dimension first."""
    return tuple(sorted(range(info.rank), key=lambda d: (-info.contiguity[d], -d)))


def vector_width(info: AxisInfo, dim: int, elem_bytes: int, elements: int, threads: int) -> int:
    """Elements one thread accesses at once along ``dim`` (see the module docstring): the widest
    aligned run of at most 16 bytes (``codegen.runs``, the rule the code generators apply too)."""
    return max(1, min(widest_run(info, dim, elem_bytes, VECTOR_BYTES), elements // threads))


def _memory_ops(module: ir.Module, infos: dict[ir.Value, AxisInfo], pointer_bits: PointerBits,
                skip: Container[ir.Operation] = ()) -> Iterator[tuple[ir.Operation, AxisInfo, int]]:
    """Each tensor ``tile.load``/``tile.store`` but those in ``skip``, with its pointers' axis info
    and element bytes."""
    for op in walk(module.operation):
        if op.name not in ("tile.load", "tile.store") or op in skip:
            continue
        ptr = op.operands[0]
        if isinstance(ptr.type, ir.RankedTensorType) and ptr in infos:
            pointee = tile.pointee(ir.RankedTensorType(ptr.type).element_type)
            yield op, infos[ptr], element_bytes(pointee, pointer_bits)


def operand_layouts(module: ir.Module, infos: dict[ir.Value, AxisInfo], num_warps: int, warp_size: int,
                    pointer_bits: PointerBits = pointers_of_64_bits) -> dict[ir.Operation, Blocked]:
    """The layout of each load that only products read (see the module docstring)."""
    out = {}
    for op, info, elem_bytes in _memory_ops(module, infos, pointer_bits):
        if op.name != "tile.load" or not _only_product_operand(op.results[0]):
            continue
        shape = tuple(ir.RankedTensorType(op.operands[0].type).shape)
        order = access_order(info)
        vector = vector_width(info, order[0], elem_bytes, math.prod(shape), num_warps * warp_size)
        out[op] = default_blocked(shape, num_warps, warp_size, vector, order)
    return out


def _owner(use) -> ir.Operation:
    return use.owner.operation if hasattr(use.owner, "operation") else use.owner


def _only_product_operand(value: ir.Value) -> bool:
    """Whether every use of ``value`` is operand A or B of a ``tile.dot``, directly or through a
    ``tile.trans`` (``tl.dot(a, b.T)``)."""
    uses = list(value.uses)
    return bool(uses) and all((_owner(u).name == "tile.dot" and u.operand_number <= 1)
                              or (_owner(u).name == "tile.trans" and _only_product_operand(_owner(u).results[0]))
                              for u in uses)


def _access(op: ir.Operation, info: AxisInfo, elem_bytes: int, threads: int) -> Access:
    shape = tuple(ir.RankedTensorType(op.operands[0].type).shape)
    order = access_order(info)
    return Access(shape, order, vector_width(info, order[0], elem_bytes, math.prod(shape), threads))


def accesses(module: ir.Module, infos: dict[ir.Value, AxisInfo], threads: int,
             pointer_bits: PointerBits = pointers_of_64_bits, skip: Container[ir.Operation] = ()) -> Iterator[Access]:
    """The access of every tensor ``tile.load``/``tile.store`` of ``module`` but those in ``skip``,
    in program order."""
    for op, info, elem_bytes in _memory_ops(module, infos, pointer_bits, skip):
        yield _access(op, info, elem_bytes, threads)


def crossing_layouts(module: ir.Module, infos: dict[ir.Value, AxisInfo], defaults: dict[int, Blocked],
                     num_warps: int, warp_size: int, pointer_bits: PointerBits = pointers_of_64_bits,
                     skip: Container[ir.Operation] = ()) -> dict[ir.Operation, Blocked]:
    """The layout of each access but those in ``skip`` whose addresses run along another dimension
    than its rank's layout's (see the module docstring)."""
    out = {}
    for op, info, elem_bytes in _memory_ops(module, infos, pointer_bits, skip):
        access = _access(op, info, elem_bytes, num_warps * warp_size)
        default = defaults.get(len(access.shape))
        if default is not None and info.contiguity[access.order[0]] > 1 and access.order[0] != default.order[0]:
            out[op] = default_blocked(access.shape, num_warps, warp_size, access.vector, access.order)
    return out


def default_layouts(module: ir.Module, infos: dict[ir.Value, AxisInfo], num_warps: int, warp_size: int,
                    pointer_bits: PointerBits = pointers_of_64_bits,
                    skip: Container[ir.Operation] = ()) -> dict[int, Blocked]:
    """The blocked layout of each tensor rank in ``module``, from its accesses but those in ``skip``
    (see the module docstring); a rank without such accesses spreads its largest shape with one
    element per thread."""
    by_rank: dict[int, list[Access]] = {}
    for access in accesses(module, infos, num_warps * warp_size, pointer_bits, skip):
        by_rank.setdefault(len(access.shape), []).append(access)
    largest: dict[int, tuple[int, ...]] = {}
    for t in _tensor_types(module.operation):
        shape = tuple(t.shape)
        if len(shape) not in largest or math.prod(shape) > math.prod(largest[len(shape)]):
            largest[len(shape)] = shape
    layouts = {}
    for rank, shape in largest.items():
        group = by_rank.get(rank)
        if not group:
            layouts[rank] = default_blocked(shape, num_warps, warp_size)
            continue
        leader = max(group, key=lambda a: math.prod(a.shape))  # the first of the largest
        vector = max(a.vector for a in group if a.order[0] == leader.order[0])
        layouts[rank] = default_blocked(leader.shape, num_warps, warp_size, vector, leader.order)
    return layouts


def _tensor_types(op: ir.Operation) -> Iterator[ir.RankedTensorType]:
    """The type of every tensor result and block argument inside ``op``."""
    for inner in [op, *walk(op)]:
        values = [a for region in inner.regions for block in region.blocks for a in block.arguments]
        for value in values + (list(inner.results) if inner is not op else []):
            if isinstance(value.type, ir.RankedTensorType):
                yield ir.RankedTensorType(value.type)

