"""``tile.dot`` with fused multiply-adds on every thread (no tensor cores yet), as Triton's FMA path.

The result has the accumulator's layout (``layout.propagate``); the operands may come in any
layout. Every thread writes the elements it holds of A, transposed (``[K, M]``), and of B
(``[K, N]``; one such block per batch index of a 3-D product) to the op's scratch in shared
memory (``layout.scratch.dot_scratch_bytes``; threads holding copies write the same values),
waits at a barrier, then runs a loop over K: at each ``k``
it reads ``A[m, k]`` for each row ``m`` it holds and ``B[k, n]`` for each column ``n`` it holds,
and updates each of its accumulator registers ``(m, n)`` with one multiply-add (``llvm.fmuladd``,
fused on GPUs; integers multiply and add, wrapping). The accumulators stay in registers (phis)
around the loop. Operands narrower than the result (fp16 and bf16 into fp32, int8 into int32) are
widened as they are read, so the products are exact.
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...ir.mlir import ir
from ..accumulate import multiply_add, phi_loop, widen
from ..types import memory_type
from .indexing import I32


class Dots:
    """``tile.dot``; mixed into the walker."""

    def emit_dot(self, op: ir.Operation) -> None:
        a, b_op, c = op.operands
        res = op.results[0]
        dist = self.same_distribution(op, c.type, res.type)
        *batch, m, k = a.type.shape
        n = b_op.type.shape[-1]
        b_region = (batch[0] if batch else 1) * m * k  # where B starts in the scratch (elements)
        mem = memory_type(self.lltype(a.type))
        acc_t = self.lltype(res.type)
        b = self.b
        base = self.scratch(op)

        def at(terms: list[tuple[ll.Value, int]], offset: int = 0) -> ll.Value:
            """``sum(value * scale) + offset`` as i32."""
            total = None
            for value, scale in terms:
                term = b.mul(value, ll.Constant(I32, scale)) if scale != 1 else value
                total = term if total is None else b.add(total, term)
            if total is None:
                return ll.Constant(I32, offset)
            return b.add(total, ll.Constant(I32, offset)) if offset else total

        def batched(coords: list[ll.Value]) -> tuple[list[tuple[ll.Value, int]], ll.Value, ll.Value]:
            return ([(coords[0], 1)] if batch else []), coords[-2], coords[-1]

        def a_position(coords):  # A transposed, one [K, M] block per batch index
            bb, row, col = batched(coords)
            return at([(x, m * k) for x, _ in bb] + [(col, m), (row, 1)])

        def b_position(coords):  # B after all of A, one [K, N] block per batch index
            bb, row, col = batched(coords)
            return at([(x, k * n) for x, _ in bb] + [(row, n), (col, 1)], b_region)

        self.write_operand(base, a, mem, a_position)
        self.write_operand(base, b_op, mem, b_position)
        self.hooks.barrier(b)
        rows, cols = {}, {}  # register offsets off N (off M) -> where that row of A (column of B) starts
        for r, offsets in enumerate(dist.register_offsets):
            row_key, col_key = offsets[:-1], offsets[:-2] + offsets[-1:]
            if row_key not in rows or col_key not in cols:
                bb, row, col = batched(self.index.coordinates(b, dist, r))
                rows.setdefault(row_key, at([(x, m * k) for x, _ in bb] + [(row, 1)]))
                cols.setdefault(col_key, at([(x, k * n) for x, _ in bb] + [(col, 1)], b_region))

        def step(kk: ll.Value, accs: list[ll.Value]) -> list[ll.Value]:
            a_step, b_step = b.mul(kk, ll.Constant(I32, m)), b.mul(kk, ll.Constant(I32, n))
            a_vals = {key: self.read_operand(base, b.add(start, a_step), mem, acc_t) for key, start in rows.items()}
            b_vals = {key: self.read_operand(base, b.add(start, b_step), mem, acc_t) for key, start in cols.items()}
            return [multiply_add(b, a_vals[offsets[:-1]], b_vals[offsets[:-2] + offsets[-1:]], acc)
                    for offsets, acc in zip(dist.register_offsets, accs)]

        self.env[res] = phi_loop(b, k, list(self.env[c]), step)

    def write_operand(self, base: ll.Value, v: ir.Value, mem: ll.Type, position) -> None:
        """Store each register of ``v`` at ``position(coordinates)`` (elements) of the scratch."""
        dist = self.distribution(v.type)
        for r, value in enumerate(self.env[v]):
            self.b.store(value, self.b.gep(base, [position(self.index.coordinates(self.b, dist, r))],
                                           source_etype=mem))

    def read_operand(self, base: ll.Value, index: ll.Value, mem: ll.Type, acc_t: ll.Type) -> ll.Value:
        """The operand at element ``index`` of the scratch, widened to the accumulator's type."""
        return widen(self.b, self.b.load(self.b.gep(base, [index], source_etype=mem), typ=mem), acc_t)
