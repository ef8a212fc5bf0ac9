"""``tile.scan`` over distributed tensors: inside each thread, then across the lanes of a warp.

The tile-layout stage gives a scan's operands and results a layout where the lanes of one warp
share the scan axis, each holding one contiguous run of it (``layout.propagate.scan_layout``;
conversions in and out are its business). Then, in scan order (backwards when ``reverse``):

1. each thread scans its run in registers and keeps the run's total;
2. a butterfly of ``shuffle_xor`` over the lane bits along the axis, lowest first, builds for every
   lane the combination of the runs before its own: at each bit the two groups of lanes swap
   totals; the later group puts the earlier one's total in front of its prefix, and both combine
   the two totals in scan order, so every step keeps the order and the combine function need
   not be commutative;
3. each thread puts its prefix in front of its run's values (lanes without one keep them).
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...ir.mlir import ir
from .indexing import I32


class Scans:
    """``tile.scan``; mixed into the walker (uses ``Reductions.combine`` and ``shuffle_xor``)."""

    def emit_scan(self, op: ir.Operation) -> None:
        srcs, results = list(op.operands), list(op.results)
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        reverse = ir.IntegerAttr(op.attributes["reverse"]).value != 0
        dist = self.distribution(srcs[0].type)
        for value in srcs[1:] + results:
            self.same_distribution(op, value.type, srcs[0].type)
        lines: dict[tuple, list[tuple[int, int]]] = {}
        for r, offsets in enumerate(dist.register_offsets):
            lines.setdefault(offsets[:axis] + offsets[axis + 1:], []).append((offsets[axis], r))
        run = len(next(iter(lines.values())))
        bits = [bit for bit, basis in enumerate(dist.lane_bases) if basis[axis]]
        pure = all(basis[axis] == run << j and sum(1 for x in basis if x) == 1
                   for j, basis in enumerate(dist.lane_bases[bit] for bit in bits))
        if not pure or any(basis[axis] for basis in dist.warp_bases) or run << len(bits) != dist.shape[axis] or \
                any(sorted(o for o, _ in line) != list(range(run)) for line in lines.values()):
            raise self.error(op, f"tile.scan along {axis} of {srcs[0].type}: the lanes of a warp must hold the "
                                 f"axis in contiguous runs, in lane order (the tile-layout stage gives a scan such "
                                 f"a layout)")
        out: list[list[ll.Value | None]] = [[None] * dist.registers for _ in srcs]
        for line in lines.values():
            order = [r for _, r in sorted(line, reverse=reverse)]
            acc = None
            for r in order:  # step 1
                current = [self.env[src][r] for src in srcs]
                acc = current if acc is None else self.combine(op, acc, current)
                for i, value in enumerate(acc):
                    out[i][r] = value
            if bits:
                self.prefix_from_lanes(op, bits, reverse, acc, out, order)
        for res, registers in zip(results, out):
            self.env[res] = registers

    def prefix_from_lanes(self, op: ir.Operation, bits: list[int], reverse: bool, total: list[ll.Value],
                          out: list[list[ll.Value]], registers: list[int]) -> None:
        """Steps 2 and 3 for one line of registers whose run has ``total`` (see the module docstring)."""
        b = self.b
        prefix: list[ll.Value] | None = None
        has: ll.Value | None = None
        for bit in bits:
            theirs = [self.shuffle_xor(v, 1 << bit) for v in total]
            upper = b.icmp_unsigned("!=", b.and_(self.index.ids["lane"], ll.Constant(I32, 1 << bit)),
                                    ll.Constant(I32, 0))
            later = b.not_(upper) if reverse else upper  # this lane's group comes after its partner's
            first = [b.select(later, t, m) for m, t in zip(total, theirs)]
            second = [b.select(later, m, t) for m, t in zip(total, theirs)]
            if prefix is None:
                prefix, has = theirs, later
            else:
                joined = self.combine(op, theirs, prefix)
                prefix = [b.select(later, b.select(has, j, t), p) for j, t, p in zip(joined, theirs, prefix)]
                has = b.or_(has, later)
            total = self.combine(op, first, second)
        for r in registers:
            local = [values[r] for values in out]
            for i, value in enumerate(self.combine(op, prefix, local)):
                out[i][r] = b.select(has, value, local[i])
