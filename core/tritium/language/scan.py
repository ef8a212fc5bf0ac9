"""Scans: ``tl.associative_scan`` (of a tensor or a tuple of tensors), ``tl.cumsum`` and
``tl.cumprod``, as Triton defines them.

Element k of an inclusive scan along an axis combines elements 0..k in order with the combine
function (the accumulated value is its first operand); ``reverse=True`` scans from the end, as if
the tensor were flipped along the axis, scanned and flipped back.
"""

from __future__ import annotations

from typing import Any

from . import dtypes as T
from . import semantic
from .reductions import Combine, _typed, operands, user_combine, wrap_axis
from .semantic import SemanticError


def _core():
    from . import core
    return core


def scan_tensors(xs: list, axis: Any, combine: Combine, reverse: bool, what: str) -> list:
    """The inclusive scans of ``xs`` (one shape) along ``axis``, combined together."""
    core = _core()
    axis = wrap_axis(axis, len(xs[0].shape), what)
    ts = [x.dtype for x in xs]
    shape = xs[0].shape
    hs = semantic.builder().scan([x.handle for x in xs], ts, axis, shape, reverse, _typed(combine, ts))
    return [core.tensor(h, t, shape) for h, t in zip(hs, ts)]


def associative_scan(input, axis, combine_fn, reverse=False):
    """The inclusive scan of ``input`` (a tensor, or a tuple of tensors of one shape scanned
    together) along ``axis`` with the associative @jit ``combine_fn``; a tuple in, a tuple out."""
    core = _core()
    input, axis, reverse = (core._unwrap(v) for v in (input, axis, reverse))
    xs = operands(input, "tl.associative_scan")
    out = scan_tensors(xs, axis, user_combine(combine_fn, len(xs), "tl.associative_scan"), bool(reverse),
                       "tl.associative_scan")
    return tuple(out) if isinstance(input, (tuple, list)) else out[0]


def _prepare(input, what: str):
    x = semantic.to_tensor(_core()._unwrap(input))
    if x.dtype.is_ptr():
        raise SemanticError(f"{what} cannot scan pointers")
    return semantic.cast(x, T.float32) if x.dtype == T.bfloat16 else x


def cumsum(input, axis=0, reverse=False, dtype=None):
    """The running sum along ``axis`` (in ``dtype`` when given; narrow integers widen to 32 bits)."""
    core = _core()
    x = _prepare(input, "tl.cumsum")
    x = semantic.cast(x, semantic.sum_dtype(x.dtype, core._unwrap(dtype)))
    return scan_tensors([x], core._unwrap(axis), lambda a, b: [semantic.add(a[0], b[0])],
                        bool(core._unwrap(reverse)), "tl.cumsum")[0]


def cumprod(input, axis=0, reverse=False):
    """The running product along ``axis`` (in the input's type, as Triton: no widening)."""
    core = _core()
    x = _prepare(input, "tl.cumprod")
    return scan_tensors([x], core._unwrap(axis), lambda a, b: [semantic.mul(a[0], b[0])],
                        bool(core._unwrap(reverse)), "tl.cumprod")[0]
