"""Shared-memory scratch for the ops that move data between threads, and the barriers between uses.

Ops that need scratch: ``tile.convert_layout`` between different distributions (the whole tensor
passes through shared memory), a ``tile.reduce`` whose reduced dimension spans several warps
(each warp leaves its partial results there for the others), the re-indexing ops (their
operands pass through it) and ``tile.dot`` (its operands); ``layout.scratch`` sizes them. Each gets
the attribute ``tile.shared_offset`` (i32, bytes) into the
program's shared memory.

Offsets are allocated over liveness intervals in program order: two buffers share bytes only when
their intervals do not overlap. A scratch buffer lives during its op alone, so today every buffer
may sit at offset 0; the allocator is written for buffers that live longer. Offsets are aligned
to the largest power of two that divides a buffer's size, from 16 bytes (the widest vector access)
to 1024 (a swizzled operand tile's period, ``layout.swizzle``, which a warpgroup instruction's
descriptors need aligned).

A software pipeline's ring (``passes.software_pipeline``: the ops that share one ``tile.ring``) lives
from its first op to its last; its ops order their own uses (its waits end with a barrier), so
they take no part in the barriers below, and a ``tile.async_wait`` counts as a barrier.

Barriers: the code generator orders an op's own writes and reads; what it cannot see is an earlier
op whose threads may still read bytes that this op writes. So a ``tile.barrier`` goes before a
scratch user when an overlapping scratch use may have happened since the last barrier, along any
path: straight-line code, either branch of an ``scf.if``, or the previous iteration of an
enclosing loop.
"""

from __future__ import annotations

import dataclasses

from ..codegen.types import PointerBits, pointers_of_64_bits
from ..ir import tile
from ..ir.mlir import ir
from ..layout.scratch import scratch_bytes
from .axis_info import walk
from .software_pipeline import RING, RING_BYTES

OFFSET = "tile.shared_offset"
ALIGN = 16
MAX_ALIGN = 1024


@dataclasses.dataclass
class Buffer:
    """``size`` bytes live from op number ``start`` to op number ``end`` (inclusive)."""

    start: int
    end: int
    size: int
    offset: int = 0


def allocate(buffers: list[Buffer]) -> int:
    """Give each buffer the lowest aligned offset whose bytes no buffer live at the same time uses
    (larger buffers first); return the total bytes."""
    placed: list[Buffer] = []
    for buf in sorted(buffers, key=lambda b: (-b.size, b.start)):
        live = sorted((p for p in placed if p.start <= buf.end and buf.start <= p.end), key=lambda p: p.offset)
        offset = 0
        for other in live:
            if offset + buf.size <= other.offset:
                break
            offset = max(offset, _align(other.offset + other.size, _alignment(buf.size)))
        buf.offset = offset
        placed.append(buf)
    return max((b.offset + b.size for b in buffers), default=0)


def allocate_shared(module: ir.Module, pointer_bits: PointerBits = pointers_of_64_bits) -> int:
    """Set ``tile.shared_offset`` on every scratch user of ``module``, then insert the barriers it
    needs; return the total shared-memory bytes."""
    with module.context, ir.Location.unknown():
        users: list[tuple[list[ir.Operation], Buffer]] = []
        rings: dict[int, tuple[list[ir.Operation], Buffer]] = {}
        for index, op in enumerate(walk(module.operation)):
            if RING in op.attributes:  # a software pipeline's ring lives from its first op to its last
                ring = ir.IntegerAttr(op.attributes[RING]).value
                if ring not in rings:
                    rings[ring] = ([], Buffer(index, index, ir.IntegerAttr(op.attributes[RING_BYTES]).value))
                rings[ring][0].append(op)
                rings[ring][1].end = index
                continue
            size = scratch_bytes(op, pointer_bits)
            if size:
                users.append(([op], Buffer(index, index, size)))
        extend_through_loops(module, rings.values())
        users += rings.values()
        total = allocate([buf for _, buf in users])
        for ops, buf in users:
            for op in ops:
                op.attributes[OFFSET] = tile.i32_attr(buf.offset)
        place_barriers(module, pointer_bits)
        return total


def extend_through_loops(module: ir.Module, rings) -> None:
    """A ring read inside a loop that it was filled before runs again in the next iteration: it
    lives to the end of that loop, and to the last user of what is read from it."""
    index = {op: i for i, op in enumerate(walk(module.operation))}
    last = {}
    for op, i in index.items():  # the last op inside each enclosing loop
        parent = op.parent
        while parent is not None and parent.name != "func.func":
            if parent.name in ("scf.for", "scf.while"):
                last[parent] = max(last.get(parent, 0), i)
            parent = parent.parent
    for ops, buf in rings:
        for op in ops:
            for res in op.results:
                for use in res.uses:
                    buf.end = max(buf.end, index.get(use.owner.operation if hasattr(use.owner, "operation")
                                                     else use.owner, buf.end))
            parent = op.parent
            while parent is not None and parent.name != "func.func":
                if parent in last and index[parent] > buf.start:
                    buf.end = max(buf.end, last[parent])
                parent = parent.parent


def place_barriers(module: ir.Module, pointer_bits: PointerBits = pointers_of_64_bits) -> None:
    """Insert a ``tile.barrier`` before each scratch user (an op with ``tile.shared_offset``) whose
    bytes an earlier scratch use may still hold (see the module docstring)."""
    with module.context, ir.Location.unknown():
        ranges = {}
        for op in walk(module.operation):
            if OFFSET in op.attributes and RING not in op.attributes:  # rings order themselves
                offset = ir.IntegerAttr(op.attributes[OFFSET]).value
                ranges[op] = (offset, offset + scratch_bytes(op, pointer_bits))
        _Barriers(ranges).region_tree(module.operation)


def _alignment(size: int) -> int:
    """The alignment of a buffer of ``size`` bytes (see the module docstring)."""
    return max(ALIGN, min(MAX_ALIGN, size & -size))


def _align(n: int, alignment: int = ALIGN) -> int:
    return -(-n // alignment) * alignment


Dirty = frozenset  # of (first byte, end byte) ranges used since the last barrier


class _Barriers:
    """Dataflow over ``Dirty`` sets in program order; loops iterate to a fixed point."""

    def __init__(self, ranges: dict[ir.Operation, tuple[int, int]]):
        self.ranges = ranges

    def region_tree(self, op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                self.block(block, Dirty(), insert=True)

    def block(self, block: ir.Block, dirty: Dirty, insert: bool) -> Dirty:
        for op in list(block.operations):
            dirty = self.op(op.operation, dirty, insert)
        return dirty

    def op(self, op: ir.Operation, dirty: Dirty, insert: bool) -> Dirty:
        if op.name in ("tile.barrier", "tile.async_wait"):  # a wait ends with a barrier
            return Dirty()
        blocks = [block for region in op.regions for block in region.blocks]
        if op.name in ("scf.for", "scf.while"):
            dirty = self.loop(blocks, dirty, insert)
        elif blocks:  # scf.if and ops with inner regions: one of them runs (an scf.if may run none)
            outs = [self.block(block, dirty, insert) for block in blocks]
            skipped = op.name == "scf.if" and len(blocks) < 2
            dirty = Dirty().union(*outs, dirty if skipped else Dirty())
        used = self.ranges.get(op)
        if used is None:
            return dirty
        if any(lo < used[1] and used[0] < hi for lo, hi in dirty):
            if insert:
                tile.BarrierOp(loc=op.location, ip=ir.InsertionPoint(op))
            dirty = Dirty()
        return dirty | {used}

    def loop(self, blocks: list[ir.Block], dirty: Dirty, insert: bool) -> Dirty:
        """A loop's blocks run in order any number of times: the state entering them joins the
        state before the loop and after any iteration; leaving, any state seen may hold."""
        entry = dirty
        while True:
            seen = self.blocks(blocks, entry, insert=False)
            if seen <= entry:
                break
            entry = entry | seen
        return entry | self.blocks(blocks, entry, insert)

    def blocks(self, blocks: list[ir.Block], dirty: Dirty, insert: bool) -> Dirty:
        """The union of the states after each of ``blocks``, run in order from ``dirty``."""
        seen = Dirty()
        for block in blocks:
            dirty = self.block(block, dirty, insert)
            seen |= dirty
        return seen

