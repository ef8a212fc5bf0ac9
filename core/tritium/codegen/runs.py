"""What the axis info says about one access: a run of ``n`` elements of a tensor of pointers along
one dimension, starting at a multiple of ``n`` (a GPU thread's vector, a CPU SIMD chunk).

Both code generators decide from these rules alone whether such a run is one vector access, one
scalar access or a gather, and how aligned its first address is, so hints (``tl.multiple_of``,
``tl.max_contiguous``) and the integer specialisation act the same on every target.
"""

from __future__ import annotations

from ..passes.axis_info import AxisInfo


def _pow2_part(value: int) -> int:
    return value & -value


def contiguous_run(info: AxisInfo, dim: int, n: int) -> bool:
    """Whether every aligned run of ``n`` elements along ``dim`` steps by one element: ``n`` divides
    the contiguity (the run lies inside one of the analysis' aligned runs)."""
    return info.contiguity[dim] % n == 0


def constant_run(info: AxisInfo, dim: int, n: int) -> bool:
    """Whether the ``n`` elements of every aligned run along ``dim`` are equal."""
    return info.constancy[dim] % n == 0


def run_alignment(info: AxisInfo, dim: int, n: int, elem_bytes: int) -> int:
    """The power of two (bytes, at least ``elem_bytes``) dividing the first address of every aligned
    contiguous run of ``n`` elements along ``dim``: the analysis' divisibility holds at the start of
    its runs, and a run of ``n`` starts a multiple of ``n`` elements after one."""
    return max(elem_bytes, min(_pow2_part(info.divisibility[dim]), _pow2_part(n * elem_bytes)))


def widest_run(info: AxisInfo, dim: int, elem_bytes: int, max_bytes: int) -> int:
    """The most elements (a power of two) of an aligned run along ``dim`` that one vector access of
    at most ``max_bytes`` may cover: contiguous, and aligned to the vector's size."""
    n = max(1, _pow2_part(max(1, max_bytes // elem_bytes)))
    while n > 1 and not (contiguous_run(info, dim, n) and run_alignment(info, dim, n, elem_bytes) >= n * elem_bytes):
        n //= 2
    return n
