"""Triton's function spellings of what operators and methods do (``tl.add``, ``tl.sub``,
``tl.mul``, ``tl.cast``, ``tl.broadcast``), ``tensor.item()``, and ``tl.assume``."""

from __future__ import annotations

from . import semantic
from .core import _unwrap, tensor


def add(x, y, sanitize_overflow=True):
    """``x + y`` (Triton checks integer overflow here in debug mode; tritium does not yet)."""
    return semantic.add(_unwrap(x), _unwrap(y))


def sub(x, y, sanitize_overflow=True):
    """``x - y``."""
    return semantic.sub(_unwrap(x), _unwrap(y))


def mul(x, y, sanitize_overflow=True):
    """``x * y``."""
    return semantic.mul(_unwrap(x), _unwrap(y))


def cast(input, dtype, fp_downcast_rounding=None, bitcast=False) -> tensor:
    """``input.to(dtype, fp_downcast_rounding, bitcast)``."""
    return semantic.cast(semantic.to_tensor(_unwrap(input)), _unwrap(dtype), bitcast=_unwrap(bitcast),
                         fp_downcast_rounding=_unwrap(fp_downcast_rounding))


def broadcast(input, other) -> tuple[tensor, tensor]:
    """Both operands broadcast to their common shape (each keeps its dtype)."""
    a, b = semantic.to_tensor(_unwrap(input)), semantic.to_tensor(_unwrap(other))
    shape = semantic.broadcast_shapes(a.shape, b.shape)
    return semantic.broadcast_to(a, shape), semantic.broadcast_to(b, shape)


def item(self) -> tensor:
    """The one element of a one-element block, as a scalar."""
    from .shape import reshape

    if self.shape and any(s != 1 for s in self.shape):
        raise semantic.SemanticError(f"item() needs a block of one element, got shape {list(self.shape)}")
    return reshape(self, ()) if self.shape else self


def assume(cond) -> None:
    """A promise that ``cond`` holds, which a compiler may optimise with. Nothing here uses it yet,
    so it costs nothing and changes nothing; in debug mode it is checked like ``tl.device_assert``."""
    from . import debug

    cond = semantic.to_tensor(_unwrap(cond))
    if not (cond.dtype.is_bool() or cond.dtype.is_int()):
        raise semantic.SemanticError(f"tl.assume needs a boolean condition, got {cond.dtype}")
    debug.device_assert(cond, "assumption (tl.assume) does not hold", None)
