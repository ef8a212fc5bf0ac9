"""The interpreter's pointers: addresses that remember which argument they point into.

A pointer value is a ``Pointers``: uint64 byte addresses plus, per element, which argument
``Region`` the address derives from. Every load and store is checked against that region before
memory is touched, so an out-of-bounds access is a located error naming the argument and the
offsets, never a crash. Addresses built from integers (no known argument) are checked against
every argument of the launch.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..runtime.host import host_span


@dataclasses.dataclass(frozen=True)
class Region:
    """The bytes ``[lo, hi)`` of the array passed as argument ``name``; ``start`` is its data
    pointer (the address of element 0, where negative strides put it above ``lo``)."""

    name: str
    start: int
    lo: int
    hi: int


def region_of(value: Any, name: str, start: int) -> Region:
    """The memory of an array argument (``host_span``); an unknown extent is an empty region, so
    every access through it is reported."""
    span = host_span(value)
    lo, hi = span if span is not None else (start, start)
    return Region(name, start, lo, hi)


class Pointers:
    """Pointer handles: ``addr`` (uint64 addresses) and ``which`` (per element, an index into
    ``regions``; -1 where the origin is unknown)."""

    __slots__ = ("addr", "regions", "which")

    def __init__(self, addr: np.ndarray, regions: tuple[Region, ...], which: np.ndarray):
        self.addr, self.regions, self.which = addr, regions, which

    @classmethod
    def of(cls, addr: Any, region: Region | None) -> "Pointers":
        addr = np.asarray(addr, dtype=np.uint64)
        which = np.full(addr.shape, -1 if region is None else 0, dtype=np.int16)
        return cls(addr, () if region is None else (region,), which)

    def like(self, addr: Any, which: Any) -> "Pointers":
        return Pointers(np.asarray(addr, dtype=np.uint64), self.regions, np.asarray(which))

    # numpy sees the addresses (comparisons, casts to integers, printing)
    def __array__(self, dtype=None, copy=None):
        return self.addr if dtype is None else self.addr.astype(dtype)

    def tolist(self):
        return self.addr.tolist()

    def item(self):
        return self.addr.item()

    @property
    def shape(self):
        return self.addr.shape


def pointers(h: Any) -> Pointers:
    """``h`` as ``Pointers`` (integers turned into pointers have no known origin)."""
    return h if isinstance(h, Pointers) else Pointers.of(h, None)


def select(c: Any, a: Any, b: Any) -> Pointers:
    """``tl.where`` on pointers: each element keeps its own origin. The regions are merged without
    duplicates, so a ``where`` carried through a loop does not grow its region list."""
    a, b = pointers(a), pointers(b)
    regions = a.regions + tuple(r for r in b.regions if r not in a.regions)
    remap = np.array([regions.index(r) for r in b.regions] + [-1], dtype=np.int16)  # -1 stays -1
    return Pointers(np.where(c, a.addr, b.addr).astype(np.uint64), regions,
                    np.where(c, a.which, remap[b.which]))


class AccessError(Exception):
    """A load or store outside the memory its pointer derives from."""


def check(p: Pointers, active: np.ndarray, size: int, every: tuple[Region, ...], storing: bool) -> None:
    """Raise ``AccessError`` unless every ``active`` access of ``size`` bytes through ``p`` lies inside
    the array that pointer derives from (one of unknown origin: inside any argument)."""
    addr = p.addr[active].astype(np.int64)  # a negative offset wraps around and back
    which = np.broadcast_to(p.which, p.addr.shape)[active]
    what = "store to" if storing else "load from"
    for idx in np.unique(which):
        lanes = which == idx
        a = addr[lanes]
        regions = every if idx < 0 else (p.regions[idx],)
        ok = np.zeros(a.shape, dtype=bool)
        for r in regions:
            ok |= (a >= r.lo) & (a + size <= r.hi)
        if ok.all():
            continue
        of = f"{int(np.count_nonzero(~ok))} of {int(active.sum())} active lanes"
        if idx < 0:
            raise AccessError(f"{what} an address in no argument's memory: {_first(a[~ok], hex)} ({of}); the "
                              "interpreter reads only the arrays a launch passes, so an address made from an "
                              "integer must point into one of them (or run on a compiled target)")
        r = regions[0]
        offsets = (a[~ok] - r.start) // size
        raise AccessError(f"{what} '{r.name}' out of bounds at element offsets {_first(offsets, str)} ({of}); "
                          f"'{r.name}' spans {(r.hi - r.lo) // size} elements of {size} bytes")


def _first(values: np.ndarray, fmt, n: int = 8) -> str:
    shown = ", ".join(fmt(v) for v in values[:n])
    return f"[{shown}{', ...' if values.size > n else ''}]"
