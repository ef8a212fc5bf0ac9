"""Scans and reductions of several tensors in core's per-thread code generator, run on the host by
``threads_emulator`` (one OS thread per GPU thread) after the real GPU ``tile-layout`` stage, and
compiled to PTX through the nvptx target where it is installed."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.passes.gpu_layout import assign_gpu_layouts

from .test_threads_codegen import nvptx, tile_opt
from .threads_emulator import run


@tritium.jit
def _mul(a, b):
    return a * b


@tritium.jit
def scan_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr, OP: tl.constexpr,
                REVERSE: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    if OP == "cumsum":
        y = tl.cumsum(x, AXIS, reverse=REVERSE)
    else:
        y = tl.associative_scan(x, AXIS, _mul, reverse=REVERSE)
    tl.store(out_ptr + offs, y)


@tritium.jit
def argmax_kernel(x_ptr, v_ptr, i_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :])
    v, i = tl.max(x, AXIS, return_indices=True)
    if AXIS == 0:
        tl.store(v_ptr + c, v)
        tl.store(i_ptr + c, i)
    else:
        tl.store(v_ptr + r, v)
        tl.store(i_ptr + r, i)


def laid_out(kernel, signature, constants, num_warps, warp_size) -> ir.Module:
    text = tile_opt(kernel, signature, constants)
    with tile.context():
        module, _ = assign_gpu_layouts(ir.Module.parse(text), num_warps, warp_size)
        return ir.Module.parse(str(module))


SCAN_SIG = {"x_ptr": "*i32", "out_ptr": "*i32"}


@pytest.mark.parametrize("shape", [(4, 16), (16, 4), (8, 8)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("reverse", [False, True])
def test_scans_inside_threads(shape, axis, op, reverse):
    rng = np.random.default_rng(1)
    x = rng.integers(-3, 4, size=shape).astype(np.int32)
    out = np.full(shape, -7, np.int32)
    constants = {"R": shape[0], "C": shape[1], "AXIS": axis, "OP": op, "REVERSE": reverse}
    with tile.context():
        module = laid_out(scan_kernel, SCAN_SIG, constants, num_warps=2, warp_size=8)
        run(module, (1,), [x, out], num_warps=2, warp_size=8)
    fn = np.cumsum if op == "cumsum" else np.cumprod
    src = np.flip(x, axis) if reverse else x
    expected = fn(src.astype(np.int64), axis=axis).astype(np.int32)
    np.testing.assert_array_equal(out, np.flip(expected, axis) if reverse else expected)


@pytest.mark.parametrize("shape", [(4, 32), (32, 4), (16, 16)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("num_warps", [1, 4])
def test_argmax_carries_indices_across_lanes_and_warps(shape, axis, num_warps):
    rng = np.random.default_rng(2)
    x = rng.integers(0, 5, size=shape).astype(np.float32)  # many ties: the lowest index wins
    n = shape[1 - axis]
    v, i = np.zeros(n, np.float32), np.full(n, -1, np.int32)
    with tile.context():
        module = laid_out(argmax_kernel, {"x_ptr": "*fp32", "v_ptr": "*fp32", "i_ptr": "*i32"},
                          {"R": shape[0], "C": shape[1], "AXIS": axis}, num_warps=num_warps, warp_size=8)
        run(module, (1,), [x, v, i], num_warps=num_warps, warp_size=8)
    np.testing.assert_array_equal(v, x.max(axis=axis))
    np.testing.assert_array_equal(i, x.argmax(axis=axis))


@pytest.mark.parametrize("num_warps", [1, 4])
def test_scan_and_argmax_compile_to_ptx(num_warps):
    with tile.context():
        scan = laid_out(scan_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"},
                        {"R": 32, "C": 32, "AXIS": 1, "OP": "cumsum", "REVERSE": True}, num_warps, 32)
        _, ptx = nvptx(scan, num_warps)
        assert "add.f32" in ptx or "add.rn.f32" in ptx
        arg = laid_out(argmax_kernel, {"x_ptr": "*fp32", "v_ptr": "*fp32", "i_ptr": "*i32"},
                       {"R": 16, "C": 128, "AXIS": 1}, num_warps, 32)
        _, ptx2 = nvptx(arg, num_warps)
        assert "shfl.sync.bfly" in ptx2
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not installed")
    for text in (ptx, ptx2):
        done = subprocess.run([ptxas, "-arch=sm_90", "-o", "/dev/null", "-"], input=text.encode(),
                              capture_output=True)
        assert done.returncode == 0, done.stderr.decode()
