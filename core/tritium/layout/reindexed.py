"""Layouts for the re-indexing ops (``tile.trans``, ``join``, ``split``, ...) that keep every element
in its thread, and the check that a pair of layouts does.

``register_layout`` is the layout stage's choice (``propagate``), as Triton makes it: a ``trans``
permutes its operand's blocked layout, a ``join`` adds the new dimension inside each thread, a
``split`` of a dimension held inside each thread drops it, a ``flip`` keeps its operand's layout,
and a ``reshape`` of a row-major blocked layout takes the blocked layout that keeps every
position where it was, when one exists (``_reshaped``). ``register_map`` then decides, for the
types the stage gave, whether the op moves no data: every thread finds each element of its result
registers in its own operand registers, at the same register whatever the thread. Then the code
generator only renames registers and the op needs no shared memory (``scratch``); otherwise the
operands go through shared memory.
"""

from __future__ import annotations

import functools
import re

from ..codegen.reindex import Reindex
from ..ir.mlir import ir
from .distributed import Blocked, Layout, distribute, layout_of_type


def register_layout(m: Reindex, src: Layout) -> Layout | None:
    """The result layout that keeps the elements of an operand laid out as ``src`` in their
    threads; None when there is none to propose (the result then takes its rank's default)."""
    if m.kind == "reshape":
        return _reshaped(src, m.src_shape, m.res_shape)
    if m.kind == "flip":  # the same layout: the elements stay in their threads where the flipped
        return src        # dimension lies within each thread, and the consumers of both agree
    if not isinstance(src, Blocked):
        return None
    if m.kind == "trans":
        where = {d: i for i, d in enumerate(m.order)}  # source dimension -> result dimension
        pick = lambda xs: tuple(xs[d] for d in m.order)  # noqa: E731
        return Blocked(pick(src.size_per_thread), pick(src.threads_per_warp), pick(src.warps_per_cta),
                       tuple(where[d] for d in src.order))
    if m.kind == "join":
        rank = src.rank
        return Blocked(src.size_per_thread + (2,), src.threads_per_warp + (1,), src.warps_per_cta + (1,),
                       (rank,) + src.order)
    last = src.rank - 1
    if m.kind == "split" and src.threads_per_warp[last] == 1 and src.warps_per_cta[last] == 1 and last > 0:
        return Blocked(src.size_per_thread[:last], src.threads_per_warp[:last], src.warps_per_cta[:last],
                       tuple(d for d in src.order if d != last))
    return None


def _reshaped(src: Layout, src_shape: tuple[int, ...], res_shape: tuple[int, ...]) -> Layout | None:
    """The blocked layout of ``res_shape`` that gives every row-major position the thread and
    register kind that ``src`` gives it, when there is one.

    A row-major blocked layout splits the bits of a position, from the lowest, into per dimension
    (last first): its own registers, lanes, warps, then repetitions (registers again); lanes and
    warps beyond a dimension's size hold copies. A reshape keeps positions, so the result's
    dimensions take the same bits in order; each must read registers, lanes, warps, registers (any
    may be absent) to be blocked. The copies go to the slowest dimension, as ``default_blocked``
    puts them (``register_map`` checks that they land where they were)."""
    rank = len(src_shape)
    if not isinstance(src, Blocked) or src.order != tuple(range(rank - 1, -1, -1)):
        return None
    log = lambda n: n.bit_length() - 1  # noqa: E731
    bits: list[str] = []  # the kind of each position bit, lowest first
    copies = {"l": 0, "w": 0}
    for d in reversed(range(rank)):
        spt, tpw, wpc = src.size_per_thread[d], src.threads_per_warp[d], src.warps_per_cta[d]
        if spt > src_shape[d]:
            return None
        kinds = "r" * log(spt) + "l" * log(tpw) + "w" * log(wpc)
        n = log(src_shape[d])
        for k in kinds[n:]:
            copies[k] += 1
        bits += kinds[:n] + "r" * (n - len(kinds))
    spt, tpw, wpc = [1] * len(res_shape), [1] * len(res_shape), [1] * len(res_shape)
    for d in reversed(range(len(res_shape))):
        n = log(res_shape[d])
        pattern, bits = "".join(bits[:n]), bits[n:]
        if not re.fullmatch("r*l*w*r*", pattern):
            return None
        lead = len(pattern) - len(pattern.lstrip("r"))
        spt[d], tpw[d], wpc[d] = 1 << lead, 1 << pattern.count("l"), 1 << pattern.count("w")
    tpw[0], wpc[0] = tpw[0] << copies["l"], wpc[0] << copies["w"]
    return Blocked(tuple(spt), tuple(tpw), tuple(wpc), tuple(range(len(res_shape) - 1, -1, -1)))


def register_map(op: ir.Operation) -> tuple[tuple[int, int], ...] | None:
    """For each result register of ``op`` (its types carry layouts): the operand and the register
    of it that hold the element, the same in every thread; None when some element lies in another
    thread."""
    layouts = tuple(layout_of_type(ir.RankedTensorType(o.type)) for o in op.operands)
    return _register_map(Reindex.of(op), layouts, layout_of_type(ir.RankedTensorType(op.results[0].type)))


@functools.lru_cache(maxsize=256)
def _register_map(m: Reindex, src_layouts: tuple[Layout, ...], res_layout: Layout):
    result = distribute(res_layout, m.res_shape)
    sources = [distribute(layout, m.src_shape) for layout in src_layouts]
    found = None
    for lane in range(1 << len(result.lane_bases)):
        for warp in range(1 << len(result.warp_bases)):
            held = [{c: r for r, c in enumerate(s.coordinates(lane, warp))} for s in sources]
            regs = []
            for coords in result.coordinates(lane, warp):
                which, src = m.source(None, coords)
                r = held[which].get(src)
                if r is None:
                    return None
                regs.append((which, r))
            if found is None:
                found = tuple(regs)
            elif found != tuple(regs):
                return None
    return found
