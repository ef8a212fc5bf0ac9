"""Triton's ``standard.py`` functions that are compositions of other builtins (``sigmoid``,
``softmax``): written once in the language, so every target has them."""

from __future__ import annotations

from . import core
from . import math
from .core import _unwrap


def sigmoid(x) -> core.tensor:
    """``1 / (1 + exp(-x))``."""
    return 1 / (1 + core.exp(-core.semantic.to_tensor(_unwrap(x))))


def softmax(x, dim=None, keep_dims=False, ieee_rounding=False) -> core.tensor:
    """``exp(x - max) / sum(exp(x - max))`` along ``dim`` (0 when None), as Triton computes it."""
    dim = 0 if _unwrap(dim) is None else _unwrap(dim)
    z = x - core.max(x, dim, keep_dims=keep_dims)
    num = core.exp(z)
    den = core.sum(num, dim, keep_dims=keep_dims)
    return math.fdiv(num, den, ieee_rounding)
