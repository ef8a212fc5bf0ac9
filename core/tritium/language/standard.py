"""Triton's ``standard.py`` functions that are compositions of other builtins (``sigmoid``,
``softmax``, ``swizzle2d``): written once in the language, so every target has them."""

from __future__ import annotations

from . import core
from . import math
from .core import _unwrap


def sigmoid(x) -> core.tensor:
    """``1 / (1 + exp(-x))``."""
    return 1 / (1 + core.exp(-core.semantic.to_tensor(_unwrap(x))))


def softmax(x, dim=None, keep_dims=False, ieee_rounding=False) -> core.tensor:
    """``exp(x - max) / sum(exp(x - max))`` along ``dim`` (0 when None), as Triton computes it; the
    result has ``x``'s shape. The max and the sum always keep their dimension, so they broadcast back
    along ``dim``: Triton's, without ``keep_dims``, broadcast along the last dimension instead, a
    wrong answer (or a shape error) for ``dim`` >= 1 that is not repeated here."""
    dim = 0 if _unwrap(dim) is None else _unwrap(dim)
    z = x - core.max(x, dim, keep_dims=True)
    num = core.exp(z)
    den = core.sum(num, dim, keep_dims=True)
    return math.fdiv(num, den, ieee_rounding)


def swizzle2d(i, j, size_i, size_j, size_g):
    """Where element (i, j) of a row-major ``size_i`` x ``size_j`` grid goes when each band of
    ``size_g`` rows is walked column by column (the last band may have fewer rows): the grouped
    ordering that matmul tutorials use to reuse tiles in cache. Returns ``(new_i, new_j)``."""
    i, j, size_i, size_j, size_g = (_unwrap(v) for v in (i, j, size_i, size_j, size_g))
    linear = i * size_j + j
    band = size_g * size_j  # elements in one band of rows
    first_row = (linear // band) * size_g
    rows = core.minimum(size_i - first_row, size_g)  # the rows of this band
    within = linear % band
    return first_row + within % rows, within // rows
