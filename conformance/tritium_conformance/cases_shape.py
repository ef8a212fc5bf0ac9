"""Conformance cases of the shape builtins (``trans``/``permute``, ``reshape``/``view``/``ravel``,
``join``/``split``, ``interleave``, ``cat``, ``flip``) in the kernels they appear in: tiled
transposes with ragged edges, reductions over reshaped blocks, complex arithmetic on interleaved
pairs, loads through re-indexed pointers. References are numpy's re-indexing of the inputs
(exact), float64 where the kernel computes."""

from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl

from .suite import Device, Output, cases, rng_for

NP = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "fp16": np.float16,
      "fp32": np.float32, "fp64": np.float64}


def values(case_id: str, shape, dtype: str) -> np.ndarray:
    rng = rng_for(case_id)
    t = NP[dtype]
    if np.issubdtype(t, np.integer):
        info = np.iinfo(t)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), shape).astype(t)
    return (rng.standard_normal(shape) * 10).astype(t)


def poison(dtype: str):
    return np.nan if dtype.startswith("fp") else -77


# -- kernels ------------------------------------------------------------------------------------------


@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """``out = x.T`` tile by tile: the tile, its mask and its pointers are transposed with it."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)
    tl.store(out_ptr + cols[:, None] * M + rows[None, :], tl.trans(x), mask=tl.trans(mask))


@triton.jit
def reshape_rowsum_kernel(x_ptr, out_ptr, n_rows, R: tl.constexpr, C: tl.constexpr, VIEW: tl.constexpr):
    """Sums of rows of ``C`` elements: a flat block reshaped to (R, C), reduced along 1."""
    offs = tl.program_id(0) * (R * C) + tl.arange(0, R * C)
    x = tl.load(x_ptr + offs, mask=offs < n_rows * C, other=0)
    if VIEW:
        x = x.view(R, C)
    else:
        x = tl.reshape(x, (R, C))
    rows = tl.program_id(0) * R + tl.arange(0, R)
    tl.store(out_ptr + rows, tl.sum(x, axis=1), mask=rows < n_rows)


@triton.jit
def complex_mul_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Products of complex numbers stored as (re, im) pairs: split, arithmetic, join."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offs = i[:, None] * 2 + tl.arange(0, 2)[None, :]
    m = offs < 2 * n
    ar, ai = tl.split(tl.load(a_ptr + offs, mask=m, other=0))
    br, bi = tl.load(b_ptr + offs, mask=m, other=0).split()
    tl.store(out_ptr + offs, tl.join(ar * br - ai * bi, ar * bi + ai * br), mask=m)


@triton.jit
def pairs_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr, OP: tl.constexpr):
    """``tl.interleave(a, b)`` or ``tl.cat(a, b)`` of one block each, stored as 2 * BLOCK elements."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + i, mask=i < n, other=0)
    b = tl.load(b_ptr + i, mask=i < n, other=0)
    if OP == "interleave":
        r = tl.interleave(a, b)
    else:
        r = tl.cat(a, b, can_reorder=True)
    o = tl.program_id(0) * (2 * BLOCK) + tl.arange(0, 2 * BLOCK)
    tl.store(out_ptr + o, r, mask=o < 2 * n)


@triton.jit
def flip_kernel(x_ptr, out_ptr, N: tl.constexpr, BM: tl.constexpr, DIM: tl.constexpr):
    """Each tile of ``BM`` rows of ``N`` elements reversed along ``DIM``."""
    offs = (tl.program_id(0) * BM + tl.arange(0, BM))[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out_ptr + offs, tl.flip(tl.load(x_ptr + offs), DIM))


@triton.jit
def permute3_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D0: tl.constexpr,
                    D1: tl.constexpr, D2: tl.constexpr):
    """Each program permutes one (A, B, C) block of a batch."""
    base = tl.program_id(0) * (A * B * C)
    offs = (tl.arange(0, A)[:, None, None] * (B * C) + tl.arange(0, B)[None, :, None] * C
            + tl.arange(0, C)[None, None, :])
    y = tl.permute(tl.load(x_ptr + base + offs), D0, D1, D2)
    P1, P2 = y.shape[1], y.shape[2]
    out = (tl.arange(0, y.shape[0])[:, None, None] * (P1 * P2) + tl.arange(0, P1)[None, :, None] * P2
           + tl.arange(0, P2)[None, None, :])
    tl.store(out_ptr + base + out, y)


@triton.jit
def strided_pointers_kernel(x_ptr, out_ptr, stride, R: tl.constexpr, C: tl.constexpr, OP: tl.constexpr):
    """A (R, C) block of pointers into rows ``stride`` apart, re-indexed, then loaded through."""
    p = x_ptr + tl.arange(0, R)[:, None] * stride + tl.arange(0, C)[None, :]
    if OP == "ravel":
        v = tl.load(tl.ravel(p))
    elif OP == "trans":
        v = tl.ravel(tl.load(tl.trans(p)))
    else:
        v = tl.ravel(tl.load(tl.flip(p, 0)))
    tl.store(out_ptr + tl.arange(0, R * C), v)


@triton.jit
def split_scalars_kernel(x_ptr, out_ptr):
    a, b = tl.split(tl.load(x_ptr + tl.arange(0, 2)))
    c = tl.reshape(tl.load(x_ptr + 2 + tl.arange(0, 1)), ())
    tl.store(out_ptr, a * 10000 + b * 100 + c)


# -- cases --------------------------------------------------------------------------------------------
TRANSPOSE_SHAPES = {"1x1": (1, 1), "37x45": (37, 45), "64x64": (64, 64), "100x3": (100, 3)}


@cases("shape-trans-{dtype}-{shape}", dtype=["fp32", "fp16", "int8", "int64"], shape=TRANSPOSE_SHAPES)
def transpose(dev: Device, dtype: str, shape: tuple[int, int]) -> list[Output]:
    M, N = shape
    x = values(f"trans-{dtype}-{M}x{N}", (M, N), dtype)
    out = dev.full((N, M), poison(dtype), NP[dtype])
    dev.launch(transpose_kernel, (triton.cdiv(M, 32), triton.cdiv(N, 16)), dev.to_device(x), out, M, N, BM=32, BN=16)
    return [Output("out", dev.to_host(out), x.T)]


@cases("shape-reshape-sum-{dtype}-{rc}-rows{rows}", dtype=["fp32", "int32", "fp64"],
       rc={"4x8": (4, 8), "16x16": (16, 16), "1x32": (1, 32), "32x1": (32, 1)}, rows=[1, 45])
def reshape_rowsum(dev: Device, dtype: str, rc: tuple[int, int], rows: int) -> list[Output]:
    R, C = rc
    x = values(f"reshape-{dtype}-{R}x{C}-{rows}", rows * C, dtype)
    out = dev.full(rows, poison(dtype), NP[dtype])
    dev.launch(reshape_rowsum_kernel, (triton.cdiv(rows, R),), dev.to_device(x), out, rows, R=R, C=C, VIEW=False)
    want = x.reshape(rows, C).astype(np.float64 if dtype.startswith("fp") else np.int64).sum(1)
    return [Output("out", dev.to_host(out), want, rtol=1e-5 if dtype == "fp32" else None)]


@cases("shape-view-sum-fp32")
def view_rowsum(dev: Device) -> list[Output]:
    x = values("view-fp32", 64 * 8, "fp32")
    out = dev.full(64, np.nan, np.float32)
    dev.launch(reshape_rowsum_kernel, (4,), dev.to_device(x), out, 64, R=16, C=8, VIEW=True)
    return [Output("out", dev.to_host(out), x.reshape(64, 8).astype(np.float64).sum(1), rtol=1e-5)]


@cases("shape-join-split-complex-{dtype}-n{n}", dtype=["fp32", "fp64"], n=[1, 100, 1000])
def complex_mul(dev: Device, dtype: str, n: int) -> list[Output]:
    a, b = (values(f"complex-{dtype}-{n}-{k}", (n, 2), dtype) for k in "ab")
    out = dev.full((n, 2), np.nan, NP[dtype])
    dev.launch(complex_mul_kernel, (triton.cdiv(n, 64),), dev.to_device(a), dev.to_device(b), out, n, BLOCK=64)
    za = a[:, 0].astype(np.float64) + 1j * a[:, 1]
    zb = b[:, 0].astype(np.float64) + 1j * b[:, 1]
    z = za * zb
    return [Output("out", dev.to_host(out), np.stack([z.real, z.imag], -1), rtol=1e-5 if dtype == "fp32" else 1e-12,
                   atol=1e-3 if dtype == "fp32" else 1e-9)]


@cases("shape-{op}-{dtype}-n{n}", op=["interleave", "cat"], dtype=["int8", "fp16", "int64"], n=[1, 64, 300])
def pairs(dev: Device, op: str, dtype: str, n: int) -> list[Output]:
    BLOCK = 64
    a, b = (values(f"{op}-{dtype}-{n}-{k}", n, dtype) for k in "ab")
    out = dev.full(2 * n, poison(dtype), NP[dtype])
    blocks = triton.cdiv(n, BLOCK)
    dev.launch(pairs_kernel, (blocks,), dev.to_device(a), dev.to_device(b), out, n, BLOCK=BLOCK, OP=op)
    pad = lambda v: np.concatenate([v, np.zeros(blocks * BLOCK - n, v.dtype)]).reshape(blocks, BLOCK)  # noqa: E731
    if op == "interleave":
        want = np.stack([pad(a), pad(b)], -1).reshape(-1)
    else:
        want = np.concatenate([pad(a), pad(b)], 1).reshape(-1)
    return [Output("out", dev.to_host(out), want[:2 * n])]


@cases("shape-flip-{dtype}-dim{dim}-{shape}", dtype=["fp32", "int8", "int16", "fp64"], dim=[0, 1],
       shape={"64x16": (64, 16), "8x128": (8, 128)})
def flip(dev: Device, dtype: str, dim: int, shape: tuple[int, int]) -> list[Output]:
    M, N = shape
    BM = 8
    x = values(f"flip-{dtype}-{dim}-{M}x{N}", (M, N), dtype)
    out = dev.full((M, N), poison(dtype), NP[dtype])
    dev.launch(flip_kernel, (M // BM,), dev.to_device(x), out, N=N, BM=BM, DIM=dim)
    want = np.flip(x.reshape(M // BM, BM, N), dim + 1).reshape(M, N)
    return [Output("out", dev.to_host(out), want)]


@cases("shape-permute-{dims}-{dtype}", dims={"021": (0, 2, 1), "102": (1, 0, 2), "120": (1, 2, 0),
                                             "201": (2, 0, 1), "210": (2, 1, 0)}, dtype=["fp32", "int64"])
def permute3(dev: Device, dims: tuple[int, int, int], dtype: str) -> list[Output]:
    G, A, B, C = 3, 2, 4, 8
    x = values(f"permute-{dims}-{dtype}", (G, A, B, C), dtype)
    out = dev.full(x.size, poison(dtype), NP[dtype])
    dev.launch(permute3_kernel, (G,), dev.to_device(x), out, A=A, B=B, C=C, D0=dims[0], D1=dims[1], D2=dims[2])
    want = np.stack([np.transpose(x[g], dims) for g in range(G)]).reshape(-1)
    return [Output("out", dev.to_host(out), want)]


@cases("shape-pointers-{op}", op=["ravel", "trans", "flip"])
def strided_pointers(dev: Device, op: str) -> list[Output]:
    R, C, stride = 8, 16, 21
    x = values(f"pointers-{op}", (R, stride), "fp32")
    out = dev.full(R * C, np.nan, np.float32)
    dev.launch(strided_pointers_kernel, (1,), dev.to_device(x), out, stride, R=R, C=C, OP=op)
    block = x[:, :C]
    want = {"ravel": block, "trans": block.T, "flip": block[::-1]}[op].reshape(-1)
    return [Output("out", dev.to_host(out), want)]


@cases("shape-split-to-scalars")
def split_scalars(dev: Device) -> list[Output]:
    x = np.array([12, 34, 56], np.int32)
    out = dev.full(1, -1, np.int32)
    dev.launch(split_scalars_kernel, (1,), dev.to_device(x), out)
    return [Output("out", dev.to_host(out), np.array([123456], np.int32))]
