"""``tile.dot`` on a target's warp-level matrix instruction (``DeviceHooks.warp_matrix_op``: NVIDIA's
tensor-core ``mma``), for fp16 and bf16 operands into fp32 (``layout.scratch.matrix_unit_candidate``).

The warps split the ``[M, N]`` result into a ``WM x WN`` grid of blocks, each a grid of the
instruction's ``m x n`` tiles. Everything passes through the op's scratch in shared memory, as the
FMA path's operands do (no register layouts of the instruction's own yet):

1. every thread writes the accumulator elements it holds (fp32, ``[M, N]`` row-major); after a
   barrier each lane reads its fragments of C for its warp's tiles; a barrier;
2. every thread writes the A elements it holds (``[M, K]`` row-major) and B's (transposed,
   ``[N, K]``), so that the instruction's pairs of consecutive K elements are one 4-byte read; a
   barrier; a loop over K in steps of the instruction's ``k`` reads the fragments and runs it on
   each tile, the accumulators in registers (phis);
3. a barrier, each lane writes its fragments of D, a barrier, and every thread reads the result
   elements it holds in the result's layout.
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...ir.mlir import ir
from ...layout.scratch import matrix_unit_candidate
from ..accumulate import phi_loop
from ..device import WarpMatrixOp
from ..types import memory_type, vector_of
from .indexing import I32

F32 = ll.FloatType()
_OPERAND = {"f16": "fp16", "bf16": "bf16"}


def warp_grid(tiles_m: int, tiles_n: int, warps: int, op: WarpMatrixOp) -> tuple[int, int] | None:
    """``(WM, WN)``: how the warps split the tiles (each warp an equal block), the split that reads
    the fewest fragments per step; None when no split divides the tiles evenly."""
    best = None
    for wm in range(1, warps + 1):
        wn = warps // wm
        if wm * wn != warps or tiles_m % wm or tiles_n % wn:
            continue
        reads = tiles_m // wm * op.a_entries + tiles_n // wn * op.b_entries
        if best is None or reads < best[0]:
            best = (reads, wm, wn)
    return best[1:] if best else None


class WarpMatrixDots:
    """``tile.dot`` through ``DeviceHooks.warp_matrix_op``; mixed into the walker."""

    def warp_matrix_plan(self, op: ir.Operation) -> tuple[WarpMatrixOp, int, int] | None:
        """The instruction and the warp grid for ``op``, or None where the FMA path runs it."""
        if not matrix_unit_candidate(op):
            return None
        a = ir.RankedTensorType(op.operands[0].type)
        mma = self.hooks.warp_matrix_op(_OPERAND[str(a.element_type)], "fp32")
        if mma is None:
            return None
        (m, k), n = a.shape, ir.RankedTensorType(op.operands[1].type).shape[1]
        if m % mma.m or n % mma.n or k % mma.k:
            return None
        grid = warp_grid(m // mma.m, n // mma.n, self.num_warps, mma)
        return (mma, *grid) if grid else None

    def emit_warp_matrix_dot(self, op: ir.Operation, mma: WarpMatrixOp, wm: int, wn: int) -> None:
        a, b_op, c = op.operands
        res = op.results[0]
        (m, k), n = a.type.shape, b_op.type.shape[1]
        mem = memory_type(self.lltype(a.type))
        b, base = self.b, self.scratch(op)
        lane, warp = self.index.ids["lane"], self.index.ids["warp"]
        tm, tn = m // mma.m // wm, n // mma.n // wn  # tiles per warp along M and N
        row0 = b.mul(b.udiv(warp, I32(wn)), I32(tm * mma.m))
        col0 = b.mul(b.urem(warp, I32(wn)), I32(tn * mma.n))

        # each lane's fragment entries of its warp's first tile; a tile's are these plus a constant,
        # which the assembler folds into the shared-memory addresses
        c_base = [b.add(b.mul(b.add(row0, r), I32(n)), b.add(col0, cc)) for r, cc in
                  (mma.c(b, lane, e) for e in range(mma.c_entries))]
        a_base = [b.add(b.mul(b.add(row0, r), I32(k)), kk) for r, kk in (mma.a(b, lane, e) for e in range(mma.a_entries))]
        b_base = [b.add(b.mul(b.add(col0, cc), I32(k)), b.add(kk, I32(m * k))) for kk, cc in
                  (mma.b(b, lane, e) for e in range(mma.b_entries))]
        tiles = [(ti, tj) for ti in range(tm) for tj in range(tn)]
        c_at = {(ti, tj): [b.add(x, I32(ti * mma.m * n + tj * mma.n)) for x in c_base] for ti, tj in tiles}
        self.write_operand(base, c, F32, lambda x: b.add(b.mul(x[0], I32(n)), x[1]))
        self.hooks.barrier(b)
        accs = [b.load(b.gep(base, [i], source_etype=F32), typ=F32) for t in tiles for i in c_at[t]]
        self.hooks.barrier(b)
        self.write_operand(base, a, mem, lambda x: b.add(b.mul(x[0], I32(k)), x[1]))
        self.write_operand(base, b_op, mem, lambda x: b.add(b.mul(x[1], I32(k)), b.add(x[0], I32(m * k))))
        self.hooks.barrier(b)
        pack = vector_of(mem, mma.k_pack)
        align = mma.k_pack * self.element_bytes(mem)

        def fragment(index: ll.Value, tile_offset: int) -> ll.Value:
            return b.load(b.gep(base, [b.add(index, I32(tile_offset))], source_etype=mem), typ=pack, align=align)

        entries = mma.c_entries

        def step(kk: ll.Value, values: list[ll.Value]) -> list[ll.Value]:
            offset = b.mul(kk, I32(mma.k))
            a_step, b_step = [b.add(x, offset) for x in a_base], [b.add(x, offset) for x in b_base]
            a_frags = [[fragment(x, ti * mma.m * k) for x in a_step] for ti in range(tm)]
            b_frags = [[fragment(x, tj * mma.n * k) for x in b_step] for tj in range(tn)]
            out = []
            for t, (ti, tj) in enumerate(tiles):
                out += mma.emit(b, a_frags[ti], b_frags[tj], values[t * entries:(t + 1) * entries])
            return out

        accs = phi_loop(b, k // mma.k, accs, step, name="mma.k")
        self.hooks.barrier(b)
        for t, tile in enumerate(tiles):
            for i, value in zip(c_at[tile], accs[t * entries:(t + 1) * entries]):
                b.store(value, b.gep(base, [i], source_etype=F32))
        self.hooks.barrier(b)
        dist = self.distribution(res.type)
        self.env[res] = [b.load(b.gep(base, [b.add(b.mul(row, I32(n)), col)], source_etype=F32), typ=F32)
                         for row, col in (self.index.coordinates(b, dist, r) for r in range(dist.registers))]
