"""``tile.dot`` on a target's warp-level matrix instruction (``DeviceHooks.warp_matrix_op``: NVIDIA's
tensor-core ``mma``), where the layout stage gave it the instruction's accumulator layout
(``layout.matrix``, ``#tile.mma``).

The accumulator arrives, and the result stays, in registers: each thread's registers of the
``Mma`` distribution are its fragments of the warp's tiles, in the order the instruction takes
them. A chained product's A, held in the first product's layout, is read from its registers
(``register_fragments``). Other operands pass through shared memory: a software pipeline's ring
slot where it put them there (``codegen.threads.rings``), else the op's scratch. There an operand
is stored row-major, or transposed where its threads hold runs down its columns (``storage``),
as a ``layout.swizzle.SwizzledTile`` (``swizzled``), so that the eight 16-byte row pieces one
fragment block reads lie in different banks:

1. every thread writes the operand elements it holds that are in no ring, runs of consecutive
   elements along a stored row as one vector store (16 bytes from a blocked layout); a barrier;
2. a loop over K in steps of the instruction's ``k`` reads each lane's fragments of its warp's
   tiles (``layout.matrix.operand_distribution``), with the instruction's collective load where the
   target has one and the fragments are its blocks (``WarpMatrixOp.load``: ``ldmatrix``), else
   with plain loads; then runs the instruction on each tile, the accumulators in registers (phis;
   the steps unrolled where A comes from registers).
"""

from __future__ import annotations

import math

from llvmlite import ir as ll

from ...ir.mlir import ir
from ...layout.distributed import Distribution, Fragment, Mma, layout_of_type
from ...layout.matrix import instruction, operand_distribution
from ...layout.swizzle import PERIOD_ROWS, SwizzledTile
from ..accumulate import phi_loop
from ..device import WarpMatrixOp
from ..types import memory_type, vector_of
from .indexing import I32, plan
from .memory import MAX_VECTOR_BYTES, vector_width
from .warpgroup_matrix import warpgroup

#: rows of one block of a block load (``WarpMatrixOp.load``), and the lanes that give their addresses
BLOCK_ROWS = 8
#: bytes of one row of a block
BLOCK_ROW_BYTES = 16


def block_lanes(element_bytes: int) -> tuple[tuple[int, int], ...]:
    """A block load's lanes in elements: lane ``4g + t`` holds row g, bytes ``4t .. 4t + 3``."""
    per = 4 // element_bytes
    return (0, per), (0, 2 * per), (1, 0), (2, 0), (4, 0)


class WarpMatrixDots:
    """``tile.dot`` through ``DeviceHooks.warp_matrix_op``; mixed into the walker."""

    def on_matrix_unit(self, op: ir.Operation) -> bool:
        """Whether the layout stage put ``op`` on the matrix instruction (its result is ``#tile.mma``)."""
        return isinstance(layout_of_type(ir.RankedTensorType(op.results[0].type)), Mma)

    def emit_warp_matrix_dot(self, op: ir.Operation) -> None:
        a, b_op, c = op.operands
        res = op.results[0]
        dist = self.same_distribution(op, c.type, res.type)
        layout = layout_of_type(ir.RankedTensorType(res.type))
        mma = instruction(op, self.hooks.warp_matrix_op)
        if mma is None or (mma.m, mma.n) != layout.instr or mma.c != layout.fragment:
            raise self.error(op, f"the result's layout {layout} is not this target's matrix instruction's")
        (m, k), n = a.type.shape, b_op.type.shape[1]
        mem = memory_type(self.lltype(a.type))
        frags = [operand_distribution(layout, mma, 0, (m, mma.k)), operand_distribution(layout, mma, 1, (mma.k, n))]
        in_registers = self.register_fragments(a, layout, mma)  # a chained product's A
        stored, written = [], 0  # A and B from: registers, a ring's slot (``rings``), or the op's scratch
        for which, value in ((0, a), (1, b_op)):
            if which == 0 and in_registers is not None:
                stored.append(None)
                continue
            start = self.ring_views.get(value)
            if start is None:
                start = self.b.gep(self.scratch(op), [I32(written)], source_etype=mem)
                self.write_swizzled(value, start, mem)
                written += math.prod(value.type.shape)
            stored.append((start, stored_transposed(self.distribution(value.type))))
        group = warpgroup(layout, mma, stored, n)
        if written:
            if group is not None:
                group.publish(self.b)
            self.hooks.barrier(self.b)
        if group is not None:
            return self.emit_warpgroup_dot(op, layout, mma, group, in_registers, stored, mem)
        readers = [in_registers if place is None else
                   self.fragment_reader(mma, which, frags[which], place[0], shape, place[1], mem)
                   for which, (place, shape) in enumerate(zip(stored, ((m, k), (k, n))))]
        a_entries, b_entries, c_entries = len(mma.a.entries), len(mma.b.entries), len(mma.c.entries)
        tiles_n = frags[1].registers // b_entries
        if dist.registers != frags[0].registers // a_entries * tiles_n * c_entries:
            raise self.error(op, f"the result's layout {layout} does not tile {list(dist.shape)} evenly")

        def step(kk: ll.Value | int, accs: list[ll.Value]) -> list[ll.Value]:
            """One K step: ``kk`` is a loop's counter, or a Python int where the steps are unrolled."""
            k0 = kk * mma.k if isinstance(kk, int) else self.b.mul(kk, I32(mma.k))
            a_vals, b_vals = (read(k0) for read in readers)
            out = []
            for t in range(len(accs) // c_entries):  # the warp's tiles, row by row, as ``Mma`` orders them
                ti, tj = divmod(t, tiles_n)
                out += mma.emit(self.b, a_vals[ti * a_entries:(ti + 1) * a_entries],
                                b_vals[tj * b_entries:(tj + 1) * b_entries], accs[t * c_entries:(t + 1) * c_entries])
            return out

        accs = list(self.env[c])
        if in_registers is None:
            self.env[res] = phi_loop(self.b, k // mma.k, accs, step, name="mma.k")
            return
        for kk in range(k // mma.k):  # registers are picked per K step: the steps are unrolled
            accs = step(kk, accs)
        self.env[res] = accs

    def register_fragments(self, a: ir.Value, layout: Mma, mma: WarpMatrixOp):
        """``read(k0)`` of A's fragments from the registers ``a`` is held in, where its lanes and warps
        hold exactly what the instruction needs (a chained product's A, in the first product's
        layout with the warps along M only); None elsewhere. ``k0`` is a Python int."""
        dist = self.distribution(a.type)
        if not isinstance(layout_of_type(ir.RankedTensorType(a.type)), Mma):
            return None
        (m, k) = dist.shape
        whole = operand_distribution(layout, mma, 0, (m, k))
        if whole.lane_bases != dist.lane_bases or whole.warp_bases != dist.warp_bases:
            return None
        index = dist.register_index()
        steps = []
        for k0 in range(0, k, mma.k):
            wanted = [[(r, c + k0 + j) for j in range(mma.k_pack)] for r, c in whole.register_offsets]
            if any(x not in index for pack in wanted for x in pack):
                return None
            steps.append([[index[x] for x in pack] for pack in wanted])
        values = self.env[a]

        def read(k0: int) -> list[ll.Value]:
            return [self.pack([values[i] for i in pack]) for pack in steps[k0 // mma.k]]

        return read

    def swizzled(self, row: ll.Value, col: ll.Value, shape: tuple[int, int], mem: ll.Type) -> ll.Value:
        """The element index of ``(row, col)`` in the ``SwizzledTile`` of ``shape``."""
        b, tile = self.b, SwizzledTile(*shape, self.element_bytes(mem))
        log = lambda x: x.bit_length() - 1  # noqa: E731
        flat = b.mul(row, I32(tile.block_cols))
        if tile.block_cols < tile.cols:
            flat = b.add(flat, b.mul(b.lshr(col, I32(log(tile.block_cols))), I32(tile.block_elements)))
            col = b.and_(col, I32(tile.block_cols - 1))
        if tile.chunks <= 1:
            return b.add(flat, col)
        phase = b.and_(b.lshr(row, I32(log(tile.rows_per_phase))), I32(tile.chunks - 1))
        shift = log(tile.chunk_elements)
        chunk = b.xor(b.lshr(col, I32(shift)), phase)
        return b.add(flat, b.add(b.shl(chunk, I32(shift)), b.and_(col, I32(tile.chunk_elements - 1))))

    def swizzled_addresses(self, dist: Distribution, registers: list[int], start: ll.Value, shape: tuple[int, int],
                           mem: ll.Type, offset: tuple[ll.Value, ll.Value] | None = None) -> list[ll.Value]:
        """The ``swizzled`` address of each register in ``registers`` of ``dist`` (``offset`` added
        to its coordinates first). Registers a whole period of the permutation apart
        (``SwizzledTile.periods``) are one computed address plus a constant: the addresses stay
        few registers and fold into the loads' and stores' offsets."""
        tile = SwizzledTile(*shape, self.element_bytes(mem))
        periods = tile.periods
        if any(plan(dist).wraps):  # coordinates taken modulo the shape: no constant steps
            periods = (1 << 30, 1 << 30)
        firsts: dict[tuple[int, int], tuple[tuple[int, int], ll.Value]] = {}
        out = []
        for r in registers:
            offsets = dist.register_offsets[r]
            key = (offsets[0] % periods[0], offsets[1] % periods[1])
            if key not in firsts:
                coords = self.index.coordinates(self.b, dist, r)
                if offset is not None:
                    coords = [self.b.add(x, o) for x, o in zip(coords, offset)]
                index = self.swizzled(*coords, shape, mem)
                firsts[key] = (offsets, self.b.gep(start, [index], source_etype=mem))
            origin, address = firsts[key]
            delta = tile.delta(offsets[0] - origin[0], offsets[1] - origin[1])
            out.append(self.b.gep(address, [I32(delta)], source_etype=mem) if delta else address)
        return out

    def write_swizzled(self, value: ir.Value, start: ll.Value, mem: ll.Type) -> None:
        """Store each register of ``value`` at its ``swizzled`` place in its ``storage`` order;
        consecutive registers along a stored row as one vector (they stay inside one chunk)."""
        dist, _ = storage(self.distribution(value.type))
        size = self.element_bytes(mem)
        w = vector_width(dist, max(1, MAX_VECTOR_BYTES // size)) if dist.contiguous_dim == 1 else 1
        values = self.env[value]
        runs = list(range(0, dist.registers, w))
        for r0, address in zip(runs, self.swizzled_addresses(dist, runs, start, dist.shape, mem)):
            self.b.store(self.to_memory(self.pack(values[r0:r0 + w])), address, align=w * size)

    def fragment_reader(self, mma: WarpMatrixOp, which: int, frag: Distribution, start: ll.Value,
                        shape: tuple[int, int], transposed: bool, mem: ll.Type):
        """``read(k0)``: the lane's fragment registers (vectors of ``k_pack`` elements) of operand
        ``which`` (0: A ``[M, K]``; 1: B ``[K, N]``, of ``shape``, stored ``transposed`` or not) for
        the K step starting at ``k0`` (an i32 value, or a Python int where the steps are unrolled)."""
        fragment = (mma.a, mma.b)[which]
        if transposed:  # everything in the stored matrix's coordinates
            frag, fragment, shape = _transposed(frag), _swapped(fragment), shape[::-1]
        along = int(transposed) ^ (1 - which)  # the stored dimension K runs along
        pack = vector_of(mem, mma.k_pack)
        b = self.b
        blocks = (block_loads(fragment, frag, self.hooks.warp_size, self.element_bytes(mem))
                  if mma.load is not None else None)
        if blocks is not None:
            lanes, counts, trans = blocks

            def read_blocks(k0: ll.Value | int) -> list[ll.Value]:
                k0 = I32(k0) if isinstance(k0, int) else k0  # a step of unrolled K steps
                addresses = self.k_step_addresses(lanes, list(range(lanes.registers)), start, shape, mem, along, k0,
                                                   mma.k)
                out = []
                for address, count in zip(addresses, counts):
                    out += [b.bitcast(x, pack) for x in mma.load(b, address, count, trans)]
                return out

            return read_blocks
        size = self.element_bytes(mem)

        def read_plain(k0: ll.Value | int) -> list[ll.Value]:
            k0 = I32(k0) if isinstance(k0, int) else k0  # a step of unrolled K steps
            if along:  # k_pack consecutive elements of a stored row: one load
                addresses = self.k_step_addresses(frag, list(range(frag.registers)), start, shape, mem, along, k0,
                                                   mma.k)
                return [b.load(address, typ=pack, align=mma.k_pack * size) for address in addresses]
            if mma.k_pack == 1:  # one element a register
                addresses = self.k_step_addresses(frag, list(range(frag.registers)), start, shape, mem, along, k0,
                                                   mma.k)
                return [b.load(address, typ=mem, align=size) for address in addresses]
            out = []
            for r in range(frag.registers):  # down a stored column: one load each
                vec = ll.Constant(pack, ll.Undefined)
                for j in range(mma.k_pack):
                    row, col = self.index.coordinates(b, frag, r)
                    at = self.swizzled(b.add(row, b.add(k0, I32(j))), col, shape, mem)
                    vec = b.insert_element(vec, b.load(b.gep(start, [at], source_etype=mem), typ=mem), I32(j))
                out.append(vec)
            return out

        return read_plain

    def k_step_addresses(self, dist: Distribution, registers: list[int], start: ll.Value, shape: tuple[int, int],
                         mem: ll.Type, along: int, k0: ll.Value, k: int) -> list[ll.Value]:
        """``swizzled_addresses`` of the step of ``k`` starting at ``k0``: along the columns (A), the
        step changes the permutation; down the rows (B), a step of whole periods of it (8 rows)
        moves every address by one constant offset."""
        if along or k % PERIOD_ROWS:
            offset = (I32(0), k0) if along else (k0, I32(0))
            return self.swizzled_addresses(dist, registers, start, shape, mem, offset)
        block_cols = SwizzledTile(*shape, self.element_bytes(mem)).block_cols
        step = self.b.gep(start, [self.b.mul(k0, I32(block_cols))], source_etype=mem)
        return self.swizzled_addresses(dist, registers, step, shape, mem)


def stored_transposed(dist: Distribution) -> bool:
    """Whether a product's operand of distribution ``dist`` is stored transposed in shared memory:
    where its threads hold runs along the first dimension (a K-major B, an M-major A), so that the
    runs stay contiguous there."""
    return dist.contiguous_dim == 0


def storage(dist: Distribution) -> tuple[Distribution, bool]:
    """``dist`` in the coordinates of the matrix stored in shared memory, and whether that is the
    transpose (``stored_transposed``)."""
    transposed = stored_transposed(dist)
    return (_transposed(dist) if transposed else dist), transposed


def _transposed(dist: Distribution) -> Distribution:
    swap = lambda v: (v[1], v[0])  # noqa: E731
    c = dist.contiguous_dim
    return Distribution(swap(dist.shape), tuple(map(swap, dist.register_offsets)), tuple(map(swap, dist.lane_bases)),
                        tuple(map(swap, dist.warp_bases)), None if c is None else 1 - c)


def _swapped(fragment: Fragment) -> Fragment:
    swap = lambda v: (v[1], v[0])  # noqa: E731
    return Fragment(tuple(map(swap, fragment.entries)), tuple(map(swap, fragment.lanes)))


def block_loads(fragment: Fragment, frag: Distribution, warp_size: int, element_bytes: int):
    """How ``WarpMatrixOp.load`` reads the fragments ``frag`` (one K step of an operand, both in the
    stored matrix's coordinates), or None where they are not its blocks: ``(lanes, counts,
    transposed)``, where register ``i`` of the distribution ``lanes`` is the row address lane gives
    for load ``i`` of ``counts[i]`` blocks. The fragment's entries must be blocks (their lanes
    ``block_lanes``, or for 16-bit elements transposed ones) whose origins, four by four, step
    linearly with lane bits 3 and 4."""
    lanes = block_lanes(element_bytes)
    flipped = _swapped(Fragment((), lanes)).lanes if element_bytes == 2 else None
    if warp_size != 32 or fragment.lanes not in (lanes, flipped):
        return None
    transposed = fragment.lanes != lanes
    columns = BLOCK_ROW_BYTES // element_bytes
    origins = list(frag.register_offsets)  # one block per register, the warp's tiles in order
    if any(r % (columns if transposed else BLOCK_ROWS) or c % (BLOCK_ROWS if transposed else columns)
           for r, c in origins):
        return None
    firsts, counts, steps = [], [], None
    for i in range(0, len(origins), 4):
        group = origins[i:i + 4]
        count = 4 if len(group) == 4 else 2 if len(group) >= 2 else 1
        group = group[:count]
        delta = lambda j: (group[j][0] - group[0][0], group[j][1] - group[0][1])  # noqa: E731
        these = (delta(1) if count > 1 else (0, 0), delta(2) if count > 2 else (0, 0))
        if count == 4 and delta(3) != (these[0][0] + these[1][0], these[0][1] + these[1][1]):
            return None
        if steps is not None and these != steps:
            return None
        steps = these
        firsts.append(group[0])
        counts.append(count)
        if count < len(origins[i:i + 4]):
            return None
    # lane bits 0-2 pick the row of the block (along the stored rows), bits 3-4 the block
    lane_bases = ((1, 0), (2, 0), (4, 0)) + steps
    return Distribution(frag.shape, tuple(firsts), lane_bases, frag.warp_bases, None), counts, transposed
