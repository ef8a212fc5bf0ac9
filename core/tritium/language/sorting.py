"""Sorting and selection builtins: ``tl.sort``, ``tl.topk``, ``tl.bitonic_merge``, ``tl.histogram``
and ``tl.gather``, with Triton 3.6's signatures, written in the language itself so every target
(interpreter, cpu, GPUs) runs them through ops it already has.

``tl.sort`` and ``tl.topk`` emit one ``tile.sort`` whose region is that network (the interpreter
runs the network directly): a target inlines it, or sorts large blocks its own way
(``passes.decomposed``; GPUs in shared memory). Sorting is a bitonic network, as in Triton: the sorted dimension is reshaped into a cube of
dimensions of size 2, one per bit of an element's position, so the elements ``2**j`` apart pair up
along one of them; the partner of each element is the xor of the pair's bit patterns with its own
(``xor_sum`` over that dimension), and ``where`` keeps the smaller or the larger one. ``topk`` runs the network on blocks of ``k`` and halves
the rest with a pairwise max (bitonic top-k). Beyond Triton, which allows only the last dimension,
any ``dim`` is sorted (moved last and back); and NaN orders above every number (numpy's order: last
when ascending, first when descending, and first in ``topk``), where Triton's comparison would
duplicate it over its partner.

``histogram`` compares each value with every bin and sums the matches: it holds ``values x bins``
elements at once (GPU targets raise the pattern to ``tile.histogram``: ``passes.blockwide``).
``gather`` is one op, ``tile.gather``, which each target lowers by reading the source by index (a
buffer on the host, shared memory on GPUs), so any shape Triton accepts is accepted.
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
# The sorted dimension, of size 2**b, is held as b dimensions of size 2 after the ``lead`` ones (a
# hypercube, as in Triton): the last is bit 0 of an element's position, the one before it bit 1, and
# so on. Partners ``2**j`` apart then differ in one dimension, and no step reshapes.


def _bit_axis(x: tensor, bit: int) -> int:
    """The dimension of ``x`` (a cube after the leading dimensions) that holds position bit ``bit``."""
    return len(x.shape) - 1 - bit


def _swap(x: tensor, j: int, flip: int | tuple[str, int]) -> tensor:
    """One compare-and-swap of the elements ``2**j`` apart: each pair ends ascending, or descending
    where ``flip`` is 1; ``("alt", s)`` takes ``flip`` from position bit ``s`` (the alternating blocks
    of ``2**s`` that a bitonic sort merges)."""
    rank = len(x.shape)
    axis = _bit_axis(x, j)
    bits = semantic.cast(x, _bits_type(x.dtype), bitcast=True)
    pair = reduce_tensors([bits], axis, lambda a, b: [semantic.bitwise("xor", a[0], b[0])], True, "tl.sort")[0]
    partner = semantic.cast(semantic.bitwise("xor", bits, pair), x.dtype, bitcast=True)
    right = _along(semantic.arange(0, 2), axis, rank)  # 1 on the pair's upper element
    if isinstance(flip, tuple):
        right = semantic.bitwise("xor", right, _along(semantic.arange(0, 2), _bit_axis(x, flip[1]), rank))
    elif flip:
        right = semantic.bitwise("xor", right, 1)
    take_partner = semantic.bitwise("xor", _greater(x, partner), semantic.compare("ne", right, 0))
    return semantic.where(take_partner, partner, x)


def _merge(x: tensor, stage: int, flip: int | tuple[str, int]) -> tensor:
    """Blocks of ``2**stage`` elements that are bitonic come out sorted (``stage`` swap rounds)."""
    for j in reversed(range(stage)):
        x = _swap(x, j, flip)
    return x


def _halve(x: tensor, log_k: int, descending: bool) -> tensor:
    """The element-wise larger (smaller) of each two neighbouring blocks of ``2**log_k``: from an
    ascending and a descending block, a bitonic block holding the pair's top (bottom) ``k``."""
    def keep(a: list, b: list) -> list:
        better = _greater(a[0], b[0]) if descending else _greater(b[0], a[0])
        return [semantic.where(better, a[0], b[0])]
    return reduce_tensors([x], _bit_axis(x, log_k), keep, False, "tl.topk")[0]


def _to_cube(x: tensor, dim: int, what: str) -> tuple[tensor, tuple[int, ...]]:
    """``x`` with ``dim`` moved last and split into a cube (booleans as int8); and the order of the
    dimensions, to move them back."""
    rank = len(x.shape)
    order = tuple(d for d in range(rank) if d != dim) + (dim,)
    x = _numeric_view(_permute(x, order, what))
    cube = (2,) * _log2(x.shape[-1]) or (1,)
    return _reshape(x, x.shape[:-1] + cube, what), order


def _from_cube(x: tensor, lead: int, order: tuple[int, ...], dtype: T.dtype, what: str) -> tensor:
    size = 1
    for d in x.shape[lead:]:
        size *= d
    if not x.shape:  # topk(x, 1) of a 1-D x halves down to a scalar: splat it, reshape takes a block
        x = semantic.broadcast_to(x, (1,))
    x = semantic.cast(_reshape(x, x.shape[:lead] + (size,), what), dtype)
    return _permute(x, tuple(order.index(d) for d in range(len(order))), what)


def _descending(descending: Any, what: str) -> int:
    descending = _unwrap(descending)
    if isinstance(descending, tensor) or descending not in (0, 1):
        raise SemanticError(f"{what}: descending must be a constant bool (or 0 / 1), got {descending!r}")
    return int(descending)


def _sort(x: Any, k: Any, dim: Any, descending: Any, what: str) -> tensor:
    x = _block(x, what)
    dim = _dim(dim, len(x.shape), what)
    descending = _descending(descending, what)
    n = x.shape[dim]
    k = _unwrap(k)
    k = n if k is None else k
    if isinstance(k, bool) or not isinstance(k, int) or k < 1 or k > n or k & (k - 1):
        raise SemanticError(f"{what}: k must be a constant power of 2 in [1, {n}] (the size of dim {dim}), "
                            f"got {k!r}")
    shape = x.shape[:dim] + (k,) + x.shape[dim + 1:]

    def network(handle):
        return _network(tensor(handle, x.dtype, x.shape), dim, k, descending, what).handle

    return tensor(semantic.builder().sort(x.handle, x.dtype, dim, descending, k, shape, network), x.dtype, shape)


def _network(x: tensor, dim: int, k: int, descending: int, what: str) -> tensor:
    """The bitonic network of ``_sort`` (``tile.sort``'s region)."""
    lead = len(x.shape) - 1
    log_n, log_k = _log2(x.shape[dim]), _log2(k)
    h, order = _to_cube(x, dim, what)
    for stage in range(1, log_k + 1):  # sorted blocks of 2**stage, alternately ascending and descending
        h = _merge(h, stage, ("alt", stage) if stage < log_n else descending)
    for stage in range(log_k + 1, log_n + 1):  # keep the better half of the blocks of k, merged again
        h = _halve(h, log_k, bool(descending))
        h = _merge(h, log_k, ("alt", log_k) if stage < log_n else descending)
    return _from_cube(h, lead, order, x.dtype, what)


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
    dim = _dim(dim, len(x.shape), "tl.bitonic_merge")
    descending = _descending(descending, "tl.bitonic_merge")
    lead = len(x.shape) - 1
    h, order = _to_cube(x, dim, "tl.bitonic_merge")
    return _from_cube(_merge(h, _log2(x.shape[dim]), descending), lead, order, x.dtype, "tl.bitonic_merge")


# -- histogram and gather --------------------------------------------------------------------------


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
    if x.shape[0] * bins > TRITON_MAX_TENSOR_NUMEL:
        raise SemanticError(f"tl.histogram compares every value with every bin: {x.shape[0] * bins} pairs exceed "
                            f"the {TRITON_MAX_TENSOR_NUMEL} elements a block may hold; use smaller blocks")
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
    value = _numeric_view(src)
    out = tensor(semantic.builder().gather(value.handle, _position(index, n).handle, axis, value.dtype, index.shape),
                 value.dtype, index.shape)
    return semantic.cast(out, src.dtype)


def _position(index: tensor, n: int) -> tensor:
    """``index`` modulo ``n`` (a power of 2) as int32: narrow indices are widened first, keeping
    their sign, so that ``n - 1`` fits their type; the result is then in ``[0, n)`` on every target."""
    if index.dtype.primitive_bitwidth < 32:
        index = semantic.cast(index, T.int32)
    return semantic.cast(semantic.bitwise("and", index, n - 1), T.int32)
