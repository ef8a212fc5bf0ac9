"""Conversions to and from 8-bit floats, and downcasts that round toward zero, in LLVM IR.

LLVM has no fp8 types, so an fp8 value is an ``i8`` (``types.Fp8Type`` names its format) and a
conversion is integer and float arithmetic on the bits: the arithmetic of ``language.fp8``, which
the interpreter runs in numpy, so that every target rounds alike (each format as Triton rounds it
where it is native). Values work lane by lane, so scalars, SIMD chunks and GPU per-thread vectors
all go through here.
"""

from __future__ import annotations

from llvmlite import ir as ll

import numpy as np

from ..language.fp8 import FORMATS, Format, encode
from . import intrinsics
from .types import const, scalar_of

I32, F32 = ll.IntType(32), ll.FloatType()


def _like(t: ll.Type, element: ll.Type) -> ll.Type:
    return ll.VectorType(element, t.count) if isinstance(t, ll.VectorType) else element


def f32_like(t: ll.Type) -> ll.Type:
    """float32, or a vector of it as wide as ``t``."""
    return _like(t, F32)


def constant_bits(value: float, fmt_name: str) -> int:
    """The bits of fp8 format ``fmt_name`` nearest ``value`` (a constant rounded as the code would)."""
    return int(encode(np.float32(value), FORMATS[fmt_name]))


#: the attribute naming the fp8 type of an ``arith.extf`` from it or an ``arith.truncf`` to it
FORMAT_ATTRIBUTE = "tile.fp8"


def to_f32(b: ll.IRBuilder, x: ll.Value, fmt_name: str) -> ll.Value:
    """The float32 value of ``x``, the bits of an fp8 value of format ``fmt_name`` (exact)."""
    fmt = FORMATS[fmt_name]
    i32, f32 = _like(x.type, I32), _like(x.type, F32)
    v = b.zext(x, i32)
    sign = b.shl(b.lshr(v, const(i32, 7)), const(i32, 31))
    e = b.and_(b.lshr(v, const(i32, fmt.mantissa)), const(i32, (1 << fmt.exponent) - 1))
    m = b.and_(v, const(i32, (1 << fmt.mantissa) - 1))
    normal = b.or_(b.shl(b.add(e, const(i32, 127 - fmt.bias)), const(i32, 23)), b.shl(m, const(i32, 23 - fmt.mantissa)))
    subnormal = b.bitcast(b.fmul(b.uitofp(m, f32), const(f32, 2.0 ** (fmt.min_normal_exponent - fmt.mantissa))), i32)
    magnitude = b.select(b.icmp_unsigned("==", e, const(i32, 0)), subnormal, normal)
    top = b.icmp_unsigned("==", e, const(i32, (1 << fmt.exponent) - 1))
    if fmt.top == "inf":  # e5m2: the top exponent is infinity (mantissa 0) or NaN
        special = b.select(b.icmp_unsigned("==", m, const(i32, 0)), const(i32, 0x7F800000), const(i32, 0x7FC00000))
        magnitude = b.select(top, special, magnitude)
    elif fmt.top == "nan":  # e4m3fn: only the all-ones pattern is NaN
        nan = b.and_(top, b.icmp_unsigned("==", m, const(i32, (1 << fmt.mantissa) - 1)))
        magnitude = b.select(nan, const(i32, 0x7FC00000), magnitude)
    value = b.or_(sign, magnitude)
    if fmt.top != "normal":  # a NaN of either sign is the positive canonical one, as Triton decodes it
        value = b.select(b.icmp_unsigned("==", magnitude, const(i32, 0x7FC00000)), magnitude, value)
    if fmt.fnuz:  # 0x80 (negative zero's pattern) is NaN
        value = b.select(b.icmp_unsigned("==", v, const(i32, 0x80)), const(i32, 0x7FC00000), value)
    return b.bitcast(value, f32)


def from_f32(b: ll.IRBuilder, x: ll.Value, result: ll.Type, fmt_name: str, nan_sign: ll.Value | None = None) -> ll.Value:
    """Float32 ``x`` rounded to fp8 format ``fmt_name`` (``language.fp8``'s rules), as bits of type
    ``result`` (i8); ``nan_sign`` (an i32 0 or 1 per lane) is the sign a NaN keeps where the format
    saturates NaNs (e4b15 from fp16: read from the fp16 bits, since widening may drop a NaN's sign)."""
    fmt: Format = FORMATS[fmt_name]
    i32, f32 = _like(x.type, I32), _like(x.type, F32)
    bits = b.bitcast(x, i32)
    sign = b.shl(b.lshr(bits, const(i32, 31)), const(i32, 7))
    a = b.and_(bits, const(i32, 0x7FFFFFFF))
    shift = 23 - fmt.mantissa
    rebiased = b.sub(a, const(i32, (127 - fmt.bias) << 23))
    if fmt.ties_away:
        normal = b.lshr(b.add(rebiased, const(i32, 1 << (shift - 1))), const(i32, shift))
    else:
        odd = b.and_(b.lshr(rebiased, const(i32, shift)), const(i32, 1))
        normal = b.lshr(b.add(b.add(rebiased, const(i32, (1 << (shift - 1)) - 1)), odd), const(i32, shift))
    scaled = b.fmul(intrinsics.call(b, "llvm.fabs", [x]), const(f32, 2.0 ** (fmt.bias - 1 + fmt.mantissa)))
    rounded = intrinsics.call(b, "llvm.round" if fmt.ties_away else "llvm.roundeven", [scaled])
    subnormal = b.fptoui(rounded, i32)  # small: < 2**mantissa + 1 (exact in f32: scaled < 2**4)
    small = b.icmp_unsigned("<", a, const(i32, (127 + fmt.min_normal_exponent) << 23))
    r = intrinsics.call(b, "llvm.umin", [b.select(small, subnormal, normal), const(i32, fmt.max_bits)])
    out = b.or_(sign, r)
    if fmt.fnuz:  # one zero; infinities and NaNs are its NaN
        out = b.select(b.icmp_unsigned("==", r, const(i32, 0)), const(i32, 0), out)
        out = b.select(b.icmp_unsigned(">=", a, const(i32, 0x7F800000)), const(i32, fmt.nan), out)
    elif fmt.nan is not None:  # a NaN of either sign: the canonical one
        out = b.select(b.icmp_unsigned(">", a, const(i32, 0x7F800000)), const(i32, fmt.nan), out)
    else:  # e4b15: a NaN saturates to max, positive from fp32
        nan_out = const(i32, fmt.max_bits) if nan_sign is None else \
            b.or_(b.shl(nan_sign, const(i32, 7)), const(i32, fmt.max_bits))
        out = b.select(b.icmp_unsigned(">", a, const(i32, 0x7F800000)), nan_out, out)
    return b.trunc(out, result)


def toward_zero(b: ll.IRBuilder, x: ll.Value, nearest: ll.Value, back: ll.Value) -> ll.Value:
    """A downcast that rounds toward zero (``fp_downcast_rounding="rtz"``), from ``nearest`` (the
    same downcast to nearest) and ``back`` (``nearest`` converted back to ``x``'s type): rounding to
    nearest either rounded toward zero or went one step too far from zero; then the neighbour one
    step toward zero, one less in the bits of the magnitude, is the answer. NaNs stay."""
    bits_t = _like(nearest.type, ll.IntType(width(scalar_of(nearest.type))))
    too_far = b.fcmp_ordered(">", intrinsics.call(b, "llvm.fabs", [back]), intrinsics.call(b, "llvm.fabs", [x]))
    as_bits = b.bitcast(nearest, bits_t) if not isinstance(scalar_of(nearest.type), ll.IntType) else nearest
    stepped = b.sub(as_bits, const(bits_t, 1))
    stepped = b.bitcast(stepped, nearest.type) if as_bits is not nearest else stepped
    return b.select(too_far, stepped, nearest)


def half_sign(b: ll.IRBuilder, x: ll.Value) -> ll.Value:
    """The sign bit of fp16 ``x`` (lanes of it) as i32 0 or 1."""
    i16, i32 = _like(x.type, ll.IntType(16)), _like(x.type, I32)
    return b.zext(b.lshr(b.bitcast(x, i16), const(i16, 15)), i32)


def width(t: ll.Type) -> int:
    """The bits of a scalar int or float type."""
    if isinstance(t, ll.IntType):
        return t.width
    return {"half": 16, "bfloat": 16, "float": 32, "double": 64}[str(t)]


def format_of(t) -> str | None:
    """The fp8 format name of MLIR type ``t`` (None for other types)."""
    from ..ir.mlir import ir

    for cls, name in (("Float8E4M3FNType", "fp8e4nv"), ("Float8E5M2Type", "fp8e5"), ("Float8E4M3FNUZType", "fp8e4b8"),
                      ("Float8E5M2FNUZType", "fp8e5b16"), ("Float8E4M3B11FNUZType", "fp8e4b15")):
        if isinstance(t, getattr(ir, cls)):
            return name
    return None
