"""``tile.map_elementwise`` (``tl.map_elementwise``) over each thread's registers.

The region is emitted once per group of ``pack`` registers, on the registers' scalars: its
branches and loops become each thread's own control flow. A group is consecutive registers, which
hold consecutive elements along the last dimension: the layout stage gives ``pack`` > 1 a layout
with runs of ``pack`` elements per thread (``layout.propagate``).
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...ir.mlir import ir


class MapElementwise:
    """Walker mixin: ``tile.map_elementwise``."""

    def emit_map_elementwise(self, op: ir.Operation) -> None:
        pack = ir.IntegerAttr(op.attributes["pack"]).value
        results = list(op.results)
        count = self.registers(results[0].type)
        if count % pack:
            raise self.error(op, f"tl.map_elementwise: pack={pack} needs runs of {pack} elements in each thread; "
                                 f"its layout gives {count} registers")
        sources = [self.env[v] for v in op.operands]
        block = op.regions[0].blocks[0]
        outs: list[list[ll.Value]] = [[] for _ in results]
        for start in range(0, count, pack):
            args = [regs[i] for regs in sources for i in range(start, start + pack)]
            term = self.emit_region(block, args)
            values = [self.env[v] for v in term.operands]
            for r in range(len(results)):
                outs[r] += values[r * pack:(r + 1) * pack]
        for res, vals in zip(results, outs):
            self.env[res] = vals
