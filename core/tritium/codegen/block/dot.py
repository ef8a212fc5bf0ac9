"""``tile.dot`` in whole blocks: register-tiled micro-kernels over operands held in stack buffers.

The operands are materialised row-major in buffers (``Buffer``; A is ``[M, K]``, B ``[K, N]``; a
batched product is one such product per leading index) and
the accumulator is copied into the result's buffer, unless it already lives in one. An
accumulator carried by a loop (a block argument) that nothing else reads is updated in its own
buffer, so the loop carries the result without a copy (``control_flow``). The result is
then computed in tiles of ``MR`` rows by ``NR`` columns: the tile's accumulators stay in vector
registers for the whole K loop (a real LLVM loop, not unrolled IR), where each step loads ``NR``
elements of a row of B as vectors and broadcasts one element of A per row, and accumulates
``A[i, k] * B[k, j]`` with one fused multiply-add per vector (``llvm.fmuladd``: fused where the
CPU has FMA; integers multiply and add, wrapping). Operands narrower than the accumulator (fp16 and
bf16 into fp32, int8 into int32) are widened as they are loaded, so products are exact; an fp16
accumulator is summed in fp32 and rounded once per K-step of 16 (``tritium.codegen.accumulate``).

The tile fills the host's vector registers without spilling: ``NR`` is two vectors of the
accumulator type (``B_VECTORS``; a last tile of a row may have fewer), ``MR`` four rows (eight with
AVX-512's 32 registers): ``MR * 2`` accumulators, two B vectors and one broadcast. Measured on AVX2
(Zen 3), 4 x 16 reaches about 85% of the FMA peak; 4 x 24 (twelve accumulators, sixteen registers)
is slower.
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...ir.mlir import ir
from ..accumulate import k_loop, multiply_add, sum_type, widen
from ..types import memory_type, size_in_bytes, vector_of
from .chunks import I32, Index, add, as_value, counted_loop, mul, splat
from .evaluate import BUFFER_ALIGN, Buffer, cpu_type, shape_of
from .roots import MaterializeRoot

B_VECTORS = 2  # vectors of B (and accumulators per row) in one register tile


def tile_shape(m: int, n: int, acc_bits: int, vector_bits: int) -> tuple[int, int, int]:
    """``(MR, vector width, vectors per row)`` of the register tiles of an ``[m, n]`` result; the
    last tile of a row of tiles may have fewer vectors (``n`` need not be a multiple)."""
    lanes = vector_bits // max(32, acc_bits)
    width = min(n, lanes)
    rows = 8 if vector_bits >= 512 else 4
    return min(m, rows), width, min(n // width, B_VECTORS)


class Dots:
    """``tile.dot`` lowering; mixed into the kernel code generator."""

    def emit_dot(self, op: ir.Operation) -> None:
        a, b_, c = op.operands
        res = op.results[0]
        self.flush()
        a_ptr, b_ptr = self.private_copy(a), self.private_copy(b_)
        acc = self.env[c]
        in_place = isinstance(acc, Buffer) and isinstance(c.owner, ir.Block) and len(list(c.uses)) == 1
        out = acc.ptr if in_place else self.alloc_buffer(res.type)
        if isinstance(acc, Buffer):
            src = acc.ptr
        else:
            self.add_root(MaterializeRoot(c, out), c)
            self.flush()
            src = out
        *batch, m, k = shape_of(a)
        n = shape_of(res)[-1]
        acc_t = cpu_type(res.type.element_type)
        op_t = memory_type(cpu_type(a.type.element_type))
        b = self.b

        def product(i: Index) -> None:  # one matrix of a batch: its operands and result are row-major blocks
            def at(base: ll.Value, size: int, t: ll.Type) -> ll.Value:
                return base if isinstance(i, int) and i == 0 else b.gep(base, [as_value(mul(b, i, size))],
                                                                         source_etype=t)
            self.micro_kernels(m, n, k, at(a_ptr, m * k, op_t), at(b_ptr, k * n, op_t), at(src, m * n, acc_t),
                               at(out, m * n, acc_t), op_t, acc_t)

        counted_loop(b, batch[0] if batch else 1, product, name="dot.batch")
        self.env[res] = Buffer(out)

    def private_copy(self, v: ir.Value) -> ll.Value:
        """``v``'s elements in a buffer: its own when it has one, else a copy written now (not
        recorded as ``v``'s: it is only written where the dot runs)."""
        entry = self.env[v]
        if isinstance(entry, Buffer):
            return entry.ptr
        buf = self.alloc_buffer(v.type)
        self.add_root(MaterializeRoot(v, buf), v)
        self.flush()
        return buf

    def micro_kernels(self, m: int, n: int, k: int, a_ptr: ll.Value, b_ptr: ll.Value, src: ll.Value,
                      out: ll.Value, op_t: ll.Type, acc_t: ll.Type) -> None:
        """``out = A @ B + src`` (``src`` may be ``out``) in register tiles (see the module docstring)."""
        bits = acc_t.width if isinstance(acc_t, ll.IntType) else size_in_bytes(acc_t) * 8
        mr, w, nvec = tile_shape(m, n, bits, self.hooks.vector_bits)
        nr = w * nvec
        b = self.b
        vec_acc, vec_op = vector_of(acc_t, w), vector_of(op_t, w)
        acc_align = min(size_in_bytes(acc_t) * w, BUFFER_ALIGN)
        op_align = min(size_in_bytes(op_t) * w, BUFFER_ALIGN)

        def at(base: ll.Value, offset: Index, t: ll.Type) -> ll.Value:
            return b.gep(base, [as_value(offset)], source_etype=t)

        def tile(i: Index, col: Index, nvec: int) -> None:
            rows = [add(b, mul(b, i, mr), r) for r in range(mr)]
            c_offsets = [[add(b, mul(b, row, n), add(b, col, v * w)) for v in range(nvec)] for row in rows]
            accs = [b.load(at(src, off, acc_t), typ=vec_acc, align=acc_align) for line in c_offsets for off in line]
            accs = k_loop(b, k, accs, lambda kk, values: self.step(
                kk, values, rows, col, a_ptr, b_ptr, n, k, w, nvec, op_t, acc_t, vec_op, op_align))
            for value, off in zip(accs, (off for line in c_offsets for off in line)):
                b.store(value, at(out, off, acc_t), align=acc_align)

        full, rest = divmod(n // w, nvec)

        def row_of_tiles(i: Index) -> None:
            if full:
                counted_loop(b, full, lambda j: tile(i, mul(b, j, nr), nvec), name="dot.n")
            if rest:
                tile(i, full * nr, rest)

        counted_loop(b, m // mr, row_of_tiles, name="dot.m")

    def step(self, kk, accs, rows, col, a_ptr, b_ptr, n, k, w, nvec, op_t, acc_t, vec_op, op_align):
        """One k of a register tile: ``acc[r][v] += A[row r, kk] * B[kk, col + v*w : +w]``."""
        b = self.b
        acc_t = sum_type(acc_t)
        b_row = b.mul(kk, ll.Constant(I32, n))
        bvecs = [widen(b, b.load(b.gep(b_ptr, [as_value(add(b, b_row, add(b, col, v * w)))], source_etype=op_t),
                                   typ=vec_op, align=op_align), vector_of(acc_t, w), self.hooks)
                 for v in range(nvec)]
        out = []
        for r, row in enumerate(rows):
            a_off = add(b, mul(b, row, k), kk)
            scalar = widen(b, b.load(b.gep(a_ptr, [as_value(a_off)], source_etype=op_t), typ=op_t), acc_t, self.hooks)
            a_vec = splat(b, scalar, w)
            for v in range(nvec):
                out.append(multiply_add(b, a_vec, bvecs[v], accs[r * nvec + v]))
        return out
