"""``tile.dot`` on a target's warpgroup matrix instruction (``WarpMatrixOp.group``: NVIDIA's Hopper
``wgmma``), where the layout stage split the warps along M only (``layout.matrix``).

The accumulator layout is the warp-level instruction's ``#tile.mma``: warp ``w`` holds, for each
of its row tiles ``t``, rows ``16 (t W + w)`` on, all columns, which is what warp ``w % 4`` of
the group of warps ``w - w % 4 ..`` holds of a 64-row product. So each group issues, per K step
and row tile, one instruction per up to ``n_max`` columns, reading both operands from their
swizzled tiles in shared memory (``layout.swizzle``: a ring slot, or the op's scratch, as
``warp_matrix`` places them) or A from registers (a chained product's, as ``warp_matrix`` reads
it); then commits them as one group and waits for it, the accumulators passing through the wait.

A product whose accumulator a loop carries from one iteration's product to the next (a matmul's K
loop), both operands in a software pipeline's rings, leaves its group running: it waits only for
the previous iteration's (so the tensor cores run while the loop issues the next copies), then a
barrier, as the next copies overwrite the slots that group read in every warp's group; after the
loop, a last wait.
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...ir.mlir import ir
from ...layout.distributed import Mma
from ...layout.swizzle import SwizzledTile
from ..device import SharedOperand, WarpgroupMatrixOp, WarpMatrixOp
from .indexing import I32


def warpgroup(layout: Mma, mma: WarpMatrixOp, stored: list[tuple[ll.Value, bool] | None],
              n: int) -> WarpgroupMatrixOp | None:
    """The group instruction that runs a product of ``layout`` and ``n`` columns whose operands are
    ``stored`` (each ``(start, transposed)`` in shared memory, or None: A in registers), or None."""
    group = mma.group
    wm, wn = layout.warps_per_cta
    if group is None or wn != 1 or wm % group.warps or group.k != mma.k:
        return None
    if not all(group.takes(min(group.n_max, n - n0)) for n0 in range(0, n, group.n_max)):
        return None
    if not group.mn_major and any(s is not None and s[1] != (which == 1) for which, s in enumerate(stored)):
        return None  # an operand stored along M or N, which the instruction cannot read
    return group


class WarpgroupDots:
    """The group instruction's products; mixed into the walker."""

    def emit_warpgroup_dot(self, op: ir.Operation, layout: Mma, mma: WarpMatrixOp, group: WarpgroupMatrixOp,
                           registers, stored: list[tuple[ll.Value, bool] | None], mem: ll.Type) -> None:
        """``op`` with A from ``registers`` (``read(k0)``, or None) or ``stored[0]``, B from ``stored[1]``."""
        a, b_op, c = op.operands
        (m, k), n = a.type.shape, b_op.type.shape[1]
        b, size = self.b, self.element_bytes(mem)
        warps = layout.warps_per_cta[0]
        tiles_m, tiles_n, entries = m // (mma.m * warps), n // mma.n, len(mma.c.entries)
        a_entries = len(mma.a.entries)
        first_warp = b.and_(self.index.ids["warp"], I32(-group.warps))  # of this warp's group

        def operand(which: int, row: ll.Value | int, k0: int) -> SharedOperand:
            """Operand ``which``'s block from row ``row`` of M (A) or column ``row`` of N (B), at K ``k0``."""
            start, transposed = stored[which]
            shape = (m, k) if which == 0 else (k, n)
            tile = SwizzledTile(*(shape[::-1] if transposed else shape), size)
            k_major = transposed == (which == 1)
            row = row if isinstance(row, ll.Value) else I32(row)
            at = (row, I32(k0)) if k_major else (I32(k0), row)
            offset = b.mul(self.swizzled(*at, (tile.rows, tile.cols), mem), I32(size))
            return SharedOperand(start, offset, tile, k_major)

        # every operand (registers packed, descriptors' addresses) before the fence: code between
        # the instructions would make the target order register writes before each of them again
        issues = []
        for k0 in range(0, k, group.k):
            a_regs = registers(k0) if registers is not None else None
            for t in range(tiles_m):
                if a_regs is not None:
                    a_arg = a_regs[t * a_entries:(t + 1) * a_entries]
                else:
                    a_arg = operand(0, b.add(I32(t * warps * mma.m), b.mul(first_warp, I32(mma.m))), k0)
                for n0 in range(0, n, group.n_max):
                    width = min(group.n_max, n - n0)
                    lo = (t * tiles_n + n0 // mma.n) * entries
                    issues.append((a_arg, operand(1, n0, k0), lo, lo + width // mma.n * entries, width))
        accs = list(self.env[c])
        group.fence(b)
        for a_arg, b_arg, lo, hi, width in issues:
            accs[lo:hi] = group.emit(b, a_arg, b_arg, accs[lo:hi], width)
        group.commit(b)
        carried = self.carried_accumulator(op) if all(v in self.ring_views for v in (a, b_op)) else None
        if carried is None:
            self.env[op.results[0]] = group.wait(b, accs, 0)
            return
        self.env[op.results[0]] = group.wait(b, accs, 1)
        self.hooks.barrier(b)
        loop, index = carried

        def finish(values: list) -> list:
            values = list(values)
            values[index] = group.wait(self.b, values[index], 0)
            return values

        self.loop_exits.setdefault(loop, []).append(finish)

    @staticmethod
    def carried_accumulator(op: ir.Operation) -> tuple[ir.Operation, int] | None:
        """``(loop, index)`` where ``op``'s accumulator is carried value ``index`` of the ``scf.for``
        whose body it is in, from ``op``'s result to ``op`` and to nothing else; else None."""
        c, res = op.operands[2], op.results[0]
        loop = op.parent
        loop = loop.operation if hasattr(loop, "operation") else loop
        if loop is None or loop.name != "scf.for" or not isinstance(c.owner, ir.Block):
            return None
        body = loop.regions[0].blocks[0]
        users = [(u.owner.operation if hasattr(u.owner, "operation") else u.owner, u.operand_number)
                 for value in (c, res) for u in value.uses]
        index = ir.BlockArgument(c).arg_number - 1
        if c.owner != body or len(users) != 2 or users[0][0] != op:
            return None
        yield_op, at = users[1]
        return (loop, index) if yield_op.name == "scf.yield" and at == index else None
