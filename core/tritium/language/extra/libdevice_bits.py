"""``libdevice``'s integer and bit functions (``clz``, ``popc``, ``brev``, ``ffs``, ``byte_perm``,
``mulhi``, ``mul24``, ``sad``, ``hadd``, ``rhadd``, ``abs``), the reinterpretations of float bit
patterns, the classification functions returning int32 flags, and the exact float functions built
from bits (``ilogb``, ``logb``, ``ldexp``, ``scalbn``, ``nextafter``, ``fdim``, ``saturatef``,
``remainder``). All exact; bit counts use the classic shift-and-mask (SWAR) sequences, so no target
needs a ``ctlz``/``ctpop`` op. As in Triton's table, ``float_as_uint`` returns int32.
"""

from __future__ import annotations

from .. import dtypes as T
from .. import semantic
from ..math import _mulhi64
from .libdevice_base import (FLOATS, FLOATS2, bitcast, bits, cast, dispatch, frexp, from_bits, is_finite, is_nan,
                             lnot, neg, next_down, next_up, pow2, where)

EXPORTS: dict = {}
_INTS = {("int32",): "int32", ("int64",): "int32"}


def _export(fn):
    EXPORTS[fn.__name__] = fn
    return fn


def _shr(x, n):
    return semantic.shift("shr", x, n)


def _shl(x, n):
    return semantic.shift("shl", x, n)


def _unsigned(x):
    return cast(x, T.uint32 if x.dtype.primitive_bitwidth == 32 else T.uint64)


def _popc(v):
    """Set bits of unsigned ``v`` (uint32 or uint64), as int32."""
    if v.dtype.primitive_bitwidth == 32:
        v = v - (_shr(v, 1) & 0x55555555)
        v = (v & 0x33333333) + (_shr(v, 2) & 0x33333333)
        v = (v + _shr(v, 4)) & 0x0F0F0F0F
        return cast(_shr(v * 0x01010101, 24), T.int32)
    v = v - (_shr(v, 1) & 0x5555555555555555)
    v = (v & 0x3333333333333333) + (_shr(v, 2) & 0x3333333333333333)
    v = (v + _shr(v, 4)) & 0x0F0F0F0F0F0F0F0F
    return cast(_shr(v * 0x0101010101010101, 56), T.int32)


@_export
def popc(arg0):
    """The number of set bits of an int32 or int64 value (int32)."""
    (x,), _ = dispatch("popc", _INTS, arg0)
    return _popc(_unsigned(x))


@_export
def clz(arg0):
    """The number of leading zero bits of an int32 or int64 value (int32; 32 or 64 for 0)."""
    (x,), _ = dispatch("clz", _INTS, arg0)
    v = _unsigned(x)
    for s in (1, 2, 4, 8, 16, 32)[:5 if v.dtype.primitive_bitwidth == 32 else 6]:
        v = v | _shr(v, s)
    return _popc(~v)


@_export
def ffs(arg0):
    """The 1-based position of the least significant set bit (0 for 0), as int32."""
    (x,), _ = dispatch("ffs", _INTS, arg0)
    v = _unsigned(x)
    low = v & (0 - v)
    return where(v == 0, 0, _popc(low - 1) + 1)


@_export
def brev(arg0):
    """The bits of an int32 or int64 value in reverse order."""
    (x,), _ = dispatch("brev", {("int32",): "int32", ("int64",): "int64"}, arg0)
    v = _unsigned(x)
    masks = [(1, 0x5555555555555555), (2, 0x3333333333333333), (4, 0x0F0F0F0F0F0F0F0F),
             (8, 0x00FF00FF00FF00FF), (16, 0x0000FFFF0000FFFF), (32, 0x00000000FFFFFFFF)]
    width = v.dtype.primitive_bitwidth
    for s, m in masks:
        if s >= width:
            break
        m &= (1 << width) - 1
        v = (_shr(v, s) & m) | _shl(v & m, s)
    return cast(v, x.dtype)


@_export
def byte_perm(arg0, arg1, arg2):
    """Bytes picked from the eight bytes of ``arg1:arg0`` (``arg0`` holds bytes 0-3): byte ``n`` of the
    result is the byte that bits ``4n..4n+2`` of ``arg2`` select (``__byte_perm``)."""
    (x, y, s), _ = dispatch("byte_perm", {("int32",) * 3: "int32"}, arg0, arg1, arg2)
    v = _shl(cast(_unsigned(y), T.uint64), 32) | cast(_unsigned(x), T.uint64)
    sel = cast(_unsigned(s), T.uint64)
    r = None
    for n in range(4):
        k = _shr(sel, 4 * n) & 7
        byte = _shl(_shr(v, k * 8) & 0xFF, 8 * n)
        r = byte if r is None else r | byte
    return cast(cast(r, T.uint32), T.int32)


@_export
def mulhi(arg0, arg1):
    """The high half of the full product of two int32, uint32, int64 or uint64 values."""
    (a, b), t = dispatch("mulhi", {("int32", "int32"): "int32", ("uint32", "uint32"): "uint32",
                                   ("int64", "int64"): "int64", ("uint64", "uint64"): "uint64"}, arg0, arg1)
    if a.dtype.primitive_bitwidth == 32:
        wide = T.int64 if a.dtype == T.int32 else T.uint64
        return cast(_shr(cast(a, wide) * cast(b, wide), 32), a.dtype)
    hi = _mulhi64(cast(a, T.uint64), cast(b, T.uint64))
    if a.dtype == T.uint64:
        return hi
    hi = cast(hi, T.int64)
    return hi - where(a < 0, b, 0) - where(b < 0, a, 0)


@_export
def mul24(arg0, arg1):
    """The low 32 bits of the product of the low 24 bits of each operand (sign-extended for int32)."""
    (a, b), _ = dispatch("mul24", {("int32", "int32"): "int32", ("uint32", "uint32"): "uint32"}, arg0, arg1)
    if a.dtype == T.int32:
        a, b = semantic.shift("shr", _shl(a, 8), 8, True), semantic.shift("shr", _shl(b, 8), 8, True)
    else:
        a, b = a & 0xFFFFFF, b & 0xFFFFFF
    return a * b


@_export
def sad(arg0, arg1, arg2):
    """``|arg0 - arg1| + arg2`` (int32, int32, uint32 -> int32 or all uint32), wrapping to 32 bits."""
    (a, b, c), t = dispatch("sad", {("int32", "int32", "uint32"): "int32", ("uint32",) * 3: "uint32"},
                            arg0, arg1, arg2)
    wide = T.int64
    d = semantic.abs(cast(a, wide) - cast(b, wide)) + cast(c, wide)
    return cast(d, a.dtype)


def _halving(name: str, extra: int):
    def fn(arg0, arg1):
        (a, b), _ = dispatch(name, {("int32", "int32"): "int32", ("uint32", "uint32"): "uint32"}, arg0, arg1)
        wide = T.int64 if a.dtype == T.int32 else T.uint64
        return cast(_shr(cast(a, wide) + cast(b, wide) + extra, 1), a.dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``(arg0 + arg1{' + 1' if extra else ''}) >> 1`` without overflow (int32 or uint32)."
    return _export(fn)


_halving("hadd", 0)
_halving("rhadd", 1)


@_export
def abs(arg0):  # noqa: A001
    """``|arg0|`` of int32, int64 (``abs`` of the smallest value is itself), fp32 or fp64."""
    (x,), _ = dispatch("abs", {("int32",): 0, ("int64",): 0, ("fp32",): 0, ("fp64",): 0}, arg0)
    return semantic.abs(x)


# -- reinterpretations ---------------------------------------------------------------------------


def _reinterpret(name: str, src: str, to, doc: str):
    def fn(arg0):
        (x,), _ = dispatch(name, {(src,): to.name}, arg0)
        return bitcast(x, to)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    _export(fn)


_reinterpret("float_as_int", "fp32", T.int32, "The bits of an fp32 value as int32.")
_reinterpret("float_as_uint", "fp32", T.int32, "The bits of an fp32 value (int32, as Triton declares it).")
_reinterpret("int_as_float", "int32", T.float32, "int32 bits as fp32.")
_reinterpret("uint_as_float", "uint32", T.float32, "uint32 bits as fp32.")
_reinterpret("double_as_longlong", "fp64", T.int64, "The bits of an fp64 value as int64.")
_reinterpret("longlong_as_double", "int64", T.float64, "int64 bits as fp64.")


@_export
def double2hiint(arg0):
    """The high 32 bits of an fp64 value's bit pattern, as int32."""
    (x,), _ = dispatch("double2hiint", {("fp64",): "int32"}, arg0)
    return cast(_shr(bits(x), 32), T.int32)


@_export
def double2loint(arg0):
    """The low 32 bits of an fp64 value's bit pattern, as int32."""
    (x,), _ = dispatch("double2loint", {("fp64",): "int32"}, arg0)
    return cast(bits(x), T.int32)


@_export
def hiloint2double(arg0, arg1):
    """The fp64 value whose bit pattern has ``arg0`` as its high and ``arg1`` as its low 32 bits."""
    (hi, lo), _ = dispatch("hiloint2double", {("int32", "int32"): "fp64"}, arg0, arg1)
    return from_bits(_shl(cast(hi, T.int64), 32) | (cast(lo, T.int64) & 0xFFFFFFFF), T.float64)


# -- classification (int32 flags) ----------------------------------------------------------------


@_export
def signbit(arg0):
    """1 where the sign bit is set (negative values, -0.0, NaNs with the bit), else 0 (int32)."""
    (x,), _ = dispatch("signbit", FLOATS, arg0)
    return cast(bits(x) < 0, T.int32)


@_export
def finitef(arg0):
    """1 where an fp32 value is finite, else 0 (int32)."""
    (x,), _ = dispatch("finitef", {("fp32",): "int32"}, arg0)
    return cast(is_finite(x), T.int32)


@_export
def isfinited(arg0):
    """1 where an fp64 value is finite, else 0 (int32)."""
    (x,), _ = dispatch("isfinited", {("fp64",): "int32"}, arg0)
    return cast(is_finite(x), T.int32)


@_export
def ilogb(arg0):
    """The unbiased exponent of ``arg0`` as int32 (subnormals too); ``INT_MIN`` for 0 and NaN,
    ``INT_MAX`` for infinities, as the CUDA docs state."""
    (x,), _ = dispatch("ilogb", FLOATS, arg0)
    _, e = frexp(x)
    e = where(x == 0.0, -2**31, e)
    e = where(is_nan(x), -2**31, e)
    return where(semantic.abs(x) == float("inf"), 2**31 - 1, e)


@_export
def logb(arg0):
    """The unbiased exponent of ``arg0`` as a float; -inf for 0, +inf for infinities, NaN for NaN."""
    (x,), _ = dispatch("logb", FLOATS, arg0)
    _, e = frexp(x)
    r = cast(e, x.dtype)
    r = where(x == 0.0, float("-inf"), r)
    return where(is_finite(x), r, x * x)


def _ldexp(name: str, arg0, arg1):
    (x, n), _ = dispatch(name, {("fp32", "int32"): "fp32", ("fp64", "int32"): "fp64"}, arg0, arg1)
    t = x.dtype
    _, _, mant, bias, _ = {"fp32": (0, 0, 23, 127, 0), "fp64": (0, 0, 52, 1023, 0)}[t.name]
    m, e = frexp(x)
    n = semantic.minmax("max", semantic.minmax("min", n, 2 * (bias + mant + 2)), -2 * (bias + mant + 2))
    k = e + n
    clamp = lambda v: semantic.minmax("max", semantic.minmax("min", v, bias), 1 - bias)  # noqa: E731
    big = m * pow2(clamp(k), t)
    big = where(k > bias, big * 2.0, big)  # past the range: 2**bias * 2 overflows to inf
    shift = mant + 8
    small = (m * pow2(clamp(k + shift), t)) * 2.0 ** -shift  # the only inexact step: one rounding
    r = where(k < 1 - bias, small, big)
    return where((x == 0.0) | lnot(is_finite(x)), x, r)


@_export
def ldexp(arg0, arg1):
    """``arg0 * 2**arg1`` (int32 ``arg1``), rounded once (into the subnormals too), as C's ``ldexp``."""
    return _ldexp("ldexp", arg0, arg1)


@_export
def scalbn(arg0, arg1):
    """``arg0 * 2**arg1`` (int32 ``arg1``), as ``ldexp``."""
    return _ldexp("scalbn", arg0, arg1)


@_export
def nextafter(arg0, arg1):
    """The representable value next to ``arg0`` in the direction of ``arg1`` (``arg1`` if equal)."""
    (x, y), _ = dispatch("nextafter", FLOATS2, arg0, arg1)
    r = where(x < y, next_up(x), next_down(x))
    r = where(x == y, y, r)
    return where(is_nan(x) | is_nan(y), x + y, r)


@_export
def fdim(arg0, arg1):
    """``arg0 - arg1`` where ``arg0 > arg1``, else +0 (NaN where either is NaN)."""
    (x, y), _ = dispatch("fdim", FLOATS2, arg0, arg1)
    r = where(x > y, x - y, 0.0)
    return where(is_nan(x) | is_nan(y), x + y, r)


@_export
def saturatef(arg0):
    """An fp32 value clamped to [+0.0, 1.0]; NaN gives 0."""
    (x,), _ = dispatch("saturatef", {("fp32",): "fp32"}, arg0)
    return where(x > 1.0, 1.0, where(x >= 0.0, x, 0.0))


@_export
def remainder(arg0, arg1):
    """IEEE ``remainder``: ``arg0 - n * arg1`` with ``n`` the integer nearest ``arg0 / arg1`` (ties to
    even), exact: ``fmod`` by ``2|arg1|``, then at most two exact subtractions of ``|arg1|``."""
    (x, y), _ = dispatch("remainder", FLOATS2, arg0, arg1)
    ax, ay = semantic.abs(x), semantic.abs(y)
    huge = {"fp32": 1.7e38, "fp64": 8.98e307}[x.dtype.name]
    a = where(ay < huge, semantic.mod(ax, ay * 2.0), ax)
    odd = a >= ay
    a = where(odd, a - ay, a)
    twice = a * 2.0
    a = where((twice > ay) | ((twice == ay) & odd), a - ay, a)
    r = where(bits(x) < 0, neg(a), a)
    return where(is_nan(y), y, r)


@_export
def rcp64h(arg0):
    """An approximate reciprocal of fp64 ``arg0`` from the high 32 bits of its pattern (the low word
    cleared), with the result's low word cleared too: relative error below 2**-19, as the
    ``MUFU.RCP64H`` approximation libdevice's ``__nv_rcp64h`` stands for."""
    (x,), _ = dispatch("rcp64h", {("fp64",): "fp64"}, arg0)
    hi_only = -(1 << 32)
    xh = from_bits(bits(x) & hi_only, T.float64)
    r = 1.0 / xh
    return where(is_finite(r), from_bits(bits(r) & hi_only, T.float64), r)


_ = (FLOATS2, neg)
