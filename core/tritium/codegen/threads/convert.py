"""``tile.convert_layout``: the same tensor, moved between distributions through shared memory.

Every thread writes each of its registers at the element's row-major position in the scratch
buffer at the op's ``tile.shared_offset`` (threads holding copies write the same value), waits at
a barrier, then reads the elements of its registers in the destination distribution. The scratch
holds the whole tensor: ``elements * element bytes``. Two types of the same distribution convert
for free.
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...ir.mlir import ir
from ..types import memory_type


class Conversions:
    """Layout conversions; mixed into the walker."""

    def emit_convert_layout(self, op: ir.Operation) -> None:
        src, res = op.operands[0], op.results[0]
        source, target = self.distribution(src.type), self.distribution(res.type)
        if source == target:
            self.env[res] = self.env[src]
            return
        b = self.b
        elem = self.lltype(res.type)
        mem = memory_type(elem)
        base = self.scratch(op)
        for r, value in enumerate(self.env[src]):
            b.store(self.to_memory(value), b.gep(base, [self.index.linear_index(b, source, r)], source_etype=mem))
        self.hooks.barrier(b)
        self.env[res] = [self.from_memory(b.load(b.gep(base, [self.index.linear_index(b, target, r)], source_etype=mem),
                                                 typ=mem), elem)
                         for r in range(target.registers)]
