"""Distributed layouts: how the elements of a tensor spread over the threads of one program.

Three layouts, as in Triton:

- ``Blocked`` (``#tile.blocked``): each thread holds ``size_per_thread`` contiguous elements per
  dimension, ``threads_per_warp`` threads of a warp and ``warps_per_cta`` warps share the tile,
  ``order`` lists the dimensions from fastest to slowest varying. A layout does not depend on the
  shape it is applied to: a smaller tensor is held by several threads at once (copies), a larger
  one wraps around, each thread holding several repetitions.
- ``Slice`` (``#tile.slice<dim, parent>``): ``parent`` with dimension ``dim`` removed; the layout of
  a reduction's result along ``dim`` and of the operand of ``expand_dims`` at ``dim``.
- ``Mma`` (``#tile.mma``): a 2-D tensor held as the accumulators of a warp-level matrix
  instruction (NVIDIA's ``mma``, AMD's MFMA), whose ``Fragment`` the target describes: each warp
  computes ``m x n`` tiles, the warps interleaved tile by tile (``warps_per_cta``), so ``tl.dot``
  leaves its result where the instruction put it and a loop carries it there.

``Distribution`` applies a layout to a shape (powers of two, as Triton requires). Its facts are
linear over bits, as Triton's linear layouts are: the coordinate of register ``r`` of the thread
with lane ``l`` in warp ``w`` is, per dimension,

    (register_offsets[r] + sum of lane_bases[b] for the bits b set in l
                         + sum of warp_bases[b] for the bits b set in w) mod shape

A basis that is zero after the modulo is a bit along which threads hold copies. Code generation
computes the thread part once per layout and adds the registers' constants; reductions shuffle
over the lane bits whose basis lies along the reduced dimension.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Union

from ..ir import tile
from ..ir.mlir import ir


@dataclasses.dataclass(frozen=True)
class Blocked:
    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.order)

    def attr(self) -> ir.Attribute:
        return tile.blocked(self.size_per_thread, self.threads_per_warp, self.warps_per_cta, self.order)

    def __str__(self) -> str:
        return (f"blocked(spt={list(self.size_per_thread)}, tpw={list(self.threads_per_warp)}, "
                f"wpc={list(self.warps_per_cta)}, order={list(self.order)})")


@dataclasses.dataclass(frozen=True)
class Slice:
    dim: int
    parent: "Layout"

    @property
    def rank(self) -> int:
        return self.parent.rank - 1

    def attr(self) -> ir.Attribute:
        return tile.slice_of(self.dim, self.parent.attr())

    def __str__(self) -> str:
        return f"slice(dim={self.dim}, {self.parent})"


@dataclasses.dataclass(frozen=True)
class Fragment:
    """Which elements of a matrix tile the lanes of a warp hold for a matrix instruction, linear
    over bits: entry ``i`` of lane ``l`` is at ``entries[i]`` plus ``lanes[b]`` for every bit ``b``
    set in ``l`` (``(row, col)`` pairs). Targets describe their instructions' operands and
    accumulators so (``codegen.device.WarpMatrixOp``); the accumulator's is ``Mma``'s."""

    entries: tuple[tuple[int, int], ...]
    lanes: tuple[tuple[int, int], ...]

    def coordinates(self, lane: int, entry: int) -> tuple[int, int]:
        row, col = self.entries[entry]
        for bit, (r, c) in enumerate(self.lanes):
            if lane >> bit & 1:
                row, col = row + r, col + c
        return row, col


@dataclasses.dataclass(frozen=True)
class Mma:
    """The accumulator layout of a warp-level matrix instruction with ``instr = (m, n)`` tiles and
    accumulator ``fragment``: warp ``w`` holds the tiles at ``(w // wn + i * wm, w % wn + j * wn)``
    (in tiles) for every ``i``, ``j`` that fits, where ``(wm, wn) = warps_per_cta``."""

    instr: tuple[int, int]
    warps_per_cta: tuple[int, int]
    fragment: Fragment

    rank = 2

    def attr(self) -> ir.Attribute:
        return tile.mma(self.instr, self.warps_per_cta, self.fragment.entries, self.fragment.lanes)

    def __str__(self) -> str:
        return f"mma(instr={list(self.instr)}, wpc={list(self.warps_per_cta)})"


Layout = Union[Blocked, Slice, Mma]


def layout_of(attr: ir.Attribute) -> Layout:
    """The layout an encoding attribute describes."""
    attr = ir.Attribute.parse(str(attr))  # a nested attribute reads back untyped: re-read it typed
    if isinstance(attr, tile.SliceAttr):
        return Slice(ir.IntegerAttr(attr.dim).value, layout_of(attr.parent))
    if isinstance(attr, tile.MmaAttr):
        f = tile.mma_fields(attr)
        return Mma(tuple(f["instr"]), tuple(f["warps_per_cta"]), Fragment(tuple(f["entries"]), tuple(f["lanes"])))
    if isinstance(attr, tile.BlockedAttr):
        f = tile.blocked_fields(attr)
        return Blocked(tuple(f["size_per_thread"]), tuple(f["threads_per_warp"]), tuple(f["warps_per_cta"]),
                       tuple(f["order"]))
    raise ValueError(f"{attr} is not a distributed layout")


def layout_of_type(t: ir.RankedTensorType) -> Layout:
    if t.encoding is None:
        raise ValueError(f"{t} has no layout")
    return layout_of(t.encoding)


def encoded(t: ir.RankedTensorType, layout: Layout) -> ir.RankedTensorType:
    """``t`` (its shape and element type) with ``layout`` as its encoding."""
    return ir.RankedTensorType.get(list(t.shape), t.element_type, layout.attr())


def threads(layout: Layout) -> tuple[int, int]:
    """(threads per warp, warps per program) of a layout."""
    while isinstance(layout, Slice):
        layout = layout.parent
    if isinstance(layout, Mma):
        return 1 << len(layout.fragment.lanes), math.prod(layout.warps_per_cta)
    return math.prod(layout.threads_per_warp), math.prod(layout.warps_per_cta)


def default_blocked(shape: tuple[int, ...], num_warps: int, warp_size: int, vector: int = 1,
                    order: tuple[int, ...] | None = None) -> Blocked:
    """A blocked layout for ``shape``: ``vector`` elements per thread along ``order[0]`` (the
    contiguous dimension; the last one when ``order`` is None), threads then warps spread along
    the fastest dimensions first; threads and warps left over go to the slowest dimension (they
    hold copies when the tile is smaller than the program)."""
    rank = len(shape)
    order = tuple(range(rank - 1, -1, -1)) if order is None else tuple(order)
    spt = [1] * rank
    spt[order[0]] = max(1, min(vector, shape[order[0]]))
    tpw, wpc = [1] * rank, [1] * rank
    lanes, warps = warp_size, num_warps
    for d in order[:-1]:
        room = max(1, shape[d] // spt[d])
        tpw[d] = min(lanes, room)
        wpc[d] = min(warps, max(1, room // tpw[d]))
        lanes //= tpw[d]
        warps //= wpc[d]
    tpw[order[-1]], wpc[order[-1]] = lanes, warps
    return Blocked(tuple(spt), tuple(tpw), tuple(wpc), order)


@dataclasses.dataclass(frozen=True)
class Distribution:
    """A layout applied to a shape (see the module docstring). Registers are numbered with the
    layout's fastest dimension fastest, so a thread's contiguous elements are consecutive registers."""

    shape: tuple[int, ...]
    register_offsets: tuple[tuple[int, ...], ...]
    lane_bases: tuple[tuple[int, ...], ...]
    warp_bases: tuple[tuple[int, ...], ...]
    #: the fastest-varying dimension (for slices: the parent's fastest one that remains), or None
    contiguous_dim: int | None

    @property
    def registers(self) -> int:
        return len(self.register_offsets)

    def coordinates(self, lane: int, warp: int) -> list[tuple[int, ...]]:
        """Each register's coordinates in the thread ``lane`` of warp ``warp`` (a reference in Python)."""
        base = [0] * len(self.shape)
        for bases, index in ((self.lane_bases, lane), (self.warp_bases, warp)):
            for bit, basis in enumerate(bases):
                if index >> bit & 1:
                    base = [b + x for b, x in zip(base, basis)]
        return [tuple((b + r) % s for b, r, s in zip(base, offsets, self.shape)) for offsets in self.register_offsets]

    def register_index(self) -> dict[tuple[int, ...], int]:
        """Register number by register offset."""
        index: dict[tuple[int, ...], int] = {}
        for r, offsets in enumerate(self.register_offsets):
            index.setdefault(offsets, r)
        return index

    def copies(self, bases: tuple[tuple[int, ...], ...]) -> list[int]:
        """The bits of ``bases`` along which threads hold copies (their basis is zero)."""
        return [b for b, basis in enumerate(bases) if not any(basis)]


def distribute(layout: Layout, shape: tuple[int, ...]) -> Distribution:
    """Apply ``layout`` to a tensor of ``shape`` (powers of two)."""
    shape = tuple(shape)
    if len(shape) != layout.rank:
        raise ValueError(f"layout {layout} has rank {layout.rank}, shape {list(shape)} does not")
    if isinstance(layout, Slice):
        parent_shape = shape[:layout.dim] + (1,) + shape[layout.dim:]
        parent = distribute(layout.parent, parent_shape)
        drop = lambda v: v[:layout.dim] + v[layout.dim + 1:]  # noqa: E731
        registers = []  # the parent's registers at position 0 along dim
        for offsets in parent.register_offsets:
            if offsets[layout.dim] == 0 and drop(offsets) not in registers:
                registers.append(drop(offsets))
        contiguous = parent.contiguous_dim
        if contiguous == layout.dim:
            contiguous = None
        elif contiguous is not None and contiguous > layout.dim:
            contiguous -= 1
        return Distribution(shape, tuple(registers), tuple(map(drop, parent.lane_bases)),
                            tuple(map(drop, parent.warp_bases)), contiguous)
    if isinstance(layout, Mma):
        return _distribute_mma(layout, shape)
    rank = layout.rank
    spt, tpw, wpc = layout.size_per_thread, layout.threads_per_warp, layout.warps_per_cta
    covered = [spt[d] * tpw[d] * wpc[d] for d in range(rank)]
    # per dimension: the offsets of a thread's registers (its chunk, then its repetitions)
    per_dim = []
    for d in range(rank):
        repeats = max(1, shape[d] // covered[d])
        offs = [(r % spt[d] + (r // spt[d]) * covered[d]) % shape[d] for r in range(spt[d] * repeats)]
        per_dim.append(list(dict.fromkeys(offs)))  # copies inside one thread are one register
    registers = [()]
    for d in reversed(layout.order):  # the slowest dimension outermost
        registers = [r + ((d, o),) for r in registers for o in per_dim[d]]
    register_offsets = tuple(tuple(dict(r)[d] for d in range(rank)) for r in registers)

    def bases(counts, step) -> tuple[tuple[int, ...], ...]:
        out = []
        for d in layout.order:
            for bit in range(int(math.log2(counts[d]))):
                basis = [0] * rank
                basis[d] = (step[d] << bit) % shape[d]
                out.append(tuple(basis))
        return tuple(out)

    lane_bases = bases(tpw, spt)
    warp_bases = bases(wpc, [spt[d] * tpw[d] for d in range(rank)])
    return Distribution(shape, register_offsets, lane_bases, warp_bases, layout.order[0])


def _distribute_mma(layout: Mma, shape: tuple[int, ...]) -> Distribution:
    """Registers: the fragment's entries of each of the warp's tiles, tiles row by row."""
    (m, n), (wm, wn) = layout.instr, layout.warps_per_cta
    rows, cols = shape
    registers = []
    for ti in range(max(1, rows // (m * wm))):
        for tj in range(max(1, cols // (n * wn))):
            for r, c in layout.fragment.entries:
                registers.append(((ti * m * wm + r) % rows, (tj * n * wn + c) % cols))
    lane_bases = tuple((r % rows, c % cols) for r, c in layout.fragment.lanes)
    warp_bases = tuple([(0, (n << bit) % cols) for bit in range(int(math.log2(wn)))]
                       + [((m << bit) % rows, 0) for bit in range(int(math.log2(wm)))])
    return Distribution(tuple(shape), tuple(dict.fromkeys(registers)), lane_bases, warp_bases, 1)
