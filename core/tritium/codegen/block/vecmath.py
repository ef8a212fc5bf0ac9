"""Vectorised f32 ``exp``, ``exp2``, ``log`` and ``log2`` for whole-block targets, as inline LLVM IR.

LLVM's x86 backend turns ``llvm.exp.v16f32`` into sixteen libm calls, which would make every
softmax slow. These are the classic Cephes single-precision algorithms (range reduction plus a
minimax polynomial, about 1 ulp), written once for scalars and vectors alike; results match libm's
special cases (inf, 0, NaN, denormals). Other functions and f64 keep the LLVM intrinsics.

``exp`` and ``exp2`` take a short path for a chunk whose every argument gives a normal result (a
softmax's, nearly always): the rounding of ``n`` and the scale ``2**n`` both come from one add of
a shifter constant, with no clamping, no NaN select and one multiply for the scale. A chunk with
any lane outside (a masked lane's -inf, a NaN, an overflow) takes the full path.
"""

from __future__ import annotations

from typing import Sequence

from llvmlite import ir as ll

from .. import intrinsics
from ..types import const, scalar_of
from . import conversions
from .hooks import BlockHooks

LOG2E = 1.44269504088896341
LN2_HI, LN2_LO = 0.693359375, -2.12194440e-4  # ln 2 = HI + LO, HI exact in few bits
EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
            5.0000001201e-1)
LOG_POLY = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
            -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)
SQRT_HALF = 0.707106781186547524
#: 1.5 * 2**23 plus the exponent bias: ``t = v + SHIFTER`` rounds ``v`` to the nearest integer ``n``
#: (for |v| < 2**22) and leaves ``n + 127`` in the low bits of ``t``, the exponent field of 2**n.
SHIFTER = 12582912.0 + 127
#: |x| up to which e**x, and 2**x, are normal floats whose ``n`` (at most 126 in magnitude) fits the
#: shifter's exponent field
EXP_SHORT_LIMIT, EXP2_SHORT_LIMIT = 87.3, 126.0


class VectorMathHooks(BlockHooks):
    """Inline polynomial ``exp``/``exp2``/``log``/``log2`` for f32, float conversions without runtime
    helpers (``conversions``); everything else as in core. A whole-block target's hooks derive
    from it."""

    def call(self, builder: ll.IRBuilder, fn: str, args: Sequence[ll.Value]) -> ll.Value:
        if fn in _F32_FUNCTIONS and isinstance(scalar_of(args[0].type), ll.FloatType):
            return _F32_FUNCTIONS[fn](_Emitter(builder, args[0].type), args[0])
        return super().call(builder, fn, args)

    def convert(self, builder: ll.IRBuilder, method: str, value: ll.Value, ty: ll.Type) -> ll.Value:
        return conversions.convert(builder, method, value, ty)

    def compare(self, builder: ll.IRBuilder, op: str, ordered: bool, x: ll.Value, y: ll.Value) -> ll.Value:
        """bf16 compares as fp32 (exact), widened on the bits so LLVM does not fold them back:
        its x86 back end cannot select some bf16 vector compares (``x == x`` of a [16] block on AVX2)."""
        if str(scalar_of(x.type)) == "bfloat":
            x, y = conversions.bfloat_bits_to_float(builder, x), conversions.bfloat_bits_to_float(builder, y)
        return super().compare(builder, op, ordered, x, y)


class _Emitter:
    """Arithmetic on one float type (scalar or vector) and its same-shaped i32 type."""

    def __init__(self, b: ll.IRBuilder, t: ll.Type):
        self.b, self.t = b, t
        self.it = ll.VectorType(ll.IntType(32), t.count) if isinstance(t, ll.VectorType) else ll.IntType(32)

    def f(self, value: float) -> ll.Constant:
        return const(self.t, value)

    def i(self, value: int) -> ll.Constant:
        return const(self.it, value)

    def fma(self, x, y, z):
        """x * y + z, fused where the CPU can."""
        return intrinsics.call(self.b, "llvm.fmuladd", [x, y, z])

    def poly(self, x, coefficients):
        acc = self.f(coefficients[0])
        for c in coefficients[1:]:
            acc = self.fma(acc, x, self.f(c))
        return acc

    def intrinsic(self, name, *args):
        return intrinsics.call(self.b, name, list(args))

    def pow2(self, n):
        """2**n for integral float ``n`` in [-150, 128], as two factors so denormal results round once
        and the largest overflow to inf."""
        b = self.b
        ni = b.fptosi(n, self.it)
        half = b.ashr(ni, self.i(1))
        factors = [b.bitcast(b.shl(b.add(k, self.i(127)), self.i(23)), self.t) for k in (half, b.sub(ni, half))]
        return factors

    def exp_reduced(self, r):
        """e**r for |r| <= ln(2)/2."""
        b = self.b
        return self.fma(b.fmul(self.poly(r, EXP_POLY), r), r, b.fadd(r, self.f(1.0)))

    def exp_of_reduced(self, r, n):
        """e**r * 2**n for |r| <= ln(2)/2."""
        b = self.b
        s1, s2 = self.pow2(n)
        return b.fmul(b.fmul(self.exp_reduced(r), s1), s2)

    def shifted_scale(self, t):
        """2**n from ``t = n + SHIFTER``, for |n| <= 126."""
        return self.b.bitcast(self.b.shl(self.b.bitcast(t, self.it), self.i(23)), self.t)

    def short_or_full(self, x, limit: float, short, full):
        """``short(x)`` where every lane has |x| <= limit, else ``full(x)`` (NaN lanes included)."""
        b = self.b
        outside = b.fcmp_unordered(">", self.intrinsic("llvm.fabs", x), self.f(limit))
        if isinstance(self.t, ll.VectorType):
            outside = intrinsics.call(b, "llvm.vector.reduce.or", [outside], ret=ll.IntType(1))
        with b.if_else(outside, likely=False) as (rare, common):
            with rare:
                slow, slow_block = full(self, x), b.block
            with common:
                fast, fast_block = short(self, x), b.block
        result = b.phi(self.t)
        result.add_incoming(slow, slow_block)
        result.add_incoming(fast, fast_block)
        return result

    def keep_nan(self, x, result):
        return self.b.select(self.b.fcmp_unordered("uno", x, x), x, result)


def _exp(e: _Emitter, x):
    return e.short_or_full(x, EXP_SHORT_LIMIT, _exp_short, _exp_full)


def _exp_short(e: _Emitter, x):
    t = e.fma(x, e.f(LOG2E), e.f(SHIFTER))
    n = e.b.fsub(t, e.f(SHIFTER))
    r = e.fma(n, e.f(-LN2_LO), e.fma(n, e.f(-LN2_HI), x))
    return e.b.fmul(e.exp_reduced(r), e.shifted_scale(t))


def _exp_full(e: _Emitter, x):
    b = e.b
    xc = e.intrinsic("llvm.minnum", e.intrinsic("llvm.maxnum", x, e.f(-104.0)), e.f(89.0))
    n = e.intrinsic("llvm.roundeven", b.fmul(xc, e.f(LOG2E)))
    r = e.fma(n, e.f(-LN2_HI), xc)
    r = e.fma(n, e.f(-LN2_LO), r)
    return e.keep_nan(x, e.exp_of_reduced(r, n))


def _exp2(e: _Emitter, x):
    return e.short_or_full(x, EXP2_SHORT_LIMIT, _exp2_short, _exp2_full)


def _exp2_short(e: _Emitter, x):
    b = e.b
    t = b.fadd(x, e.f(SHIFTER))
    r = b.fmul(b.fsub(x, b.fsub(t, e.f(SHIFTER))), e.f(0.693147180559945309))
    return b.fmul(e.exp_reduced(r), e.shifted_scale(t))


def _exp2_full(e: _Emitter, x):
    b = e.b
    xc = e.intrinsic("llvm.minnum", e.intrinsic("llvm.maxnum", x, e.f(-151.0)), e.f(129.0))
    n = e.intrinsic("llvm.roundeven", xc)
    r = b.fmul(b.fsub(xc, n), e.f(0.693147180559945309))
    return e.keep_nan(x, e.exp_of_reduced(r, n))


def _log_parts(e: _Emitter, x):
    """(exponent as float, log of the mantissa) with x = m * 2**exponent, m in [sqrt(1/2), sqrt(2))."""
    b = e.b
    tiny = b.fcmp_ordered("<", x, e.f(1.17549435e-38))  # denormal: scale into the normal range
    xs = b.select(tiny, b.fmul(x, e.f(8388608.0)), x)
    bits = b.bitcast(xs, e.it)
    exponent = b.sub(b.lshr(bits, e.i(23)), e.i(126))
    exponent = b.select(tiny, b.sub(exponent, e.i(23)), exponent)
    m = b.bitcast(b.or_(b.and_(bits, e.i(0x807FFFFF)), e.i(0x3F000000)), e.t)  # in [0.5, 1)
    low = b.fcmp_ordered("<", m, e.f(SQRT_HALF))
    exponent = b.sub(exponent, b.zext(low, e.it))
    m = b.fsub(b.select(low, b.fadd(m, m), m), e.f(1.0))
    z = b.fmul(m, m)
    y = b.fmul(b.fmul(e.poly(m, LOG_POLY), m), z)
    return b.sitofp(exponent, e.t), m, y, z


def _log_specials(e: _Emitter, x, result):
    """log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN stays NaN."""
    b = e.b
    result = b.select(b.fcmp_ordered("==", x, e.f(float("inf"))), x, result)
    result = b.select(b.fcmp_ordered("==", x, e.f(0.0)), e.f(float("-inf")), result)
    return b.select(b.fcmp_unordered("<", x, e.f(0.0)), e.f(float("nan")), result)


def _log(e: _Emitter, x):
    b = e.b
    fe, m, y, z = _log_parts(e, x)
    y = e.fma(fe, e.f(LN2_LO), y)
    y = e.fma(z, e.f(-0.5), y)
    return _log_specials(e, x, e.fma(fe, e.f(LN2_HI), b.fadd(m, y)))


def _log2(e: _Emitter, x):
    b = e.b
    fe, m, y, z = _log_parts(e, x)
    log_m = b.fadd(m, e.fma(z, e.f(-0.5), y))
    return _log_specials(e, x, e.fma(log_m, e.f(LOG2E), fe))


_F32_FUNCTIONS = {"exp": _exp, "exp2": _exp2, "log": _log, "log2": _log2}
