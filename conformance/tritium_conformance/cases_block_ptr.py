"""Conformance cases of block pointers (``tl.make_block_ptr``, ``tl.advance``, ``boundary_check``,
``padding_option``): ragged tiles in both orders, blocks partly before the tensor, transposed
strides, padding with zero and NaN, checked stores next to memory that must stay untouched, the
block-pointer matmul, K loops that advance, 1-D and 3-D blocks. References are numpy's indexing
of the inputs (exact), float64 where the kernel computes."""

from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl

from .cases_dot import TF32
from .suite import Device, Output, cases, rng_for

NP = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "fp16": np.float16,
      "fp32": np.float32, "fp64": np.float64}


def values(case_id: str, shape, dtype: str) -> np.ndarray:
    rng = rng_for(case_id)
    t = NP[dtype]
    if np.issubdtype(t, np.integer):
        return rng.integers(-100, 100, shape).astype(t)
    return (rng.standard_normal(shape) * 10).astype(t)


def poison(dtype: str):
    return np.nan if dtype.startswith("fp") else -77


# -- kernels ------------------------------------------------------------------------------------------


@triton.jit
def block_tile_kernel(x_ptr, y_ptr, M, N, sxm, sxn, off_m, off_n, BM: tl.constexpr, BN: tl.constexpr,
                      ORDER: tl.constexpr, PAD: tl.constexpr):
    """Block (i, j) of x, starting at (off_m, off_n), loaded checked in both dimensions with ``PAD``
    and stored unchecked as block (i, j) of the padded, row-major y."""
    i = tl.program_id(0)
    j = tl.program_id(1)
    src = tl.make_block_ptr(x_ptr, shape=(M, N), strides=(sxm, sxn), offsets=(off_m + i * BM, off_n + j * BN),
                            block_shape=(BM, BN), order=ORDER)
    width = tl.num_programs(1) * BN
    dst = tl.make_block_ptr(y_ptr, shape=(tl.num_programs(0) * BM, width), strides=(width, 1),
                            offsets=(i * BM, j * BN), block_shape=(BM, BN), order=(1, 0))
    tl.store(dst, tl.load(src, boundary_check=(0, 1), padding_option=PAD))


@triton.jit
def block_copy_kernel(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, CHECK: tl.constexpr):
    """y = x * 2 for row-major [M, N] tensors, loaded and stored through block pointers checked on
    ``CHECK`` (the unchecked dimensions fit the blocks)."""
    i = tl.program_id(0)
    j = tl.program_id(1)
    src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (i * BM, j * BN), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(y_ptr, (M, N), (N, 1), (i * BM, j * BN), (BM, BN), (1, 0))
    tl.store(dst, tl.load(src, boundary_check=CHECK) * 2, boundary_check=CHECK)


@triton.jit
def block_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                        stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C = A @ B with block pointers advanced along K, an fp32 accumulator and a checked store."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_block_ptr = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                                    offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    b_block_ptr = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
                                    offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N), order=(0, 1))
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        a = tl.load(a_block_ptr, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_block_ptr, boundary_check=(0, 1), padding_option="zero")
        accumulator = tl.dot(a, b, accumulator)
        a_block_ptr = tl.advance(a_block_ptr, (0, BLOCK_K))
        b_block_ptr = b_block_ptr.advance((BLOCK_K, 0))
    c_block_ptr = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                                    offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N), block_shape=(BLOCK_M, BLOCK_N),
                                    order=(1, 0))
    tl.store(c_block_ptr, accumulator.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def block_rowmax_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """out[M] = x[M, N].max(1): a loop that advances along the rows, padding with NaN's opposite
    (-inf by a where on the NaN padding) so the padding never wins."""
    p = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
    acc = tl.full((BM,), float("-inf"), tl.float32)
    for _ in range(0, tl.cdiv(N, BN)):
        x = tl.load(p, boundary_check=(0, 1), padding_option="nan")
        acc = tl.maximum(acc, tl.max(tl.where(x != x, float("-inf"), x), axis=1))
        p = tl.advance(p, (0, BN))
    tl.store(tl.make_block_ptr(out_ptr, (M,), (1,), (tl.program_id(0) * BM,), (BM,), (0,)), acc,
             boundary_check=(0,))


@triton.jit
def block_1d_kernel(x_ptr, y_ptr, n, B: tl.constexpr):
    """y[:n] = x[:n] + 1 through 1-D block pointers."""
    i = tl.program_id(0)
    x = tl.load(tl.make_block_ptr(x_ptr, (n,), (1,), (i * B,), (B,), (0,)), boundary_check=(0,))
    tl.store(tl.make_block_ptr(y_ptr, (n,), (1,), (i * B,), (B,), (0,)), x + 1, boundary_check=(0,))


@triton.jit
def block_3d_kernel(x_ptr, y_ptr, D0, D1, D2, s0, s1, s2, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    """y = x for [D0, D1, D2] tensors (x strided, y contiguous): one program per 3-D block."""
    i, j, k = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    src = tl.make_block_ptr(x_ptr, (D0, D1, D2), (s0, s1, s2), (i * B0, j * B1, k * B2), (B0, B1, B2), (0, 1, 2))
    dst = tl.make_block_ptr(y_ptr, (D0, D1, D2), (D1 * D2, D2, 1), (i * B0, j * B1, k * B2), (B0, B1, B2),
                            (2, 1, 0))
    tl.store(dst, tl.load(src, boundary_check=(0, 1, 2)), boundary_check=(0, 1, 2))


# -- cases --------------------------------------------------------------------------------------------


def padded(x: np.ndarray, off: tuple[int, int], rows: int, cols: int, pad) -> np.ndarray:
    """The [rows, cols] window of x at ``off``, ``pad`` outside x."""
    out = np.full((rows, cols), pad, np.float64 if x.dtype.kind == "f" else np.int64)
    r, c = off[0] + np.arange(rows), off[1] + np.arange(cols)
    rr, cc = (r >= 0) & (r < x.shape[0]), (c >= 0) & (c < x.shape[1])
    out[np.ix_(rr, cc)] = x[np.ix_(r[rr], c[cc])]
    return out.astype(x.dtype)


TILE_SHAPES = {"1x1": (1, 1), "37x45": (37, 45), "64x32": (64, 32)}


def _tile(dev: Device, case_id: str, dtype: str, shape, order, pad: str, off=(0, 0), transposed=False):
    M, N = shape
    BM, BN = 16, 32
    storage = values(case_id, (N, M) if transposed else (M, N), dtype)
    x = storage.T if transposed else storage
    grid = (triton.cdiv(M - off[0], BM), triton.cdiv(N - off[1], BN))
    y = dev.full((grid[0] * BM, grid[1] * BN), poison(dtype), NP[dtype])
    strides = (1, M) if transposed else (N, 1)
    dev.launch(block_tile_kernel, grid, dev.to_device(storage), y, M, N, *strides, *off, BM=BM, BN=BN, ORDER=order,
               PAD=pad)
    return [Output("y", dev.to_host(y), padded(x, off, grid[0] * BM, grid[1] * BN, np.nan if pad == "nan" else 0))]


@cases("blockptr-tile-{dtype}-{shape}-order{order}", dtype=["fp32", "fp16", "int32", "int8"], shape=TILE_SHAPES,
       order={"10": (1, 0), "01": (0, 1)})
def tile(dev: Device, dtype: str, shape, order) -> list[Output]:
    return _tile(dev, f"bp-tile-{dtype}-{shape}-{order}", dtype, shape, order, "zero")


@cases("blockptr-tile-nan-{dtype}-{shape}", dtype=["fp32", "fp16", "fp64"], shape=TILE_SHAPES)
def tile_nan(dev: Device, dtype: str, shape) -> list[Output]:
    return _tile(dev, f"bp-nan-{dtype}-{shape}", dtype, shape, (1, 0), "nan")


@cases("blockptr-tile-before-{dtype}-off{off}", dtype=["fp32", "int16"], off={"m3m5": (-3, -5), "m20p7": (-20, 7)})
def tile_before(dev: Device, dtype: str, off) -> list[Output]:
    return _tile(dev, f"bp-before-{dtype}-{off}", dtype, (37, 45), (1, 0), "zero", off=off)


@cases("blockptr-tile-transposed-{dtype}", dtype=["fp32", "int64"])
def tile_transposed(dev: Device, dtype: str) -> list[Output]:
    return _tile(dev, f"bp-transposed-{dtype}", dtype, (37, 45), (0, 1), "zero", transposed=True)


@cases("blockptr-store-{dtype}-check{check}", dtype=["fp32", "int16"],
       check={"01": (0, 1), "0": (0,), "10": (1, 0)})
def store_checked(dev: Device, dtype: str, check) -> list[Output]:
    M, N, BM, BN = 45, 64, 16, 32  # columns fit the blocks: checking rows is enough
    x = values(f"bp-store-{dtype}-{check}", (M, N), dtype)
    guard = np.full((M + BM, N), poison(dtype), NP[dtype])  # rows past M must stay poisoned
    y = dev.to_device(guard)
    dev.launch(block_copy_kernel, (triton.cdiv(M, BM), N // BN), dev.to_device(x), y, M, N, BM=BM, BN=BN, CHECK=check)
    want = guard.copy()
    want[:M] = x * 2
    return [Output("y", dev.to_host(y), want)]


@cases("blockptr-matmul-{dtype}-{mnk}", dtype=["fp32", "fp16"],
       mnk={"16x16x16": (16, 16, 16), "37x45x53": (37, 45, 53), "1x70x9": (1, 70, 9), "100x3x64": (100, 3, 64)})
def matmul(dev: Device, dtype: str, mnk) -> list[Output]:
    M, N, K = mnk
    a = values(f"bp-mm-a-{dtype}-{mnk}", (M, K), dtype)
    b_storage = values(f"bp-mm-b-{dtype}-{mnk}", (N, K), dtype)  # b = its transpose: column-major
    c = dev.full((M, N), np.nan, NP[dtype])
    dev.launch(block_matmul_kernel, (triton.cdiv(M, 32), triton.cdiv(N, 32)), dev.to_device(a),
               dev.to_device(b_storage), c, M, N, K, K, 1, 1, K, N, 1, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16)
    want = a.astype(np.float64) @ b_storage.T.astype(np.float64)
    scale = np.abs(a.astype(np.float64)) @ np.abs(b_storage.T.astype(np.float64))
    # fp16 rounds its result; fp32 multiplies at Triton's default precision, tf32 on tensor cores
    tol = (K + 1) * 2.0**-24 + (2.0**-11 if dtype == "fp16" else TF32)
    return [Output("c", dev.to_host(c), want, rtol=0, atol=float(tol * scale.max()) + 1e-30)]


@cases("blockptr-rowmax-advance-{shape}", shape={"1x1": (1, 1), "21x75": (21, 75), "64x128": (64, 128)})
def rowmax(dev: Device, shape) -> list[Output]:
    M, N = shape
    x = values(f"bp-rowmax-{shape}", (M, N), "fp32")
    out = dev.full(M, np.nan, np.float32)
    dev.launch(block_rowmax_kernel, (triton.cdiv(M, 8),), dev.to_device(x), out, M, N, BM=8, BN=32)
    return [Output("out", dev.to_host(out), x.max(1))]


@cases("blockptr-1d-{dtype}-n{n}", dtype=["fp32", "int32"], n=[1, 100, 1024])
def one_d(dev: Device, dtype: str, n: int) -> list[Output]:
    x = values(f"bp-1d-{dtype}-{n}", n, dtype)
    guard = np.full(n + 64, poison(dtype), NP[dtype])
    y = dev.to_device(guard)
    dev.launch(block_1d_kernel, (triton.cdiv(n, 64),), dev.to_device(x), y, n, B=64)
    want = guard.copy()
    want[:n] = x + 1
    return [Output("y", dev.to_host(y), want)]


@cases("blockptr-3d-{dtype}-{dims}", dtype=["fp32", "int8"], dims={"5x7x11": (5, 7, 11), "8x4x16": (8, 4, 16)})
def three_d(dev: Device, dtype: str, dims) -> list[Output]:
    B = (2, 4, 8)
    storage = values(f"bp-3d-{dtype}-{dims}", dims[::-1], dtype)  # x = storage.T: strides (1, D0, D0*D1)
    y = dev.full(dims, poison(dtype), NP[dtype])
    grid = tuple(triton.cdiv(d, b) for d, b in zip(dims, B))
    dev.launch(block_3d_kernel, grid, dev.to_device(storage), y, *dims, 1, dims[0], dims[0] * dims[1],
               B0=B[0], B1=B[1], B2=B[2])
    return [Output("y", dev.to_host(y), storage.T)]
