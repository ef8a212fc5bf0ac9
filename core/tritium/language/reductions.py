"""Reductions of one or several tensors at once: ``tl.reduce`` with a tuple, ``tl.argmax`` /
``tl.argmin`` and ``tl.max`` / ``tl.min`` with ``return_indices``, as Triton defines them.

Several tensors of one shape reduce together through one combine function taking
``(a_0, .., a_n-1, b_0, .., b_n-1)`` and returning n values: that is how an index follows its value
in ``argmax``. As in Triton the combine function must be associative and commutative. ``argmax``'s
combine is Triton's ``_argmax_combine``: ties go to the lower index (``tie_break_left``), and a NaN
compares false, so one on the right side of a combine wins and one on the left loses; the targets
put the lower positions on the left where that is free (the interpreter, the cpu, and the lanes of
a GPU warp), so a NaN in the last position is the answer everywhere.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Callable, Sequence

from . import dtypes as T
from . import semantic
from .semantic import SemanticError

#: ``combine(as, bs) -> values``: lists of scalar tensors, one per reduced tensor
Combine = Callable[[list, list], list]


def _core():
    from . import core
    return core


def operands(input: Any, what: str) -> list:
    """``input`` (a tensor or a tuple of tensors of one shape) as a list of tensors."""
    xs = list(input) if isinstance(input, (tuple, list)) else [input]
    if not xs:
        raise SemanticError(f"{what} needs at least one tensor")
    xs = [semantic.to_tensor(_core()._unwrap(x)) for x in xs]
    for x in xs:
        if x.dtype.is_ptr():
            raise SemanticError(f"{what} cannot combine pointers")
        if x.shape != xs[0].shape:
            raise SemanticError(f"{what}: every tensor needs the same shape, got "
                                f"{[list(x.shape) for x in xs]}")
    return xs


def wrap_axis(axis: Any, rank: int, what: str) -> int:
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise SemanticError(f"{what}: axis must be a constant integer (or None where {what} allows it), got {axis!r}")
    if rank == 0:
        raise SemanticError(f"{what}: cannot reduce or scan a scalar")
    if not -rank <= axis < rank:
        raise SemanticError(f"{what}: axis {axis} out of range for a tensor of rank {rank}")
    return axis % rank


def user_combine(combine_fn: Any, n: int, what: str) -> Combine:
    """A user's @jit ``combine_fn`` as a ``Combine`` of ``n`` tensors."""
    from ..runtime.jit import JITFunction  # the runtime imports the language

    combine_fn = _core()._unwrap(combine_fn)
    if not isinstance(combine_fn, JITFunction):
        raise SemanticError(f"{what}'s combine_fn must be a @jit function, got {combine_fn!r}")

    params = inspect.signature(combine_fn.fn).parameters.values()
    required = [p for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(required) > 2 * n or len(params) < 2 * n and not any(p.kind == p.VAR_POSITIONAL for p in params):
        raise SemanticError(f"{what}: combine_fn {combine_fn.__name__} takes {len(required)} argument(s); "
                            f"combining {n} tensor(s) calls it with {2 * n} (a_0, .., b_0, ..)")

    def combine(a: list, b: list) -> list:
        out = combine_fn(*a, *b)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if len(outs) != n:
            raise SemanticError(f"{what}: combine_fn {combine_fn.__name__} returns {len(outs)} value(s) for "
                                f"{n} tensor(s); it must return one per tensor")
        return outs
    return combine


def _typed(combine: Combine, ts: Sequence[T.dtype]) -> Callable[[list, list], list]:
    """``combine`` on builder handles: scalar tensors in, results cast back to ``ts``, handles out."""
    core = _core()

    def on_handles(a: list, b: list) -> list:
        wrap = lambda hs: [core.tensor(h, t, ()) for h, t in zip(hs, ts)]  # noqa: E731
        return [semantic.cast(v, t).handle for v, t in zip(combine(wrap(a), wrap(b)), ts)]
    return on_handles


def reduce_tensors(xs: list, axis: int, combine: Combine, keep_dims: bool = False, what: str = "tl.reduce") -> list:
    """``xs`` (one shape) reduced together along ``axis`` with ``combine`` (``what`` names the
    builtin in errors)."""
    core = _core()
    axis = wrap_axis(axis, len(xs[0].shape), what)
    shape = xs[0].shape[:axis] + xs[0].shape[axis + 1:]
    ts = [x.dtype for x in xs]
    hs = semantic.builder().reduce([x.handle for x in xs], ts, axis, xs[0].shape, shape, _typed(combine, ts))
    out = [core.tensor(h, t, shape) for h, t in zip(hs, ts)]
    return [semantic.expand_dims(r, axis) for r in out] if keep_dims else out


def reduce_all(xs: list, axis: Any, combine: Combine, keep_dims: bool, what: str = "tl.reduce") -> list:
    """``reduce_tensors`` along ``axis``, or over every element in row-major order when it is None
    (``keep_dims`` then keeps every dimension, as size 1)."""
    if axis is None:
        rank = len(xs[0].shape)
        if rank == 0:
            raise SemanticError(f"{what}: cannot reduce a scalar")
        for _ in range(rank):  # the last axis first: the row-major order of the elements
            xs = reduce_tensors(xs, len(xs[0].shape) - 1, combine, what=what)
        for _ in range(rank if keep_dims else 0):
            xs = [semantic.expand_dims(x, 0) for x in xs]
        return xs
    return reduce_tensors(xs, axis, combine, keep_dims, what)


def reduce(input, axis, combine_fn, keep_dims=False):
    """Reduce ``input`` (a tensor, or a tuple of tensors of one shape reduced together) along
    ``axis`` (every element when None) with the @jit ``combine_fn``, which takes the two sides'
    values (``a_0, .., b_0, ..``) and returns the combined ones; a tuple in, a tuple out."""
    core = _core()
    input, axis, keep_dims = (core._unwrap(v) for v in (input, axis, keep_dims))
    xs = operands(input, "tl.reduce")
    out = reduce_all(xs, axis, user_combine(combine_fn, len(xs), "tl.reduce"), bool(keep_dims))
    return tuple(out) if isinstance(input, (tuple, list)) else out[0]


# -- argmax / argmin -----------------------------------------------------------------------------


def _index_combine(kind: str, tie_break_left: bool) -> Combine:
    """Triton's ``_argmax_combine`` / ``_argmin_combine``: the left side wins when strictly better,
    or (with ``tie_break_left``) equal with the lower index."""
    def combine(a: list, b: list) -> list:
        (v1, i1), (v2, i2) = a, b
        better = semantic.compare("gt" if kind == "max" else "lt", v1, v2)
        if tie_break_left:
            tie = semantic.logical("and", semantic.compare("eq", v1, v2), semantic.compare("lt", i1, i2))
            better = semantic.logical("or", better, tie)
        return [semantic.where(better, v1, v2), semantic.where(better, i1, i2)]
    return combine


def _positions(shape: tuple[int, ...], axis: int | None):
    """int32 positions of each element of ``shape``: along ``axis``, or row-major over all when None."""
    rank = len(shape)
    index = None
    for d in (range(rank) if axis is None else [axis]):
        along = semantic.arange(0, shape[d])
        stride = math.prod(shape[d + 1:]) if axis is None else 1
        if stride != 1:
            along = semantic.mul(along, stride)
        for e in range(rank):
            if e != d:
                along = semantic.expand_dims(along, e)
        along = semantic.broadcast_to(along, shape)
        index = along if index is None else semantic.add(index, along)
    return index


def with_indices(kind: str, input, axis, tie_break_left: bool, keep_dims: bool) -> tuple:
    """(the max or min along ``axis``, its index), as Triton's ``_reduce_with_indices``; with
    ``axis`` None the index is the row-major position in the whole tensor."""
    x = semantic.to_tensor(input)
    what = f"tl.arg{kind}"
    if x.dtype.is_ptr():
        raise SemanticError(f"{what} cannot reduce pointers")
    if x.dtype == T.bfloat16:
        x = semantic.cast(x, T.float32)
    if axis is not None:
        axis = wrap_axis(axis, len(x.shape), what)
    elif len(x.shape) == 0:
        raise SemanticError(f"{what}: cannot reduce a scalar")
    value, index = reduce_all([x, _positions(x.shape, axis)], axis, _index_combine(kind, tie_break_left),
                              keep_dims, what)
    return value, index


def argmax(input, axis, tie_break_left=True, keep_dims=False):
    """The index of the largest element along ``axis`` (of the whole tensor, row-major, when None);
    ties go to the lowest index when ``tie_break_left``."""
    core = _core()
    return with_indices("max", core._unwrap(input), core._unwrap(axis), bool(core._unwrap(tie_break_left)),
                        bool(core._unwrap(keep_dims)))[1]


def argmin(input, axis, tie_break_left=True, keep_dims=False):
    """The index of the smallest element along ``axis`` (see ``argmax``)."""
    core = _core()
    return with_indices("min", core._unwrap(input), core._unwrap(axis), bool(core._unwrap(tie_break_left)),
                        bool(core._unwrap(keep_dims)))[1]


def reduce_or(input, axis, keep_dims=False):
    """The bitwise or of the elements along ``axis`` (every axis when None); integers only, in
    their own type (Triton's ``reduce_or``)."""
    core = _core()
    x = semantic.to_tensor(core._unwrap(input))
    if not x.dtype.is_int():
        raise SemanticError(f"tl.reduce_or reduces integers only, got {x.dtype}")
    return reduce_all([x], core._unwrap(axis), lambda a, b: [semantic.bitwise("or", a[0], b[0])],
                      bool(core._unwrap(keep_dims)), "tl.reduce_or")[0]
