"""Which loads of host tensor descriptors a target's tensor copy engine takes (Hopper's TMA), and
the tensor maps the host encodes for them at launch.

A ``tile.descriptor_load`` is kept for the engine (``passes.decomposed``) where the software
pipeline will copy it ahead into a ring (``passes.software_pipeline``): a 2-D block of 1-, 2- or
4-byte elements, zero-padded, of a descriptor that is a kernel parameter, in a loop of two stages
or more, read only by products that run on the matrix instruction (directly, or transposed by a
``tl.trans``), its offsets computed from the loop's own values. The ring slot then holds the block
as ``layout.swizzle.SwizzledTile`` lays it out, which is how the engine writes it: one box per
column block of at most 128 bytes, swizzled by its width.

Each kept descriptor needs its tensor map, a kernel parameter after the others (in the order of
the descriptors' base parameters); ``tensor_maps`` lists what the launcher encodes them from
(compile metadata ``tensor_maps``).
"""

from __future__ import annotations

from ..ir.mlir import ir
from ..layout.choose import element_bytes
from ..layout.matrix import MatrixUnit, mma_layout
from ..layout.scratch import barrier_area
from ..layout.swizzle import SwizzledTile
from .axis_info import walk

#: element sizes the engine copies here
ELEMENT_BYTES = (1, 2, 4)


def base_parameter(op: ir.Operation) -> int | None:
    """The kernel parameter number of ``op``'s descriptor base, where it is one."""
    base = op.operands[0]
    if not isinstance(base.owner, ir.Block):
        return None
    owner = base.owner.owner
    owner = owner.operation if hasattr(owner, "operation") else owner
    return ir.BlockArgument(base).arg_number if owner is not None and owner.name == "func.func" else None


def block_tile(t: ir.Type) -> SwizzledTile:
    """How a copied block of type ``t`` lies in its ring slot."""
    shape = ir.RankedTensorType(t).shape
    return SwizzledTile(shape[0], shape[1], element_bytes(t))


def takes(op: ir.Operation, matrix_unit: MatrixUnit | None, num_warps: int, num_stages: int, max_box: int,
          swizzles: tuple[int, ...]) -> bool:
    """Whether the engine copies ``op`` (a ``tile.descriptor_load``; see the module docstring)."""
    from .software_pipeline import can_issue_ahead, loop_stages

    t = ir.RankedTensorType(op.results[0].type)
    if (base_parameter(op) is None or t.rank != 2 or element_bytes(t) not in ELEMENT_BYTES
            or ir.StringAttr(op.attributes["padding"]).value != "zero"):
        return False
    tile = block_tile(t)
    if (tile.rows > max_box or tile.block_cols > max_box or tile.block_cols * tile.element_bytes < 16
            or tile.cols % tile.block_cols or (tile.swizzle_bytes and tile.swizzle_bytes not in swizzles)):
        return False
    loop = op.parent
    loop = loop.operation if hasattr(loop, "operation") else loop
    if loop is None or loop.name != "scf.for":
        return False
    if loop_stages(loop, num_stages) < 2 or not _read_by_products(op, matrix_unit, num_warps):
        return False
    return can_issue_ahead(loop, [op])


def _read_by_products(op: ir.Operation, matrix_unit: MatrixUnit | None, num_warps: int) -> bool:
    """Whether ``op``'s one use is operand A or B of a product on the matrix instruction, in its
    block, directly or through one ``tile.trans``."""
    value = op.results[0]
    for _ in range(2):
        uses = list(value.uses)
        if len(uses) != 1:
            return False
        user = uses[0].owner
        user = user.operation if hasattr(user, "operation") else user
        if user.parent != op.parent:
            return False
        if user.name == "tile.dot":
            return uses[0].operand_number < 2 and mma_layout(user, matrix_unit, num_warps) is not None
        if user.name != "tile.trans":
            return False
        value = user.results[0]
    return False


#: the attribute of a ``tile.async_tensor_copy`` holding the type of the block it copies
BLOCK = "tile.block"


def copied_type(op: ir.Operation) -> ir.Type:
    """The block type a ``tile.descriptor_load`` or ``tile.async_tensor_copy`` copies."""
    return op.results[0].type if op.name == "tile.descriptor_load" else ir.TypeAttr(op.attributes[BLOCK]).value


def kept(root: ir.Operation) -> list[ir.Operation]:
    """The ops in ``root`` that copy through the engine (after ``passes.decomposed``)."""
    return [op for op in walk(root) if op.name in ("tile.descriptor_load", "tile.async_tensor_copy")]


def tensor_maps(root: ir.Operation) -> list[dict]:
    """One entry per descriptor the engine copies from, by base parameter: what the launcher
    encodes its tensor map from. ``base``: the parameter number of the base (the shape's ``rank``
    parameters and the strides' ``rank - 1`` follow it); ``box``: the box, innermost dimension
    first; ``element_bytes``; ``swizzle``: the swizzled row bytes (0: none)."""
    maps: dict[int, dict] = {}
    for op in kept(root):
        base = base_parameter(op)
        tile = block_tile(copied_type(op))
        maps[base] = {"base": base, "rank": 2, "box": [tile.block_cols, tile.rows],
                      "element_bytes": tile.element_bytes, "swizzle": tile.swizzle_bytes}
    return [maps[b] for b in sorted(maps)]


#: the attribute of a tensor-copy ring's ops holding its stages (the slots, and barrier objects)
STAGES_ATTR = "tile.ring_stages"


def ring_bytes(stages: int, slot_bytes: int) -> int:
    """A tensor-copy ring's bytes: its slots, then a barrier object per slot."""
    return stages * slot_bytes + barrier_area(stages, slot_bytes)
