"""``tl.map_elementwise`` in core's per-thread code generator, run on the host by the SIMT emulator (``tritium_simt.emulator``)
after the real GPU ``tile-layout`` stage (per-element branches and loops become each thread's own
control flow), and compiled to PTX and assembled where the nvptx target and ptxas are installed."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from tritium.ir import tile

from .test_map_elementwise import collatz_kernel, divmod_kernel, pack_kernel, selu_kernel
from .test_threads_codegen import nvptx
from .test_threads_scan import laid_out
from tritium_simt.emulator import run


@pytest.mark.parametrize("num_warps", [1, 2])
def test_branches_and_loops_per_register(num_warps):
    x = np.arange(1, 65, dtype=np.int32)
    y = np.full(64, -1, np.int32)
    with tile.context():
        module = laid_out(collatz_kernel, {"x_ptr": "*i32", "y_ptr": "*i32"}, {"BLOCK": 64}, num_warps, 8)
        run(module, (1,), [x, y], num_warps=num_warps, warp_size=8)

    def steps(v: int) -> int:
        s = 0
        while v != 1:
            v, s = (v // 2 if v % 2 == 0 else 3 * v + 1), s + 1
        return s
    np.testing.assert_array_equal(y, [steps(int(v)) for v in x])


def test_two_results_of_broadcast_arguments():
    R, C = 4, 16
    rng = np.random.default_rng(3)
    a = rng.integers(-1000, 1000, (R, C)).astype(np.int32)
    b = rng.integers(1, 20, C).astype(np.int32)
    q, m = np.zeros((R, C), np.int32), np.zeros((R, C), np.int32)
    sig = {"a_ptr": "*i32", "b_ptr": "*i32", "q_ptr": "*i32", "r_ptr": "*i32"}
    with tile.context():
        module = laid_out(divmod_kernel, sig, {"R": R, "C": C}, 2, 8)
        run(module, (1,), [a, b, q, m], num_warps=2, warp_size=8)
    want_q = np.trunc(a / b[None, :]).astype(np.int32)
    np.testing.assert_array_equal(q, want_q)
    np.testing.assert_array_equal(m, a - want_q * b[None, :])


@pytest.mark.parametrize("block,num_warps", [(64, 2), (16, 2), (256, 1)])
def test_pack_2_passes_consecutive_elements(block, num_warps):
    # the layout stage gives each thread runs of 2 elements, even where the default gives it 1 (16 over 16 threads)
    x = np.arange(block, dtype=np.float32)
    y = 1000 * np.arange(block, dtype=np.float32)
    out = np.zeros(block, np.float32)
    with tile.context():
        module = laid_out(pack_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": block},
                          num_warps, 8)
        run(module, (1,), [x, y, out], num_warps=num_warps, warp_size=8)
    want = np.empty(block, np.float32)
    want[0::2] = x[1::2] + y[0::2]
    want[1::2] = x[0::2] + y[1::2]
    np.testing.assert_array_equal(out, want)


def test_compiles_to_ptx_that_ptxas_assembles():
    with tile.context():
        texts = [nvptx(laid_out(selu_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "alpha": "fp32", "n": "i32"},
                                {"BLOCK": 256}, 4, 32), 4)[1],
                 nvptx(laid_out(collatz_kernel, {"x_ptr": "*i32", "y_ptr": "*i32"}, {"BLOCK": 512}, 4, 32), 4)[1]]
    assert "ex2.approx" in texts[0] or "ex2" in texts[0]
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not installed")
    for text in texts:
        done = subprocess.run([ptxas, "-arch=sm_90", "-o", "/dev/null", "-"], input=text.encode(), capture_output=True)
        assert done.returncode == 0, done.stderr.decode()
