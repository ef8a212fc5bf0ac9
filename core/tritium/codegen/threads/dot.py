"""``tile.dot`` with fused multiply-adds on every thread, as Triton's FMA path, where the target has no
warp-level matrix instruction for it (``warp_matrix``).

The result has the accumulator's layout (``layout.propagate``); the operands may come in any
layout. Every thread writes the elements it holds of A, transposed (``[K, M]``), and of B
(``[K, N]``; one such block per batch index of a 3-D product) to the op's scratch in shared
memory (``layout.scratch.dot_scratch_bytes``; threads holding copies write the same values),
waits at a barrier, then runs a loop over K: at each ``k``
it reads ``A[m, k]`` for each row ``m`` it holds and ``B[k, n]`` for each column ``n`` it holds
(consecutive columns as one vector of up to 16 bytes),
and updates each of its accumulator registers ``(m, n)`` with one multiply-add (``llvm.fmuladd``,
fused on GPUs; integers multiply and add, wrapping). The accumulators stay in registers (phis)
around the loop. Operands narrower than the result (fp16 and bf16 into fp32, int8 into int32) are
widened as they are read, so the products are exact; an fp16 accumulator is summed in fp32 and
rounded once per K-step of 16, as a tensor core does (``accumulate.k_loop``).
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...ir.mlir import ir
from ...layout.distributed import Distribution
from ..accumulate import k_loop, multiply_add, sum_type, widen
from ..types import memory_type, vector_of
from .indexing import I32
from .memory import MAX_VECTOR_BYTES


class Dots:
    """``tile.dot``; mixed into the walker."""

    def emit_dot(self, op: ir.Operation) -> None:
        if self.on_matrix_unit(op):  # the target's matrix instruction (``warp_matrix``)
            return self.emit_warp_matrix_dot(op)
        a, b_op, c = op.operands
        res = op.results[0]
        dist = self.same_distribution(op, c.type, res.type)
        *batch, m, k = a.type.shape
        n = b_op.type.shape[-1]
        b_region = (batch[0] if batch else 1) * m * k  # where B starts in the scratch (elements)
        mem = memory_type(self.lltype(a.type))
        acc_t = sum_type(self.lltype(res.type))
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

        runs = column_runs(dist, list(cols), max(1, MAX_VECTOR_BYTES // self.element_bytes(mem)))

        def step(kk: ll.Value, accs: list[ll.Value]) -> list[ll.Value]:
            a_step, b_step = b.mul(kk, ll.Constant(I32, m)), b.mul(kk, ll.Constant(I32, n))
            a_vals = {key: self.read_operand(base, b.add(start, a_step), mem, acc_t) for key, start in rows.items()}
            b_vals = {}
            for run in runs:  # a thread's consecutive columns of B: one vector read
                b_vals.update(zip(run, self.read_operands(base, b.add(cols[run[0]], b_step), mem, acc_t, len(run))))
            return [multiply_add(b, a_vals[offsets[:-1]], b_vals[offsets[:-2] + offsets[-1:]], acc)
                    for offsets, acc in zip(dist.register_offsets, accs)]

        self.env[res] = k_loop(b, k, list(self.env[c]), step)

    def write_operand(self, base: ll.Value, v: ir.Value, mem: ll.Type, position) -> None:
        """Store each register of ``v`` at ``position(coordinates)`` (elements) of the scratch."""
        dist = self.distribution(v.type)
        for r, value in enumerate(self.env[v]):
            self.b.store(value, self.b.gep(base, [position(self.index.coordinates(self.b, dist, r))],
                                           source_etype=mem))

    def read_operand(self, base: ll.Value, index: ll.Value, mem: ll.Type, acc_t: ll.Type) -> ll.Value:
        """The operand at element ``index`` of the scratch, widened to the accumulator's type."""
        return widen(self.b, self.b.load(self.b.gep(base, [index], source_etype=mem), typ=mem), acc_t)

    def read_operands(self, base: ll.Value, index: ll.Value, mem: ll.Type, acc_t: ll.Type, width: int) -> list:
        """``width`` consecutive operands from element ``index`` (a multiple of ``width``), widened."""
        if width == 1:
            return [self.read_operand(base, index, mem, acc_t)]
        address = self.b.gep(base, [index], source_etype=mem)
        vec = self.b.load(address, typ=vector_of(mem, width), align=width * self.element_bytes(mem))
        return [widen(self.b, v, acc_t) for v in self.unpack(vec, width)]


def column_runs(dist: Distribution, keys: list[tuple[int, ...]], limit: int) -> list[list[tuple[int, ...]]]:
    """``keys`` (register offsets: batch, then column) grouped into runs of consecutive columns that
    one aligned vector of up to ``limit`` elements reads: every thread's columns start at a multiple
    of the run's length (its lane and warp bases along N are multiples of it), so the run does too."""
    width = limit
    while width > 1 and any(basis[-1] % width for basis in dist.lane_bases + dist.warp_bases):
        width //= 2
    present, runs, taken = set(keys), [], set()
    for key in sorted(keys):
        if key in taken:
            continue
        run = [key[:-1] + (key[-1] + j,) for j in range(width)]
        if width > 1 and key[-1] % width == 0 and dist.shape[-1] % width == 0 and all(r in present for r in run):
            runs.append(run)
        else:
            run = [key]
            runs.append(run)
        taken.update(run)
    return runs
