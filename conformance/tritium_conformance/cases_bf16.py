"""Conformance cases of bf16: conversion from fp32 (every kind of tie and its neighbours, overflow,
infinities, signed zeros, subnormals, NaN) and arithmetic, each operation rounded to bf16 once (as
computed in fp32 and rounded back, which fp32's precision makes the same), division in fp32 as
Triton divides 16-bit floats.

The reference is written here from the format's definition (fp32's top 16 bits; round to nearest,
ties to even, on the dropped 16 bits), not with a bf16 library."""

from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl

from .suite import Device, Output, cases


def round_bits(x: np.ndarray) -> np.ndarray:
    """float32 values as bf16 values (float64): to nearest, ties to even; a NaN stays a NaN."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    kept, dropped = bits >> 16, bits & 0xFFFF
    up = (dropped > 0x8000) | ((dropped == 0x8000) & (kept & 1 == 1))
    rounded = ((kept + up) << 16).astype(np.uint32).view(np.float32).astype(np.float64)
    return np.where(np.isnan(x), np.nan, rounded)


def _sample(seed: int) -> np.ndarray:
    """float32 values: random at many scales, ties between bf16 neighbours of both parities and
    the float32 values next to them, the largest finite bf16 and past it, subnormals, specials."""
    rng = np.random.default_rng(seed)
    kept = rng.integers(0, 1 << 16, 300).astype(np.uint32) << 16
    ties = (kept | 0x8000).view(np.float32)
    near = np.concatenate([ties, np.nextafter(ties, np.float32(0)), np.nextafter(ties, np.float32(np.inf))])
    largest = np.array([0x7F7F0000, 0x7F7F7FFF, 0x7F7F8000, 0x7F7FFFFF], np.uint32).view(np.float32)
    x = np.concatenate([rng.standard_normal(300) * s for s in (1e-40, 1e-20, 1.0, 1e20, 3e38)] +
                       [near, largest, -largest, [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-45, -1e-45]])
    return x.astype(np.float32)


@triton.jit
def bf16_round_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m).to(tl.bfloat16).to(tl.float32), mask=m)


def _signs(got: np.ndarray, want: np.ndarray) -> Output:
    wrong = (np.signbit(got) != np.signbit(want)) & ~np.isnan(want)
    return Output("signs", wrong.astype(np.int64), np.zeros(want.shape, np.int64))


@cases("bf16-round-fp32")
def round_fp32(dev: Device) -> list[Output]:
    x = _sample(11)
    out = dev.full(x.shape, 7, np.float32)
    dev.launch(bf16_round_kernel, (triton.cdiv(x.size, 512),), dev.to_device(x), out, x.size, BLOCK=512)
    got, want = dev.to_host(out).astype(np.float64), round_bits(x)
    return [Output("values", got, want, rtol=0, atol=0), _signs(got, want)]


@triton.jit
def bf16_arith_kernel(a_ptr, b_ptr, c_ptr, fma_ptr, div_ptr, exp_ptr, int_ptr, n, BLOCK: tl.constexpr):
    """``a * b + c`` and ``exp(a)`` of bf16 blocks (bf16 results of each operation), ``a / b``
    (fp32, as Triton divides 16-bit floats) and ``c`` as an int32 (toward zero)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m).to(tl.bfloat16)
    b = tl.load(b_ptr + offs, mask=m).to(tl.bfloat16)
    c = tl.load(c_ptr + offs, mask=m).to(tl.bfloat16)
    p = a * b
    tl.static_assert(p.dtype == tl.bfloat16)
    tl.store(fma_ptr + offs, (p + c).to(tl.float32), mask=m)
    q = a / b
    tl.static_assert(q.dtype == tl.float32)
    tl.store(div_ptr + offs, q, mask=m)
    tl.store(exp_ptr + offs, tl.exp(a.to(tl.float32)).to(tl.bfloat16).to(tl.float32), mask=m)
    tl.store(int_ptr + offs, c.to(tl.int32), mask=m)


@cases("bf16-arith")
def arith(dev: Device) -> list[Output]:
    rng = np.random.default_rng(12)
    n = 2000
    a, b, c = (round_bits(rng.standard_normal(n).astype(np.float32) * s) for s in (4.0, 4.0, 16.0))
    outs = [dev.full((n,), 7, np.float32) for _ in range(3)] + [dev.full((n,), 7, np.int32)]
    dev.launch(bf16_arith_kernel, (triton.cdiv(n, 512),), *(dev.to_device(v.astype(np.float32)) for v in (a, b, c)),
               *outs, n, BLOCK=512)
    p = round_bits(a * b)  # exact in float64 (8-bit significands), rounded once
    fma = round_bits(p + c)  # the fp32 sum's rounding is below bf16's: one rounding
    div = (a.astype(np.float32) / b.astype(np.float32)).astype(np.float64)
    got = [dev.to_host(o).astype(np.float64) for o in outs[:3]]
    exp = np.exp(a)
    exp_ok = np.abs(got[2] - exp) <= 2.0 ** -8 * np.abs(exp) * (1 + 1e-6)  # within bf16's rounding of exp
    return [Output("a*b+c", got[0], fma, rtol=0, atol=0), Output("a/b", got[1], div, rtol=0, atol=0),
            Output("exp", exp_ok.astype(np.int64), np.ones(n, np.int64)),
            Output("int", dev.to_host(outs[3]), np.trunc(c).astype(np.int32))]
