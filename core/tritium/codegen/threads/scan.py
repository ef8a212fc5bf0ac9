"""``tile.scan`` over distributed tensors: inside each thread.

The tile-layout stage gives a scan's operands and results a layout where every thread holds the
whole scan axis (``layout.propagate.scan_layout``; conversions in and out are its business), so a
scan is a walk along each thread's registers in order of their position on the axis (backwards
when ``reverse``), combining as it goes. No thread needs another's values, and the order is the
definition's, so the combine function need not be commutative.
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...ir.mlir import ir


class Scans:
    """``tile.scan``; mixed into the walker (uses ``Reductions.combine``)."""

    def emit_scan(self, op: ir.Operation) -> None:
        srcs, results = list(op.operands), list(op.results)
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        reverse = ir.IntegerAttr(op.attributes["reverse"]).value != 0
        dist = self.distribution(srcs[0].type)
        for value in srcs[1:] + results:
            self.same_distribution(op, value.type, srcs[0].type)
        if any(basis[axis] for basis in dist.lane_bases + dist.warp_bases):
            raise self.error(op, f"tile.scan along {axis} of {srcs[0].type}: every thread must hold the whole "
                                 f"axis (the tile-layout stage gives a scan such a layout)")
        lines: dict[tuple, list[tuple[int, int]]] = {}
        for r, offsets in enumerate(dist.register_offsets):
            lines.setdefault(offsets[:axis] + offsets[axis + 1:], []).append((offsets[axis], r))
        out: list[list[ll.Value | None]] = [[None] * dist.registers for _ in srcs]
        for line in lines.values():
            if len(line) != dist.shape[axis]:
                raise self.error(op, f"tile.scan along {axis} of {srcs[0].type}: a thread holds {len(line)} of "
                                     f"the {dist.shape[axis]} elements of the axis")
            acc = None
            for _, r in sorted(line, reverse=reverse):
                current = [self.env[src][r] for src in srcs]
                acc = current if acc is None else self.combine(op, acc, current)
                for i, value in enumerate(acc):
                    out[i][r] = value
        for res, registers in zip(results, out):
            self.env[res] = registers
