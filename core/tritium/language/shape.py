"""Triton's shape builtins: ``reshape``/``view``/``ravel``, ``permute``/``trans``, ``join``/``split``,
``interleave``, ``cat`` and ``flip``, with Triton 3.6's signatures and checks.

They all re-index elements: each emits one of the ``tile`` re-indexing ops (``reshape``, ``trans``,
``join``, ``split``, ``flip``), or a composition of them, through the active builder. Shapes follow
Triton's rules: every dimension a constant power of two (``-1`` is refused, as in Triton), at most
``TRITON_MAX_TENSOR_NUMEL`` elements. ``can_reorder=True`` lets Triton pick any element order; here
the order is always the row-major one, which is one of the orders it allows.
"""

from __future__ import annotations

from ..errors import warn
from . import semantic
from .core import _unwrap, tensor
from .semantic import TRITON_MAX_TENSOR_NUMEL, SemanticError


def _varargs(values: tuple) -> tuple:
    """Triton's ``_unwrap_iterable``: ``f(x, (a, b))`` and ``f(x, a, b)`` mean the same."""
    if len(values) == 1 and isinstance(_unwrap(values[0]), (tuple, list)):
        return tuple(_unwrap(values[0]))
    return values


def _shape(values: tuple, what: str) -> tuple[int, ...]:
    """A block shape as Triton validates it: constant powers of two, not too many elements."""
    shape = []
    for i, d in enumerate(_varargs(values)):
        d = _unwrap(d)
        if isinstance(d, bool) or not isinstance(d, int):
            raise SemanticError(f"{what}: shape element {i} must be a compile-time constant integer, got {d!r}")
        if d <= 0 or d & (d - 1):
            raise SemanticError(f"{what}: shape element {i} must be a power of 2, got {d} (Triton has no -1: "
                                f"spell every dimension out)")
        shape.append(d)
    semantic.check_numel(tuple(shape))
    return tuple(shape)


def _block(x, what: str) -> tensor:
    x = semantic.to_tensor(_unwrap(x))
    if not x.shape:
        raise SemanticError(f"{what} needs a block (a tensor with dimensions), got a scalar {x.dtype}")
    return x


def _dims(values: tuple, what: str) -> tuple[int, ...]:
    dims = tuple(_unwrap(d) for d in _varargs(values))
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        raise SemanticError(f"{what}: dims must be constant integers, got {list(dims)}")
    return dims


# -- reshape ---------------------------------------------------------------------------------------


def reshape(input, *shape, can_reorder=False) -> tensor:
    """``input``'s elements, in row-major order, in ``shape`` (given as one tuple or as
    arguments); the same number of elements. An empty shape turns a one-element block into a
    scalar."""
    shape = _shape(shape, "tl.reshape")
    x = semantic.to_tensor(_unwrap(input))
    if not shape:
        return _unsplat(x, "tl.reshape")
    x = _block(x, "tl.reshape")
    return _reshape(x, shape, "tl.reshape")


def _reshape(x: tensor, shape: tuple[int, ...], what: str) -> tensor:
    numel = 1
    for d in shape:
        numel *= d
    if numel != x.numel:
        raise SemanticError(f"{what} cannot change the number of elements: the input {list(x.shape)} has "
                            f"{x.numel}, the shape {list(shape)} has {numel}")
    if shape == x.shape:
        return x
    return tensor(semantic.builder().reshape(x.handle, x.dtype, x.shape, shape), x.dtype, shape)


def view(input, *shape) -> tensor:
    """Deprecated in Triton for ``reshape(..., can_reorder=True)``, which it is."""
    warn("view is deprecated, please use reshape with can_reorder being true.")
    return reshape(input, *shape, can_reorder=True)


def ravel(x, can_reorder=False) -> tensor:
    """``x`` as a 1-D block of all its elements in row-major order."""
    x = _block(x, "tl.ravel")
    return _reshape(x, (x.numel,), "tl.ravel")


def _unsplat(x: tensor, what: str) -> tensor:
    """The element of a one-element block, as a scalar."""
    if x.numel != 1:
        raise SemanticError(f"{what}: only a block of one element becomes a scalar, got shape {list(x.shape)}")
    while x.shape:
        x = semantic.reduce(x, 0, lambda a, b: a)
    return x


# -- permute ---------------------------------------------------------------------------------------


def permute(input, *dims) -> tensor:
    """``input`` with its dimensions in the order ``dims`` (one tuple or arguments): result
    dimension ``i`` is ``input`` dimension ``dims[i]``."""
    x = _block(input, "tl.permute")
    return _permute(x, _dims(dims, "tl.permute"), "tl.permute")


def trans(input, *dims) -> tensor:
    """``permute``, whose ``dims`` default to swapping the last two dimensions."""
    x = _block(input, "tl.trans")
    dims = _dims(dims, "tl.trans")
    if not dims:
        n = len(x.shape)
        if n < 2:
            raise SemanticError("tl.trans without dims swaps the last two dimensions, but the input is 1-D; "
                                "pass dims (e.g. tl.trans(x, 0))")
        dims = tuple(range(n - 2)) + (n - 1, n - 2)
    return _permute(x, dims, "tl.trans")


def _permute(x: tensor, dims: tuple[int, ...], what: str) -> tensor:
    if len(dims) != len(x.shape):
        raise SemanticError(f"{what}: dims {list(dims)} must have one entry per dimension of the "
                            f"{len(x.shape)}-d input")
    if sorted(dims) != list(range(len(dims))):
        raise SemanticError(f"{what}: dims must be a permutation of {list(range(len(dims)))}, got {list(dims)}")
    if dims == tuple(range(len(dims))):
        return x
    shape = tuple(x.shape[d] for d in dims)
    return tensor(semantic.builder().trans(x.handle, x.dtype, dims, shape), x.dtype, shape)


def _transposed(self: tensor) -> tensor:
    """``x.T``: the transpose of a 2-D block (Triton's frontend spells it ``permute(x, (1, 0))``)."""
    return _permute(_block(self, "x.T"), (1, 0), "x.T")


tensor.T = property(_transposed)


# -- join and split --------------------------------------------------------------------------------


def join(a, b) -> tensor:
    """``a`` and ``b`` (broadcast to one shape; of one dtype) stacked along a new last dimension of
    size 2; two scalars give a block of shape (2,)."""
    a, b = semantic.to_tensor(_unwrap(a)), semantic.to_tensor(_unwrap(b))
    if a.dtype != b.dtype:
        raise SemanticError(f"tl.join needs two tensors of one dtype, got {a.dtype} and {b.dtype}; convert "
                            f"one with .to()")
    (a, b), shape = semantic._same_shape(a, b)
    scalars = not shape
    if scalars:
        a, b, shape = semantic.expand_dims(a, 0), semantic.expand_dims(b, 0), (1,)
    out_shape = shape + (2,)
    out = tensor(semantic.builder().join(a.handle, b.handle, a.dtype, out_shape), a.dtype, out_shape)
    return _reshape(out, (2,), "tl.join") if scalars else out


def split(a) -> tuple[tensor, tensor]:
    """The two halves of ``a`` along its last dimension, which must have size 2 (the inverse of
    ``join``); a block of shape (2,) gives two scalars."""
    x = _block(a, "tl.split")
    if x.shape[-1] != 2:
        raise SemanticError(f"tl.split needs a last dimension of size 2, got shape {list(x.shape)}")
    rank_1 = len(x.shape) == 1
    if rank_1:
        x = semantic.expand_dims(x, 0)
    shape = x.shape[:-1]
    b = semantic.builder()
    parts = tuple(tensor(b.split(x.handle, x.dtype, part, shape), x.dtype, shape) for part in (0, 1))
    if rank_1:
        return tuple(_unsplat(p, "tl.split") for p in parts)
    return parts


def interleave(a, b) -> tensor:
    """The elements of ``a`` and ``b`` alternating along their last dimension (``join`` then a
    reshape that merges the new dimension into it)."""
    c = join(a, b)
    if len(c.shape) == 1:
        return c
    return _reshape(c, c.shape[:-2] + (2 * c.shape[-2],), "tl.interleave")


def cat(input, other, can_reorder=False) -> tensor:
    """The elements of two 1-D blocks of one shape and dtype together. Triton allows only
    ``can_reorder=True`` (the order is then the compiler's choice); here it is ``input`` followed
    by ``other``."""
    if not _unwrap(can_reorder):
        raise SemanticError("tl.cat supports only can_reorder=True, as in Triton (the order of the "
                            "elements is not defined); pass can_reorder=True")
    a, b = _block(input, "tl.cat"), _block(other, "tl.cat")
    if len(a.shape) != 1 or a.shape != b.shape:
        raise SemanticError(f"tl.cat joins two 1-D blocks of one shape, got {list(a.shape)} and {list(b.shape)}")
    pairs = _permute(join(a, b), (1, 0), "tl.cat")  # (2, n): input's row, then other's
    return _reshape(pairs, (2 * a.shape[0],), "tl.cat")


# -- flip ------------------------------------------------------------------------------------------


def flip(x, dim=None) -> tensor:
    """``x`` reversed along ``dim`` (the last dimension when None)."""
    x = _block(x, "tl.flip")
    rank = len(x.shape)
    dim = _unwrap(dim)
    dim = rank - 1 if dim is None else dim
    if not isinstance(dim, int) or not -rank <= dim < rank:
        raise SemanticError(f"tl.flip: dim must be a constant integer in [{-rank}, {rank}) for a "
                            f"{rank}-d input, got {dim!r}")
    dim %= rank
    if x.shape[dim] == 1:
        return x
    return tensor(semantic.builder().flip(x.handle, x.dtype, dim, x.shape), x.dtype, x.shape)
