"""Conformance cases of ``tl.dot``: dtypes (fp32, fp16 into fp32 or fp16, fp64, int8 -> int32),
shapes (square, wide, tall, one row, ragged sizes masked inside power-of-two blocks, 3-D batches),
with and without an accumulator, every input precision, and Triton's tutorial matmul over several
programs.

References are float64 (exact integers for int8). Tolerances bound the accumulated rounding:
``K + 1`` roundings of the accumulation type, relative to the largest ``|A| @ |B| + |C|``; fp32
products at the default or "tf32" precision may also round their operands to tf32 (2**-11 each),
as tensor cores do, and "bf16x3" and "bf16x6" drop their parts' smallest products.
"""

from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl

from .suite import Device, Output, cases, rng_for

EPS = {"fp16": 2.0**-11, "fp32": 2.0**-24, "fp64": 2.0**-53}
TF32 = 2 * 2.0**-11
#: the most each fp32 operand pair's product may be off, relative, at each input precision on
#: tensor cores: tf32 rounds both operands; bf16x3 drops the product of the second bf16 parts (and
#: the third parts), bf16x6 the products of the second and third; tf32x3's are below fp32's own
SPLIT_ERROR = {None: TF32, "tf32": TF32, "bf16x3": 2.0**-14, "bf16x6": 2.0**-21}


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, out_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               ACC: tl.constexpr, PREC: tl.constexpr, OUT: tl.constexpr):
    """``out[:M, :N] = a[:M, :K] @ b[:K, :N] (+ c)`` in one program of blocks padded with zeros."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0)
    c_offs = rm[:, None] * N + rn[None, :]
    c_mask = (rm[:, None] < M) & (rn[None, :] < N)
    if ACC:
        acc = tl.dot(a, b, tl.load(c_ptr + c_offs, mask=c_mask, other=0), input_precision=PREC, out_dtype=OUT)
    else:
        acc = tl.dot(a, b, input_precision=PREC, out_dtype=OUT)
    tl.store(out_ptr + c_offs, acc, mask=c_mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    """Triton's tutorial 03: grouped program order, masked K loop, fp32 accumulator, masked store."""
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def matmul_wt_kernel(a_ptr, w_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """``a @ w.T`` with w ``[N, K]`` loaded as stored and transposed for the product (``tl.trans``),
    a masked K loop."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + offs_m[:, None] * K + (k + offs_k)[None, :],
                    mask=(offs_m[:, None] < M) & ((k + offs_k)[None, :] < K), other=0.0)
        w = tl.load(w_ptr + offs_n[:, None] * K + (k + offs_k)[None, :],
                    mask=(offs_n[:, None] < N) & ((k + offs_k)[None, :] < K), other=0.0)
        acc = tl.dot(a, tl.trans(w), acc)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def batched_kernel(a_ptr, b_ptr, c_ptr, out_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr,
                   K: tl.constexpr):
    """``out[i] = a[i] @ b[i] + c[i]`` for each of B products, as one 3-D ``tl.dot``."""
    rb = tl.arange(0, B)[:, None, None]
    a = tl.load(a_ptr + rb * M * K + tl.arange(0, M)[None, :, None] * K + tl.arange(0, K)[None, None, :])
    b = tl.load(b_ptr + rb * K * N + tl.arange(0, K)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    c_offs = rb * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :]
    out = tl.dot(a, b, tl.load(c_ptr + c_offs), input_precision="ieee", out_dtype=c_ptr.dtype.element_ty)
    tl.store(out_ptr + c_offs, out)


def _block(n: int, least: int) -> int:
    """The power-of-two block that holds ``n`` (at least ``least``)."""
    return max(least, 1 << (n - 1).bit_length())


#: operand dtype, accumulator (output) dtype, out_dtype, tolerance per rounding
KINDS = {"fp32": (np.float32, np.float32, tl.float32, EPS["fp32"]),
         "fp16": (np.float16, np.float32, tl.float32, EPS["fp32"]),
         "fp16-out16": (np.float16, np.float16, tl.float16, EPS["fp16"]),
         "fp64": (np.float64, np.float64, tl.float64, EPS["fp64"]),
         "int8": (np.int8, np.int32, tl.int32, 0.0)}
SHAPES = {"16x16x16": (16, 16, 16), "32x64x32": (32, 64, 32), "64x16x32": (64, 16, 32), "1x16x32": (1, 16, 32),
          "ragged13x50x20": (13, 50, 20)}


def _operands(name: str, shape: tuple[int, int, int], kind: str):
    m, n, k = shape
    dtype, out_dtype = KINDS[kind][:2]
    rng = rng_for(name)
    if kind == "int8":
        a, b = (rng.integers(-128, 128, size=s).astype(np.int8) for s in ((m, k), (k, n)))
        c = rng.integers(-10000, 10000, size=(m, n)).astype(np.int32)
    else:
        a, b = (rng.standard_normal(s).astype(dtype) for s in ((m, k), (k, n)))
        c = rng.standard_normal((m, n)).astype(out_dtype)
    return a, b, c


def _run_dot(dev: Device, name: str, kind: str, shape, acc: bool, prec: str | None) -> list[Output]:
    m, n, k = shape
    dtype, out_dtype, out_tl, eps = KINDS[kind]
    a, b, c = _operands(name, shape, kind)
    out = dev.full((m, n), -1 if kind == "int8" else np.nan, out_dtype)
    dev.launch(dot_kernel, (1,), dev.to_device(a), dev.to_device(b), dev.to_device(c), out, m, n, k,
               BM=_block(m, 1), BN=_block(n, 1), BK=_block(k, 32 if kind == "int8" else 16), ACC=acc, PREC=prec,
               OUT=out_tl)
    wide = np.int64 if kind == "int8" else np.float64
    a64, b64, c64 = a.astype(wide), b.astype(wide), c.astype(wide) if acc else np.zeros((m, n), wide)
    want = a64 @ b64 + c64
    if kind == "int8":
        return [Output("out", dev.to_host(out), want)]
    bound = float(np.max(np.abs(a64) @ np.abs(b64) + np.abs(c64)))
    tol = (k + 1) * eps + (SPLIT_ERROR.get(prec, 0.0) if kind == "fp32" else 0.0)
    return [Output("out", dev.to_host(out), want, rtol=0.0, atol=tol * bound)]


@cases("dot-{kind}-{shape}-{acc}", kind=list(KINDS), shape=SHAPES, acc={"acc": True, "noacc": False})
def dot_shapes(dev: Device, kind: str, shape: tuple[int, int, int], acc: bool) -> list[Output]:
    return _run_dot(dev, f"dot-{kind}-{shape}-{acc}", kind, shape, acc, "ieee" if kind == "fp32" else None)


@cases("dot-fp32-precision-{prec}", prec={"default": None, "ieee": "ieee", "tf32": "tf32", "tf32x3": "tf32x3",
                                          "bf16x3": "bf16x3", "bf16x6": "bf16x6"})
def dot_precisions(dev: Device, prec: str | None) -> list[Output]:
    return _run_dot(dev, f"dot-precision-{prec}", "fp32", (32, 32, 64), True, prec)


@cases("dot-matmul-tutorial-{dtype}-{size}", dtype=["fp32", "fp16"],
       size={"100x72x50": (100, 72, 50, 32, 32, 16), "64x128x96": (64, 128, 96, 32, 64, 32)})
def tutorial_matmul(dev: Device, dtype: str, size: tuple[int, ...]) -> list[Output]:
    """Tutorial 03 over several programs; sizes not multiples of the blocks; the result in fp16
    for fp16 operands (one more rounding)."""
    M, N, K, BM, BN, BK = size
    t = np.float16 if dtype == "fp16" else np.float32
    rng = rng_for(f"dot-matmul-{dtype}-{M}x{N}x{K}")
    a, b = rng.standard_normal((M, K)).astype(t), rng.standard_normal((K, N)).astype(t)
    c = dev.full((M, N), np.nan, t)
    dev.launch(matmul_kernel, (triton.cdiv(M, BM) * triton.cdiv(N, BN),), dev.to_device(a), dev.to_device(b), c,
               M, N, K, K, 1, N, 1, N, 1, BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, GROUP_SIZE_M=2)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    bound = float(np.max(np.abs(a64) @ np.abs(b64)))
    tol = (K + 1) * EPS["fp32"] + TF32 + (EPS["fp16"] if dtype == "fp16" else 0.0)
    return [Output("c", dev.to_host(c), a64 @ b64, rtol=0.0, atol=tol * bound)]


@cases("dot-matmul-tutorial-fp32-b-k-major-{size}", size={"100x72x80": (100, 72, 80, 64, 64, 32),
                                                            "128x128x64": (128, 128, 64, 64, 128, 32)})
def tutorial_matmul_b_k_major(dev: Device, size: tuple[int, ...]) -> list[Output]:
    """``a @ w.T`` through tutorial 03 at tf32, w stored ``[N, K]`` (Hopper's tf32 group instruction
    reads it), on sizes the blocks divide and sizes they do not."""
    M, N, K, BM, BN, BK = size
    rng = rng_for(f"dot-matmul-b-k-major-{M}x{N}x{K}")
    a, w = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((N, K)).astype(np.float32)
    c = dev.full((M, N), np.nan, np.float32)
    dev.launch(matmul_kernel, (triton.cdiv(M, BM) * triton.cdiv(N, BN),), dev.to_device(a), dev.to_device(w), c,
               M, N, K, K, 1, 1, K, N, 1, BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, GROUP_SIZE_M=2)
    a64, b64 = a.astype(np.float64), w.T.astype(np.float64)
    bound = float(np.max(np.abs(a64) @ np.abs(b64)))
    tol = (K + 1) * EPS["fp32"] + TF32
    return [Output("c", dev.to_host(c), a64 @ b64, rtol=0.0, atol=tol * bound)]


@cases("dot-matmul-wt-trans-{dtype}-stages{stages}", dtype=["fp32", "fp16"], stages=[1, 3])
def matmul_wt_trans(dev: Device, dtype: str, stages: int) -> list[Output]:
    """``tl.dot(a, tl.trans(w))`` in a K loop, on sizes the blocks do not divide: the pipelined copies
    keep w's blocks as loaded and the product reads them transposed."""
    M, N, K, BM, BN, BK = 100, 136, 104, 64, 64, 32
    t = np.float16 if dtype == "fp16" else np.float32
    rng = rng_for(f"dot-matmul-wt-trans-{dtype}")
    a, w = rng.standard_normal((M, K)).astype(t), rng.standard_normal((N, K)).astype(t)
    c = dev.full((M, N), np.nan, t)
    dev.launch(matmul_wt_kernel, (triton.cdiv(M, BM), triton.cdiv(N, BN)), dev.to_device(a), dev.to_device(w), c,
               M, N, K, BM=BM, BN=BN, BK=BK, num_stages=stages)
    a64, b64 = a.astype(np.float64), w.T.astype(np.float64)
    bound = float(np.max(np.abs(a64) @ np.abs(b64)))
    tol = (K + 1) * EPS["fp32"] + TF32 + (EPS["fp16"] if dtype == "fp16" else 0.0)
    return [Output("c", dev.to_host(c), a64 @ b64, rtol=0.0, atol=tol * bound)]


@cases("dot-batched-{kind}", kind=["fp32", "fp16", "int8"])
def batched(dev: Device, kind: str) -> list[Output]:
    """Four products at once: ``[4, 16, K] x [4, K, 32]`` (3-D blocks)."""
    bs, m, n, k = 4, 16, 32, 32
    _, out_dtype, _, eps = KINDS[kind]
    parts = [_operands(f"dot-batched-{kind}-{i}", (m, n, k), kind) for i in range(bs)]
    a, b, c = (np.stack([p[j] for p in parts]) for j in range(3))
    out = dev.full((bs, m, n), -1 if kind == "int8" else np.nan, out_dtype)
    dev.launch(batched_kernel, (1,), dev.to_device(a), dev.to_device(b), dev.to_device(c), out, B=bs, M=m, N=n, K=k)
    wide = np.int64 if kind == "int8" else np.float64
    a64, b64, c64 = a.astype(wide), b.astype(wide), c.astype(wide)
    if kind == "int8":
        return [Output("out", dev.to_host(out), a64 @ b64 + c64)]
    bound = float(np.max(np.abs(a64) @ np.abs(b64) + np.abs(c64)))
    return [Output("out", dev.to_host(out), a64 @ b64 + c64, rtol=0.0, atol=(k + 1) * eps * bound)]
