"""Conformance cases of ``tl.sort``, ``tl.topk``, ``tl.bitonic_merge``, ``tl.histogram`` and
``tl.gather``, with their kernels: ragged tiles padded with values that sort out of the way, ties,
NaN (above every number: last ascending, first descending), several programs, and a histogram
summed across programs with atomics. The references are numpy's, exact (these builtins only move
or count elements)."""

from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl

from .cases import NP
from .suite import Device, Output, cases, rng_for

# -- kernels ---------------------------------------------------------------------------------------


@triton.jit
def sort_tile_kernel(x_ptr, out_ptr, M, N, stride, DIM: tl.constexpr, DESC: tl.constexpr, PAD: tl.constexpr,
                     BM: tl.constexpr, BN: tl.constexpr):
    """Sort the M x N matrix along DIM inside a BM x BN tile padded with PAD (which sorts last)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=mask, other=PAD)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], tl.sort(x, DIM, descending=DESC), mask=mask)


@triton.jit
def sort_blocks_kernel(x_ptr, out_ptr, n, DESC: tl.constexpr, PAD: tl.constexpr, BLOCK: tl.constexpr):
    """Each program sorts its block of a ragged vector (the tensor method)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=PAD)
    tl.store(out_ptr + offs, x.sort(descending=DESC), mask=offs < n)


@triton.jit
def topk_rows_kernel(x_ptr, out_ptr, N, K: tl.constexpr, PAD: tl.constexpr, BN: tl.constexpr):
    """Program r writes the K largest of row r (N long, padded to BN with PAD)."""
    row = tl.program_id(0)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + row * N + rn, mask=rn < N, other=PAD)
    tl.store(out_ptr + row * K + tl.arange(0, K), tl.topk(x[None, :], K).reshape(K))


@triton.jit
def merge_kernel(x_ptr, out_ptr, DESC: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(out_ptr + offs, tl.bitonic_merge(tl.load(x_ptr + offs), descending=DESC))


@triton.jit
def histogram_kernel(x_ptr, out_ptr, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    """Each program counts its block of a ragged vector (masked) and adds its counts atomically."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(out_ptr + tl.arange(0, BINS), tl.histogram(x, BINS, mask=offs < n))


@triton.jit
def gather_kernel(src_ptr, idx_ptr, out_ptr, AXIS: tl.constexpr, SM: tl.constexpr, SN: tl.constexpr,
                  IM: tl.constexpr, IN: tl.constexpr):
    src = tl.load(src_ptr + tl.arange(0, SM)[:, None] * SN + tl.arange(0, SN)[None, :])
    offs = tl.arange(0, IM)[:, None] * IN + tl.arange(0, IN)[None, :]
    tl.store(out_ptr + offs, tl.gather(src, tl.load(idx_ptr + offs), AXIS))


# -- helpers ---------------------------------------------------------------------------------------


def _sorted(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """numpy's order (NaN last), reversed when descending (NaN first)."""
    s = np.sort(x, axis=axis)
    return np.flip(s, axis) if descending else s


def _pad(dtype: str, descending: bool):
    """A padding value that sorts after every real one in the given order (ties with equals are
    harmless: equal values are indistinguishable)."""
    if dtype.startswith("fp"):
        return -float("inf") if descending else float("nan")
    info = np.iinfo(NP[dtype])
    return int(info.min) if descending else int(info.max)


def _data(dtype: str, shape, case_id: str) -> np.ndarray:
    """Many ties; NaN and infinities among floats; the type's extremes among integers."""
    rng = rng_for(case_id)
    x = rng.integers(-20, 21, shape)
    if dtype.startswith("fp"):
        x = x.astype(NP[dtype]) * NP[dtype](0.25)
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, min(3, flat.size), replace=False)] = [np.nan, np.inf, -np.inf][:min(3, flat.size)]
        return x
    info = np.iinfo(NP[dtype])
    x = np.clip(x, info.min, info.max)
    x = np.where(rng.random(shape) < 0.1, info.max, np.where(rng.random(shape) < 0.1, info.min, x))
    return x.astype(NP[dtype])


ORDER = {"asc": False, "desc": True}

# -- cases -----------------------------------------------------------------------------------------


@cases("sort-{dtype}-dim{dim}-{order}", dtype=["fp32", "fp16", "int32", "uint8", "int64"], dim=[0, 1], order=ORDER)
def sort_tile(dev: Device, dtype: str, dim: int, order: bool) -> list[Output]:
    """A ragged 13 x 6 matrix sorted along one dimension inside a 16 x 8 tile."""
    M, N, BM, BN = 13, 6, 16, 8
    stride = N + 2
    x = _data(dtype, (M, stride), f"sort-{dtype}-{dim}-{order}")
    out = dev.empty((M, N), NP[dtype])
    dev.launch(sort_tile_kernel, (1,), dev.to_device(x), out, M, N, stride, DIM=dim, DESC=order,
               PAD=_pad(dtype, order), BM=BM, BN=BN)
    return [Output("out", dev.to_host(out), _sorted(x[:, :N], dim, order))]


@cases("sort-blocks-{order}-n{n}", order=ORDER, n=[1, 1000, 4097])
def sort_blocks(dev: Device, order: bool, n: int) -> list[Output]:
    """Several programs, each sorting its own block of 512 of a ragged fp32 vector."""
    block = 512
    x = _data("fp32", (n,), f"sort-blocks-{order}-{n}")
    out = dev.empty(n, np.float32)
    dev.launch(sort_blocks_kernel, (triton.cdiv(n, block),), dev.to_device(x), out, n, DESC=order,
               PAD=_pad("fp32", order), BLOCK=block)
    want = np.concatenate([_sorted(x[s:s + block], 0, order) for s in range(0, n, block)])
    return [Output("out", dev.to_host(out), want)]


@cases("topk-k{k}-{dtype}", k=[1, 4, 32], dtype=["fp32", "int32"])
def topk_rows(dev: Device, k: int, dtype: str) -> list[Output]:
    """The k largest of each of 5 rows of 50 (one program per row; NaN counts as the largest)."""
    rows, N, BN = 5, 50, 64
    x = _data(dtype, (rows, N), f"topk-{k}-{dtype}")
    out = dev.empty((rows, k), NP[dtype])
    dev.launch(topk_rows_kernel, (rows,), dev.to_device(x), out, N, K=k, PAD=_pad(dtype, True), BN=BN)
    return [Output("out", dev.to_host(out), _sorted(x, 1, True)[:, :k])]


@cases("bitonic_merge-{dtype}-{order}", dtype=["fp32", "int8"], order=ORDER)
def bitonic_merge(dev: Device, dtype: str, order: bool) -> list[Output]:
    """Bitonic rows (rising then falling, or the reverse, turning anywhere) come out sorted."""
    BM, BN = 4, 32
    rng = rng_for(f"bitonic_merge-{dtype}-{order}")
    rows = []
    for r in range(BM):
        turn = 1 + 9 * r
        a, b = np.sort(rng.integers(-60, 60, turn)), np.sort(rng.integers(-60, 60, BN - turn))[::-1]
        rows.append(np.concatenate([a, b]) if r % 2 else np.concatenate([b, a]))
    x = np.stack(rows).astype(NP[dtype])
    out = dev.empty((BM, BN), NP[dtype])
    dev.launch(merge_kernel, (1,), dev.to_device(x), out, DESC=order, BM=BM, BN=BN)
    return [Output("out", dev.to_host(out), _sorted(x, 1, order))]


@cases("histogram-{dtype}-n{n}", dtype=["int32", "uint8", "int64"], n=[1, 1000, 4097])
def histogram(dev: Device, dtype: str, n: int) -> list[Output]:
    """64 bins over blocks of 256 values, some outside [0, 64) (not counted), summed with atomics."""
    bins, block = 64, 256
    lo = 0 if dtype.startswith("u") else -10
    x = rng_for(f"histogram-{dtype}-{n}").integers(lo, 80, n).astype(NP[dtype])
    out = dev.to_device(np.zeros(bins, np.int32))
    dev.launch(histogram_kernel, (triton.cdiv(n, block),), dev.to_device(x), out, n, BINS=bins, BLOCK=block)
    counted = x[(x >= 0) & (x < bins)].astype(np.int64)
    return [Output("out", dev.to_host(out), np.bincount(counted, minlength=bins).astype(np.int32))]


@cases("gather-axis{axis}-{dtype}", axis=[0, 1], dtype=["fp32", "fp16", "int64"])
def gather(dev: Device, axis: int, dtype: str) -> list[Output]:
    """``out[i][j] = src[idx[i][j]][j]`` (axis 0) or ``src[i][idx[i][j]]`` (axis 1); the index block
    is larger than the source along ``axis``, so values repeat."""
    SM, SN = 8, 16
    IM, IN = (32, SN) if axis == 0 else (SM, 32)
    rng = rng_for(f"gather-{axis}-{dtype}")
    src = (rng.standard_normal((SM, SN)) * 1000).astype(NP[dtype])
    idx = rng.integers(0, (SM, SN)[axis], (IM, IN)).astype(np.int32)
    out = dev.empty((IM, IN), NP[dtype])
    dev.launch(gather_kernel, (1,), dev.to_device(src), dev.to_device(idx), out, AXIS=axis, SM=SM, SN=SN, IM=IM,
               IN=IN)
    return [Output("out", dev.to_host(out), np.take_along_axis(src, idx, axis))]
