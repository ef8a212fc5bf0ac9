"""``tile.convert_layout``: the same tensor, moved between distributions through shared memory.

Every thread writes each of its registers at the element's row-major position in the scratch
buffer at the op's ``tile.shared_offset`` (threads holding copies write the same value), waits at
a barrier, then reads the elements of its registers in the destination distribution. A thread's
registers that are consecutive along the last dimension move as one vector of up to 16 bytes, as
far as the scratch offset's alignment allows. Two types of the same distribution convert for free.
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...ir.mlir import ir
from ...layout.distributed import Distribution
from ..types import memory_type, vector_of
from .memory import MAX_VECTOR_BYTES, vector_width


class Conversions:
    """Layout conversions; mixed into the walker."""

    def emit_convert_layout(self, op: ir.Operation) -> None:
        src, res = op.operands[0], op.results[0]
        source, target = self.distribution(src.type), self.distribution(res.type)
        if source == target:
            self.env[res] = self.env[src]
            return
        elem = self.lltype(res.type)
        mem = memory_type(elem)
        size = self.element_bytes(mem)
        limit = self.scratch_vector(op, mem)
        base = self.scratch(op)
        b = self.b
        self.to_scratch(base, source, self.env[src], mem, limit)
        self.hooks.barrier(b)
        w = self.row_vector_width(target, limit)
        out = []
        for r0 in range(0, target.registers, w):
            address = b.gep(base, [self.index.linear_index(b, target, r0)], source_etype=mem)
            out += [self.from_memory(v, elem)
                    for v in self.unpack(b.load(address, typ=vector_of(mem, w), align=w * size), w)]
        self.env[res] = out

    def scratch_vector(self, op: ir.Operation, mem: ll.Type) -> int:
        """The most ``mem`` elements one access of ``op``'s scratch moves: 16 bytes, as far as the
        scratch offset's alignment allows."""
        offset = self.shared_offset(op)
        aligned = min(MAX_VECTOR_BYTES, offset & -offset) if offset else MAX_VECTOR_BYTES
        return max(1, aligned // self.element_bytes(mem))

    def to_scratch(self, base: ll.Value, dist: Distribution, values: list[ll.Value], mem: ll.Type,
                   limit: int) -> None:
        """Store a tensor's registers at their row-major positions from ``base`` (elements of
        ``mem``), as vectors of up to ``limit`` elements; threads holding copies write the same."""
        b, size = self.b, self.element_bytes(mem)
        w = self.row_vector_width(dist, limit)
        for r0 in range(0, dist.registers, w):
            address = b.gep(base, [self.index.linear_index(b, dist, r0)], source_etype=mem)
            b.store(self.to_memory(self.pack(values[r0:r0 + w])), address, align=w * size)

    @staticmethod
    def row_vector_width(dist: Distribution, limit: int) -> int:
        """Registers per shared access: runs along the last dimension are runs in row-major order."""
        return vector_width(dist, limit) if dist.contiguous_dim == len(dist.shape) - 1 else 1
