"""Conformance cases of ``tl.extra.libdevice``: each function on fp32 and fp64 over a range where
it is defined, against float64 numpy (exact for the rounding, sign and classification functions)."""

from __future__ import annotations

import math

import numpy as np

import tritium
import tritium.language as tl
from tritium.language.extra import libdevice

from .suite import Device, Output, cases, rng_for

NP = {"fp32": np.float32, "fp64": np.float64}
#: name: (numpy reference, input range, exact)
FUNCTIONS = {
    "tanh": (np.tanh, (-6, 6), False), "tan": (np.tan, (-1.5, 1.5), False), "log10": (np.log10, (1e-3, 1e3), False),
    "erf": (np.vectorize(math.erf), (-3, 3), False), "trunc": (np.trunc, (-50, 50), True),
    "round": (lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), (-50, 50), True), "rint": (np.rint, (-50, 50), True),
    "fabs": (np.abs, (-5, 5), True), "isnan": (lambda x: np.isnan(x).astype(np.float64), (-5, 5), True),
    "isinf": (lambda x: np.isinf(x).astype(np.float64), (-5, 5), True),
    "acos": (np.arccos, (-1, 1), False), "asin": (np.arcsin, (-1, 1), False), "atan": (np.arctan, (-20, 20), False),
    "acosh": (np.arccosh, (1, 50), False), "asinh": (np.arcsinh, (-20, 20), False),
    "atanh": (np.arctanh, (-0.99, 0.99), False), "sinh": (np.sinh, (-10, 10), False),
    "cosh": (np.cosh, (-10, 10), False), "cbrt": (np.cbrt, (-100, 100), False),
    "erfc": (np.vectorize(math.erfc), (-3, 9), False), "expm1": (np.expm1, (-5, 5), False),
    "log1p": (np.log1p, (-0.9, 100), False),
}
#: two-argument functions: name: (numpy reference, range of the first, range of the second)
BINARY = {"atan2": (np.arctan2, (-5, 5), (-5, 5)), "pow": (np.power, (0.1, 10), (-4, 4)),
          "fmod": (np.fmod, (-50, 50), (0.5, 7))}


@tritium.jit
def libdevice_case_kernel(x_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    if FN == "isnan":
        r = libdevice.isnan(x).to(x.dtype)
    elif FN == "isinf":
        r = libdevice.isinf(x).to(x.dtype)
    else:
        r = getattr(libdevice, FN)(x)
    tl.store(out_ptr + offs, r, mask=mask)


@cases("libdevice-{fn}-{dtype}", fn=list(FUNCTIONS), dtype=["fp32", "fp64"])
def libdevice_fn(dev: Device, fn: str, dtype: str) -> list[Output]:
    ref, (lo, hi), exact = FUNCTIONS[fn]
    n = 1000
    x = rng_for(f"libdevice-{fn}-{dtype}").uniform(lo, hi, n).astype(NP[dtype])
    x[:4] = [lo, hi, 0.5, -0.5]
    if fn in ("isnan", "isinf", "fabs", "trunc", "round", "rint"):
        x[4:8] = [np.nan, np.inf, -np.inf, -0.0]
    out = dev.empty(n, NP[dtype])
    dev.launch(libdevice_case_kernel, (tritium.cdiv(n, 256),), dev.to_device(x), out, n, FN=fn, BLOCK=256)
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    return [Output("out", dev.to_host(out), want, rtol=0 if exact else None, atol=0 if exact else None)]


@tritium.jit
def libdevice_binary_kernel(x_ptr, y_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x, y = tl.load(x_ptr + offs, mask=mask, other=1.0), tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, getattr(libdevice, FN)(x, y), mask=mask)


@cases("libdevice-{fn}-{dtype}", fn=list(BINARY), dtype=["fp32", "fp64"])
def libdevice_binary(dev: Device, fn: str, dtype: str) -> list[Output]:
    ref, (lo, hi), (lo2, hi2) = BINARY[fn]
    n = 1000
    rng = rng_for(f"libdevice-{fn}-{dtype}")
    x, y = rng.uniform(lo, hi, n).astype(NP[dtype]), rng.uniform(lo2, hi2, n).astype(NP[dtype])
    out = dev.empty(n, NP[dtype])
    dev.launch(libdevice_binary_kernel, (tritium.cdiv(n, 256),), dev.to_device(x), dev.to_device(y), out, n, FN=fn,
               BLOCK=256)
    return [Output("out", dev.to_host(out), ref(x.astype(np.float64), y.astype(np.float64)))]


# -- the functions added for Triton 3.6's whole libdevice list -----------------------------------
# Exact functions are checked on their bit patterns (so -0.0, NaN and the rounding direction all
# count), against references computed exactly with Python's fractions.

from fractions import Fraction  # noqa: E402

MODES = ("rn", "rz", "rd", "ru")
BITS = {np.float32: np.int32, np.float64: np.int64}


def _edges(dt) -> np.ndarray:
    fi = np.finfo(dt)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 3.0, 1 / 3, fi.max, -fi.max,
                     fi.tiny, fi.tiny / 8, -fi.smallest_subnormal, fi.smallest_subnormal, fi.eps], dt)


def _mixed(dt, n: int, rng) -> np.ndarray:
    """Edge values, then values of every magnitude."""
    span = 30 if dt == np.float64 else 8
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-span, span, n)
    x = x.astype(dt)
    e = _edges(dt)
    x[:e.size] = e
    return x


def round_exact(v, dt, mode: str):
    """The exact value ``v`` (a Fraction) rounded to ``dt`` in ``mode``, as IEEE rounds (overflow included)."""
    fi = np.finfo(dt)
    big = Fraction(float(fi.max))
    if abs(v) > big:
        past = Fraction(2) ** (128 if dt == np.float32 else 1024)  # where the exponent range would continue
        mx, inf = dt(fi.max), dt(np.inf)
        pos = v > 0
        r = {"rn": inf if abs(v) >= (big + past) / 2 else mx, "rz": mx, "rd": mx if pos else inf,
             "ru": inf if pos else mx}[mode]
        return r if pos else -r
    c = dt(float(v))
    while Fraction(float(c)) > v:
        c = np.nextafter(c, dt(-np.inf))
    lo = c
    if Fraction(float(lo)) == v:
        return lo
    hi = np.nextafter(lo, dt(np.inf))
    if mode == "rd":
        return lo
    if mode == "ru":
        return hi
    if mode == "rz":
        return lo if v > 0 else hi
    d_lo, d_hi = v - Fraction(float(lo)), Fraction(float(hi)) - v
    if d_lo != d_hi:
        return lo if d_lo < d_hi else hi
    return lo if int(np.array(lo).view(BITS[dt])) % 2 == 0 else hi


def _as_bits(a: np.ndarray) -> np.ndarray:
    """Bit patterns, every NaN as one (payloads differ between targets)."""
    a = np.asarray(a).copy()
    a[np.isnan(a)] = np.nan
    return a.view(BITS[a.dtype.type])


def _ref_arith(op: str, dt, mode: str, a, b, c=None):
    with np.errstate(all="ignore"):
        native = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "div": lambda: a / b,
                  "sqrt": lambda: np.sqrt(a), "rcp": lambda: dt(1) / a,
                  "fma": lambda: dt(np.float64(a) * np.float64(b) + np.float64(c)) if dt == np.float32 else a * b + c}[op]()
    args = [a, b, c][:{"sqrt": 1, "rcp": 1, "fma": 3}.get(op, 2)]
    if not all(np.isfinite(x) for x in args) or (op in ("div", "rcp") and args[-1] == 0) or (op == "sqrt" and a <= 0):
        return native
    F = [Fraction(float(x)) for x in args]
    if op == "sqrt":  # the exact root lies between two representable values: find them
        r = dt(np.sqrt(np.float64(a))) if dt == np.float32 else np.sqrt(a)
        while Fraction(float(r)) ** 2 > F[0]:
            r = np.nextafter(r, dt(0))
        while Fraction(float(np.nextafter(r, dt(np.inf)))) ** 2 <= F[0]:
            r = np.nextafter(r, dt(np.inf))
        lo, hi = r, np.nextafter(r, dt(np.inf))
        if Fraction(float(lo)) ** 2 == F[0]:
            return lo
        mid = (Fraction(float(lo)) + Fraction(float(hi))) / 2
        return {"rd": lo, "rz": lo, "ru": hi, "rn": lo if mid * mid > F[0] else hi}[mode]
    v = {"add": lambda: F[0] + F[1], "sub": lambda: F[0] - F[1], "mul": lambda: F[0] * F[1],
         "div": lambda: F[0] / F[1], "rcp": lambda: 1 / F[0], "fma": lambda: F[0] * F[1] + F[2]}[op]()
    if v != 0:
        return round_exact(v, dt, mode)
    if op in ("mul", "div", "rcp"):
        return native
    x, y = (a, b if op == "add" else -b) if op != "fma" else (a * b, c)  # exact zero sum: IEEE's sign rule
    if x == 0 and y == 0 and np.signbit(x) == np.signbit(y):
        return dt(x)
    return dt(-0.0) if mode == "rd" else dt(0.0)


@tritium.jit
def libdevice_round_kernel(a_ptr, b_ptr, c_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=1.0)
    b = tl.load(b_ptr + offs, mask=mask, other=1.0)
    c = tl.load(c_ptr + offs, mask=mask, other=1.0)
    if OP == "add":
        r0, r1, r2, r3 = libdevice.add_rn(a, b), libdevice.add_rz(a, b), libdevice.add_rd(a, b), libdevice.add_ru(a, b)
    elif OP == "sub":
        r0, r1, r2, r3 = libdevice.sub_rn(a, b), libdevice.sub_rz(a, b), libdevice.sub_rd(a, b), libdevice.sub_ru(a, b)
    elif OP == "mul":
        r0, r1, r2, r3 = libdevice.mul_rn(a, b), libdevice.mul_rz(a, b), libdevice.mul_rd(a, b), libdevice.mul_ru(a, b)
    elif OP == "div":
        r0, r1, r2, r3 = libdevice.div_rn(a, b), libdevice.div_rz(a, b), libdevice.div_rd(a, b), libdevice.div_ru(a, b)
    elif OP == "sqrt":
        r0, r1, r2, r3 = libdevice.sqrt_rn(a), libdevice.sqrt_rz(a), libdevice.sqrt_rd(a), libdevice.sqrt_ru(a)
    elif OP == "rcp":
        r0, r1, r2, r3 = libdevice.rcp_rn(a), libdevice.rcp_rz(a), libdevice.rcp_rd(a), libdevice.rcp_ru(a)
    else:
        r0, r1 = libdevice.fma_rn(a, b, c), libdevice.fma_rz(a, b, c)
        r2, r3 = libdevice.fma_rd(a, b, c), libdevice.fma_ru(a, b, c)
    tl.store(out_ptr + offs, r0, mask=mask)
    tl.store(out_ptr + n + offs, r1, mask=mask)
    tl.store(out_ptr + 2 * n + offs, r2, mask=mask)
    tl.store(out_ptr + 3 * n + offs, r3, mask=mask)


@cases("libdevice-round-{op}-{dtype}", op=["add", "sub", "mul", "div", "sqrt", "rcp", "fma"], dtype=["fp32", "fp64"])
def libdevice_round(dev: Device, op: str, dtype: str) -> list[Output]:
    """Each rounding mode of ``op``, bit for bit: values of every magnitude, edge values, ties,
    near-cancellations, overflow, underflow into the subnormals."""
    dt = NP[dtype]
    n = 512
    rng = rng_for(f"libdevice-round-{op}-{dtype}")
    a, b, c = _mixed(dt, n, rng), rng.permutation(_mixed(dt, n, rng)), rng.permutation(_mixed(dt, n, rng))
    k = 40
    b[100:100 + k] = (-a[100:100 + k] * (1 + rng.standard_normal(k) * 1e-6)).astype(dt)  # near-cancellation
    m = np.finfo(dt).nmant
    b[200:200 + k] = np.ldexp(rng.integers(1, 8, k), -m - 1).astype(dt)  # halfway and nearby cases
    a[200:200 + k] = rng.integers(1, 64, k).astype(dt)
    if op == "fma":
        c[300:300 + k] = (-(a[300:300 + k].astype(np.float64) * b[300:300 + k]) * (1 + rng.standard_normal(k) * 1e-9)).astype(dt)
        if dt == np.float64:  # fp64 fma_r* is exact where no intermediate under- or overflows
            for arr in (a, b, c):
                bad = ~np.isfinite(arr) | (np.abs(arr) > 2.0 ** 400) | ((np.abs(arr) < 2.0 ** -400) & (arr != 0))
                arr[bad & np.isfinite(arr)] = 1.5
    if op in ("mul", "div"):
        a[300:300 + k] = np.ldexp(rng.uniform(1, 2, k), rng.integers(-20, 20, k) + (np.finfo(dt).minexp // 2)).astype(dt)
        b[300:300 + k] = np.ldexp(rng.uniform(1, 2, k), rng.integers(-20, 20, k) + (np.finfo(dt).minexp // 2) *
                                  (1 if op == "mul" else -1)).astype(dt)
    out = dev.empty(4 * n, dt)
    dev.launch(libdevice_round_kernel, (tritium.cdiv(n, 256),), dev.to_device(a), dev.to_device(b), dev.to_device(c),
               out, n, OP=op, BLOCK=256)
    got = dev.to_host(out).reshape(4, n)
    outs = []
    for i, mode in enumerate(MODES):
        want = np.array([_ref_arith(op, dt, mode, a[j], b[j], c[j]) for j in range(n)], dt)
        outs.append(Output(f"{op}_{mode}", _as_bits(got[i]), _as_bits(want)))
    return outs


_I = {"int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64}
_RANGE = {"int": (-2**31, 2**31 - 1, np.int32), "uint": (0, 2**32 - 1, np.int32), "ll": (-2**63, 2**63 - 1, np.int64),
          "ull": (0, 2**64 - 1, np.int64)}
_ROUND_INT = {"rn": lambda f: round(f), "rz": lambda f: math.trunc(f), "rd": lambda f: math.floor(f),
              "ru": lambda f: math.ceil(f),  # Python's round is to nearest even; "ra": ties away from zero
              "ra": lambda f: (1 if f >= 0 else -1) * math.floor(abs(f) + Fraction(1, 2))}


def _ref_to_int(x, kind: str, mode: str) -> int:
    lo, hi, out = _RANGE[kind]
    if np.isnan(x):
        return 0
    if np.isinf(x):
        v = hi if x > 0 else lo
    else:
        v = min(max(_ROUND_INT[mode](Fraction(float(x))), lo), hi)
    return int(np.array(v % 2 ** (8 * np.dtype(out).itemsize)).astype(np.uint64).astype(out)) if v >= 0 else v


@tritium.jit
def libdevice_f2i_kernel(x_ptr, out32_ptr, out64_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    if x.dtype == tl.float32:
        i32 = (libdevice.float2int_rn(x), libdevice.float2int_rz(x), libdevice.float2int_rd(x), libdevice.float2int_ru(x),
               libdevice.float2uint_rn(x), libdevice.float2uint_rz(x), libdevice.float2uint_rd(x),
               libdevice.float2uint_ru(x))
        i64 = (libdevice.float2ll_rn(x), libdevice.float2ll_rz(x), libdevice.float2ll_rd(x), libdevice.float2ll_ru(x),
               libdevice.float2ull_rn(x), libdevice.float2ull_rz(x), libdevice.float2ull_rd(x),
               libdevice.float2ull_ru(x))
    else:
        i32 = (libdevice.double2int_rn(x), libdevice.double2int_rz(x), libdevice.double2int_rd(x),
               libdevice.double2int_ru(x), libdevice.double2uint_rn(x), libdevice.double2uint_rz(x),
               libdevice.double2uint_rd(x), libdevice.double2uint_ru(x))
        i64 = (libdevice.double2ll_rn(x), libdevice.double2ll_rz(x), libdevice.double2ll_rd(x),
               libdevice.double2ll_ru(x), libdevice.double2ull_rn(x), libdevice.double2ull_rz(x),
               libdevice.double2ull_rd(x), libdevice.double2ull_ru(x))
    for i in tl.static_range(8):
        tl.store(out32_ptr + i * n + offs, i32[i], mask=mask)
        tl.store(out64_ptr + i * n + offs, i64[i], mask=mask)
    tl.store(out64_ptr + 8 * n + offs, libdevice.llrint(x), mask=mask)
    tl.store(out64_ptr + 9 * n + offs, libdevice.llround(x), mask=mask)


@cases("libdevice-float2int-{dtype}", dtype=["fp32", "fp64"])
def libdevice_float2int(dev: Device, dtype: str) -> list[Output]:
    """float2int/uint/ll/ull_r* (double2* for fp64), llrint and llround: ties, NaN, infinities,
    values past each integer range (saturating; NaN gives 0)."""
    dt = NP[dtype]
    n = 512
    rng = rng_for(f"libdevice-float2int-{dtype}")
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(0, 21, n)).astype(dt)
    special = [np.nan, np.inf, -np.inf, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 2.0**31, -2.0**31, 2.0**31 - 128,
               -2.0**31 - 256, 2.0**32, 2.0**32 - 256, 2.0**63, -2.0**63, 2.0**64, -2.0**64, 2.0**62 * 3, -0.7, 4e9, 1e30]
    x[:len(special)] = np.array(special, dt)
    x[40:100] = (rng.integers(-100, 100, 60) + rng.choice([0.5, 0.25, 0.75], 60)).astype(dt)
    out32, out64 = dev.empty(8 * n, np.int32), dev.empty(10 * n, np.int64)
    dev.launch(libdevice_f2i_kernel, (tritium.cdiv(n, 256),), dev.to_device(x), out32, out64, n, BLOCK=256)
    g32, g64 = dev.to_host(out32).reshape(8, n), dev.to_host(out64).reshape(10, n)
    outs = []
    for i, (kind, mode) in enumerate([(k, m) for k in ("int", "uint") for m in MODES]):
        outs.append(Output(f"{kind}_{mode}", g32[i], np.array([_ref_to_int(v, kind, mode) for v in x], np.int32)))
    for i, (kind, mode) in enumerate([(k, m) for k in ("ll", "ull") for m in MODES]):
        outs.append(Output(f"{kind}_{mode}", g64[i], np.array([_ref_to_int(v, kind, mode) for v in x], np.int64)))
    outs.append(Output("llrint", g64[8], np.array([_ref_to_int(v, "ll", "rn") for v in x], np.int64)))
    outs.append(Output("llround", g64[9], np.array([_ref_to_int(v, "ll", "ra") for v in x], np.int64)))
    return outs


@tritium.jit
def libdevice_to_float_kernel(x_ptr, f32_ptr, f64_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1)
    if x.dtype == tl.float64:
        f32 = (libdevice.double2float_rn(x), libdevice.double2float_rz(x), libdevice.double2float_rd(x),
               libdevice.double2float_ru(x))
        f64 = (x, x, x, x)
    elif x.dtype == tl.int32:
        f32 = (libdevice.int2float_rn(x), libdevice.int2float_rz(x), libdevice.int2float_rd(x), libdevice.int2float_ru(x))
        f64 = (libdevice.int2double_rn(x), x.to(tl.float64), x.to(tl.float64), x.to(tl.float64))
    elif x.dtype == tl.uint32:
        f32 = (libdevice.uint2float_rn(x), libdevice.uint2float_rz(x), libdevice.uint2float_rd(x),
               libdevice.uint2float_ru(x))
        f64 = (libdevice.uint2double_rn(x), x.to(tl.float64), x.to(tl.float64), x.to(tl.float64))
    elif x.dtype == tl.int64:
        f32 = (libdevice.ll2float_rn(x), libdevice.ll2float_rz(x), libdevice.ll2float_rd(x), libdevice.ll2float_ru(x))
        f64 = (libdevice.ll2double_rn(x), libdevice.ll2double_rz(x), libdevice.ll2double_rd(x),
               libdevice.ll2double_ru(x))
    else:
        f32 = (libdevice.ull2float_rn(x), libdevice.ull2float_rz(x), libdevice.ull2float_rd(x),
               libdevice.ull2float_ru(x))
        f64 = (libdevice.ull2double_rn(x), libdevice.ull2double_rz(x), libdevice.ull2double_rd(x),
               libdevice.ull2double_ru(x))
    for i in tl.static_range(4):
        tl.store(f32_ptr + i * n + offs, f32[i], mask=mask)
        tl.store(f64_ptr + i * n + offs, f64[i], mask=mask)


@cases("libdevice-to-float-{src}", src=["fp64", "int32", "uint32", "int64", "uint64"])
def libdevice_to_float(dev: Device, src: str) -> list[Output]:
    """double2float_r*, int/uint/ll/ull 2float_r* and 2double_r*, bit for bit (ties, overflow,
    the subnormals)."""
    n = 512
    rng = rng_for(f"libdevice-to-float-{src}")
    if src == "fp64":
        x = _mixed(np.float64, n, rng)
        x[30:60] = np.ldexp(rng.uniform(1, 2, 30), rng.integers(-160, -120, 30))  # fp32 subnormals
        x[60:90] = np.float64(np.float32(rng.uniform(1, 2, 30))) * (1 + 2.0 ** -24)  # fp32 ties
        x[90:100] = [3.4028235677973366e38, 3.5e38, -3.5e38, 1e300, -1e300, 3.4028234663852886e38 * (1 + 2**-25),
                     2.0 ** -150, -2.0 ** -150, 2.0 ** -151, 1.5 * 2.0 ** -149]
    else:
        info = np.iinfo(_I[src])
        bits = np.iinfo(_I[src]).bits
        x = rng.integers(info.min, info.max, n, dtype=_I[src], endpoint=True)
        shifts = rng.integers(0, bits - 1, n).astype(_I[src])
        x = (x >> shifts).astype(_I[src])
        x[:6] = [info.min, info.max, 0, 1, info.max - 1, (1 << 24) + 1]
        x[6:40] = (np.arange(34, dtype=np.uint64) * 2 ** (bits - 30) + (2 ** (bits - 30) // 2)).astype(_I[src])  # ties
    o32, o64 = dev.empty(4 * n, np.float32), dev.empty(4 * n, np.float64)
    dev.launch(libdevice_to_float_kernel, (tritium.cdiv(n, 256),), dev.to_device(x), o32, o64, n, BLOCK=256)
    g32, g64 = dev.to_host(o32).reshape(4, n), dev.to_host(o64).reshape(4, n)
    outs = []
    exact = [Fraction(float(v)) if src == "fp64" and np.isfinite(v) and v != 0 else (float(v) if src == "fp64" else Fraction(int(v)))
             for v in x]
    for i, mode in enumerate(MODES):
        want32 = np.array([np.float32(v) if isinstance(v, float) else round_exact(v, np.float32, mode) for v in exact],
                          np.float32)
        outs.append(Output(f"to_fp32_{mode}", _as_bits(g32[i]), _as_bits(want32)))
        if src in ("int64", "uint64") or (src in ("int32", "uint32") and i == 0):
            want64 = np.array([round_exact(v, np.float64, mode) for v in exact], np.float64)
            outs.append(Output(f"to_fp64_{mode}", _as_bits(g64[i]), _as_bits(want64)))
    return outs


@tritium.jit
def libdevice_int_kernel(a_ptr, b_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a, b, c = tl.load(a_ptr + offs, mask=mask), tl.load(b_ptr + offs, mask=mask), tl.load(c_ptr + offs, mask=mask)
    if a.dtype == tl.int32:
        umulhi = libdevice.mulhi(a.to(tl.uint32), b.to(tl.uint32)).to(a.dtype)
    else:
        umulhi = libdevice.mulhi(a.to(tl.uint64), b.to(tl.uint64)).to(a.dtype)
    r = (libdevice.clz(a).to(a.dtype), libdevice.popc(a).to(a.dtype), libdevice.brev(a), libdevice.ffs(a).to(a.dtype),
         libdevice.abs(a), libdevice.mulhi(a, b), umulhi)
    for i in tl.static_range(7):
        tl.store(out_ptr + i * n + offs, r[i], mask=mask)
    if a.dtype == tl.int32:
        ua, ub, uc = a.to(tl.uint32), b.to(tl.uint32), c.to(tl.uint32)
        r32 = (libdevice.byte_perm(a, b, c), libdevice.mul24(a, b), libdevice.mul24(ua, ub).to(tl.int32),
               libdevice.hadd(a, b), libdevice.hadd(ua, ub).to(tl.int32), libdevice.rhadd(a, b),
               libdevice.rhadd(ua, ub).to(tl.int32), libdevice.sad(a, b, uc), libdevice.sad(ua, ub, uc).to(tl.int32))
        for i in tl.static_range(9):
            tl.store(out_ptr + (7 + i) * n + offs, r32[i], mask=mask)


def _wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


@cases("libdevice-int-{dtype}", dtype=["int32", "int64"])
def libdevice_int(dev: Device, dtype: str) -> list[Output]:
    """clz, popc, brev, ffs, abs, mulhi (signed and unsigned), and for int32 byte_perm, mul24, hadd,
    rhadd, sad (signed and unsigned), against Python's integers."""
    it = _I[dtype]
    w = np.iinfo(it).bits
    n = 256
    rng = rng_for(f"libdevice-int-{dtype}")
    info = np.iinfo(it)

    def draw():
        x = rng.integers(info.min, info.max, n, dtype=it, endpoint=True)
        return (x >> rng.integers(0, w, n).astype(it)).astype(it)
    a, b, c = draw(), draw(), draw()
    a[:8] = [0, -1, 1, info.min, info.max, 1 << (w - 2), 2, -2]
    b[:8] = [0, -1, info.min, info.min, info.max, 3, -2, info.max]
    out = dev.empty((16 if w == 32 else 7) * n, it)
    dev.launch(libdevice_int_kernel, (tritium.cdiv(n, 128),), dev.to_device(a), dev.to_device(b), dev.to_device(c), out,
               n, BLOCK=128)
    got = dev.to_host(out).reshape(-1, n)
    A, B, C = [int(v) for v in a], [int(v) for v in b], [int(v) for v in c]
    u = lambda v, bits=w: v % (1 << bits)  # noqa: E731
    refs = {
        "clz": [w - u(x).bit_length() for x in A], "popc": [bin(u(x)).count("1") for x in A],
        "brev": [_wrap(int(format(u(x), f"0{w}b")[::-1], 2), w) for x in A],
        "ffs": [(u(x) & -u(x)).bit_length() for x in A], "abs": [_wrap(abs(x), w) for x in A],
        "mulhi": [_wrap((x * y) >> w, w) for x, y in zip(A, B)],
        "umulhi": [_wrap((u(x) * u(y)) >> w, w) for x, y in zip(A, B)],
    }
    if w == 32:
        def perm(x, y, s):
            v = u(y) << 32 | u(x)
            return _wrap(sum(((v >> (8 * ((s >> (4 * k)) & 7))) & 0xFF) << (8 * k) for k in range(4)), 32)

        def s24(x):
            x &= 0xFFFFFF
            return x - (1 << 24) if x >= 1 << 23 else x
        refs.update({
            "byte_perm": [perm(x, y, s) for x, y, s in zip(A, B, C)],
            "mul24": [_wrap(s24(x) * s24(y), 32) for x, y in zip(A, B)],
            "umul24": [_wrap((u(x) & 0xFFFFFF) * (u(y) & 0xFFFFFF), 32) for x, y in zip(A, B)],
            "hadd": [(x + y) >> 1 for x, y in zip(A, B)], "uhadd": [_wrap((u(x) + u(y)) >> 1, 32) for x, y in zip(A, B)],
            "rhadd": [(x + y + 1) >> 1 for x, y in zip(A, B)],
            "urhadd": [_wrap((u(x) + u(y) + 1) >> 1, 32) for x, y in zip(A, B)],
            "sad": [_wrap(abs(x - y) + u(z), 32) for x, y, z in zip(A, B, C)],
            "usad": [_wrap(abs(u(x) - u(y)) + u(z), 32) for x, y, z in zip(A, B, C)],
        })
    return [Output(name, got[i], np.array(ref, it)) for i, (name, ref) in enumerate(refs.items())]


@tritium.jit
def libdevice_fbits_kernel(x_ptr, y_ptr, n_ptr, f_ptr, i_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x, y, k = tl.load(x_ptr + offs, mask=mask), tl.load(y_ptr + offs, mask=mask), tl.load(n_ptr + offs, mask=mask)
    f = (libdevice.ldexp(x, k), libdevice.scalbn(x, k), libdevice.nextafter(x, y), libdevice.fdim(x, y),
         libdevice.remainder(x, y), libdevice.logb(x), libdevice.abs(x))
    for i in tl.static_range(7):
        tl.store(f_ptr + i * n + offs, f[i], mask=mask)
    tl.store(i_ptr + offs, libdevice.ilogb(x), mask=mask)
    tl.store(i_ptr + n + offs, libdevice.signbit(x), mask=mask)
    if x.dtype == tl.float32:
        tl.store(i_ptr + 2 * n + offs, libdevice.finitef(x), mask=mask)
        tl.store(i_ptr + 3 * n + offs, libdevice.float_as_int(x), mask=mask)
        tl.store(i_ptr + 4 * n + offs, libdevice.float_as_uint(x), mask=mask)
        tl.store(f_ptr + 7 * n + offs, libdevice.int_as_float(libdevice.float_as_int(x)), mask=mask)
        tl.store(f_ptr + 8 * n + offs, libdevice.uint_as_float(libdevice.float_as_int(x).to(tl.uint32)), mask=mask)
        tl.store(f_ptr + 9 * n + offs, libdevice.saturatef(x), mask=mask)
    else:
        hi, lo = libdevice.double2hiint(x), libdevice.double2loint(x)
        tl.store(i_ptr + 2 * n + offs, libdevice.isfinited(x), mask=mask)
        tl.store(i_ptr + 3 * n + offs, hi, mask=mask)
        tl.store(i_ptr + 4 * n + offs, lo, mask=mask)
        tl.store(f_ptr + 7 * n + offs, libdevice.hiloint2double(hi, lo), mask=mask)
        tl.store(f_ptr + 8 * n + offs, libdevice.longlong_as_double(libdevice.double_as_longlong(x)), mask=mask)
        tl.store(f_ptr + 9 * n + offs, x, mask=mask)


@cases("libdevice-float-bits-{dtype}", dtype=["fp32", "fp64"])
def libdevice_float_bits(dev: Device, dtype: str) -> list[Output]:
    """ldexp/scalbn (into the subnormals, overflow), nextafter, fdim, remainder, logb, ilogb, abs,
    signbit, finite, the bit reinterpretations and saturatef, bit for bit."""
    dt = NP[dtype]
    n = 512
    rng = rng_for(f"libdevice-float-bits-{dtype}")
    x, y = _mixed(dt, n, rng), rng.permutation(_mixed(dt, n, rng))
    y[100:150] = (x[100:150] * rng.uniform(-3, 3, 50)).astype(dt)  # remainder, fdim and nextafter near x
    y[150:170] = x[150:170]
    x[200:220] = np.array([5.0, -5.0, 7.0, 4.5, -4.5, 1.5, 2.5, 0.25, 0.75, -0.75] * 2, dt)  # remainder's ties
    y[200:220] = np.array([2.0, 2.0, 2.0, 3.0, 3.0, 1.0, 1.0, 0.5, 0.5, 0.5, 10.0, -2.0, 14.0, 9.0, 1.0, 3.0, 5.0,
                           0.125, 1.5, -1.5], dt)
    bias = np.finfo(dt).maxexp
    k = rng.integers(-3 * bias, 3 * bias, n).astype(np.int32)
    k[:20] = 0
    k[300:340] = rng.integers(-bias - 60, -bias + 5, 40)  # results near and in the subnormals
    x[300:340] = rng.uniform(1, 2, 40).astype(dt)
    fo, io = dev.empty(10 * n, dt), dev.empty(5 * n, np.int32)
    dev.launch(libdevice_fbits_kernel, (tritium.cdiv(n, 256),), dev.to_device(x), dev.to_device(y), dev.to_device(k),
               fo, io, n, BLOCK=256)
    gf, gi = dev.to_host(fo).reshape(10, n), dev.to_host(io).reshape(5, n)
    X, Y = x.astype(np.float64), y.astype(np.float64)

    def ldexp_ref(v, e):
        if v == 0 or not np.isfinite(v):
            return dt(v)
        return round_exact(Fraction(float(v)) * Fraction(2) ** int(e), dt, "rn")

    def rem_ref(a, b):
        if np.isnan(a) or np.isnan(b) or np.isinf(a) or b == 0:
            return dt(np.nan)
        if np.isinf(b):
            return dt(a)
        q = Fraction(float(a)) / Fraction(float(b))
        m = round(q)  # ties to even
        r = Fraction(float(a)) - m * Fraction(float(b))
        return dt(float(r)) if r != 0 else dt(math.copysign(0.0, a))

    with np.errstate(all="ignore"):
        fd = np.where(np.isnan(X) | np.isnan(Y), np.nan, np.where(X > Y, X - Y, 0.0)).astype(dt)
        _, ex = np.frexp(X)
        logb = np.where(X == 0, -np.inf, np.where(np.isfinite(X), ex - 1.0, np.abs(X)))
        ilogb = np.where(X == 0, -2**31, np.where(np.isnan(X), -2**31, np.where(np.isinf(X), 2**31 - 1, ex - 1)))
    wf = [np.array([ldexp_ref(v, e) for v, e in zip(x, k)], dt)] * 2 + [
        np.nextafter(x, y), fd, np.array([rem_ref(a, b) for a, b in zip(x, y)], dt), logb.astype(dt), np.abs(x), x, x]
    if dt == np.float32:
        wf.append(np.where(np.isnan(x), 0, np.clip(x, 0, 1)).astype(dt))
        wi = [x.view(np.int32), x.view(np.int32), np.isfinite(x).astype(np.int32)]
    else:
        wf.append(x)
        v = x.view(np.int64)
        wi = [(v >> 32).astype(np.int32), (v & 0xFFFFFFFF).astype(np.uint32).view(np.int32), np.isfinite(x).astype(np.int32)]
    names_f = ["ldexp", "scalbn", "nextafter", "fdim", "remainder", "logb", "abs", "as_int_and_back",
               "as_uint_and_back" if dt == np.float32 else "as_longlong_and_back", "saturatef"]
    outs = [Output(nm, _as_bits(g), _as_bits(w)) for nm, g, w in zip(names_f, gf, wf)]
    outs += [Output("ilogb", gi[0], ilogb.astype(np.int32)), Output("signbit", gi[1], np.signbit(x).astype(np.int32)),
             Output("finite", gi[2], wi[2]), Output("bits_a", gi[3], wi[0]), Output("bits_b", gi[4], wi[1])]
    return outs


def _simpson(f, a: float, b: float, m: int = 4000) -> np.ndarray:
    """Composite Simpson's rule of ``f`` (vectorised over the last axis of its argument) on [a, b]."""
    t = np.linspace(a, b, 2 * m + 1)
    w = np.ones(2 * m + 1)
    w[1:-1:2], w[2:-1:2] = 4, 2
    return (f(t) * w).sum(axis=-1) * (b - a) / (6 * m)


def bessel_ref(kind: str, order: int, x: np.ndarray) -> np.ndarray:
    """Bessel functions from their integral representations (independent of the series and
    asymptotic forms the implementation sums): J_n and I_n by the trapezoidal rule of a periodic
    integrand (exponentially convergent), Y_n by Simpson's rule of Bessel's integral."""
    x = np.asarray(x, np.float64)[:, None]
    if kind in ("j", "i"):
        t = (np.arange(400) + 0.5) * (np.pi / 400)
        if kind == "j":
            return np.cos(order * t - x * np.sin(t)).mean(axis=1)
        return (np.exp(x * np.cos(t) - np.abs(x)) * np.cos(order * t)).mean(axis=1) * np.exp(np.abs(x[:, 0]))
    first = _simpson(lambda t: np.sin(x * np.sin(t) - order * t), 0.0, np.pi) / np.pi
    top = np.arcsinh((60.0 + 12.0 * abs(order)) / x)  # where the integrand has decayed below 1e-20
    second = _simpson(lambda u: (np.exp(order * u * top) + (-1) ** order * np.exp(-order * u * top)) *
                      np.exp(-x * np.sinh(u * top)), 0.0, 1.0, 8000)[:, None] * top / np.pi
    second = second[:, 0]
    return first - second


def _bisect(f, target: float, lo: float, hi: float) -> float:
    """The root of increasing ``f(t) = target`` in [lo, hi] by bisection."""
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return (lo + hi) / 2


#: name: (reference, input range, tolerance (rtol, atol) for fp32 and fp64)
SPECIAL = {
    "j0": (lambda x: bessel_ref("j", 0, x), (-30, 30), (1e-6, 1e-7), (1e-10, 3e-11)),
    "j1": (lambda x: bessel_ref("j", 1, x), (-30, 30), (1e-6, 1e-7), (1e-10, 3e-11)),
    "y0": (lambda x: bessel_ref("y", 0, x), (0.05, 30), (1e-6, 1e-7), (1e-10, 3e-11)),
    "y1": (lambda x: bessel_ref("y", 1, x), (0.05, 30), (1e-6, 1e-7), (1e-10, 3e-11)),
    "cyl_bessel_i0": (lambda x: bessel_ref("i", 0, x), (-40, 40), (1e-6, 0), (1e-13, 0)),
    "cyl_bessel_i1": (lambda x: bessel_ref("i", 1, x), (-40, 40), (1e-6, 0), (1e-13, 0)),
    "lgamma": (np.vectorize(math.lgamma), (-20, 60), (1e-6, 1e-7), (1e-13, 1e-14)),
    "tgamma": (np.vectorize(math.gamma), (-20, 30), (1e-6, 0), (1e-13, 0)),
    "erfinv": (np.vectorize(lambda y: _bisect(math.erf, y, -6.0, 6.0) if abs(y) < 0.5 else
                            math.copysign(_bisect(lambda t: -math.erfc(t), -(1 - abs(y)), 0.0, 30.0), y)),
               (-0.999999, 0.999999), (1e-6, 1e-7), (1e-13, 1e-15)),
    "erfcinv": (np.vectorize(lambda z: _bisect(lambda t: -math.erfc(t), -z, -6.0, 30.0)), (1e-12, 1.999), (1e-6, 1e-7),
                (1e-13, 1e-15)),
    "normcdf": (np.vectorize(lambda x: 0.5 * math.erfc(-x / math.sqrt(2))), (-30, 10), (1e-6, 0), (1e-12, 0)),
    "normcdfinv": (np.vectorize(lambda p: _bisect(lambda t: 0.5 * math.erfc(-t / math.sqrt(2)), p, -40.0, 10.0)),
                   (1e-12, 0.999), (1e-6, 1e-7), (1e-13, 1e-15)),
    "erfcx": (np.vectorize(lambda x: math.exp(x * x) * math.erfc(x)), (-5, 20), (1e-6, 0), (1e-12, 0)),
    "exp10": (lambda x: 10.0 ** x, (-30, 30), (2e-6, 0), (1e-14, 0)),
    "sinpi": (lambda x: np.sin(np.pi * x), (-4, 4), (1e-6, 1e-7), (1e-14, 1e-15)),
    "cospi": (lambda x: np.cos(np.pi * x), (-4, 4), (1e-6, 1e-7), (1e-14, 1e-15)),
    "rcbrt": (lambda x: 1 / np.cbrt(x), (-100, 100), (1e-6, 0), (1e-14, 0)),
}


@tritium.jit
def libdevice_special_kernel(x_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, getattr(libdevice, FN)(x), mask=mask)


@cases("libdevice-special-{fn}-{dtype}", fn=list(SPECIAL), dtype=["fp32", "fp64"])
def libdevice_special(dev: Device, fn: str, dtype: str) -> list[Output]:
    """A special function against an independent float64 reference (integral representations,
    bisection on Python's erf/erfc, Python's gamma), to the accuracy its docstring states."""
    ref, (lo, hi), tol32, tol64 = SPECIAL[fn]
    dt = NP[dtype]
    n = 256
    x = rng_for(f"libdevice-special-{fn}-{dtype}").uniform(lo, hi, n).astype(dt)
    if fn in ("erfcinv", "normcdfinv"):  # the far tails too
        x[:20] = np.geomspace(1e-300 if dt == np.float64 else 1e-37, 1e-3, 20).astype(dt)
    if fn in ("tgamma", "lgamma"):
        x[:6] = [0.5, 1.0, 2.0, 3.0, -0.5, -2.5]
    out = dev.empty(n, dt)
    dev.launch(libdevice_special_kernel, (tritium.cdiv(n, 256),), dev.to_device(x), out, n, FN=fn, BLOCK=256)
    with np.errstate(all="ignore"):
        want = np.asarray(ref(x.astype(np.float64)), np.float64)
    rtol, atol = tol32 if dt == np.float32 else tol64
    got = dev.to_host(out)
    if dt == np.float32:  # a float32 result is the reference rounded (plus the rtol)
        want = want.astype(np.float32).astype(np.float64)
    return [Output(fn, got, want, rtol=rtol, atol=atol)]


@tritium.jit
def libdevice_misc_kernel(x_ptr, y_ptr, z_ptr, w_ptr, k_ptr, out_ptr, n, N: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x, y = tl.load(x_ptr + offs, mask=mask, other=1.0), tl.load(y_ptr + offs, mask=mask, other=1.0)
    z, w = tl.load(z_ptr + offs, mask=mask, other=1.0), tl.load(w_ptr + offs, mask=mask, other=1.0)
    k = tl.load(k_ptr + offs, mask=mask, other=0)
    ax = tl.abs(x) + 0.25
    r = (libdevice.hypot(x, y), libdevice.rhypot(x, y), libdevice.norm3d(x, y, z), libdevice.rnorm3d(x, y, z),
         libdevice.norm4d(x, y, z, w), libdevice.rnorm4d(x, y, z, w), libdevice.jn(N, x), libdevice.yn(N, ax),
         libdevice.jn(k, x), libdevice.yn(k, ax))
    for i in tl.static_range(10):
        tl.store(out_ptr + i * n + offs, r[i], mask=mask)


@cases("libdevice-norms-bessel-n-{dtype}", dtype=["fp32", "fp64"])
def libdevice_norms_bessel_n(dev: Device, dtype: str) -> list[Output]:
    """hypot, norm3d, norm4d and their reciprocals (huge and tiny values: no overflow), jn and yn
    of a compile-time order (5) and of run-time orders (-6..12)."""
    dt = NP[dtype]
    n = 256
    rng = rng_for(f"libdevice-norms-bessel-n-{dtype}")
    x, y, z, w = (rng.uniform(-25, 25, n).astype(dt) for _ in range(4))
    big = np.finfo(dt).max / 4
    x[:4], y[:4], z[:4], w[:4] = [big, 1e-40, np.inf, 0.0], [big, 3e-40, np.nan, 0.0], [1.0, 0.0, 1.0, 0.0], \
        [2.0, 0.0, 1.0, 0.0]
    k = rng.integers(-6, 13, n).astype(np.int32)
    out = dev.empty(10 * n, dt)
    dev.launch(libdevice_misc_kernel, (tritium.cdiv(n, 256),), *(dev.to_device(v) for v in (x, y, z, w, k)), out, n,
               N=5, BLOCK=256)
    got = dev.to_host(out).reshape(10, n)
    F = [[Fraction(float(v)) if np.isfinite(v) else None for v in a] for a in (x, y, z, w)]

    def norm(*cols):
        r = []
        for vals in zip(*cols):
            if any(v is None for v in vals):
                r.append(np.inf if any(np.isinf(float(0 if v is None else 0)) for v in vals) else np.nan)
                continue
            s = sum(v * v for v in vals)
            if s == 0:
                r.append(0.0)
                continue
            e = (s.numerator.bit_length() - s.denominator.bit_length()) // 2
            r.append(math.ldexp(math.sqrt(float(s / Fraction(4) ** e)), e))
        return np.array(r)
    n2, n3, n4 = norm(F[0], F[1]), norm(F[0], F[1], F[2]), norm(F[0], F[1], F[2], F[3])
    n2[2] = n3[2] = n4[2] = np.inf  # hypot(inf, nan) is inf
    ax = np.abs(x.astype(np.float64)) + 0.25
    X = x.astype(np.float64)
    jn5 = bessel_ref("j", 5, X)
    yn5 = bessel_ref("y", 5, ax)
    jk = np.array([bessel_ref("j", int(m), X[i:i + 1])[0] for i, m in enumerate(k)])
    yk = np.array([bessel_ref("y", int(m), ax[i:i + 1])[0] for i, m in enumerate(k)])
    with np.errstate(all="ignore"):
        wants = [n2, 1 / n2, n3, 1 / n3, n4, 1 / n4, jn5, yn5, jk, yk]
    names = ["hypot", "rhypot", "norm3d", "rnorm3d", "norm4d", "rnorm4d", "jn5", "yn5", "jn", "yn"]
    outs = []
    for name, g, wv in zip(names, got, wants):
        if dt == np.float32:
            rtol, atol = 1e-6, (1e-7 if name[0] in "jy" else 0.0)
            wv = wv.astype(np.float32).astype(np.float64)
        else:
            rtol, atol = (1e-9, 1e-10) if name[0] in "jy" else (4.5e-16, 0.0)
        first = 4 if name[0] in "jy" else 0  # the quadrature references do not hold at 1e-40 and 1e308
        outs.append(Output(name, g[first:], wv[first:], rtol=rtol, atol=atol))
    return outs
