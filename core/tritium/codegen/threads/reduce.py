"""``tile.reduce`` over a distributed tensor, in three steps as in Triton.

1. Inside a thread: the registers that share their coordinates off the axis combine, in order
   along the axis.
2. Across the lanes of a warp: a butterfly of ``shuffle_xor`` over each lane bit whose basis lies
   along the axis; afterwards every lane of such a group holds the group's value.
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
from ..types import memory_type
from .indexing import I32, row_major
from ...layout.scratch import axis_bits


class Reductions:
    """Reductions; mixed into the walker."""

    def combine(self, op: ir.Operation, x: ll.Value, y: ll.Value) -> ll.Value:
        """The reduction's scalar combine region applied to ``x`` and ``y``."""
        block = op.regions[0].blocks[0]
        term = self.emit_region(block, [x, y])
        return self.env[term.operands[0]]

    def fold(self, op: ir.Operation, values: list[ll.Value]) -> ll.Value:
        """``values`` combined left to right (the same order in every thread, so copies agree)."""
        acc = values[0]
        for value in values[1:]:
            acc = self.combine(op, acc, value)
        return acc

    def emit_reduce(self, op: ir.Operation) -> None:
        src, res = op.operands[0], op.results[0]
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        dist = self.distribution(src.type)
        rank = len(dist.shape)
        if rank > 1 and layout_of_type(res.type) != Slice(axis, layout_of_type(src.type)):
            raise self.error(op, f"tile.reduce along {axis} of {src.type} to {res.type}: the result's layout "
                                 f"must be the source's sliced at {axis}")
        for basis in dist.lane_bases + dist.warp_bases:
            if basis[axis] and sum(1 for x in basis if x) > 1:
                raise self.error(op, f"tile.reduce: a thread basis {basis} of {src.type} crosses the axis")
        partials = self.within_thread(op, dist, axis)
        for bit in axis_bits(dist.lane_bases, axis):
            partials = {key: self.combine(op, v, self.shuffle_xor(v, 1 << bit)) for key, v in partials.items()}
        if axis_bits(dist.warp_bases, axis):
            partials = self.across_warps(op, dist, axis, partials)
        if rank == 1:
            self.env[res] = partials[()]
        else:
            self.env[res] = [partials[offsets] for offsets in self.distribution(res.type).register_offsets]

    def within_thread(self, op: ir.Operation, dist: Distribution, axis: int) -> dict[tuple, ll.Value]:
        """Step 1: per off-axis register offset, the combination of the registers along the axis."""
        groups: dict[tuple, list[tuple[int, ll.Value]]] = {}
        for offsets, value in zip(dist.register_offsets, self.env[op.operands[0]]):
            groups.setdefault(offsets[:axis] + offsets[axis + 1:], []).append((offsets[axis], value))
        return {key: self.fold(op, [value for _, value in sorted(items, key=lambda item: item[0])])
                for key, items in groups.items()}

    def across_warps(self, op: ir.Operation, dist: Distribution, axis: int,
                     partials: dict[tuple, ll.Value]) -> dict[tuple, ll.Value]:
        """Step 3, through shared memory (see the module docstring)."""
        b = self.b
        bits = axis_bits(dist.warp_bases, axis)
        mem = memory_type(next(iter(partials.values())).type)
        base = self.scratch(op)
        block = math.prod(dist.shape[:axis] + dist.shape[axis + 1:])
        warp = self.index.ids["warp"]
        mine: ll.Value = ll.Constant(I32, 0)
        for j, bit in enumerate(bits):
            mine = b.or_(mine, b.shl(b.and_(b.lshr(warp, ll.Constant(I32, bit)), ll.Constant(I32, 1)),
                                     ll.Constant(I32, j)))
        first_register = {}
        for r, offsets in enumerate(dist.register_offsets):
            first_register.setdefault(offsets[:axis] + offsets[axis + 1:], r)
        positions = {}
        for key, value in partials.items():
            coords = self.index.coordinates(b, dist, first_register[key])
            positions[key] = row_major(b, coords[:axis] + coords[axis + 1:], dist.shape[:axis] + dist.shape[axis + 1:])
            slot = b.add(b.mul(mine, ll.Constant(I32, block)), positions[key])
            b.store(self.to_memory(value), b.gep(base, [slot], source_etype=mem))
        self.hooks.barrier(b)
        out = {}
        for key, position in positions.items():
            addresses = [b.gep(base, [b.add(position, ll.Constant(I32, k * block))], source_etype=mem)
                         for k in range(1 << len(bits))]
            out[key] = self.fold(op, [self.from_memory(b.load(a, typ=mem), partials[key].type) for a in addresses])
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
