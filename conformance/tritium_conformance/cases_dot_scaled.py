"""Conformance cases of ``tl.dot_scaled``: every operand format (e2m1 packed along K or along M/N,
e4m3, e5m2, bf16, fp16), mixed formats, e8m0 scales or none, an accumulator. References in numpy
float64 from the formats' definitions (OCP microscaling formats): the values decoded from their
bits, times ``2 ** (scale - 127)`` per group of 32 K elements, multiplied exactly."""

from __future__ import annotations

import zlib

import numpy as np

import tritium as triton
import tritium.language as tl

from .suite import Device, Output, cases

GROUP = 32
_E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


# -- formats, from their bits -----------------------------------------------------------------------
def e2m1_values(codes: np.ndarray) -> np.ndarray:
    return np.where(codes & 8, -1.0, 1.0) * _E2M1[codes & 7]


def minifloat_values(bits: np.ndarray, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """A sign, ``exponent_bits`` (bias 2**(e-1) - 1) and ``mantissa_bits``, with subnormals."""
    bits = bits.astype(np.int64)
    bias = (1 << (exponent_bits - 1)) - 1
    e = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1)
    m = (bits & ((1 << mantissa_bits) - 1)) / (1 << mantissa_bits)
    magnitude = np.where(e == 0, m * 2.0 ** (1 - bias), (1 + m) * 2.0 ** (e - bias))
    return np.where(bits >> (exponent_bits + mantissa_bits), -magnitude, magnitude)


def _operand(rng: np.random.Generator, fmt: str, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(the values as float64, their codes: one per element; e2m1 packs later)."""
    if fmt == "e2m1":
        codes = rng.integers(0, 16, shape).astype(np.uint8)
        return e2m1_values(codes), codes
    if fmt == "e4m3":
        codes = rng.integers(0, 256, shape).astype(np.uint8)
        codes[(codes & 0x7F) == 0x7F] = 0x3C  # not the NaN codes
        return minifloat_values(codes, 4, 3), codes
    if fmt == "e5m2":
        codes = rng.integers(0, 256, shape).astype(np.uint8)
        codes[(codes & 0x7C) == 0x7C] = 0x3C  # not inf or NaN
        return minifloat_values(codes, 5, 2), codes
    if fmt == "bf16":
        bits = (rng.standard_normal(shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64), bits
    values = rng.standard_normal(shape).astype(np.float16)
    return values.astype(np.float64), values


def _pack_e2m1(codes: np.ndarray, dim: int) -> np.ndarray:
    """Pairs along ``dim``: the lower index in the low nibble."""
    lo, hi = (codes[0::2], codes[1::2]) if dim == 0 else (codes[:, 0::2], codes[:, 1::2])
    return (lo | (hi << 4)).astype(np.uint8)


# -- kernels -----------------------------------------------------------------------------------------
@triton.jit
def _tile(ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    return tl.load(ptr + tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :])


@triton.jit
def dot_scaled_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, acc_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr,
                      K: tl.constexpr, AR: tl.constexpr, AC: tl.constexpr, BR: tl.constexpr, BC: tl.constexpr,
                      A_FMT: tl.constexpr, B_FMT: tl.constexpr, A_PACK: tl.constexpr, B_PACK: tl.constexpr,
                      ACC: tl.constexpr):
    """``c = dot_scaled(a, sa, b, sb[, acc])`` on one program; a is stored [AR, AC], b [BR, BC]."""
    a, b = _tile(a_ptr, AR, AC), _tile(b_ptr, BR, BC)
    sa, sb = _tile(sa_ptr, M, K // 32), _tile(sb_ptr, N, K // 32)
    if ACC:
        c = tl.dot_scaled(a, sa, A_FMT, b, sb, B_FMT, _tile(acc_ptr, M, N), lhs_k_pack=A_PACK, rhs_k_pack=B_PACK)
    else:
        c = tl.dot_scaled(a, sa, A_FMT, b, sb, B_FMT, lhs_k_pack=A_PACK, rhs_k_pack=B_PACK)
    tl.store(c_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


@triton.jit
def _tile3(ptr, B: tl.constexpr, ROWS: tl.constexpr, COLS: tl.constexpr):
    return tl.load(ptr + tl.arange(0, B)[:, None, None] * (ROWS * COLS) + tl.arange(0, ROWS)[None, :, None] * COLS
                   + tl.arange(0, COLS)[None, None, :])


@triton.jit
def dot_scaled_batched_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, acc_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr,
                              N: tl.constexpr, K: tl.constexpr, AR: tl.constexpr, AC: tl.constexpr,
                              BR: tl.constexpr, BC: tl.constexpr, A_FMT: tl.constexpr, B_FMT: tl.constexpr,
                              A_PACK: tl.constexpr, B_PACK: tl.constexpr, ACC: tl.constexpr):
    """``dot_scaled`` of [B, ...] operands, scales and accumulator on one program."""
    a, b = _tile3(a_ptr, B, AR, AC), _tile3(b_ptr, B, BR, BC)
    sa, sb = _tile3(sa_ptr, B, M, K // 32), _tile3(sb_ptr, B, N, K // 32)
    if ACC:
        c = tl.dot_scaled(a, sa, A_FMT, b, sb, B_FMT, _tile3(acc_ptr, B, M, N), lhs_k_pack=A_PACK,
                          rhs_k_pack=B_PACK)
    else:
        c = tl.dot_scaled(a, sa, A_FMT, b, sb, B_FMT, lhs_k_pack=A_PACK, rhs_k_pack=B_PACK)
    tl.store(c_ptr + tl.arange(0, B)[:, None, None] * (M * N) + tl.arange(0, M)[None, :, None] * N
             + tl.arange(0, N)[None, None, :], c)


@triton.jit
def dot_unscaled_kernel(a_ptr, sb_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                        FMT: tl.constexpr, RHS_SCALED: tl.constexpr):
    """``dot_scaled`` with no lhs scale, and a rhs scale or none."""
    a, b = _tile(a_ptr, M, K), _tile(b_ptr, K, N)
    if RHS_SCALED:
        c = tl.dot_scaled(a, None, FMT, b, _tile(sb_ptr, N, K // 32), FMT)
    else:
        c = tl.dot_scaled(a, None, FMT, b, None, FMT)
    tl.store(c_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


# -- cases -------------------------------------------------------------------------------------------
def _tolerance(a: np.ndarray, b: np.ndarray) -> dict:
    """fp32 accumulation of exact products: relative to the sum of the magnitudes."""
    return {"rtol": 1e-5, "atol": 1e-6 * float((np.abs(a) @ np.abs(b)).max() + 1)}


def _scales(rng: np.random.Generator, rows: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(e8m0 codes [rows, k // 32], the factors they give, repeated over their groups)."""
    codes = rng.integers(120, 135, (rows, k // GROUP)).astype(np.uint8)
    return codes, np.repeat(2.0 ** (codes.astype(np.float64) - 127), GROUP, axis=1)


#: name -> (lhs format, rhs format, lhs packed along K, rhs packed along K, accumulator)
SCALED = {
    "e2m1": ("e2m1", "e2m1", True, True, False), "e4m3": ("e4m3", "e4m3", True, True, False),
    "e5m2": ("e5m2", "e5m2", True, True, False), "bf16": ("bf16", "bf16", True, True, False),
    "fp16": ("fp16", "fp16", True, True, False), "e2m1-e4m3": ("e2m1", "e4m3", True, True, False),
    "bf16-e5m2": ("bf16", "e5m2", True, True, False), "e2m1-lhs-along-m": ("e2m1", "e2m1", False, True, False),
    "e2m1-rhs-along-n": ("e2m1", "e2m1", True, False, False), "e2m1-along-m-n": ("e2m1", "e2m1", False, False, False),
    "e4m3-acc": ("e4m3", "e4m3", True, True, True),
}


@cases("dot-scaled-{name}", name=list(SCALED))
def dot_scaled(dev: Device, name: str) -> list[Output]:
    a_fmt, b_fmt, a_pack, b_pack, with_acc = SCALED[name]
    m, n, k = 32, 32, 64
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    a, a_codes = _operand(rng, a_fmt, (m, k))
    b, b_codes = _operand(rng, b_fmt, (k, n))
    if a_fmt == "e2m1":
        a_codes = _pack_e2m1(a_codes, 1 if a_pack else 0)
    if b_fmt == "e2m1":
        b_codes = _pack_e2m1(b_codes, 0 if b_pack else 1)
    sa, fa = _scales(rng, m, k)
    sb, fb = _scales(rng, n, k)
    acc = rng.standard_normal((m, n)).astype(np.float32)
    want = (a * fa) @ (b * fb.T) + (acc if with_acc else 0)
    out = dev.full((m, n), np.nan, np.float32)
    dev.launch(dot_scaled_kernel, (1,), dev.to_device(a_codes), dev.to_device(sa), dev.to_device(b_codes),
               dev.to_device(sb), dev.to_device(acc), out, M=m, N=n, K=k, AR=a_codes.shape[0], AC=a_codes.shape[1],
               BR=b_codes.shape[0], BC=b_codes.shape[1], A_FMT=a_fmt, B_FMT=b_fmt, A_PACK=a_pack, B_PACK=b_pack,
               ACC=with_acc)
    return [Output("product", dev.to_host(out), want, **_tolerance(a * fa, b * fb.T))]


#: name -> (lhs format, rhs format, lhs packed along K, rhs packed along K, accumulator), batched
BATCHED = {"e4m3": ("e4m3", "e4m3", True, True, False), "e2m1-bf16-acc": ("e2m1", "bf16", True, True, True),
           "e2m1-along-m-n": ("e2m1", "e2m1", False, False, False)}


@cases("dot-scaled-batched-{name}", name=list(BATCHED))
def dot_scaled_batched(dev: Device, name: str) -> list[Output]:
    a_fmt, b_fmt, a_pack, b_pack, with_acc = BATCHED[name]
    nb, m, n, k = 2, 16, 32, 64
    rng = np.random.default_rng(zlib.crc32(b"batched-" + name.encode()))
    parts = []
    for _ in range(nb):
        a, a_codes = _operand(rng, a_fmt, (m, k))
        b, b_codes = _operand(rng, b_fmt, (k, n))
        if a_fmt == "e2m1":
            a_codes = _pack_e2m1(a_codes, 1 if a_pack else 0)
        if b_fmt == "e2m1":
            b_codes = _pack_e2m1(b_codes, 0 if b_pack else 1)
        (sa, fa), (sb, fb) = _scales(rng, m, k), _scales(rng, n, k)
        parts.append((a * fa, b * fb.T, a_codes, b_codes, sa, sb))
    a_s, b_s, a_codes, b_codes, sa, sb = (np.stack(p) for p in zip(*parts))
    acc = rng.standard_normal((nb, m, n)).astype(np.float32)
    want = a_s @ b_s + (acc if with_acc else 0)
    out = dev.full((nb, m, n), np.nan, np.float32)
    dev.launch(dot_scaled_batched_kernel, (1,), dev.to_device(a_codes), dev.to_device(sa), dev.to_device(b_codes),
               dev.to_device(sb), dev.to_device(acc), out, B=nb, M=m, N=n, K=k, AR=a_codes.shape[1],
               AC=a_codes.shape[2], BR=b_codes.shape[1], BC=b_codes.shape[2], A_FMT=a_fmt, B_FMT=b_fmt,
               A_PACK=a_pack, B_PACK=b_pack, ACC=with_acc)
    tol = _tolerance(np.concatenate(list(a_s), axis=1), np.concatenate(list(b_s), axis=0))
    return [Output("product", dev.to_host(out), want, **tol)]


@cases("dot-scaled-unscaled-{fmt}-rhs{rhs}", fmt=["e4m3", "bf16"], rhs=["none", "scaled"])
def dot_unscaled(dev: Device, fmt: str, rhs: str) -> list[Output]:
    m, n, k = 16, 32, 32
    rng = np.random.default_rng(7)
    a, a_codes = _operand(rng, fmt, (m, k))
    b, b_codes = _operand(rng, fmt, (k, n))
    sb, fb = _scales(rng, n, k)
    if rhs == "scaled":
        b = b * fb.T
    out = dev.full((m, n), np.nan, np.float32)
    dev.launch(dot_unscaled_kernel, (1,), dev.to_device(a_codes), dev.to_device(sb), dev.to_device(b_codes), out,
               M=m, N=n, K=k, FMT=fmt, RHS_SCALED=rhs == "scaled")
    return [Output("product", dev.to_host(out), a @ b, **_tolerance(a, b))]
