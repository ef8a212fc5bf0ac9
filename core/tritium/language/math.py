"""``tl.math``: Triton's ``triton.language.math`` namespace, with Triton's names and dtype rules.

The functions Triton declares for given dtypes only (``sqrt_rn`` and ``div_rn`` for fp32, ``erf``,
``exp``, ``log``, ``sin``, ``sqrt``, ``floor`` and the like for fp32/fp64, ``umulhi`` for 32/64-bit
integers) refuse the others with Triton's error, rather than computing in a type the user did not
ask for (a kernel that runs on tritium must run on Triton too). ``umulhi`` is composed from
integer arithmetic, so every target has it without an op of its own.
"""

from __future__ import annotations

from . import dtypes as T
from . import semantic
from .core import _unwrap, abs, ceil, cos, exp, exp2, floor, log, log2, rsqrt, sin, sqrt, tensor

__all__ = ["abs", "ceil", "cos", "div_rn", "erf", "exp", "exp2", "fdiv", "floor", "fma", "log", "log2",
           "rsqrt", "sin", "sqrt", "sqrt_rn", "umulhi"]


def _emit(op: str, operands: tuple, t: T.dtype, shape) -> tensor:
    return tensor(semantic.builder().arith(op, [o.handle for o in operands], t, shape), t, shape)


def sqrt_rn(x) -> tensor:
    """Square root rounded to nearest even (IEEE), where ``tl.sqrt`` may approximate."""
    x = _unwrap(x)
    semantic.check_dtype("sqrt_rn", ("fp32",), x)
    x = semantic.to_tensor(x)
    return _emit("sqrt_rn", (x,), x.dtype, x.shape)


def div_rn(x, y) -> tensor:
    """``x / y`` rounded to nearest even (IEEE), where ``/`` may approximate."""
    x, y = _unwrap(x), _unwrap(y)
    semantic.check_dtype("div_rn", ("fp32",), x, y)
    x, y = semantic._binary_operands(x, y)
    if not x.dtype.is_floating():
        raise semantic.SemanticError(f"tl.div_rn needs floating-point operands, got {x.dtype}")
    return _emit("divf_rn", (x, y), x.dtype, x.shape)


def fdiv(x, y, ieee_rounding=False) -> tensor:
    """Floating-point ``x / y`` (fp16/bf16 compute in fp32, as ``/`` does); ``ieee_rounding=True``
    rounds as ``div_rn`` does."""
    x, y = semantic.to_tensor(_unwrap(x)), semantic.to_tensor(_unwrap(y))
    if not (x.dtype.is_floating() and y.dtype.is_floating()):
        raise semantic.SemanticError(f"both operands of tl.fdiv must be floating point, got {x.dtype} and {y.dtype}")
    x, y = semantic._binary_operands(x, y, div_or_mod=True)
    return _emit("divf_rn" if _unwrap(ieee_rounding) else "divf", (x, y), x.dtype, x.shape)


def erf(x) -> tensor:
    """The error function."""
    x = _unwrap(x)
    semantic.check_dtype("erf", ("fp32", "fp64"), x)
    x = semantic.to_tensor(x)
    return _emit("erf", (x,), x.dtype, x.shape)


def fma(x, y, z) -> tensor:
    """``x * y + z`` rounded once; the operands promote pairwise as Triton's do."""
    x, y, z = _unwrap(x), _unwrap(y), _unwrap(z)
    x, y = semantic._binary_operands(x, y)
    z, x = semantic._binary_operands(z, x)
    z, y = semantic._binary_operands(z, y)
    if not x.dtype.is_floating():
        raise semantic.SemanticError(f"tl.fma needs floating-point operands, got {x.dtype}")
    return _emit("fma", (x, y, z), x.dtype, x.shape)


_UMULHI = ("int32", "int64", "uint32", "uint64")


def umulhi(x, y) -> tensor:
    """The high half of the unsigned product of ``x`` and ``y`` (32- or 64-bit integers), in their type."""
    x, y = _unwrap(x), _unwrap(y)
    semantic.check_dtype("umulhi", _UMULHI, x, y)
    x, y = semantic._binary_operands(x, y)
    t = x.dtype
    semantic.check_dtype("umulhi", _UMULHI, x)  # a number promoted with a narrower tensor
    bits = t.primitive_bitwidth
    u = T.uint32 if bits == 32 else T.uint64
    a, b = semantic.cast(x, u), semantic.cast(y, u)
    if bits == 32:
        wide = semantic.mul(semantic.cast(a, T.uint64), semantic.cast(b, T.uint64))
        hi = semantic.cast(semantic.shift("shr", wide, 32), T.uint32)
    else:
        hi = _mulhi64(a, b)
    return semantic.cast(hi, t)


def _mulhi64(a: tensor, b: tensor) -> tensor:
    """The high 64 bits of a 64x64-bit unsigned product, from 32-bit halves (no partial sum overflows)."""
    def half(v, high):
        return semantic.shift("shr", v, 32) if high else semantic.bitwise("and", v, 0xFFFFFFFF)
    a_lo, a_hi, b_lo, b_hi = half(a, False), half(a, True), half(b, False), half(b, True)
    lo_lo, hi_lo = semantic.mul(a_lo, b_lo), semantic.mul(a_hi, b_lo)
    lo_hi, hi_hi = semantic.mul(a_lo, b_hi), semantic.mul(a_hi, b_hi)
    cross = semantic.add(semantic.add(half(lo_lo, True), half(hi_lo, False)), lo_hi)
    return semantic.add(semantic.add(hi_hi, half(hi_lo, True)), half(cross, True))
