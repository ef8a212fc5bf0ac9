"""Vectorised f32 ``exp``, ``exp2``, ``log`` and ``log2`` for whole-block targets, as inline LLVM IR.

LLVM's x86 backend turns ``llvm.exp.v16f32`` into sixteen libm calls, which would make every
softmax slow. These are range reductions plus minimax polynomials in the manner of Cephes (under
1 ulp: every float32 argument of ``exp`` was checked against float64), written once for scalars and
vectors alike; results match libm's special cases (inf, 0, NaN, denormals). Other functions and
f64 keep the LLVM intrinsics.

``exp`` and ``exp2`` end in ``p * 2**n``. Where the target scales by a power of two in one
instruction (``VectorMathHooks.ldexp``: AVX-512's ``vscalefps``), which also overflows to inf and
rounds denormal results once, they clamp the argument and need no other special case and no
branch. Elsewhere they take a short path for a chunk whose every argument gives a normal result (a
softmax's, nearly always): the rounding of ``n`` and the scale ``2**n`` both come from one add of
a shifter constant, with no clamping, no NaN select and one multiply for the scale. A chunk with
any lane outside (a masked lane's -inf, a NaN, an overflow) takes the full path.
"""

from __future__ import annotations

from typing import Callable, Sequence

from llvmlite import ir as ll

from .. import intrinsics
from ..types import const, scalar_of
from . import conversions
from .hooks import BlockHooks

LOG2E = 1.44269504088896341
LN2_HI, LN2_LO = 0.693359375, -2.12194440e-4  # ln 2 = HI + LO, HI exact in few bits
#: e**r = 1 + r + r**2 * (c2 + c3 r + ... + c6 r**4) for |r| <= ln(2)/2, highest coefficient first:
#: a minimax fit of the relative error, 3.8e-9 with these float32 coefficients (an ulp is 6e-8 or more)
EXP_POLY = (1.3814617414e-3, 8.3687100559e-3, 4.1668388993e-2, 1.6666521132e-1, 4.9999994040e-1, 1.0, 1.0)
LOG_POLY = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
            -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)
SQRT_HALF = 0.707106781186547524
#: 1.5 * 2**23 plus the exponent bias: ``t = v + SHIFTER`` rounds ``v`` to the nearest integer ``n``
#: (for |v| < 2**22) and leaves ``n + 127`` in the low bits of ``t``, the exponent field of 2**n.
SHIFTER = 12582912.0 + 127
#: |x| up to which e**x, and 2**x, are normal floats whose ``n`` (at most 126 in magnitude) fits the
#: shifter's exponent field
EXP_SHORT_LIMIT, EXP2_SHORT_LIMIT = 87.3, 126.0
#: arguments past which e**x, and 2**x, round to 0 or overflow: clamping there keeps n in range
EXP_CLAMP, EXP2_CLAMP = (-104.0, 89.0), (-151.0, 129.0)


class VectorMathHooks(BlockHooks):
    """Inline polynomial ``exp``/``exp2``/``log``/``log2`` for f32, float conversions without runtime
    helpers (``conversions``); everything else as in core. A whole-block target's hooks derive
    from it."""

    def call(self, builder: ll.IRBuilder, fn: str, args: Sequence[ll.Value]) -> ll.Value:
        if fn in _F32_FUNCTIONS and isinstance(scalar_of(args[0].type), ll.FloatType):
            return _F32_FUNCTIONS[fn](_Emitter(builder, args[0].type, self.ldexp(args[0].type)), args[0])
        return super().call(builder, fn, args)

    def ldexp(self, ty: ll.Type) -> Callable[[ll.IRBuilder, ll.Value, ll.Value], ll.Value] | None:
        """How to compute ``x * 2**n`` of f32 values of type ``ty`` in one instruction, for ``n``
        an integral float of the same type (up to 2**8 in magnitude), or None where the target has
        none. The result must be rounded once: inf past the largest float, a correctly rounded
        denormal or zero below the smallest normal. None (the default) makes ``exp`` and ``exp2``
        branch between a short path and a full one instead."""
        return None

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

    def __init__(self, b: ll.IRBuilder, t: ll.Type, ldexp: Callable | None = None):
        self.b, self.t, self.ldexp = b, t, ldexp
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
        return self.poly(r, EXP_POLY)

    def clamp(self, x, low: float, high: float):
        """x limited to [low, high]; NaN stays NaN."""
        b = self.b
        x = b.select(b.fcmp_ordered(">", x, self.f(high)), self.f(high), x)
        return b.select(b.fcmp_ordered("<", x, self.f(low)), self.f(low), x)

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
    if e.ldexp is not None:
        xc = e.clamp(x, *EXP_CLAMP)
        _, n, r = _exp_reduction(e, xc)
        return e.ldexp(e.b, e.exp_reduced(r), n)
    return e.short_or_full(x, EXP_SHORT_LIMIT, _exp_short, _exp_full)


def _exp_reduction(e: _Emitter, x):
    """``t`` (``n`` plus the shifter), ``n`` = round(x / ln 2) and ``r`` = x - n ln 2, for |x| < 2**21."""
    t = e.fma(x, e.f(LOG2E), e.f(SHIFTER))
    n = e.b.fsub(t, e.f(SHIFTER))
    return t, n, e.fma(n, e.f(-LN2_LO), e.fma(n, e.f(-LN2_HI), x))


def _exp_short(e: _Emitter, x):
    t, _, r = _exp_reduction(e, x)
    return e.b.fmul(e.exp_reduced(r), e.shifted_scale(t))


def _exp_full(e: _Emitter, x):
    b = e.b
    xc = e.intrinsic("llvm.minnum", e.intrinsic("llvm.maxnum", x, e.f(EXP_CLAMP[0])), e.f(EXP_CLAMP[1]))
    n = e.intrinsic("llvm.roundeven", b.fmul(xc, e.f(LOG2E)))
    r = e.fma(n, e.f(-LN2_HI), xc)
    r = e.fma(n, e.f(-LN2_LO), r)
    return e.keep_nan(x, e.exp_of_reduced(r, n))


def _exp2(e: _Emitter, x):
    if e.ldexp is not None:
        xc = e.clamp(x, *EXP2_CLAMP)
        _, n, r = _exp2_reduction(e, xc)
        return e.ldexp(e.b, e.exp_reduced(r), n)
    return e.short_or_full(x, EXP2_SHORT_LIMIT, _exp2_short, _exp2_full)


def _exp2_reduction(e: _Emitter, x):
    """``t`` (``n`` plus the shifter), ``n`` = round(x) and ``r`` = (x - n) ln 2, for |x| < 2**21."""
    b = e.b
    t = b.fadd(x, e.f(SHIFTER))
    n = b.fsub(t, e.f(SHIFTER))
    return t, n, b.fmul(b.fsub(x, n), e.f(0.693147180559945309))


def _exp2_short(e: _Emitter, x):
    t, _, r = _exp2_reduction(e, x)
    return e.b.fmul(e.exp_reduced(r), e.shifted_scale(t))


def _exp2_full(e: _Emitter, x):
    b = e.b
    xc = e.intrinsic("llvm.minnum", e.intrinsic("llvm.maxnum", x, e.f(EXP2_CLAMP[0])), e.f(EXP2_CLAMP[1]))
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
