"""``tile.dot`` with fused multiply-adds on every thread (no tensor cores yet), as Triton's FMA path.

The result has the accumulator's layout (``layout.propagate``); the operands may come in any
layout. Every thread writes the elements it holds of A, transposed (``[K, M]``), and of B
(``[K, N]``) to the op's scratch in shared memory (``layout.scratch.dot_scratch_bytes``; threads
holding copies write the same values), waits at a barrier, then runs a loop over K: at each ``k``
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
        (m, k), n = tuple(a.type.shape), b_op.type.shape[1]
        mem = memory_type(self.lltype(a.type))
        acc_t = self.lltype(res.type)
        b = self.b
        base = self.scratch(op)
        self.write_operand(base, a, mem, lambda row, col: b.add(b.mul(col, ll.Constant(I32, m)), row))
        self.write_operand(base, b_op, mem, lambda row, col: b.add(b.mul(row, ll.Constant(I32, n)),
                                                                       b.add(col, ll.Constant(I32, m * k))))
        self.hooks.barrier(b)
        rows, cols = {}, {}  # register offset along M (N) -> that coordinate, the same for all registers
        for r, offsets in enumerate(dist.register_offsets):
            if offsets[0] not in rows or offsets[1] not in cols:
                coords = self.index.coordinates(b, dist, r)
                rows.setdefault(offsets[0], coords[0])
                cols.setdefault(offsets[1], coords[1])

        def step(kk: ll.Value, accs: list[ll.Value]) -> list[ll.Value]:
            a_row = b.mul(kk, ll.Constant(I32, m))
            b_row = b.add(b.mul(kk, ll.Constant(I32, n)), ll.Constant(I32, m * k))
            a_vals = {off: self.read_operand(base, b.add(a_row, row), mem, acc_t) for off, row in rows.items()}
            b_vals = {off: self.read_operand(base, b.add(b_row, col), mem, acc_t) for off, col in cols.items()}
            return [multiply_add(b, a_vals[offsets[0]], b_vals[offsets[1]], acc)
                    for offsets, acc in zip(dist.register_offsets, accs)]

        self.env[res] = phi_loop(b, k, list(self.env[c]), step)

    def write_operand(self, base: ll.Value, v: ir.Value, mem: ll.Type, position) -> None:
        """Store each register of ``v`` at ``position(row, col)`` (elements) of the scratch."""
        dist = self.distribution(v.type)
        for r, value in enumerate(self.env[v]):
            row, col = self.index.coordinates(self.b, dist, r)
            self.b.store(value, self.b.gep(base, [position(row, col)], source_etype=mem))

    def read_operand(self, base: ll.Value, index: ll.Value, mem: ll.Type, acc_t: ll.Type) -> ll.Value:
        """The operand at element ``index`` of the scratch, widened to the accumulator's type."""
        return widen(self.b, self.b.load(self.b.gep(base, [index], source_etype=mem), typ=mem), acc_t)
