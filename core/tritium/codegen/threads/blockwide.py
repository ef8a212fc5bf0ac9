"""``tile.gather``, ``tile.histogram`` and ``tile.sort`` through shared memory, in code that grows
with the registers of a thread, not with the block (``tl.gather`` emits the first;
``passes.blockwide`` raises the second from the language's one-hot form; ``passes.decomposed`` keeps
the third for large blocks).

- gather: every thread writes its registers of the source at their row-major positions in the
  op's scratch (threads holding copies write the same values), waits at a barrier, and reads each
  result register at its own coordinates with the axis' one replaced by its index (an index
  outside the axis reads an element in range and yields 0 instead);
- histogram: every thread zeroes the counters of its result registers (copies write the same 0),
  a barrier, then the first of the threads holding each source element adds 1 to its bin's counter
  with a shared-memory atomic (``DeviceHooks.shared_atomic_add``) where the element is a bin and
  its mask is true; after a barrier each thread reads its result registers' counters;
- sort: every thread writes its registers of the source at their row-major positions, then the
  bitonic network runs as two loops: over its rounds (stage ``s`` from 1 to log2(n), partner
  distance ``2**j`` from ``2**(s-1)`` down to 1) and, in each round, over the row's pairs that this
  thread compares and swaps in place (pair ``p`` of all rows' ``n / 2``, every thread's ``p``
  apart by the thread count), a barrier after each round. A pair ends ascending, or descending in
  the blocks of ``2**s`` whose bit ``s`` is set (and in the last stage where the sort is
  descending; ``tl.topk`` sorts descending). Each thread then reads its result registers, the
  first ``k`` along the axis.
"""

from __future__ import annotations

import math

from llvmlite import ir as ll

from ...ir.mlir import ir
from ..accumulate import phi_loop
from ..types import memory_type
from .indexing import I32, row_major


class BlockwideOps:
    """``tile.gather``, ``tile.histogram`` and ``tile.sort``; mixed into the walker (uses
    ``Conversions.to_scratch``)."""

    def _source_in_scratch(self, op: ir.Operation) -> tuple[ll.Value, ll.Type, ll.Type]:
        """Write operand 0 of ``op`` whole, row-major, into ``op``'s scratch and wait for every
        thread's writes; return the scratch and the result's element type and its memory type."""
        src = op.operands[0]
        elem = self.lltype(op.results[0].type)
        mem = memory_type(elem)
        base = self.scratch(op)
        self.to_scratch(base, self.distribution(src.type), self.env[src], mem, self.scratch_vector(op, mem))
        self.hooks.barrier(self.b)
        return base, elem, mem

    def emit_gather(self, op: ir.Operation) -> None:
        src, index, res = op.operands[0], op.operands[1], op.results[0]
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        dist = self.same_distribution(op, index.type, res.type)
        shape = tuple(src.type.shape)
        base, elem, mem = self._source_in_scratch(op)
        b = self.b
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

    def emit_sort(self, op: ir.Operation) -> None:
        src, res = op.operands[0], op.results[0]
        dim, descending, k, unsigned = (ir.IntegerAttr(op.attributes[a]).value
                                        for a in ("dim", "descending", "k", "unsigned"))
        shape = tuple(src.type.shape)
        base, elem, mem = self._source_in_scratch(op)
        b = self.b
        n = shape[dim]
        if n > 1:
            less = _comparison(elem, unsigned)
            self._sort_rows(base, mem, elem, n, math.prod(shape[dim + 1:]), math.prod(shape) // n,
                            descending if k == n else 1, less)
        dist = self.distribution(res.type)
        out = []
        for r in range(dist.registers):
            address = b.gep(base, [row_major(b, self.index.coordinates(b, dist, r), shape)], source_etype=mem)
            out.append(self.from_memory(b.load(address, typ=mem), elem))
        self.env[res] = out

    def _sort_rows(self, base: ll.Value, mem: ll.Type, elem: ll.Type, n: int, inner: int, rows: int,
                   descending: int, greater) -> None:
        """The bitonic network over every row of ``n`` elements ``inner`` apart in the row-major
        scratch at ``base`` (see the module docstring)."""
        b = self.b
        log_n = n.bit_length() - 1
        threads = self.num_warps * self.hooks.warp_size
        pairs = rows * n // 2
        tid = self.index.tid

        def compare_swap(i: ll.Value, bit: ll.Value, row: ll.Value, down: ll.Value) -> None:
            start = b.add(b.mul(b.udiv(row, I32(inner)), I32(n * inner)), b.urem(row, I32(inner)))
            addresses = [b.gep(base, [b.add(start, b.mul(at, I32(inner)))], source_etype=mem)
                         for at in (i, b.or_(i, bit))]
            x, y = (b.load(a, typ=mem) for a in addresses)
            swap = b.xor(greater(b, self.from_memory(x, elem), self.from_memory(y, elem)), down)
            b.store(b.select(swap, y, x), addresses[0])
            b.store(b.select(swap, x, y), addresses[1])

        def round_(_, state: list[ll.Value]) -> list[ll.Value]:
            stage, j = state
            bit = b.shl(I32(1), j)

            def pair(r: ll.Value, _) -> list[ll.Value]:
                p = b.add(tid, b.mul(r, I32(threads)))
                with b.if_then(b.icmp_unsigned("<", p, I32(pairs))):
                    row, q = b.lshr(p, I32(log_n - 1)), b.and_(p, I32(n // 2 - 1))
                    low = b.and_(q, b.sub(bit, I32(1)))
                    i = b.or_(b.shl(b.sub(q, low), I32(1)), low)  # q with a 0 inserted at bit j
                    down = b.trunc(b.and_(b.lshr(i, stage), I32(1)), ll.IntType(1))
                    if descending:
                        down = b.xor(down, b.icmp_unsigned("==", stage, I32(log_n)))
                    compare_swap(i, bit, row, down)
                return []

            phi_loop(b, -(-pairs // threads), [], pair, name="sort.pair")
            self.hooks.barrier(b)
            last = b.icmp_unsigned("==", j, I32(0))  # the stage's last round: the next stage starts
            next_stage = b.select(last, b.add(stage, I32(1)), stage)
            return [next_stage, b.select(last, stage, b.sub(j, I32(1)))]

        phi_loop(b, log_n * (log_n + 1) // 2, [I32(1), I32(0)], round_, name="sort.round")


def _comparison(elem: ll.Type, unsigned: int):
    """``greater(b, x, y)``: ``x > y`` in the order where NaN is above every number and equal to NaN;
    integers compared unsigned where ``unsigned`` (and booleans)."""
    if isinstance(elem, ll.IntType):
        compare = ll.IRBuilder.icmp_unsigned if unsigned or elem.width == 1 else ll.IRBuilder.icmp_signed
        return lambda b, x, y: compare(b, ">", x, y)

    def greater(b: ll.IRBuilder, x: ll.Value, y: ll.Value) -> ll.Value:
        if str(elem) in ("half", "bfloat"):
            x, y = (b.fpext(v, ll.FloatType()) for v in (x, y))
        nan_above = b.and_(b.fcmp_unordered("uno", x, x), b.fcmp_ordered("ord", y, y))
        return b.or_(b.fcmp_ordered(">", x, y), nan_above)

    return greater


def _resize(b: ll.IRBuilder, value: ll.Value, to: ll.IntType) -> ll.Value:
    """The non-negative integer ``value`` as a ``to`` (truncated or zero-extended)."""
    width = value.type.width
    return value if width == to.width else b.trunc(value, to) if width > to.width else b.zext(value, to)
