"""Conformance cases of the five 8-bit float types: conversion from fp32 (values, every tie and its
neighbours, overflow, infinities, NaN, signed zeros, subnormals) and from every fp16 pattern, every
pattern's value (a NaN is the positive one, as Triton decodes it), arithmetic (each operation computed in fp32, rounded back) and ``tl.dot`` of fp8 operands.

The reference is written here from the formats' definitions, as Triton rounds each one where it is
native: e4m3fn and e5m2 (NVIDIA): nearest, ties to even, saturating, NaN to 0x7f; e4m3fnuz and
e5m2fnuz (AMD): nearest, ties to even, saturating, one zero, NaN and infinities to 0x80; e4b15
(Triton's software format): bias 15, no infinities or NaN, ties away from zero, saturating at 1.75,
NaN and infinities to +-1.75 (an fp32 NaN to +1.75, an fp16 NaN keeping its sign)."""

from __future__ import annotations

import dataclasses

import numpy as np

import tritium as triton
import tritium.language as tl

from .suite import Device, Output, cases


@dataclasses.dataclass(frozen=True)
class Spec:
    exponent: int
    mantissa: int
    bias: int
    top: str            # the top exponent: "inf" (e5m2), "nan" (e4m3fn: all-ones is NaN), "normal"
    largest: int        # the largest pattern rounding gives
    nan: int | None     # the pattern NaN becomes (None: it saturates)
    fnuz: bool = False  # 0x80 is NaN, zero is unsigned
    away: bool = False  # ties away from zero

    def values(self) -> np.ndarray:
        """The value of every pattern 0..255 (float64, exact)."""
        b = np.arange(256)
        e, m = (b >> self.mantissa) & ((1 << self.exponent) - 1), b & ((1 << self.mantissa) - 1)
        v = np.where(e == 0, m * 2.0 ** (1 - self.bias - self.mantissa),
                     (1 + m / 2.0 ** self.mantissa) * 2.0 ** (e.astype(np.float64) - self.bias))
        top = e == (1 << self.exponent) - 1
        sign = np.where(b >= 128, -1.0, 1.0)
        if self.top == "inf":
            v = np.where(top, np.where(m == 0, np.inf, np.nan), v)
        elif self.top == "nan":
            v = np.where(top & (m == (1 << self.mantissa) - 1), np.nan, v)
        v = np.where(np.isnan(v), np.nan, sign * v)  # a NaN is the positive one
        return np.where(b == 0x80, np.nan, v) if self.fnuz else v

    def round(self, x: np.ndarray, nan_sign: bool = False) -> np.ndarray:
        """Each of ``x`` (float64 holding float32 or fp16 values) as the pattern it rounds to."""
        table = self.values()[:self.largest + 1]  # increasing, all finite
        a = np.minimum(np.abs(np.nan_to_num(x, nan=0.0, posinf=np.inf, neginf=np.inf)), table[-1])
        hi = np.clip(np.searchsorted(table, a), 1, self.largest)
        lo = hi - 1
        d_lo, d_hi = a - table[lo], table[hi] - a
        tie_hi = np.ones_like(hi, bool) if self.away else (hi & 1) == 0
        code = np.where((d_hi < d_lo) | ((d_hi == d_lo) & tie_hi), hi, lo)
        code = np.where(a == table[-1], self.largest, code)
        negative = np.signbit(x)
        out = np.where(negative, code | 0x80, code)
        nan, inf = np.isnan(x), np.isinf(x)
        if self.fnuz:
            out = np.where(code == 0, 0, out)
            out = np.where(nan | inf, self.nan, out)
        elif self.nan is not None:
            out = np.where(nan, self.nan, out)
        else:
            out = np.where(nan, np.where(negative & nan_sign, self.largest | 0x80, self.largest), out)
        return out.astype(np.uint8)


SPECS = {"e4nv": (tl.float8e4nv, Spec(4, 3, 7, "nan", 0x7E, 0x7F)),
         "e5": (tl.float8e5, Spec(5, 2, 15, "inf", 0x7B, 0x7F)),
         "e4b8": (tl.float8e4b8, Spec(4, 3, 8, "normal", 0x7F, 0x80, fnuz=True)),
         "e5b16": (tl.float8e5b16, Spec(5, 2, 16, "normal", 0x7F, 0x80, fnuz=True)),
         "e4b15": (tl.float8e4b15, Spec(4, 3, 15, "normal", 0x7E, None, away=True))}


def _sample(spec: Spec, seed: int) -> np.ndarray:
    """float32 values: random at several scales, every finite value, every midpoint between
    neighbours and the float32 values next to it, and the specials."""
    rng = np.random.default_rng(seed)
    v = spec.values()[:spec.largest + 1]
    mids = ((v[1:] + v[:-1]) / 2).astype(np.float32)
    near = np.concatenate([mids, np.nextafter(mids, np.float32(0)), np.nextafter(mids, np.float32(np.inf))])
    top = v[-1]
    x = np.concatenate([rng.standard_normal(400) * s for s in (top * 1e-6, top * 1e-3, top * 0.1, top, top * 4)] +
                       [v, near, -near, [np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0, 3e38, -3e38, 1e-40]])
    return x.astype(np.float32)


@triton.jit
def fp8_encode_kernel(x_ptr, out_ptr, n, FMT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m).to(FMT).to(tl.uint8, bitcast=True), mask=m)


@cases("fp8-encode-fp32-{fmt}", fmt=list(SPECS))
def encode_fp32(dev: Device, fmt: str) -> list[Output]:
    dtype, spec = SPECS[fmt]
    x = _sample(spec, 1)
    out = dev.full(x.shape, 0x55, np.uint8)
    dev.launch(fp8_encode_kernel, (triton.cdiv(x.size, 1024),), dev.to_device(x), out, x.size, FMT=dtype, BLOCK=1024)
    return [Output("bits", dev.to_host(out), spec.round(x.astype(np.float64)))]


@cases("fp8-encode-fp16-{fmt}", fmt=list(SPECS))
def encode_fp16(dev: Device, fmt: str) -> list[Output]:
    dtype, spec = SPECS[fmt]
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)  # every pattern
    out = dev.full(x.shape, 0x55, np.uint8)
    dev.launch(fp8_encode_kernel, (triton.cdiv(x.size, 1024),), dev.to_device(x), out, x.size, FMT=dtype, BLOCK=1024)
    return [Output("bits", dev.to_host(out), spec.round(x.astype(np.float64), nan_sign=True))]


@triton.jit
def fp8_decode_kernel(bits_ptr, f32_ptr, f16_ptr, FMT: tl.constexpr):
    offs = tl.arange(0, 256)
    x = tl.load(bits_ptr + offs).to(FMT, bitcast=True)
    tl.store(f32_ptr + offs, x.to(tl.float32))
    tl.store(f16_ptr + offs, x.to(tl.float16))


@cases("fp8-decode-{fmt}", fmt=list(SPECS))
def decode(dev: Device, fmt: str) -> list[Output]:
    dtype, spec = SPECS[fmt]
    f32, f16 = dev.full((256,), 7, np.float32), dev.full((256,), 7, np.float16)
    dev.launch(fp8_decode_kernel, (1,), dev.to_device(np.arange(256, dtype=np.uint8)), f32, f16, FMT=dtype)
    want = spec.values()
    got32 = dev.to_host(f32).astype(np.float64)
    signs = (np.signbit(got32) != np.signbit(want)).astype(np.int64)  # zeros' and NaNs' (positive) too
    return [Output("fp32", got32, want, rtol=0, atol=0), Output("fp16", dev.to_host(f16), want, rtol=0, atol=0),
            Output("signs", signs, np.zeros(256, np.int64))]


@triton.jit
def fp8_arith_kernel(a_ptr, b_ptr, out_ptr, n, FMT: tl.constexpr, BLOCK: tl.constexpr):
    """a * b + 0.5 on fp8 values: each operation computed in fp32 and rounded back to FMT."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m).to(FMT, bitcast=True)
    b = tl.load(b_ptr + offs, mask=m).to(FMT, bitcast=True)
    c = a * b + 0.5
    tl.static_assert(c.dtype == FMT)
    tl.store(out_ptr + offs, c.to(tl.uint8, bitcast=True), mask=m)


@cases("fp8-arith-{fmt}", fmt=list(SPECS))
def arith(dev: Device, fmt: str) -> list[Output]:
    dtype, spec = SPECS[fmt]
    rng = np.random.default_rng(3)
    n = 3000
    a, b = rng.integers(0, 256, n).astype(np.uint8), rng.integers(0, 256, n).astype(np.uint8)
    out = dev.full((n,), 0x55, np.uint8)
    dev.launch(fp8_arith_kernel, (triton.cdiv(n, 1024),), dev.to_device(a), dev.to_device(b), out, n, FMT=dtype,
               BLOCK=1024)
    v = spec.values()
    with np.errstate(all="ignore"):
        p = spec.round(v[a] * v[b])  # exact in float64, rounded once to fp8
        c = spec.round((np.float32(v[p]) + np.float32(0.5)).astype(np.float64))  # fp32 sum, rounded to fp8
    return [Output("bits", dev.to_host(out), c)]


@triton.jit
def fp8_dot_kernel(a_ptr, b_ptr, c_ptr, FA: tl.constexpr, FB: tl.constexpr, M: tl.constexpr, N: tl.constexpr,
                   K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :]).to(FA, bitcast=True)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :]).to(FB, bitcast=True)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


@cases("fp8-dot-{fmt}", fmt=list(SPECS))
def dot(dev: Device, fmt: str) -> list[Output]:
    dtype, spec = SPECS[fmt]
    rng = np.random.default_rng(4)
    m, n, k = 32, 32, 64
    scale = spec.values()[spec.largest] / 8
    a = spec.round(rng.standard_normal((m, k)) * scale)
    b = spec.round(rng.standard_normal((k, n)) * scale)
    c = dev.full((m, n), np.nan, np.float32)
    dev.launch(fp8_dot_kernel, (1,), dev.to_device(a), dev.to_device(b), c, FA=dtype, FB=dtype, M=m, N=n, K=k)
    v = spec.values()
    want = v[a] @ v[b]
    return [Output("c", dev.to_host(c), want, rtol=1e-5, atol=1e-6 * float(np.abs(want).max()))]


@triton.jit
def fp8_abs_kernel(bits_ptr, out_ptr, FMT: tl.constexpr):
    offs = tl.arange(0, 256)
    x = tl.load(bits_ptr + offs).to(FMT, bitcast=True)
    tl.store(out_ptr + offs, tl.abs(x).to(tl.uint8, bitcast=True))


@cases("fp8-abs-{fmt}", fmt=list(SPECS))
def absolute(dev: Device, fmt: str) -> list[Output]:
    """``tl.abs`` of every pattern: its sign bit cleared, as Triton's (through the value, e4b15's
    largest pattern would saturate); fnuz's NaN (0x80) stays NaN, and its zero zero."""
    dtype, spec = SPECS[fmt]
    bits = np.arange(256, dtype=np.uint8)
    out = dev.full((256,), 0x55, np.uint8)
    dev.launch(fp8_abs_kernel, (1,), dev.to_device(bits), out, FMT=dtype)
    want = bits & 0x7F
    if spec.fnuz:
        want = np.where(bits == 0x80, 0x80, want)
    elif spec.nan is not None:  # a NaN's sign: any NaN pattern will do
        want = np.where(np.isnan(spec.values()), spec.nan, want)
    got = dev.to_host(out)
    if spec.nan is not None and not spec.fnuz:
        got = np.where(np.isnan(spec.values()[got]), spec.nan, got)
    return [Output("bits", got.astype(np.int64), want.astype(np.int64))]
