"""``tile.gather`` and ``tile.histogram`` through shared memory, in code that grows with the
registers of a thread, not with the block (``tl.gather`` emits the first; ``passes.blockwide``
raises the second from the language's one-hot form).

- gather: every thread writes its registers of the source at their row-major positions in the
  op's scratch (threads holding copies write the same values), waits at a barrier, and reads each
  result register at its own coordinates with the axis' one replaced by its index (an index
  outside the axis reads an element in range and yields 0 instead);
- histogram: every thread zeroes the counters of its result registers (copies write the same 0),
  a barrier, then the first of the threads holding each source element adds 1 to its bin's counter
  with a shared-memory atomic (``DeviceHooks.shared_atomic_add``) where the element is a bin and
  its mask is true; after a barrier each thread reads its result registers' counters.
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...ir.mlir import ir
from ..types import memory_type
from .indexing import I32, row_major


class BlockwideOps:
    """``tile.gather`` and ``tile.histogram``; mixed into the walker (uses ``Conversions.to_scratch``)."""

    def emit_gather(self, op: ir.Operation) -> None:
        src, index, res = op.operands[0], op.operands[1], op.results[0]
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        dist = self.same_distribution(op, index.type, res.type)
        shape = tuple(src.type.shape)
        elem = self.lltype(res.type)
        mem = memory_type(elem)
        base = self.scratch(op)
        b = self.b
        self.to_scratch(base, self.distribution(src.type), self.env[src], mem, self.scratch_vector(op, mem))
        self.hooks.barrier(b)
        n = shape[axis]
        zero = ll.Constant(elem, None)
        out = []
        for r, position in enumerate(self.env[index]):
            inside = b.icmp_unsigned("<", position, ll.Constant(position.type, n))
            coords = self.index.coordinates(b, dist, r)
            coords[axis] = b.and_(_resize(b, position, I32), ll.Constant(I32, n - 1))
            address = b.gep(base, [row_major(b, coords, shape)], source_etype=mem)
            out.append(b.select(inside, self.from_memory(b.load(address, typ=mem), elem), zero))
        self.env[res] = out

    def emit_histogram(self, op: ir.Operation) -> None:
        src, res = op.operands[0], op.results[0]
        mask = self.env[op.operands[1]] if len(op.operands) > 1 else None
        dist, counts = self.distribution(src.type), self.distribution(res.type)
        elem = self.lltype(res.type)
        bins = res.type.shape[0]
        base = self.scratch(op)
        b = self.b
        for r in range(counts.registers):
            b.store(ll.Constant(I32, 0), b.gep(base, [self.index.linear_index(b, counts, r)], source_etype=I32))
        self.hooks.barrier(b)
        first = self.index.first_copy(dist)
        for r, value in enumerate(self.env[src]):
            hit = b.icmp_unsigned("<", value, ll.Constant(value.type, bins))
            for also in (mask[r] if mask else None, first):
                if also is not None:
                    hit = b.and_(hit, also)
            with b.if_then(hit):
                address = b.gep(base, [_resize(b, value, I32)], source_etype=I32)
                self.hooks.shared_atomic_add(b, address, ll.Constant(I32, 1))
        self.hooks.barrier(b)
        out = []
        for r in range(counts.registers):
            count = b.load(b.gep(base, [self.index.linear_index(b, counts, r)], source_etype=I32), typ=I32)
            out.append(_resize(b, count, elem))
        self.env[res] = out


def _resize(b: ll.IRBuilder, value: ll.Value, to: ll.IntType) -> ll.Value:
    """The non-negative integer ``value`` as a ``to`` (truncated or zero-extended)."""
    width = value.type.width
    return value if width == to.width else b.trunc(value, to) if width > to.width else b.zext(value, to)
