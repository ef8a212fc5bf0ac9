"""Block pointers (``tl.make_block_ptr``, ``tl.advance``, ``boundary_check``, ``padding_option``) on
every installed target against numpy: ragged 2-D tiles in both orders and transposed strides,
blocks partly before the tensor, padding with zero and NaN, checked stores, advancing in loops,
the block-pointer matmul, 1-D and 3-D blocks, control flow; and what Triton refuses."""

import math

import numpy as np
import pytest

import tritium
import tritium.language as tl

from .kernels.block_ptrs import (block_matmul_kernel, checked_copy_kernel, control_kernel, copy_1d_kernel,
                                 copy_3d_kernel, padded_tile_kernel, refused_kernel, row_sum_kernel)
from .kernels.frontend_only import FrontendOnly


def padded_reference(x, off_m, off_n, grid, bm, bn, check, pad):
    """What ``padded_tile_kernel`` writes: each block of x, ``pad`` outside x in checked dims (and
    x's storage, which the test keeps in bounds, in the unchecked ones)."""
    rows = off_m + np.arange(grid[0] * bm)
    cols = off_n + np.arange(grid[1] * bn)
    out = np.full((len(rows), len(cols)), pad, np.float64)
    inside = np.ones_like(out, bool)
    if 0 in check:
        inside &= ((rows >= 0) & (rows < x.shape[0]))[:, None]
    if 1 in check:
        inside &= ((cols >= 0) & (cols < x.shape[1]))[None, :]
    r = np.clip(rows, 0, x.shape[0] - 1)[:, None]
    c = np.clip(cols, 0, x.shape[1] - 1)[None, :]
    full = x[r, c]
    return np.where(inside, full, out)


@pytest.mark.parametrize("m,n,bm,bn,off,order,pad", [
    (37, 21, 16, 8, (0, 0), (1, 0), "zero"),
    (37, 21, 16, 8, (0, 0), (0, 1), "nan"),
    (5, 70, 4, 32, (-3, -5), (1, 0), "nan"),
    (1, 1, 2, 4, (0, 0), (1, 0), ""),
    (64, 32, 32, 32, (0, 0), (0, 1), "zero"),
])
def test_padded_tiles(target, m, n, bm, bn, off, order, pad):
    dev = target.driver
    x = np.random.default_rng(0).standard_normal((m, n)).astype(np.float32)
    grid = (math.ceil((m - off[0]) / bm), math.ceil((n - off[1]) / bn))
    y = dev.to_device(np.full((grid[0] * bm, grid[1] * bn), 7.0, np.float32))
    padded_tile_kernel[grid](dev.to_device(x), y, m, n, n, 1, off[0], off[1], BM=bm, BN=bn, ORDER=order,
                             CHECK=(0, 1), PAD=pad)
    want = padded_reference(x.astype(np.float64), *off, grid, bm, bn, (0, 1), np.nan if pad == "nan" else 0.0)
    np.testing.assert_array_equal(dev.to_host(y), want.astype(np.float32))


def test_transposed_strides_and_one_checked_dimension(target):
    """x is read as the transpose of its storage (strides (1, M)); only dim 0 is checked, and the
    columns fit, so the block is exact there."""
    dev = target.driver
    m, n, bm, bn = 19, 16, 8, 16
    storage = np.random.default_rng(1).standard_normal((n, m)).astype(np.float32)  # x = storage.T
    grid = (math.ceil(m / bm), 1)
    y = dev.to_device(np.full((grid[0] * bm, bn), 7.0, np.float32))
    padded_tile_kernel[grid](dev.to_device(storage), y, m, n, 1, m, 0, 0, BM=bm, BN=bn, ORDER=(0, 1),
                             CHECK=(0,), PAD="nan")
    want = padded_reference(storage.T.astype(np.float64), 0, 0, grid, bm, bn, (0,), np.nan)
    np.testing.assert_array_equal(dev.to_host(y), want.astype(np.float32))


@pytest.mark.parametrize("check", [(0, 1), (1, 0), 0])
def test_checked_stores_write_only_inside(target, check):
    dev = target.driver
    m, n, bm, bn = 13, 16, 8, 8  # columns fit the blocks: checking only rows is enough
    x = np.arange(m * n, dtype=np.int32).reshape(m, n)
    y_host = np.full((m + 3, n), -1, np.int32)  # rows past m are memory the kernel must not touch
    y = dev.to_device(y_host)
    checked_copy_kernel[(math.ceil(m / bm), n // bn)](dev.to_device(x), y, m, n, n, 1, n, 1, BM=bm, BN=bn,
                                                      CHECK=check)
    want = y_host.copy()
    want[:m] = x + 1
    np.testing.assert_array_equal(dev.to_host(y), want)


@pytest.mark.parametrize("method", [False, True])
def test_advance_in_a_loop(target, method):
    dev = target.driver
    m, n = 21, 75
    x = np.random.default_rng(2).standard_normal((m, n)).astype(np.float32)
    out = dev.to_device(np.full(m, np.nan, np.float32))
    row_sum_kernel[(math.ceil(m / 8),)](dev.to_device(x), out, m, n, BM=8, BN=16, METHOD=method)
    np.testing.assert_allclose(dev.to_host(out), x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m,n,k,out", [(37, 45, 53, np.float32), (64, 32, 32, np.float32), (20, 17, 9, np.float16)])
def test_block_pointer_matmul(target, m, n, k, out):
    dev = target.driver
    rng = np.random.default_rng(3)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b_storage = rng.standard_normal((n, k)).astype(np.float32)  # b = storage.T: column-major strides
    c = dev.to_device(np.full((m, n), np.nan, out))
    bm, bn, bk = 16, 16, 16
    block_matmul_kernel[(math.ceil(m / bm), math.ceil(n / bn))](
        dev.to_device(a), dev.to_device(b_storage), c, m, n, k, k, 1, 1, k, n, 1,
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
    a64, b64 = a.astype(np.float64), b_storage.T.astype(np.float64)
    # fp32 operands at Triton's default precision: tf32 (each operand rounded) on tensor cores
    tol = (k + 1) * 2.0**-24 + 2 * 2.0**-11 + (2.0**-11 if out == np.float16 else 0)
    err = np.abs(dev.to_host(c).astype(np.float64) - a64 @ b64)
    assert np.all(err <= tol * (np.abs(a64) @ np.abs(b64)) + 1e-30), err.max()


def test_1d_blocks(target):
    dev = target.driver
    n = 45
    x = np.random.default_rng(4).standard_normal(n).astype(np.float32)
    y_host = np.full(n + 5, 7.0, np.float32)
    y = dev.to_device(y_host)
    copy_1d_kernel[(math.ceil(n / 16),)](dev.to_device(x), y, n, B=16)
    want = y_host.copy()
    want[:n] = 2 * x
    np.testing.assert_array_equal(dev.to_host(y), want)


def test_3d_blocks_with_strides_and_nested_advances(target):
    dev = target.driver
    d = (5, 7, 11)
    storage = np.random.default_rng(5).standard_normal((d[2], d[1], d[0])).astype(np.float32)  # x = .T
    y = dev.to_device(np.full(d, np.nan, np.float32))
    copy_3d_kernel[(math.ceil(d[0] / 2),)](dev.to_device(storage), y, *d, 1, d[0], d[0] * d[1], B0=2, B1=4, B2=8)
    np.testing.assert_array_equal(dev.to_host(y), storage.T)


def test_block_pointers_through_if_while_and_helpers(target):
    """Made and returned by a helper, advanced in an if and a while loop, loaded in another helper."""
    dev = target.driver
    n, b, programs = 40, 8, 6
    x = np.random.default_rng(6).standard_normal(n).astype(np.float32)
    y = dev.to_device(np.full(programs * b, np.nan, np.float32))
    control_kernel[(programs,)](dev.to_device(x), y, n, B=b)
    padded = np.concatenate([x, np.zeros(programs * b + b - n, np.float32)])
    want = np.concatenate([padded[(i + i % 2) * b:(i + i % 2 + 1) * b] for i in range(programs)])
    np.testing.assert_array_equal(dev.to_host(y), want)


def test_int1_block_pointers_read_int8(target):
    """Triton reads and writes a block of tl.int1 through a block pointer as tl.int8."""
    dev = target.driver
    x = np.random.default_rng(7).integers(0, 2, (5, 6)).astype(np.bool_)
    y = dev.to_device(np.full((8, 8), 7, np.int8))
    padded_tile_kernel[(1, 1)](dev.to_device(x), y, 5, 6, 6, 1, 0, 0, BM=8, BN=8, ORDER=(1, 0), CHECK=(0, 1),
                               PAD="zero")
    np.testing.assert_array_equal(dev.to_host(y), padded_reference(x.astype(np.int64), 0, 0, (1, 1), 8, 8, (0, 1), 0))


@pytest.mark.parametrize("case,message", [
    ("mask", "mask and other cannot be given when loading through a block pointer"),
    ("other", "mask and other cannot be given when loading through a block pointer"),
    ("store_mask", "mask cannot be given when storing through a block pointer"),
    ("nan_int", "padding option \"nan\" is not supported for integer block pointers"),
    ("bad_padding", "padding option 'one' is not supported"),
    ("duplicate", "duplicate dimension in boundary_check"),
    ("out_of_range", "boundary_check dimension 2 is not a dimension of the 2-d block"),
    ("store_out_of_range", "boundary_check dimension -1 is not a dimension"),
    ("not_pow2", "block_shape elements must be powers of two"),
    ("rank", "must have the same length"),
    ("order", "order must be a permutation"),
    ("advance_rank", "needs 2 offsets, got 1"),
    ("offsets_i64", "block pointers only support 32-bit offsets"),
    ("block_base", "base must be a scalar pointer"),
    ("value_shape", "block shape [16, 16] and value shape [16, 8] mismatch"),
    ("value_dtype", "block element type tl.float32 and value element type tl.float16 mismatch"),
    ("tensor_boundary_check", "apply to block pointers (tl.make_block_ptr) only"),
    ("tensor_padding", "apply to block pointers (tl.make_block_ptr) only"),
    ("tensor_store_boundary_check", "boundary_check applies to block pointers"),
    ("advance_tensor", "tl.advance expects a block pointer"),
    ("loop_type", "loop-carried variable 'p'"),
    ("return_types", "block pointer block_ptr(<[16], tl.float32>, order=[0]) on one path and"),
    ("if_types", "'p' is a block pointer block_ptr(<[16, 16], tl.float32>, order=[0, 1]) in one branch"),
])
def test_what_triton_refuses(case, message):
    with pytest.raises(tritium.CompilationError) as info:
        tritium.compile(refused_kernel, signature="*fp32,*i32", constants={"CASE": case}, target=FrontendOnly())
    assert message in str(info.value) and "block_ptrs.py:" in str(info.value), str(info.value)


def test_names_are_triton_s():
    assert tl.tensor.advance is not None and "make_block_ptr" not in tl.NOT_YET and "advance" not in tl.NOT_YET
