"""Block pointers through the GPU path: the real GPU layout stage and the per-thread code generator,
run on the host by the SIMT emulator (``tritium_simt.emulator``) over several programs, warps and lanes, against numpy:
ragged tiles padded with NaN (also before the tensor), and the block-pointer matmul whose block
pointers advance through the K loop."""

from __future__ import annotations

import math

import numpy as np

from tritium.ir import tile

from .kernels.block_ptrs import block_matmul_kernel, padded_tile_kernel
from .test_block_ptr import padded_reference
from .test_threads_dot import laid_out
from .test_threads_codegen import tile_opt
from tritium_simt.emulator import run


def test_ragged_tiles_padded_with_nan():
    m, n, bm, bn, off = 21, 37, 8, 16, (-3, 2)
    x = np.random.default_rng(10).standard_normal((m, n)).astype(np.float32)
    grid = (math.ceil((m - off[0]) / bm), math.ceil((n - off[1]) / bn))
    y = np.full((grid[0] * bm, grid[1] * bn), 7.0, np.float32)
    types = {"x_ptr": "*fp32", "y_ptr": "*fp32", **{s: "i32" for s in ("M", "N", "sxm", "sxn", "off_m", "off_n")}}
    text = tile_opt(padded_tile_kernel, types, {"BM": bm, "BN": bn, "ORDER": (1, 0), "CHECK": (0, 1), "PAD": "nan"})
    with tile.context():
        run(laid_out(text, 2, 8), grid, [x, y, m, n, n, 1, *off], num_warps=2, warp_size=8)
    want = padded_reference(x.astype(np.float64), *off, grid, bm, bn, (0, 1), np.nan)
    np.testing.assert_array_equal(y, want.astype(np.float32))


def test_block_pointer_matmul_over_warps():
    m, n, k, b = 37, 21, 45, 16
    rng = np.random.default_rng(11)
    a = rng.standard_normal((m, k)).astype(np.float32)
    bt = rng.standard_normal((n, k)).astype(np.float32)  # b = bt.T, column-major strides
    c = np.full((m, n), np.nan, np.float32)
    names = ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")
    types = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", **{s: "i32" for s in names}}
    text = tile_opt(block_matmul_kernel, types, {"BLOCK_M": b, "BLOCK_N": b, "BLOCK_K": b})
    with tile.context():
        run(laid_out(text, 2, 8), (math.ceil(m / b), math.ceil(n / b)), [a, bt, c, m, n, k, k, 1, 1, k, n, 1],
            num_warps=2, warp_size=8)
    a64, b64 = a.astype(np.float64), bt.T.astype(np.float64)
    err = np.abs(c - a64 @ b64)
    assert np.all(err <= (k + 1) * 2.0**-24 * (np.abs(a64) @ np.abs(b64))), err.max()
