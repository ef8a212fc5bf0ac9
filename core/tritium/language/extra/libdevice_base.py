"""Shared pieces of ``libdevice``: argument dispatch on dtypes (as Triton's ``extern_elementwise``
does it) and exact float helpers built from bit patterns (next representable value, exponent and
significand, powers of two), the error-free transformations (TwoSum, Dekker's TwoProduct) and the
final rounding step of the directed-rounding functions.

Everything here composes ``semantic`` ops, so every target computes it with the same code. Two
rules keep the error-free transformations exact on every target: an inexact product that feeds an
addition is written as ``fma(x, y, +0.0)`` (an FMA is never contracted with a following add, where
a plain multiply may be on targets that contract ``a * b + c``), and an IEEE product that must round
once is ``fma(x, y, -0.0)``; the products of Dekker's split halves are exact, so a contraction of
them changes nothing.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as T
from .. import semantic
from ..core import _unwrap, tensor

F32, F64 = T.float32, T.float64
#: float type -> (signed bits type, unsigned bits type, significand bits, exponent bias, split constant)
_FMT = {"fp32": (T.int32, T.uint32, 23, 127, 4097.0), "fp64": (T.int64, T.uint64, 52, 1023, 134217729.0)}


def where(c, x, y) -> tensor:
    return semantic.where(c, x, y)


def lnot(c) -> tensor:
    return semantic.logical_not(c)


def math(op: str, x) -> tensor:
    return semantic.math_unary(op, x)


def fma(a, b, c) -> tensor:
    a = semantic.to_tensor(a)
    b, c = semantic.to_tensor(b, a.dtype), semantic.to_tensor(c, a.dtype)
    (a, b, c), shape = semantic._same_shape(a, semantic.cast(b, a.dtype), semantic.cast(c, a.dtype))
    return semantic._emit("fma", (a, b, c), a.dtype, shape)


def cast(x, t) -> tensor:
    return semantic.cast(x, t)


def bitcast(x, t) -> tensor:
    return semantic.cast(x, t, bitcast=True)


def full_like(x: tensor, v, t=None) -> tensor:
    t = t or x.dtype
    c = semantic.constant(v, t)
    return semantic.broadcast_to(c, x.shape) if x.shape else c


# -- dispatch ------------------------------------------------------------------------------------


def dispatch(name: str, table: dict[tuple[str, ...], Any], *args) -> tuple[list[tensor], Any]:
    """The arguments as tensors of one shape whose dtypes are a key of ``table`` (libdevice's
    signatures, by dtype name), and the table's value for them. As Triton, arguments whose types
    are not a key are promoted to their common arithmetic type first; what still matches no key is
    refused."""
    raw = [_unwrap(a) for a in args]
    ts = [semantic.to_tensor(a) for a in raw]
    key = tuple(t.dtype.name for t in ts)
    if key not in table and len(raw) > 1:
        common = raw[0]
        for a in raw[1:]:
            common, _ = semantic._binary_operands(common, a)
        t = common.dtype
        ts = [semantic.cast(semantic.to_tensor(a, t), t) for a in raw]
        key = tuple(x.dtype.name for x in ts)
    if key not in table:
        want = " or ".join("(" + ", ".join(k) + ")" for k in table)
        raise semantic.SemanticError(f"libdevice.{name} takes {want} (as libdevice), got ({', '.join(key)}); "
                                     "convert with .to() first")
    ts, _ = semantic._same_shape(*ts)
    return ts, table[key]


FLOATS = {("fp32",): "fp32", ("fp64",): "fp64"}
FLOATS2 = {("fp32", "fp32"): "fp32", ("fp64", "fp64"): "fp64"}
FLOATS3 = {("fp32",) * 3: "fp32", ("fp64",) * 3: "fp64"}
FLOATS4 = {("fp32",) * 4: "fp32", ("fp64",) * 4: "fp64"}


# -- bit patterns --------------------------------------------------------------------------------


def fmt(x: tensor):
    return _FMT[x.dtype.name]


def bits(x: tensor) -> tensor:
    """The bit pattern of ``x`` as a signed integer of its width."""
    return bitcast(x, fmt(x)[0])


def from_bits(i: tensor, t) -> tensor:
    return bitcast(i, t)


def neg(x: tensor) -> tensor:
    """``-x`` by flipping the sign bit (so ``-(+0.0)`` is ``-0.0``, which ``0 - x`` is not)."""
    sbits, _, mant, _, _ = fmt(x)
    return from_bits(bits(x) ^ semantic.constant(-(1 << (sbits.primitive_bitwidth - 1)), sbits), x.dtype)


def is_nan(x: tensor) -> tensor:
    return semantic.compare("ne", x, x)


def is_finite(x: tensor) -> tensor:
    return semantic.compare("lt", semantic.abs(x), float("inf"))


def next_up(x: tensor) -> tensor:
    """The least value above ``x`` (``+inf`` and NaN stay, ``-inf`` gives the most negative finite)."""
    i = bits(x)
    r = where(i >= 0, i + 1, i - 1)
    r = where(x == 0.0, full_like(i, 1), r)
    r = where((x == float("inf")) | is_nan(x), i, r)
    return from_bits(r, x.dtype)


def next_down(x: tensor) -> tensor:
    return neg(next_up(neg(x)))


def pow2(k: tensor, t) -> tensor:
    """``2**k`` for int32 ``k`` in the normal range of ``t``."""
    sbits, _, mant, bias, _ = _FMT[t.name]
    return from_bits(semantic.shift("shl", cast(k + bias, sbits), mant), t)


def frexp(x: tensor) -> tuple[tensor, tensor]:
    """``(m, e)`` with ``x == m * 2**e`` exactly, ``|m|`` in [1, 2) and ``e`` int32, for finite
    nonzero ``x`` (subnormals too); other values give meaningless ``(m, e)``."""
    sbits, _, mant, bias, _ = fmt(x)
    tiny = semantic.abs(x) < 2.0 ** (1 - bias)
    xs = where(tiny, x * 2.0 ** 64, x)
    i = bits(xs)
    ebits = cast(semantic.shift("shr", i, mant) & ((1 << (sbits.primitive_bitwidth - 1 - mant)) - 1), T.int32)
    e = ebits - bias - where(tiny, 64, 0)
    emask = ((1 << (sbits.primitive_bitwidth - 1 - mant)) - 1) << mant
    m = from_bits((i & ~emask) | (bias << mant), x.dtype)
    return m, e


# -- error-free transformations ------------------------------------------------------------------


def mul_rn(a: tensor, b: tensor) -> tensor:
    """``a * b`` rounded once, as an FMA with ``-0.0`` (exact signed zeros, never contracted)."""
    return fma(a, b, -0.0)


def two_sum(a: tensor, b: tensor) -> tuple[tensor, tensor]:
    """``(s, e)``: ``s = a + b`` rounded, ``s + e == a + b`` exactly (Knuth's TwoSum; finite ``s``)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def split(a: tensor) -> tuple[tensor, tensor]:
    """Veltkamp's split of ``a`` into two halves of at most 12 (fp32) or 26 (fp64) bits each."""
    c = fmt(a)[4]
    t = fma(a, c, 0.0)
    hi = t - (t - a)
    return hi, a - hi


def two_prod(a: tensor, b: tensor) -> tuple[tensor, tensor]:
    """``(p, e)``: ``p = a * b`` rounded, ``p + e == a * b`` exactly (Dekker's TwoProduct, without
    an FMA, so that it is exact on a target whose FMA is not fused), for ``a``, ``b`` and ``a * b``
    far enough from overflow and underflow (the callers scale them into [1, 4))."""
    p = mul_rn(a, b)
    ah, al = split(a)
    bh, bl = split(b)
    e = (((ah * bh - p) + ah * bl) + al * bh) + al * bl
    return p, e


def sign_of(x: tensor) -> tensor:
    """+1.0, -1.0 or 0.0 (NaN gives 0.0) in ``x``'s type."""
    return where(x > 0.0, 1.0, where(x < 0.0, -1.0, 0.0))


def finish(r: tensor, err: tensor, mode: str) -> tensor:
    """``r`` (a result rounded to nearest) moved by at most one ulp to the result of rounding mode
    ``mode`` ("rn", "rz", "rd", "ru" or "ro", round to odd), given ``err``, a value whose sign is
    that of (exact result - r) (0 where ``r`` is exact, NaN where it must not move)."""
    if mode == "rn":
        return r
    above, below = err > 0.0, err < 0.0
    if mode == "rd":
        return where(below, next_down(r), r)
    if mode == "ru":
        return where(above, next_up(r), r)
    if mode == "rz":
        return where((r > 0.0) & below, next_down(r), where((r < 0.0) & above, next_up(r), r))
    assert mode == "ro"
    even = (bits(r) & 1) == 0
    return where(even & above, next_up(r), where(even & below, next_down(r), r))


def overflowed(r: tensor, err: tensor, *finite_inputs: tensor) -> tensor:
    """``err`` where ``r`` is finite; ``-r`` where ``r`` overflowed from finite operands (the exact
    result lies below +inf, above -inf); 0 where an operand is infinite or NaN (exact result)."""
    fin = is_finite(finite_inputs[0])
    for x in finite_inputs[1:]:
        fin = fin & is_finite(x)
    err = where(is_finite(r), err, neg(r))
    return where(fin, err, 0.0)
