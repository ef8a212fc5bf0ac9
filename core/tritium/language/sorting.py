"""Sorting and selection builtins: ``tl.sort``, ``tl.topk``, ``tl.bitonic_merge``, ``tl.histogram``
and ``tl.gather``, with Triton 3.6's signatures, written in the language itself so every target
(interpreter, cpu, GPUs) runs them through ops it already has.

Sorting is a bitonic network, as in Triton: a compare-and-swap of the elements ``2**j`` apart along
the sorted dimension views that dimension as ``(n / 2**(j+1), 2, 2**j)``; the partner of each
element is the xor of the pair's bit patterns with its own (``xor_sum`` over the pair axis), and
``where`` keeps the smaller or the larger one. ``topk`` runs the network on blocks of ``k`` and halves
the rest with a pairwise max (bitonic top-k). Beyond Triton, which allows only the last dimension,
any ``dim`` is sorted (moved last and back); and NaN orders above every number (numpy's order: last
when ascending, first when descending, and first in ``topk``), where Triton's comparison would
duplicate it over its partner.

``histogram`` compares each value with every bin and sums the matches; ``gather`` selects with a
one-hot comparison of each index with every position and an or-reduction of the selected bit
patterns (exact for every dtype). Both hold ``values x bins`` (or ``index x positions``) elements at
once, so they suit the small blocks that Triton's own lowering targets.
"""

from __future__ import annotations

from typing import Any

from . import dtypes as T
from . import semantic
from .core import _unwrap, tensor
from .reductions import reduce_tensors
from .semantic import SemanticError
from .shape import TRITON_MAX_TENSOR_NUMEL, _permute, _reshape


def _log2(n: int) -> int:
    return n.bit_length() - 1


def _block(x: Any, what: str) -> tensor:
    x = semantic.to_tensor(_unwrap(x))
    if not x.shape:
        raise SemanticError(f"{what} needs a block (a tensor with dimensions), got a scalar {x.dtype}")
    if x.dtype.is_ptr():
        raise SemanticError(f"{what} does not take pointers, got {x.dtype}")
    return x


def _dim(dim: Any, rank: int, what: str) -> int:
    dim = _unwrap(dim)
    if dim is None:
        return rank - 1
    if isinstance(dim, bool) or not isinstance(dim, int) or not -rank <= dim < rank:
        raise SemanticError(f"{what}: dim must be a constant integer in [{-rank}, {rank}) for a {rank}-d input "
                            f"(or None: the last), got {dim!r}")
    return dim % rank


def _along(values: tensor, axis: int, rank: int) -> tensor:
    """A 1-D tensor as a tensor of ``rank`` dimensions, all of size 1 but ``axis``."""
    for d in range(rank):
        if d != axis:
            values = semantic.expand_dims(values, d)
    return values


def _bits_type(t: T.dtype) -> T.dtype:
    """The signed integer type of ``t``'s width, whose bit patterns ``t``'s values travel in."""
    return {8: T.int8, 16: T.int16, 32: T.int32, 64: T.int64}[t.primitive_bitwidth]


def _greater(a: tensor, b: tensor) -> tensor:
    """``a > b`` in the order where NaN is above every number (and equal to NaN)."""
    gt = semantic.compare("gt", a, b)
    if a.dtype.is_floating():
        a_nan = semantic.compare("ne", a, a)
        b_num = semantic.compare("eq", b, b)
        gt = semantic.logical("or", gt, semantic.logical("and", a_nan, b_num))
    return gt


def _numeric_view(x: tensor) -> tensor:
    """Booleans sort as int8 (0 and 1); the network needs a type of 8 bits or more."""
    return semantic.cast(x, T.int8) if x.dtype.primitive_bitwidth == 1 else x


# -- the bitonic network ---------------------------------------------------------------------------


def _swap(x: tensor, j: int, flip: int | tuple[str, int]) -> tensor:
    """One compare-and-swap of the elements ``2**j`` apart along the last dimension: each pair ends
    ascending, or descending where ``flip`` is 1; ``("alt", s)`` takes ``flip`` from bit ``s`` of the
    element's position (the alternating blocks of size ``2**s`` that a bitonic sort merges)."""
    lead, n = x.shape[:-1], x.shape[-1]
    rank = len(lead)
    h = _reshape(x, lead + (n >> (j + 1), 2, 1 << j), "tl.sort")
    bits = semantic.cast(h, _bits_type(h.dtype), bitcast=True)
    pair = reduce_tensors([bits], rank + 1, lambda a, b: [semantic.bitwise("xor", a[0], b[0])], True, "tl.sort")[0]
    partner = semantic.cast(semantic.bitwise("xor", bits, pair), h.dtype, bitcast=True)
    right = _along(semantic.arange(0, 2), rank + 1, rank + 3)  # 1 on the pair's upper element
    if isinstance(flip, tuple):  # bit s of the position is bit (s - j - 1) of the block index
        blocks = semantic.arange(0, n >> (j + 1))
        bit = semantic.bitwise("and", semantic.shift("shr", blocks, flip[1] - j - 1), 1)
        right = semantic.bitwise("xor", right, _along(bit, rank, rank + 3))
    elif flip:
        right = semantic.bitwise("xor", right, 1)
    take_partner = semantic.bitwise("xor", _greater(h, partner), semantic.compare("ne", right, 0))
    return _reshape(semantic.where(take_partner, partner, h), x.shape, "tl.sort")


def _merge(x: tensor, stage: int, flip: int | tuple[str, int]) -> tensor:
    """Blocks of ``2**stage`` elements that are bitonic come out sorted (``stage`` swap rounds)."""
    for j in reversed(range(stage)):
        x = _swap(x, j, flip)
    return x


def _halve(x: tensor, k: int, descending: bool) -> tensor:
    """The element-wise larger (smaller) of each two neighbouring blocks of ``k``: from an ascending
    and a descending block, a bitonic block holding the pair's top (bottom) ``k``."""
    lead, n = x.shape[:-1], x.shape[-1]
    h = _reshape(x, lead + (n // (2 * k), 2, k), "tl.topk")

    def keep(a: list, b: list) -> list:
        better = _greater(a[0], b[0]) if descending else _greater(b[0], a[0])
        return [semantic.where(better, a[0], b[0])]
    h = reduce_tensors([h], len(lead) + 1, keep, False, "tl.topk")[0]
    return _reshape(h, lead + (n // 2,), "tl.topk")


def _sort(x: Any, k: Any, dim: Any, descending: Any, what: str) -> tensor:
    x = _block(x, what)
    rank = len(x.shape)
    dim = _dim(dim, rank, what)
    descending = _unwrap(descending)
    if isinstance(descending, tensor) or descending not in (0, 1):
        raise SemanticError(f"{what}: descending must be a constant bool (or 0 / 1), got {descending!r}")
    order = tuple(d for d in range(rank) if d != dim) + (dim,)
    inverse = tuple(order.index(d) for d in range(rank))
    original = x.dtype
    x = _numeric_view(_permute(x, order, what))
    n = x.shape[-1]
    log_n = _log2(n)
    k = _unwrap(k)
    if k is None:
        k = n
    if isinstance(k, bool) or not isinstance(k, int) or k < 1 or k > n or k & (k - 1):
        raise SemanticError(f"{what}: k must be a constant power of 2 in [1, {n}] (the size of dim {dim}), "
                            f"got {k!r}")
    log_k = _log2(k)
    final = int(descending)
    for stage in range(1, log_k + 1):  # sorted blocks of 2**stage, alternately ascending and descending
        x = _merge(x, stage, ("alt", stage) if stage < log_n else final)
    for stage in range(log_k + 1, log_n + 1):  # keep the better half of the blocks of k, merged again
        x = _halve(x, k, bool(descending))
        x = _merge(x, log_k, ("alt", log_k) if stage < log_n else final)
    return _permute(semantic.cast(x, original), inverse, what)


def sort(x, dim=None, descending=0) -> tensor:
    """``x`` sorted along ``dim`` (the last when None), ascending or ``descending``; NaN sorts
    above every number."""
    return _sort(x, None, dim, descending, "tl.sort")


def topk(x, k, dim=None) -> tensor:
    """The ``k`` largest elements along ``dim`` (the last when None), largest first; ``k`` a
    constant power of 2. The result has size ``k`` along ``dim``."""
    return _sort(x, k, dim, 1, "tl.topk")


def bitonic_merge(x, dim=None, descending=0) -> tensor:
    """One bitonic merge along ``dim`` (the last when None): a bitonic sequence (ascending then
    descending, or the reverse) comes out sorted. Other inputs give the network's output, as in
    Triton."""
    x = _block(x, "tl.bitonic_merge")
    rank = len(x.shape)
    dim = _dim(dim, rank, "tl.bitonic_merge")
    descending = _unwrap(descending)
    if isinstance(descending, tensor) or descending not in (0, 1):
        raise SemanticError(f"tl.bitonic_merge: descending must be a constant bool (or 0 / 1), got {descending!r}")
    order = tuple(d for d in range(rank) if d != dim) + (dim,)
    inverse = tuple(order.index(d) for d in range(rank))
    y = _numeric_view(_permute(x, order, "tl.bitonic_merge"))
    y = _merge(y, _log2(y.shape[-1]), int(descending))
    return _permute(semantic.cast(y, x.dtype), inverse, "tl.bitonic_merge")


# -- histogram and gather --------------------------------------------------------------------------


def _fits(numel: int, what: str, hint: str) -> None:
    if numel > TRITON_MAX_TENSOR_NUMEL:
        raise SemanticError(f"{what} compares every element with every {hint}: {numel} pairs exceed the "
                            f"{TRITON_MAX_TENSOR_NUMEL} elements a block may hold; use smaller blocks")


def histogram(input, num_bins, mask=None) -> tensor:
    """int32 counts of the values of a 1-D integer block in each bin ``0 .. num_bins - 1``; values
    outside ``[0, num_bins)`` and those where ``mask`` is False are not counted."""
    x = _block(input, "tl.histogram")
    if len(x.shape) != 1:
        raise SemanticError(f"tl.histogram takes a 1-D block, got shape {list(x.shape)}")
    if not x.dtype.is_int():
        raise SemanticError(f"tl.histogram counts integers, got {x.dtype}; convert with .to()")
    bins = _unwrap(num_bins)
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1 or bins & (bins - 1):
        raise SemanticError(f"tl.histogram: num_bins must be a constant power of 2, got {bins!r}")
    _fits(x.shape[0] * bins, "tl.histogram", "bin")
    hit = semantic.compare("eq", semantic.expand_dims(x, 1), semantic.expand_dims(semantic.arange(0, bins), 0))
    mask = _unwrap(mask)
    if mask is not None:
        mask = semantic.to_tensor(mask)
        if not mask.dtype.is_bool():
            raise SemanticError(f"tl.histogram: mask must be boolean, got {mask.dtype}")
        mask = semantic.broadcast_to(mask, x.shape)
        hit = semantic.logical("and", hit, semantic.expand_dims(mask, 1))
    return semantic.reduce_builtin("sum", semantic.cast(hit, T.int32), 0, False)


def gather(src, index, axis) -> tensor:
    """``out[i][j] = src[index[i][j]][j]`` for ``axis`` 0 (likewise for any rank and axis): the
    shape of ``index``, whose other dimensions match ``src``'s; the dtype of ``src``. An index
    outside ``[0, src.shape[axis])`` wraps modulo that size (Triton leaves it undefined)."""
    src, index = _block(src, "tl.gather"), semantic.to_tensor(_unwrap(index))
    if not index.dtype.is_int():
        raise SemanticError(f"tl.gather: index must be an integer tensor, got {index.dtype}")
    rank = len(src.shape)
    if len(index.shape) != rank:
        raise SemanticError(f"tl.gather: src and index must have the same rank, got shapes {list(src.shape)} "
                            f"and {list(index.shape)}")
    axis = _unwrap(axis)
    if isinstance(axis, bool) or not isinstance(axis, int) or not -rank <= axis < rank:
        raise SemanticError(f"tl.gather: axis must be a constant integer in [{-rank}, {rank}), got {axis!r}")
    axis %= rank
    for d in range(rank):
        if d != axis and index.shape[d] != src.shape[d]:
            raise SemanticError(f"tl.gather: index dimension {d} must match src's ({src.shape[d]}), got shapes "
                                f"{list(src.shape)} and {list(index.shape)}")
    n = src.shape[axis]
    _fits(index.numel * n, "tl.gather", "position of src along axis")
    position = semantic.bitwise("and", index, n - 1)
    one_hot = semantic.compare("eq", semantic.expand_dims(position, axis + 1),
                               _along(semantic.arange(0, n), axis + 1, rank + 1))
    value = _numeric_view(src)
    bits = value if value.dtype.is_int() else semantic.cast(value, _bits_type(value.dtype), bitcast=True)
    picked = semantic.where(one_hot, semantic.expand_dims(bits, axis), 0)
    out = reduce_tensors([picked], axis + 1, lambda a, b: [semantic.bitwise("or", a[0], b[0])], False,
                         "tl.gather")[0]
    out = semantic.cast(out, value.dtype, bitcast=True) if out.dtype != value.dtype else out
    return semantic.cast(out, src.dtype)
