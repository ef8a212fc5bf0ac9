"""``tl.sort``, ``tl.topk``, ``tl.bitonic_merge``, ``tl.histogram`` and ``tl.gather`` through the GPU
path: the real ``tile-layout`` stage, core's per-thread code generator and the SIMT emulator (``tritium_simt.emulator``)
running every thread of a program on the host with several warps and lanes, against numpy; and
the same kernels through the nvptx target to PTX, assembled by ``ptxas``."""

from __future__ import annotations

import numpy as np
import pytest

from tritium.ir import tile

from .test_sorting import (SORT_DTYPES, _sorted, _values, gather_kernel, histogram_kernel, merge_kernel,
                           sort1d_kernel, sort_kernel, topk1d_kernel, topk_kernel)
from .test_threads_codegen import nvptx
from .test_threads_shape import _ptxas, laid_out
from tritium_simt.emulator import run

LAUNCHES = [(1, 4), (2, 8), (4, 4)]


def emulate(kernel, signature: dict, constants: dict, args: list, num_warps: int, warp_size: int) -> None:
    with tile.context():
        run(laid_out(kernel, signature, constants, num_warps, warp_size), (1,), args, num_warps, warp_size)


@pytest.mark.parametrize("num_warps,warp_size", LAUNCHES)
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("descending", [0, 1])
def test_sort(num_warps, warp_size, dim, descending):
    x = np.random.default_rng(dim).integers(-4, 4, (4, 16)).astype(np.float32)
    x[1, 2] = x[3, 5] = np.nan
    out = np.full_like(x, 7)
    emulate(sort_kernel, {"x_ptr": "*fp32", "o_ptr": "*fp32"},
            {"M": 4, "N": 16, "DIM": dim, "DESC": descending, "METHOD": 0}, [x, out], num_warps, warp_size)
    np.testing.assert_array_equal(out, _sorted(x, dim, bool(descending)))


@pytest.mark.parametrize("num_warps,warp_size", LAUNCHES)
@pytest.mark.parametrize("k", [1, 4])
def test_topk(num_warps, warp_size, k):
    x = np.random.default_rng(k).integers(-100, 100, (4, 16)).astype(np.int32)
    out = np.full((4, k), 7, np.int32)
    emulate(topk_kernel, {"x_ptr": "*i32", "o_ptr": "*i32"}, {"M": 4, "N": 16, "K": k, "DIM": 1}, [x, out],
            num_warps, warp_size)
    np.testing.assert_array_equal(out, _sorted(x, 1, True)[:, :k])


def _native(kernel, signature: dict, constants: dict, num_warps: int, warp_size: int) -> bool:
    with tile.context():
        return "tile.sort" in str(laid_out(kernel, signature, constants, num_warps, warp_size))


@pytest.mark.parametrize("dtype", SORT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dim,descending", [(0, 0), (1, 1), (1, 0)])
def test_large_blocks_sort_in_shared_memory(dtype, dim, descending):
    """Blocks with more than two elements a thread keep ``tile.sort`` (``passes.decomposed``): the
    network's rounds run as loops over shared memory. Ties, NaN, infinities, integer extremes."""
    name = "i1" if dtype == np.bool_ else {"f": "fp", "i": "i", "u": "u"}[np.dtype(dtype).kind] + str(
        8 * np.dtype(dtype).itemsize)
    signature = {"x_ptr": f"*{name}", "o_ptr": f"*{name}"}
    constants = {"M": 8, "N": 32, "DIM": dim, "DESC": descending, "METHOD": 0}
    assert _native(sort_kernel, signature, constants, 2, 8)
    x = _values(dtype, (8, 32), dim + 3 * descending)
    out = np.zeros_like(x)
    emulate(sort_kernel, signature, constants, [x, out], 2, 8)
    np.testing.assert_array_equal(out, _sorted(x, dim, bool(descending)))


@pytest.mark.parametrize("n,k", [(128, 128), (128, 8), (64, 1)])
def test_large_1d_sort_and_topk_in_shared_memory(n, k):
    x = _values(np.float32, (n,), n + k)
    out = np.zeros(k, np.float32)
    kernel, constants = (sort1d_kernel, {"N": n, "DESC": 1}) if k == n else (topk1d_kernel, {"N": n, "K": k})
    assert _native(kernel, {"x_ptr": "*fp32", "o_ptr": "*fp32"}, constants, 1, 8)
    emulate(kernel, {"x_ptr": "*fp32", "o_ptr": "*fp32"}, constants, [x, out], 1, 8)
    np.testing.assert_array_equal(out, _sorted(x, 0, True)[:k])


def test_small_blocks_run_the_network_in_registers():
    """Two elements a thread or fewer: the network, with no shared memory."""
    constants = {"M": 4, "N": 16, "DIM": 1, "DESC": 0, "METHOD": 0}
    assert not _native(sort_kernel, {"x_ptr": "*fp32", "o_ptr": "*fp32"}, constants, 4, 8)
    x = _values(np.float32, (4, 16), 9)
    out = np.zeros_like(x)
    emulate(sort_kernel, {"x_ptr": "*fp32", "o_ptr": "*fp32"}, constants, [x, out], 4, 8)
    np.testing.assert_array_equal(out, _sorted(x, 1, False))


@pytest.mark.parametrize("num_warps,warp_size", LAUNCHES)
def test_bitonic_merge(num_warps, warp_size):
    x = np.concatenate([np.arange(0, 16, 2), np.arange(15, 0, -2)]).reshape(1, 16).astype(np.int32)
    out = np.full_like(x, 7)
    emulate(merge_kernel, {"x_ptr": "*i32", "o_ptr": "*i32"}, {"M": 1, "N": 16, "DESC": 0}, [x, out],
            num_warps, warp_size)
    np.testing.assert_array_equal(out, np.sort(x, axis=1))


@pytest.mark.parametrize("num_warps,warp_size", LAUNCHES)
def test_histogram(num_warps, warp_size):
    x = np.random.default_rng(1).integers(-2, 10, 32).astype(np.int32)
    out = np.full(8, 7, np.int32)
    emulate(histogram_kernel, {"x_ptr": "*i32", "o_ptr": "*i32", "n": "i32"}, {"N": 32, "BINS": 8, "MASKED": True},
            [x, out, 27], num_warps, warp_size)
    kept = x[:27]
    np.testing.assert_array_equal(out, np.bincount(kept[(kept >= 0) & (kept < 8)], minlength=8))


@pytest.mark.parametrize("num_warps,warp_size", LAUNCHES)
@pytest.mark.parametrize("axis", [0, 1])
def test_gather(num_warps, warp_size, axis):
    rng = np.random.default_rng(axis)
    src = rng.standard_normal((4, 8)).astype(np.float32)
    index_shape = (2, 8) if axis == 0 else (4, 16)
    index = rng.integers(0, src.shape[axis], index_shape).astype(np.int32)
    out = np.full(index_shape, 7, np.float32)
    emulate(gather_kernel, {"s_ptr": "*fp32", "i_ptr": "*i32", "o_ptr": "*fp32"},
            {"SM": 4, "SN": 8, "IM": index_shape[0], "IN": index_shape[1], "AXIS": axis}, [src, index, out],
            num_warps, warp_size)
    np.testing.assert_array_equal(out, np.take_along_axis(src, index, axis))


@pytest.mark.parametrize("kernel,signature,constants", [
    (sort_kernel, {"x_ptr": "*fp32", "o_ptr": "*fp32"}, {"M": 16, "N": 64, "DIM": 1, "DESC": 1, "METHOD": 1}),
    (sort_kernel, {"x_ptr": "*fp16", "o_ptr": "*fp16"}, {"M": 16, "N": 64, "DIM": 0, "DESC": 0, "METHOD": 0}),
    (topk_kernel, {"x_ptr": "*i64", "o_ptr": "*i64"}, {"M": 8, "N": 64, "K": 8, "DIM": 1}),
    (merge_kernel, {"x_ptr": "*i8", "o_ptr": "*i8"}, {"M": 4, "N": 32, "DESC": 1}),
    (histogram_kernel, {"x_ptr": "*i32", "o_ptr": "*i32", "n": "i32"}, {"N": 256, "BINS": 32, "MASKED": True}),
    (gather_kernel, {"s_ptr": "*fp32", "i_ptr": "*i32", "o_ptr": "*fp32"},
     {"SM": 16, "SN": 32, "IM": 16, "IN": 64, "AXIS": 1}),
], ids=["sort-fp32", "sort-fp16-dim0", "topk-i64", "bitonic_merge-i8", "histogram", "gather"])
def test_nvptx_assembles(kernel, signature, constants):
    """PTX of the kernels (4 warps of 32 lanes) through the nvptx hooks, assembled by ptxas."""
    with tile.context():
        _, ptx = nvptx(laid_out(kernel, signature, constants, 4, 32), 4)
    assert ".entry" in ptx
    _ptxas(ptx)
