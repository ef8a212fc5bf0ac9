"""Conformance cases of ``tl.map_elementwise`` and their kernels: per-element branches (Triton's
SELU example) and loops, several results of broadcast arguments, ``pack``, across dtypes and sizes
that are not a multiple of the block. References: numpy in float64, exact for integers."""

from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl

from .suite import Device, Output, cases, rng_for

POISON = 77  # what unwritten outputs hold
NP = {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64}


# -- scalar functions -------------------------------------------------------------------------------
@triton.jit
def _selu(x, alpha):
    if x > 0:
        return x
    else:  # tl.exp takes fp32 and fp64 (as Triton's): fp16 goes through fp32
        return alpha * (tl.exp(x.to(tl.float32) if x.dtype == tl.float16 else x).to(x.dtype) - 1)


@triton.jit
def _gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


@triton.jit
def _minmax(a, b):
    if a < b:
        return a, b
    return b, a


@triton.jit
def _pairs(x0, x1, y0, y1):
    return x0 * y1 - x1 * y0, x0 * y0 + x1 * y1


# -- kernels ----------------------------------------------------------------------------------------
@triton.jit
def selu_kernel(x_ptr, y_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.map_elementwise(_selu, x, alpha.to(x.dtype)), mask=mask)


@triton.jit
def gcd_kernel(a_ptr, b_ptr, g_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=1)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    tl.store(g_ptr + offs, tl.map_elementwise(_gcd, a, b), mask=mask)


@triton.jit
def minmax_kernel(a_ptr, b_ptr, lo_ptr, hi_ptr, R: tl.constexpr, C: tl.constexpr):
    """A column against a row: both results on the broadcast [R, C] block."""
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    lo, hi = tl.map_elementwise(_minmax, tl.load(a_ptr + r), tl.load(b_ptr + c))
    tl.store(lo_ptr + r * C + c, lo)
    tl.store(hi_ptr + r * C + c, hi)


@triton.jit
def pairs_kernel(x_ptr, y_ptr, u_ptr, BLOCK: tl.constexpr):
    """pack=2: each call takes two consecutive elements of x and of y and returns two of u."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    u = tl.map_elementwise(_pairs, tl.load(x_ptr + offs), tl.load(y_ptr + offs), pack=2)
    tl.store(u_ptr + offs, u)


# -- cases ------------------------------------------------------------------------------------------
@cases("map_elementwise-selu-{dtype}-n{n}", dtype=["fp16", "fp32", "fp64"], n=[1, 1000])
def selu(dev: Device, dtype: str, n: int) -> list[Output]:
    x = rng_for(f"map_elementwise-selu-{dtype}-{n}").normal(0, 2, n).astype(NP[dtype])
    y = dev.full(n, POISON, NP[dtype])
    dev.launch(selu_kernel, (triton.cdiv(n, 256),), dev.to_device(x), y, 1.5, n, BLOCK=256)
    x64 = x.astype(np.float64)
    return [Output("y", dev.to_host(y), np.where(x64 > 0, x64, 1.5 * np.expm1(x64)))]


@cases("map_elementwise-gcd-{dtype}-n{n}", dtype=["int32", "int64"], n=[7, 500])
def gcd(dev: Device, dtype: str, n: int) -> list[Output]:
    rng = rng_for(f"map_elementwise-gcd-{dtype}-{n}")
    a, b = (rng.integers(1, 10000, n).astype(dtype) for _ in range(2))
    g = dev.full(n, POISON, dtype)
    dev.launch(gcd_kernel, (triton.cdiv(n, 128),), dev.to_device(a), dev.to_device(b), g, n, BLOCK=128)
    return [Output("g", dev.to_host(g), np.gcd(a, b))]


@cases("map_elementwise-two_results-{dtype}", dtype=["int32", "float32"])
def two_results(dev: Device, dtype: str) -> list[Output]:
    R, C = 16, 32
    rng = rng_for(f"map_elementwise-minmax-{dtype}")
    a, b = rng.integers(-50, 50, R).astype(dtype), rng.integers(-50, 50, C).astype(dtype)
    lo, hi = dev.full((R, C), POISON, dtype), dev.full((R, C), POISON, dtype)
    dev.launch(minmax_kernel, (1,), dev.to_device(a), dev.to_device(b), lo, hi, R=R, C=C)
    return [Output("lo", dev.to_host(lo), np.minimum(a[:, None], b[None, :])),
            Output("hi", dev.to_host(hi), np.maximum(a[:, None], b[None, :]))]


@cases("map_elementwise-pack2-block{block}", block=[32, 512])
def pack2(dev: Device, block: int) -> list[Output]:
    n = 2 * block
    rng = rng_for(f"map_elementwise-pack2-{block}")
    x, y = (rng.integers(-100, 100, n).astype(np.int32) for _ in range(2))
    u = dev.full(n, POISON, np.int32)
    dev.launch(pairs_kernel, (2,), dev.to_device(x), dev.to_device(y), u, BLOCK=block)
    x0, x1, y0, y1 = x[0::2], x[1::2], y[0::2], y[1::2]
    want = np.stack([x0 * y1 - x1 * y0, x0 * y0 + x1 * y1], axis=1).reshape(-1)
    return [Output("u", dev.to_host(u), want)]
