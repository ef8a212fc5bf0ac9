"""Where each register of a thread lies in its tensor, as LLVM values.

A ``Distribution`` places register ``r`` of the thread (lane ``l``, warp ``w``) at, per dimension,
``(offsets[r] + sum of lane bases of l's set bits + sum of warp bases of w's set bits) mod shape``.
The thread part is the same for every register, so it is computed once per distribution, in the
kernel's entry block; each register then adds its constant offset. A ``ThreadPlan`` is that
computation in a form both LLVM emission and a Python check evaluate: runs of consecutive id bits
whose bases double along a dimension become one ``((id >> shift) & mask) * scale`` term, and the
``mod shape`` is kept only where the sum can reach the shape.
"""

from __future__ import annotations

import dataclasses
import math

from llvmlite import ir as ll

from ...layout.distributed import Distribution
from ..device import DeviceHooks

I32 = ll.IntType(32)


@dataclasses.dataclass(frozen=True)
class Field:
    """``((id >> shift) & mask) * scale`` of the lane id (``source`` "lane") or the warp id ("warp")."""

    source: str
    shift: int
    mask: int
    scale: int


@dataclasses.dataclass(frozen=True)
class ThreadPlan:
    """Per dimension: the fields summed into the thread part, and whether the coordinate needs the
    ``mod shape`` (the thread part plus a register offset can reach the shape)."""

    fields: tuple[tuple[Field, ...], ...]
    wraps: tuple[bool, ...]


def plan(dist: Distribution) -> ThreadPlan:
    """How to compute ``dist``'s thread part from the lane and warp ids."""
    fields, wraps = [], []
    for d, size in enumerate(dist.shape):
        dim_fields = []
        for source, bases in (("lane", dist.lane_bases), ("warp", dist.warp_bases)):
            bit = 0
            while bit < len(bases):
                scale = bases[bit][d]
                run = 1
                while scale and bit + run < len(bases) and bases[bit + run][d] == scale << run:
                    run += 1
                if scale:
                    dim_fields.append(Field(source, bit, (1 << run) - 1, scale))
                bit += run
        fields.append(tuple(dim_fields))
        largest = sum(f.mask * f.scale for f in dim_fields) + max(o[d] for o in dist.register_offsets)
        wraps.append(largest >= size)
    return ThreadPlan(tuple(fields), tuple(wraps))


def evaluate(dist: Distribution, lane: int, warp: int) -> list[tuple[int, ...]]:
    """Each register's coordinates by ``plan`` on Python ints: what the emitted code computes."""
    p = plan(dist)
    ids = {"lane": lane, "warp": warp}
    thread = [sum(((ids[f.source] >> f.shift) & f.mask) * f.scale for f in fs) for fs in p.fields]
    return [tuple((t + o) & (s - 1) if wrap else t + o
                  for t, o, s, wrap in zip(thread, offsets, dist.shape, p.wraps))
            for offsets in dist.register_offsets]


def copy_masks(dist: Distribution) -> tuple[int, int]:
    """The lane bits and warp bits along which threads hold copies of the same elements."""
    return (sum(1 << b for b in dist.copies(dist.lane_bases)),
            sum(1 << b for b in dist.copies(dist.warp_bases)))


def row_major(b: ll.IRBuilder, coords: list[ll.Value], shape: tuple[int, ...]) -> ll.Value:
    """The row-major position of the element at ``coords`` in a tensor of ``shape`` (i32)."""
    index: ll.Value = ll.Constant(I32, 0)
    stride = 1
    for coordinate, size in reversed(list(zip(coords, shape))):
        if size > 1:
            term = b.mul(coordinate, ll.Constant(I32, stride)) if stride > 1 else coordinate
            index = term if isinstance(index, ll.Constant) else b.add(index, term)
        stride *= size
    return index


class Indexing:
    """Thread ids and per-distribution thread parts, emitted once into the entry block (``entry``
    stays positioned before the entry block's terminator, which the walker adds last)."""

    def __init__(self, hooks: DeviceHooks, entry: ll.IRBuilder):
        self.entry = entry
        self.tid = hooks.thread_id(entry)
        lane_bits = int(math.log2(hooks.warp_size))
        self.ids = {"lane": entry.and_(self.tid, ll.Constant(I32, hooks.warp_size - 1), name="lane"),
                    "warp": entry.lshr(self.tid, ll.Constant(I32, lane_bits), name="warp")}
        self._thread: dict[Distribution, list[ll.Value]] = {}
        self._first_copy: dict[Distribution, ll.Value | None] = {}
        self._first_thread: ll.Value | None = None

    def thread_part(self, dist: Distribution) -> list[ll.Value]:
        """The thread part of every dimension's coordinate (i32)."""
        cached = self._thread.get(dist)
        if cached is None:
            cached = self._thread[dist] = [self._sum(fs) for fs in plan(dist).fields]
        return cached

    def _sum(self, fields: tuple[Field, ...]) -> ll.Value:
        e = self.entry
        total: ll.Value = ll.Constant(I32, 0)
        for f in fields:
            term = self.ids[f.source]
            if f.shift:
                term = e.lshr(term, ll.Constant(I32, f.shift))
            term = e.and_(term, ll.Constant(I32, f.mask))
            if f.scale != 1:
                term = e.mul(term, ll.Constant(I32, f.scale))
            total = term if isinstance(total, ll.Constant) else e.add(total, term)
        return total

    def coordinates(self, b: ll.IRBuilder, dist: Distribution, register: int) -> list[ll.Value]:
        """Register ``register``'s coordinate along every dimension (i32), emitted at ``b``."""
        wraps = plan(dist).wraps
        out = []
        for t, offset, size, wrap in zip(self.thread_part(dist), dist.register_offsets[register], dist.shape, wraps):
            value = b.add(t, ll.Constant(I32, offset)) if offset else t
            out.append(b.and_(value, ll.Constant(I32, size - 1)) if wrap else value)
        return out

    def linear_index(self, b: ll.IRBuilder, dist: Distribution, register: int) -> ll.Value:
        """The row-major position of register ``register``'s element in its tensor (i32)."""
        return row_major(b, self.coordinates(b, dist, register), dist.shape)

    def first_copy(self, dist: Distribution) -> ll.Value | None:
        """i1: this thread is the first of the threads holding the same elements (its lane and warp
        bits along copy bases are 0); None when no two threads hold the same element."""
        if dist not in self._first_copy:
            lane_mask, warp_mask = copy_masks(dist)
            e, conds = self.entry, []
            for source, mask in (("lane", lane_mask), ("warp", warp_mask)):
                if mask:
                    bits = e.and_(self.ids[source], ll.Constant(I32, mask))
                    conds.append(e.icmp_unsigned("==", bits, ll.Constant(I32, 0)))
            self._first_copy[dist] = conds[0] if len(conds) == 1 else e.and_(*conds) if conds else None
        return self._first_copy[dist]

    def first_thread(self) -> ll.Value:
        """i1: this is thread 0 of the program (the one that performs scalar stores, as in Triton)."""
        if self._first_thread is None:
            self._first_thread = self.entry.icmp_unsigned("==", self.tid, ll.Constant(I32, 0))
        return self._first_thread
