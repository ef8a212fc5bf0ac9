"""SIMD chunks of tensors and the small IR-building helpers the block code generator loops with.

A tensor is never one LLVM vector: code works on chunks of ``w`` consecutive elements along the
last dimension (``w`` is the layout's ``size_per_thread``, or 1 when a dimension of size 1 is
broadcast). Positions are index tuples whose entries are Python ints (folded at compile time) or
LLVM ``i32`` values; the last entry is the first column of the chunk.
"""

from __future__ import annotations

from typing import Callable, Sequence

from llvmlite import ir as ll

from ..accumulate import phi_loop
from ..reindex import I32, Index, add, mul, unflatten  # noqa: F401  (index arithmetic, shared)
from ..reindex import row_major as linear_offset  # noqa: F401
from ..reindex import value as as_value


class Chunk:
    """``w`` lanes of one tensor (``vec``: ``<w x T>``, or a scalar when ``w`` is 1).

    ``uniform`` is the scalar every lane holds, when the chunk was computed as one: such chunks are
    computed on scalars and splatted. Whether the lanes of a pointer chunk are contiguous (one
    vector access instead of a gather) is not tracked here but read from the axis-info analysis
    (``tritium.codegen.runs``). Vectors are built eagerly: a lazily built one could end up in a block
    that does not dominate a later use, and LLVM deletes the unused ones anyway.

    ``all_on``, on a chunk of booleans, is a scalar ``i1`` that holds when every lane is true,
    where a scalar test decides it (a bound compared with a contiguous range: ``evaluate``).
    """

    __slots__ = ("vec", "width", "uniform", "all_on")

    def __init__(self, vec: ll.Value, width: int, uniform: ll.Value | None = None, all_on: ll.Value | None = None):
        self.vec, self.width, self.uniform, self.all_on = vec, width, uniform, all_on


def uniform_chunk(b: ll.IRBuilder, scalar: ll.Value, width: int) -> Chunk:
    return Chunk(splat(b, scalar, width), width, uniform=scalar)


def ramp(b: ll.IRBuilder, first: ll.Value, width: int) -> Chunk:
    """Lanes ``first + k`` of an integer type."""
    if width == 1:
        return Chunk(first, 1, uniform=first)
    return Chunk(b.add(splat(b, first, width), iota(first.type, width)), width)


def splat(b: ll.IRBuilder, scalar: ll.Value, width: int) -> ll.Value:
    if width == 1:
        return scalar
    vty = ll.VectorType(scalar.type, width)
    one = b.insert_element(ll.Constant(vty, ll.Undefined), scalar, ll.Constant(I32, 0))
    return b.shuffle_vector(one, ll.Constant(vty, ll.Undefined), ll.Constant(ll.VectorType(I32, width), [0] * width))


def iota(t: ll.IntType, width: int) -> ll.Constant:
    """``<0, 1, ..., width-1>`` of integer type ``t``."""
    return ll.Constant(ll.VectorType(t, width), list(range(width)))


def index_key(idx: Sequence[Index]) -> tuple:
    """A hashable identity of an index tuple (same LLVM values or same ints)."""
    return tuple(i if isinstance(i, int) else ("v", id(i)) for i in idx)


def counted_loop(b: ll.IRBuilder, n: int, body: Callable[[Index], None], name: str = "chunk") -> None:
    """Emit ``for i in range(n): body(i)`` (n >= 1 known at compile time); n == 1 emits no loop."""
    if n == 1:
        body(0)
        return
    phi_loop(b, n, [], lambda i, _: body(i) or [], name)
