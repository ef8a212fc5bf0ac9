"""``libdevice``: the functions of NVIDIA's libdevice (Triton's ``tl.extra.libdevice``), by their
libdevice names, on every tritium target, for the dtypes Triton's table gives each (fp32 and fp64
where libdevice has both ``f`` and plain variants, int32/int64 for the integer ones; the function
dispatches on the arguments' dtypes). The plain math functions are the math ops (on nvptx they call
libdevice itself where Triton does); the others are composed from ``semantic`` ops, so that every
target computes them with the same code:

* ``libdevice_round``: arithmetic and conversions in a named rounding mode (exact);
* ``libdevice_bits``: integer and bit functions, float bit patterns, classification (exact);
* ``libdevice_special``: ``exp10``, ``sinpi``, norms, ``fast_*`` and the special functions (Bessel,
  gamma, inverse error functions), with the accuracy their docstrings state.

A name of libdevice that is not here raises ``NotImplementedYet``.
"""

from __future__ import annotations

from .. import dtypes as T
from .. import semantic
from ..core import _unwrap, tensor

#: libdevice name -> the math op computing it
_UNARY = {"exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "log10": "log10", "sqrt": "sqrt",
          "rsqrt": "rsqrt", "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh", "erf": "erf",
          "floor": "floor", "ceil": "ceil", "trunc": "trunc", "round": "round", "rint": "roundeven",
          "nearbyint": "roundeven", "fabs": "absf", "erfc": "erfc", "acos": "acos", "acosh": "acosh",
          "asin": "asin", "asinh": "asinh", "atan": "atan", "atanh": "atanh", "cbrt": "cbrt", "cosh": "cosh",
          "sinh": "sinh", "expm1": "expm1", "log1p": "log1p"}


def _float(name: str, x) -> tensor:
    x = semantic.to_tensor(_unwrap(x))
    if x.dtype not in (T.float32, T.float64):
        raise semantic.SemanticError(f"libdevice.{name} takes fp32 or fp64 values (as libdevice), got {x.dtype}; "
                                     "convert with .to(tl.float32) first")
    return x


def _unary(name: str):
    op = _UNARY[name]

    def fn(arg0) -> tensor:
        x = _float(name, arg0)
        return semantic.math_unary(op, x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"libdevice's ``{name}`` of each element."
    return fn


for _name in _UNARY:
    globals()[_name] = _unary(_name)
del _name


def fma(arg0, arg1, arg2) -> tensor:
    """``arg0 * arg1 + arg2`` rounded once."""
    from ..math import fma as tl_fma

    return tl_fma(_float("fma", arg0), arg1, arg2)


def _binary(name: str, op: str, arg0, arg1) -> tensor:
    x, y = _float(name, arg0), _float(name, arg1)
    (x, y), shape = semantic._same_shape(x, semantic.cast(y, x.dtype))
    return semantic._emit(op, (x, y), x.dtype, shape)


def copysign(arg0, arg1) -> tensor:
    """``arg0``'s magnitude with ``arg1``'s sign."""
    return _binary("copysign", "copysign", arg0, arg1)


def atan2(arg0, arg1) -> tensor:
    """The angle of the point (``arg1``, ``arg0``), in (-pi, pi], as C's ``atan2(y, x)``."""
    return _binary("atan2", "atan2", arg0, arg1)


def pow(arg0, arg1) -> tensor:
    """``arg0`` to the power ``arg1``, as C's ``pow``; an int32 ``arg1`` (libdevice's ``powi``) is
    converted to ``arg0``'s type first (exact)."""
    y = semantic.to_tensor(_unwrap(arg1))
    if y.dtype == T.int32:
        arg1 = semantic.cast(y, _float("pow", arg0).dtype)
    return _binary("pow", "powf", arg0, arg1)


def fmod(arg0, arg1) -> tensor:
    """The remainder of ``arg0 / arg1`` truncated toward zero, with ``arg0``'s sign (C's ``fmod``)."""
    return _binary("fmod", "remf", arg0, arg1)


def fmin(arg0, arg1) -> tensor:
    """The smaller of the two, the number where one is NaN."""
    return semantic.minmax("min", _float("fmin", arg0), _float("fmin", arg1))


def fmax(arg0, arg1) -> tensor:
    """The larger of the two, the number where one is NaN."""
    return semantic.minmax("max", _float("fmax", arg0), _float("fmax", arg1))


def isnan(arg0) -> tensor:
    """1 where the element is NaN, else 0 (int32, as libdevice's ``__nv_isnanf``)."""
    x = _float("isnan", arg0)
    return semantic.cast(semantic.compare("ne", x, x), T.int32)


def isinf(arg0) -> tensor:
    """1 where the element is an infinity of either sign, else 0 (int32)."""
    x = _float("isinf", arg0)
    return semantic.cast(semantic.compare("eq", semantic.abs(x), float("inf")), T.int32)


from .libdevice_bits import EXPORTS as _BITS  # noqa: E402
from .libdevice_round import EXPORTS as _ROUND  # noqa: E402
from .libdevice_special import EXPORTS as _SPECIAL  # noqa: E402

for _exports in (_ROUND, _BITS, _SPECIAL):
    globals().update(_exports)
del _exports


def __getattr__(name: str):
    from ...errors import NotImplementedYet

    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedYet(f"libdevice.{name} is not supported yet (tritium has every name of Triton 3.6's "
                            "libdevice; this one is not among them)")
