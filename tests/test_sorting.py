"""``tl.sort``, ``tl.topk``, ``tl.bitonic_merge``, ``tl.histogram`` and ``tl.gather`` on every
installed target against numpy (exact: they only move or count elements), with ties, NaN,
descending order, 2-D blocks along each dimension and several k; what they refuse; and the same
kernels through the GPU path: the real ``tile-layout`` stage and per-thread code emulated on the
host, and PTX for the nvptx target assembled by ``ptxas``."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.errors import TritiumError


@tritium.jit
def sort_kernel(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr, DESC: tl.constexpr,
                METHOD: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    y = x.sort(DIM, descending=DESC) if METHOD else tl.sort(x, dim=DIM, descending=DESC)
    tl.store(o_ptr + offs, y)


@tritium.jit
def sort1d_kernel(x_ptr, o_ptr, N: tl.constexpr, DESC: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(o_ptr + offs, tl.sort(tl.load(x_ptr + offs), descending=DESC))


@tritium.jit
def topk_kernel(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, DIM: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    if DIM == 1:
        tl.store(o_ptr + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :], tl.topk(x, K, dim=DIM))
    else:
        tl.store(o_ptr + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :], tl.topk(x, K, dim=DIM))


@tritium.jit
def topk1d_kernel(x_ptr, o_ptr, N: tl.constexpr, K: tl.constexpr):
    tl.store(o_ptr + tl.arange(0, K), tl.topk(tl.load(x_ptr + tl.arange(0, N)), K))


@tritium.jit
def merge_kernel(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, DESC: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(o_ptr + offs, tl.bitonic_merge(tl.load(x_ptr + offs), descending=DESC))


@tritium.jit
def histogram_kernel(x_ptr, o_ptr, n, N: tl.constexpr, BINS: tl.constexpr, MASKED: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    h = tl.histogram(x, BINS, mask=offs < n) if MASKED else x.histogram(BINS)
    tl.store(o_ptr + tl.arange(0, BINS), h)


@tritium.jit
def gather_kernel(s_ptr, i_ptr, o_ptr, SM: tl.constexpr, SN: tl.constexpr, IM: tl.constexpr, IN: tl.constexpr,
                  AXIS: tl.constexpr):
    s = tl.load(s_ptr + tl.arange(0, SM)[:, None] * SN + tl.arange(0, SN)[None, :])
    offs = tl.arange(0, IM)[:, None] * IN + tl.arange(0, IN)[None, :]
    tl.store(o_ptr + offs, s.gather(tl.load(i_ptr + offs), AXIS))


@tritium.jit
def gather1d_kernel(s_ptr, i_ptr, o_ptr, S: tl.constexpr, I: tl.constexpr):
    s = tl.load(s_ptr + tl.arange(0, S))
    tl.store(o_ptr + tl.arange(0, I), tl.gather(s, tl.load(i_ptr + tl.arange(0, I)), 0))


@tritium.jit
def gather3d_kernel(s_ptr, i_ptr, o_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, N: tl.constexpr,
                    AXIS: tl.constexpr):
    s = tl.load(s_ptr + tl.arange(0, A)[:, None, None] * (B * C) + tl.arange(0, B)[None, :, None] * C
                + tl.arange(0, C)[None, None, :])
    IA: tl.constexpr = N if AXIS == 0 else A
    IB: tl.constexpr = N if AXIS == 1 else B
    IC: tl.constexpr = N if AXIS == 2 else C
    offs = (tl.arange(0, IA)[:, None, None] * (IB * IC) + tl.arange(0, IB)[None, :, None] * IC
            + tl.arange(0, IC)[None, None, :])
    tl.store(o_ptr + offs, tl.gather(s, tl.load(i_ptr + offs), AXIS))


@tritium.jit
def gather_loop_kernel(x_ptr, i_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    index = tl.load(i_ptr + offs)
    for k in range(3):
        x = tl.gather(x, index, 0) * 2 + k
    tl.store(x_ptr + offs, x)
    y = tl.load(y_ptr + offs)
    tl.store(y_ptr + offs, tl.gather(y + tl.gather(tl.cumsum(y, 0), index, 0), N - 1 - offs, 0))


@tritium.jit
def bad_kernel(x_ptr, CASE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    if CASE == "topk-k":
        tl.store(x_ptr + tl.arange(0, 16), tl.topk(x, 3))
    elif CASE == "sort-dim":
        tl.store(x_ptr + tl.arange(0, 16), tl.sort(x, dim=1))
    elif CASE == "sort-scalar":
        tl.store(x_ptr, tl.sort(tl.sum(x, 0)))
    elif CASE == "histogram-float":
        tl.store(x_ptr + tl.arange(0, 4), tl.histogram(x, 4).to(tl.float32))
    elif CASE == "histogram-bins":
        tl.store(x_ptr + tl.arange(0, 4), tl.histogram(x.to(tl.int32), 6).to(tl.float32))
    elif CASE == "gather-rank":
        tl.store(x_ptr + tl.arange(0, 16), tl.gather(x, tl.zeros((16, 1), tl.int32), 0))
    elif CASE == "gather-shape":
        y = tl.reshape(x, (4, 4))
        tl.store(x_ptr + tl.arange(0, 16)[:, None] + tl.arange(0, 2)[None, :],
                 tl.gather(y, tl.zeros((16, 2), tl.int32), 0))
    else:
        tl.store(x_ptr + tl.arange(0, 16), tl.gather(x, tl.zeros((16,), tl.float32), 0))


def _put(target, a):
    return target.driver.to_device(np.ascontiguousarray(a))


def _sorted(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """numpy's order (NaN last), reversed when descending (NaN first)."""
    s = np.sort(x, axis=axis, kind="stable")
    return np.flip(s, axis) if descending else s


def _values(dtype, shape, seed: int) -> np.ndarray:
    """Few distinct values (many ties), NaN and infinities among floats."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    x = rng.integers(-6, 7, shape)
    if info is not None:
        x = np.where(rng.random(shape) < 0.2, info.max, np.where(rng.random(shape) < 0.2, info.min, x))
        return x.astype(dtype)
    x = x.astype(dtype) * dtype(0.5)
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, 3, replace=False)] = [np.nan, np.inf, -np.inf]
    return x


SORT_DTYPES = [np.float32, np.float16, np.float64, np.int32, np.int8, np.uint8, np.int64, np.uint32, np.bool_]


@pytest.mark.parametrize("dtype", SORT_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_2d_along_each_dim(target, dtype, dim, descending):
    x = _values(dtype, (8, 16), SORT_DTYPES.index(dtype) * 7 + dim % 2)
    out = _put(target, np.zeros_like(x))
    sort_kernel[(1,)](_put(target, x), out, M=8, N=16, DIM=dim, DESC=descending, METHOD=dim == 0)
    np.testing.assert_array_equal(target.driver.to_host(out), _sorted(x, dim, descending))


@pytest.mark.parametrize("n", [1, 2, 128])
@pytest.mark.parametrize("descending", [0, 1])
def test_sort_1d_with_nan(target, n, descending):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    x[::5] = np.nan
    x[1::7] = 0.0
    out = _put(target, np.zeros_like(x))
    sort1d_kernel[(1,)](_put(target, x), out, N=n, DESC=descending)
    np.testing.assert_array_equal(target.driver.to_host(out), _sorted(x, 0, bool(descending)))


@pytest.mark.parametrize("k", [1, 2, 8, 32])
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.int16])
def test_topk(target, k, dim, dtype):
    x = _values(dtype, (32, 32), k + dim)
    shape = (32, k) if dim == 1 else (k, 32)
    out = _put(target, np.full(shape, 7, dtype))
    topk_kernel[(1,)](_put(target, x), out, M=32, N=32, K=k, DIM=dim)
    want = np.take(_sorted(x, dim, True), np.arange(k), axis=dim)
    np.testing.assert_array_equal(target.driver.to_host(out), want)


@pytest.mark.parametrize("k", [1, 4])
def test_topk_of_a_1d_block(target, k):
    """k = 1 reduces the block to one element (once an internal error on the cpu)."""
    x = _values(np.float32, (16,), k)
    out = _put(target, np.full(k, 7, np.float32))
    topk1d_kernel[(1,)](_put(target, x), out, N=16, K=k)
    np.testing.assert_array_equal(target.driver.to_host(out), _sorted(x, 0, True)[:k])


@pytest.mark.parametrize("descending", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_bitonic_merge_sorts_bitonic_rows(target, descending, dtype):
    rng = np.random.default_rng(descending)
    rows = []
    for r in range(4):  # ascending then descending, or the reverse, with the turn anywhere
        a, b = np.sort(rng.integers(-50, 50, 8 * r + 2)), np.sort(rng.integers(-50, 50, 32 - 8 * r - 2))[::-1]
        rows.append(np.concatenate([a, b]) if r % 2 else np.concatenate([b, a]))
    x = np.stack(rows).astype(dtype)
    out = _put(target, np.zeros_like(x))
    merge_kernel[(1,)](_put(target, x), out, M=4, N=32, DESC=descending)
    np.testing.assert_array_equal(target.driver.to_host(out), _sorted(x, 1, bool(descending)))


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64, np.int8])
@pytest.mark.parametrize("masked", [False, True])
def test_histogram(target, dtype, masked):
    n, N, bins = 100, 128, 16
    rng = np.random.default_rng(N + masked)
    lo = 0 if np.dtype(dtype).kind == "u" else -5
    x = rng.integers(lo, 22, N).astype(dtype)  # out of range (negative, >= bins) is not counted
    out = _put(target, np.full(bins, 7, np.int32))
    histogram_kernel[(1,)](_put(target, x), out, n, N=N, BINS=bins, MASKED=masked)
    counted = x[:n] if masked else x
    counted = counted[(counted >= 0) & (counted < bins)].astype(np.int64)
    np.testing.assert_array_equal(target.driver.to_host(out), np.bincount(counted, minlength=bins))


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.int8])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_gather(target, axis, dtype, index_dtype):
    src_shape, index_shape = ((8, 16), (4, 16)) if axis == 0 else ((8, 16), (8, 32))
    rng = np.random.default_rng(axis + 3)
    src = (rng.standard_normal(src_shape) * 100).astype(dtype)
    src.reshape(-1)[0] = -0.0 if np.dtype(dtype).kind == "f" else src.reshape(-1)[0]
    n = src_shape[axis]
    index = rng.integers(-n, 2 * n, index_shape).astype(index_dtype)  # outside [0, n): wraps modulo n
    out = _put(target, np.full(index_shape, 7, dtype))
    gather_kernel[(1,)](_put(target, src), _put(target, index), out, SM=8, SN=16, IM=index_shape[0],
                        IN=index_shape[1], AXIS=axis)
    want = np.take_along_axis(src, index.astype(np.int64) % n, axis)
    got = target.driver.to_host(out)
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))  # bit-exact


@pytest.mark.parametrize("shape,axis", [((128, 128), 0), ((128, 128), 1), ((2 ** 14,), 0)])
def test_gather_of_blocks_triton_accepts(target, shape, axis):
    """A 128x128 gather along each axis (2**21 index-position pairs) and a 1-D one of 2**14 elements
    (2**28 pairs; its 64 KiB source fits a GPU's shared memory): the one-hot form refused both;
    indices outside the axis wrap modulo its size."""
    rng = np.random.default_rng(len(shape) + axis)
    src = rng.standard_normal(shape).astype(np.float32)
    n = shape[axis]
    index = rng.integers(-n, 2 * n, shape).astype(np.int32)
    out = _put(target, np.full(shape, 7, np.float32))
    if len(shape) == 1:
        gather1d_kernel[(1,)](_put(target, src), _put(target, index), out, S=n, I=n)
    else:
        gather_kernel[(1,)](_put(target, src), _put(target, index), out, SM=shape[0], SN=shape[1], IM=shape[0],
                            IN=shape[1], AXIS=axis)
    np.testing.assert_array_equal(target.driver.to_host(out), np.take_along_axis(src, index % n, axis))


@pytest.mark.parametrize("axis", [0, 2])
@pytest.mark.parametrize("dtype,index_dtype", [(np.bool_, np.int8), (np.uint8, np.uint8), (np.float64, np.int16),
                                               (np.int16, np.uint32), (np.float32, np.uint64)])
def test_gather_3d_with_narrow_and_unsigned_indices(target, axis, dtype, index_dtype):
    """Every index type (negative narrow indices wrap as their value does, not as their bits
    widened without sign), a boolean and a 64-bit source, a 3-D block gathered along an outer and
    the inner axis into a longer one."""
    shape = (2, 4, 8)
    n = shape[axis]
    index_shape = tuple(16 if d == axis else s for d, s in enumerate(shape))
    rng = np.random.default_rng(axis)
    src = (rng.standard_normal(shape) * 50).astype(dtype)
    info = np.iinfo(index_dtype)
    index = rng.integers(max(info.min, -3 * n), 3 * n, index_shape).astype(index_dtype)
    out = _put(target, np.zeros(index_shape, dtype))
    gather3d_kernel[(1,)](_put(target, src), _put(target, index), out, A=2, B=4, C=8, N=16, AXIS=axis)
    np.testing.assert_array_equal(target.driver.to_host(out), np.take_along_axis(src, index.astype(np.int64) % n, axis))


@pytest.mark.parametrize("index_dtype", [np.int8, np.uint8])
def test_gather_with_a_narrow_index_over_a_longer_axis(target, index_dtype):
    """An 8-bit index into an axis of 512: it was refused ("the number 511 is out of range for
    tl.int8", a number the kernel does not hold); negative ones wrap as their value does."""
    info = np.iinfo(index_dtype)
    index = np.random.default_rng(2).integers(info.min, info.max + 1, 64).astype(index_dtype)
    src = np.arange(512, dtype=np.float32) * 0.5
    out = _put(target, np.zeros(64, np.float32))
    gather1d_kernel[(1,)](_put(target, src), _put(target, index), out, S=512, I=64)
    np.testing.assert_array_equal(target.driver.to_host(out), src[index.astype(np.int64) % 512])


def test_gather_in_a_loop_and_stored_over_its_source(target):
    """A gather of its own result carried by a loop, of a scan, and a reversal stored over its own
    source (every element read before any is stored, as on a GPU)."""
    rng = np.random.default_rng(11)
    x, y = rng.integers(-9, 9, 64).astype(np.int32), rng.integers(-9, 9, 64).astype(np.int32)
    index = rng.integers(0, 64, 64).astype(np.int32)
    xs, ys = _put(target, x), _put(target, y)
    gather_loop_kernel[(1,)](xs, _put(target, index), ys, N=64)
    for k in range(3):
        x = x[index] * 2 + k
    np.testing.assert_array_equal(target.driver.to_host(xs), x)
    np.testing.assert_array_equal(target.driver.to_host(ys), (y + np.cumsum(y)[index])[::-1])


@pytest.mark.parametrize("case,message", [
    ("topk-k", "k must be a constant power of 2"), ("sort-dim", "dim must be a constant integer in"),
    ("sort-scalar", "needs a block"), ("histogram-float", "counts integers"),
    ("histogram-bins", "num_bins must be a constant power of 2"), ("gather-rank", "same rank"),
    ("gather-shape", "index dimension 1 must match"), ("gather-float", "index must be an integer")])
def test_bad_calls_are_refused_clearly(target, case, message):
    with pytest.raises(TritiumError, match=message):
        bad_kernel[(1,)](_put(target, np.zeros(16, np.float32)), CASE=case)
