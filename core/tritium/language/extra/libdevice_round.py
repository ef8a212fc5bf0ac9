"""``libdevice``'s arithmetic and conversions in a named rounding mode (``_rn`` to nearest even,
``_rz`` toward zero, ``_rd`` down, ``_ru`` up), exact on every target.

Method: the operation rounded to nearest, then the sign of the exact error (exact result minus the
rounded one) from an error-free transformation, then a step of one ulp (through the bit pattern)
toward the exact result where the mode asks for it:

* add/sub: TwoSum; mul: Dekker's TwoProduct of the operands' significands (scaled into [1, 2) by
  their exponents, so that subnormal and huge operands stay exact); div: the remainder
  ``a - q * b`` from TwoProduct(q, b); sqrt: ``x - s * s``; conversions: the converted value
  converted back and compared.
* fp32 operations compute in fp64 rounded to odd (the fp64 result, moved to the odd neighbour
  where inexact), then convert to fp32 in the mode: rounding to odd in a format 2 or more bits
  wider, then rounding in any mode, rounds the exact result correctly.
* ``fma_r*`` on fp64: Boldo and Melquiond's emulation (``(uh, ul) = TwoProduct(a, b)``,
  ``(th, tl) = TwoSum(c, uh)``, ``v = RO(tl + ul)``, result ``= round(th + v)`` in the mode),
  exact where no intermediate under- or overflows: ``|a|``, ``|b|`` below 2**995, ``|a*b|`` zero
  or above 2**-969 and the result finite (elsewhere it may be one ulp off). fp32 ``fma_r*``
  computes ``a*b`` exactly in fp64 and is exact everywhere.
* float -> integer: ``floor``/``ceil``/``trunc``/``rint`` first, then the conversion, saturating:
  values above the type's range give its largest value, below it its smallest (0 for the
  unsigned conversions), NaN gives 0 (the CUDA docs leave NaN and the range open; this is what
  PTX's ``cvt`` does for 32-bit results, and it is chosen for the 64-bit ones too).
  As in Triton's table, ``float2uint_*``/``double2uint_*`` return int32 and ``*2ull_*`` int64
  holding the unsigned value's bits.
"""

from __future__ import annotations

from .. import dtypes as T
from .. import semantic
from .libdevice_base import (F32, F64, FLOATS, FLOATS2, FLOATS3, bitcast, cast, dispatch, finish, fma, frexp,
                             full_like,
                             is_finite, math, mul_rn, neg, next_down, next_up, overflowed, pow2, two_prod, two_sum,
                             where)

MODES = ("rn", "rz", "rd", "ru")
EXPORTS: dict = {}


def _export(name: str, fn, doc: str):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    EXPORTS[name] = fn


# -- cores: (rounded-to-nearest result, error sign, the exact zero's sign when rounding down) -------


def _add_core(a, b):
    s, e = two_sum(a, b)
    return s, overflowed(s, e, a, b), neg(neg(a) + neg(b))


def _mul_core(a, b):
    p = mul_rn(a, b)
    ma, ea = frexp(a)
    mb, eb = frexp(b)
    mp, ep = frexp(p)
    d = semantic.minmax("max", semantic.minmax("min", ep - ea - eb, 4), -4)
    P, E = two_prod(ma, mb)
    err = (P - mp * pow2(d, a.dtype)) + E
    err = where(p == 0.0, ma * mb, err)  # underflow to zero: the exact product's sign
    err = overflowed(p, err, a, b)
    return p, where((a == 0.0) | (b == 0.0), 0.0, err), None


def _div_core(a, b):
    q = semantic._emit("divf_rn", (a, b), a.dtype, a.shape)
    ma, ea = frexp(a)
    mb, eb = frexp(b)
    mq, eq = frexp(q)
    d = semantic.minmax("max", semantic.minmax("min", eq - ea + eb, 4), -4)
    P, E = two_prod(mq * pow2(d, a.dtype), mb)
    err = (ma - P) - E
    err = where(b < 0.0, neg(err), err)
    err = where(q == 0.0, ma * mb, err)  # underflow to zero: the sign of a / b
    err = overflowed(q, err, a, b)
    return q, where((a == 0.0) | (b == 0.0), 0.0, err), None


def _sqrt_core(x):
    s = semantic._emit("sqrt_rn", (x,), x.dtype, x.shape)
    mx, ex = frexp(x)
    odd = ex & 1
    mx = where(odd == 1, mx * 2.0, mx)
    half = semantic.shift("shr", ex - odd, 1)
    ms = s * pow2(0 - half, x.dtype)
    P, E = two_prod(ms, ms)
    err = (mx - P) - E
    err = where((x > 0.0) & is_finite(x), err, 0.0)
    return s, err, None


def _fma64_core(a, b, c, mode):
    uh, ul = two_prod(a, b)
    th, tl = two_sum(c, uh)
    s, e = two_sum(tl, ul)
    v = finish(s, e, "ro")
    r, err, _ = _add_core(th, v)
    res = finish(r, err, mode)
    ok = is_finite(a) & is_finite(b) & is_finite(c) & is_finite(uh)
    res = where(ok, res, fma(a, b, c))
    if mode == "rd":
        res = where(ok & (r == 0.0) & (err == 0.0), neg(neg(uh) + neg(c)), res)
    return res


def to_f32(x, mode: str):
    """fp64 ``x`` converted to fp32 in ``mode``."""
    r = cast(x, F32)
    if mode == "rn":
        return r
    return finish(r, x - cast(r, F64), mode)


def _apply(core, mode: str, args):
    """``core`` on ``args`` (all fp32 or all fp64), rounded in ``mode``."""
    if args[0].dtype == F64:
        r, err, zero = core(*args)
        res = finish(r, err, mode)
    else:
        r, err, zero = core(*[cast(a, F64) for a in args])
        res = to_f32(finish(r, err, "ro"), mode)
    if mode == "rd" and zero is not None:
        res = where((r == 0.0) & (err == 0.0), cast(zero, res.dtype), res)
    return res


_WORDS = {"rn": "to nearest even", "rz": "toward zero", "rd": "down (toward -inf)", "ru": "up (toward +inf)"}


def _arith(op: str, mode: str):
    def add(arg0, arg1):
        (a, b), _ = dispatch(f"add_{mode}", FLOATS2, arg0, arg1)
        return _apply(_add_core, mode, [a, b])

    def sub(arg0, arg1):
        (a, b), _ = dispatch(f"sub_{mode}", FLOATS2, arg0, arg1)
        return _apply(_add_core, mode, [a, neg(b)])

    def mul(arg0, arg1):
        (a, b), _ = dispatch(f"mul_{mode}", FLOATS2, arg0, arg1)
        return _apply(_mul_core, mode, [a, b])

    def div(arg0, arg1):
        (a, b), _ = dispatch(f"div_{mode}", FLOATS2, arg0, arg1)
        return _apply(_div_core, mode, [a, b])

    def rcp(arg0):
        (x,), _ = dispatch(f"rcp_{mode}", FLOATS, arg0)
        one = full_like(x, 1.0)
        return _apply(_div_core, mode, [one, x])

    def sqrt(arg0):
        (x,), _ = dispatch(f"sqrt_{mode}", FLOATS, arg0)
        return _apply(_sqrt_core, mode, [x])

    def fma_(arg0, arg1, arg2):
        (a, b, c), _ = dispatch(f"fma_{mode}", FLOATS3, arg0, arg1, arg2)
        if a.dtype == F64:
            return _fma64_core(a, b, c, mode)
        a, b, c = cast(a, F64), cast(b, F64), cast(c, F64)
        p = mul_rn(a, b)  # exact: 48 bits
        r, err, zero = _add_core(p, c)
        res = to_f32(finish(r, err, "ro"), mode)
        if mode == "rd":
            res = where((r == 0.0) & (err == 0.0), cast(zero, F32), res)
        return res

    fns = {"add": (add, "``arg0 + arg1``"), "sub": (sub, "``arg0 - arg1``"), "mul": (mul, "``arg0 * arg1``"),
           "div": (div, "``arg0 / arg1``"), "rcp": (rcp, "``1 / arg0``"), "sqrt": (sqrt, "the square root of ``arg0``"),
           "fma": (fma_, "``arg0 * arg1 + arg2``")}
    fn, what = fns[op]
    _export(f"{op}_{mode}", fn, f"{what} rounded {_WORDS[mode]}, exactly (see the module's docstring).")


for _op in ("add", "sub", "mul", "div", "rcp", "sqrt", "fma"):
    for _mode in MODES:
        _arith(_op, _mode)


# -- conversions between floats and from integers ------------------------------------------------


def _int_parts(x):
    """int64/uint64 ``x`` as two fp64 values whose exact sum it is."""
    hi = cast(semantic.shift("shr", x, 32), F64) * 4294967296.0
    lo = cast(x & 0xFFFFFFFF, F64)
    return hi, lo


def _int_to(x, to, mode: str):
    if x.dtype.primitive_bitwidth == 32:
        x64 = cast(x, F64)  # exact
        return x64 if to == F64 else to_f32(x64, mode)
    hi, lo = _int_parts(x)
    s, e = two_sum(hi, lo)
    if to == F64:
        return finish(s, e, mode)
    return to_f32(finish(s, e, "ro"), mode)


def _conversion(name: str, src: str, to, mode: str, doc: str):
    def fn(arg0):
        (x,), _ = dispatch(name, {(src,): to.name}, arg0)
        if src in ("fp32", "fp64"):
            return to_f32(x, mode)
        return _int_to(x, to, mode)
    _export(name, fn, doc)


for _mode in MODES:
    _conversion(f"double2float_{_mode}", "fp64", F32, _mode, f"fp64 to fp32 rounded {_WORDS[_mode]}.")
    for _src, _n in (("int32", "int"), ("uint32", "uint"), ("int64", "ll"), ("uint64", "ull")):
        _conversion(f"{_n}2float_{_mode}", _src, F32, _mode, f"{_src} to fp32 rounded {_WORDS[_mode]}.")
    for _src, _n in (("int64", "ll"), ("uint64", "ull")):
        _conversion(f"{_n}2double_{_mode}", _src, F64, _mode, f"{_src} to fp64 rounded {_WORDS[_mode]}.")
_conversion("int2double_rn", "int32", F64, "rn", "int32 to fp64 (exact).")
_conversion("uint2double_rn", "uint32", F64, "rn", "uint32 to fp64 (exact).")


# -- float to integer ----------------------------------------------------------------------------

_ROUND_OP = {"rn": "roundeven", "rz": "trunc", "rd": "floor", "ru": "ceil"}
#: integer type -> (lowest, highest)
_RANGE = {"int32": (-2**31, 2**31 - 1), "uint32": (0, 2**32 - 1), "int64": (-2**63, 2**63 - 1),
          "uint64": (0, 2**64 - 1)}
_INT = {"int32": T.int32, "uint32": T.uint32, "int64": T.int64, "uint64": T.uint64}


def float_to_int(y, dst: str, out):
    """Integral-valued float ``y`` as integer type ``dst``, saturating, NaN giving 0, returned as ``out``."""
    lo, hi = _RANGE[dst]
    too_big = y >= float(hi + 1)
    too_small = y < float(lo)
    nan = y != y
    safe = where(too_big | too_small | nan, 0.0, y)
    v = cast(safe, _INT[dst])
    v = where(too_big, hi, where(too_small, lo, where(nan, 0, v)))
    return cast(v, out)


def _to_int(name: str, src: str, dst: str, out, rnd: str, doc: str):
    def fn(arg0):
        (x,), _ = dispatch(name, {(src,): out.name}, arg0)
        return float_to_int(math(rnd, x), dst, out)
    _export(name, fn, doc)


for _mode in MODES:
    for _src, _sn in (("fp32", "float"), ("fp64", "double")):
        for _dst, _dn, _out in (("int32", "int", T.int32), ("uint32", "uint", T.int32), ("int64", "ll", T.int64),
                                ("uint64", "ull", T.int64)):
            _to_int(f"{_sn}2{_dn}_{_mode}", _src, _dst, _out, _ROUND_OP[_mode],
                    f"{_src} rounded {_WORDS[_mode]} to {_dst} (saturating, NaN gives 0; returned as {_out.name}, "
                    "as Triton declares it).")


def llrint(arg0):
    """``arg0`` rounded to the nearest integer (ties to even) as int64 (saturating, NaN gives 0)."""
    (x,), _ = dispatch("llrint", FLOATS, arg0)
    return float_to_int(math("roundeven", x), "int64", T.int64)


def llround(arg0):
    """``arg0`` rounded to the nearest integer (ties away from zero) as int64 (saturating, NaN gives 0)."""
    (x,), _ = dispatch("llround", FLOATS, arg0)
    t = math("trunc", x)
    away = semantic.abs(x - t) >= 0.5  # exact: x - trunc(x) is representable
    return float_to_int(where(away, t + where(x < 0.0, -1.0, 1.0), t), "int64", T.int64)


EXPORTS["llrint"], EXPORTS["llround"] = llrint, llround


def rsqrt_rn(arg0):
    """``1 / sqrt(arg0)`` of fp32, correctly rounded to nearest: computed in fp64, rounded to fp32,
    then checked against the midpoints to its neighbours exactly (``m*m*x`` against 1 with
    TwoProduct) and moved where the exact value lies past one."""
    (x,), _ = dispatch("rsqrt_rn", {("fp32",): "fp32"}, arg0)
    x64 = cast(x, F64)
    y = cast(1.0 / semantic._emit("sqrt_rn", (x64,), F64, x64.shape), F32)
    y64 = cast(y, F64)
    m_hi = (y64 + cast(next_up(y), F64)) * 0.5
    m_lo = (y64 + cast(next_down(y), F64)) * 0.5

    def m2x_minus_1(m):
        m2 = mul_rn(m, m)  # exact: 50 bits
        P, E = two_prod(m2, x64)
        return (P - 1.0) + E

    ok = (x > 0.0) & is_finite(x)
    y = where(ok & (m2x_minus_1(m_hi) < 0.0), next_up(y), y)
    y = where(ok & (m2x_minus_1(m_lo) > 0.0), next_down(y), y)
    return y


EXPORTS["rsqrt_rn"] = rsqrt_rn
_ = bitcast  # re-exported helpers stay importable
