"""The GPU lowering of ``tl.dot`` (``codegen.threads.dot``) through the real GPU layout stage, run on
the host by the SIMT emulator (``tritium_simt.emulator``) with several warps and lanes (one OS thread per GPU thread) and
compared with float64 numpy: layouts with copies, dtypes, accumulators carried by loops, and the
tutorial's matmul on ragged sizes over several programs."""

from __future__ import annotations

import numpy as np
import pytest

import tritium.language as tl
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.passes.axis_info import walk
from tritium.passes.gpu_layout import assign_gpu_layouts
from tritium.layout.scratch import scratch_bytes

from .kernels.dots import batched_kernel, composed_kernel, dot_kernel, matmul_kernel
from .test_dot import EPS, check, operands
from .test_threads_codegen import tile_opt
from tritium_simt.emulator import run

POINTERS = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "out_ptr": "*fp32"}


def laid_out(text: str, num_warps: int, warp_size: int) -> ir.Module:
    module = ir.Module.parse(text)
    assign_gpu_layouts(module, num_warps, warp_size)
    return module


def emulate_dot(a, b, c, out_dtype, *, num_warps, warp_size, loops=1, acc=True, out=tl.float32, in_dtype=None,
                operand_type=None):
    m, k = a.shape
    n = b.shape[1]
    short = {np.dtype(np.float32): "fp32", np.dtype(np.float16): "fp16", np.dtype(np.float64): "fp64",
             np.dtype(np.int8): "i8", np.dtype(np.int32): "i32", np.dtype(np.uint16): "u16"}
    types = {"a_ptr": "*" + (operand_type or short[a.dtype]), "b_ptr": "*" + (operand_type or short[b.dtype]),
             "c_ptr": "*" + short[c.dtype], "out_ptr": "*" + short[np.dtype(out_dtype)]}
    text = tile_opt(dot_kernel, types, {"M": m, "N": n, "K": k, "IN": in_dtype, "ACC": acc, "PREC": "ieee",
                                        "OUT": out, "LOOPS": loops})
    result = np.full((m, n), 7, out_dtype)
    with tile.context():
        module = laid_out(text, num_warps, warp_size)
        dots = [op for op in walk(module.operation) if op.name == "tile.dot"]
        assert dots and all("tile.shared_offset" in op.attributes for op in dots)
        run(module, (1,), [a, b, c, result], num_warps=num_warps, warp_size=warp_size)
    return result


CASES = [((16, 32, 16), 2, 8), ((32, 16, 32), 4, 8), ((64, 64, 16), 2, 32), ((2, 4, 16), 2, 8),
         ((1, 16, 16), 4, 4), ((16, 1, 16), 1, 8)]


@pytest.mark.parametrize("shape,num_warps,warp_size", CASES,
                         ids=[f"{'x'.join(map(str, s))}-{w}w{l}" for s, w, l in CASES])
def test_fp32_with_an_accumulator_over_warps_and_lanes(shape, num_warps, warp_size):
    m, n, k = shape
    a, b, a64, b64 = operands(m, n, k, "fp32", seed=20)
    c = np.random.default_rng(21).standard_normal((m, n)).astype(np.float32)
    got = emulate_dot(a, b, c, np.float32, num_warps=num_warps, warp_size=warp_size, loops=2)
    check(got, 2 * (a64 @ b64) + c, 2 * (np.abs(a64) @ np.abs(b64)) + np.abs(c), 2 * (k + 1) * EPS["fp32"])


@pytest.mark.parametrize("out", ["fp32", "fp16"])
def test_fp16_operands(out):
    m, n, k = 16, 16, 32
    a, b, a64, b64 = operands(m, n, k, "fp16", seed=22)
    out_np = np.float16 if out == "fp16" else np.float32
    c = np.zeros((m, n), out_np)
    got = emulate_dot(a, b, c, out_np, num_warps=2, warp_size=8, out=tl.float16 if out == "fp16" else tl.float32)
    check(got, a64 @ b64, np.abs(a64) @ np.abs(b64), (k + 1) * EPS[out])


def test_fp16_accumulator_rounds_once_per_k_step():
    """As on the cpu (``test_dot``): fp32 sums within each K-step of 16, one fp16 rounding per step."""
    m, n, k = 32, 32, 64
    a, b, a64, b64 = operands(m, n, k, "fp16", seed=23)
    got = emulate_dot(a, b, np.zeros((m, n), np.float16), np.float16, num_warps=2, warp_size=8, out=tl.float16)
    want = a64 @ b64
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=0.01, atol=0.01)
    check(got, want, np.abs(a64) @ np.abs(b64), (k // 16 + 1) * EPS["fp16"] + k * EPS["fp32"])


def test_int8_is_exact():
    m, n, k = 16, 16, 32
    a, b, a64, b64 = operands(m, n, k, "int8", seed=23)
    c = np.arange(m * n, dtype=np.int32).reshape(m, n)
    got = emulate_dot(a, b, c, np.int32, num_warps=2, warp_size=8, out=tl.int32)
    np.testing.assert_array_equal(got, a64 @ b64 + c)


def test_fp64():
    m, n, k = 8, 16, 16
    a, b, a64, b64 = operands(m, n, k, "fp64", seed=24)
    c = np.ones((m, n))
    got = emulate_dot(a, b, c, np.float64, num_warps=2, warp_size=8, out=tl.float64)
    check(got, a64 @ b64 + 1, np.abs(a64) @ np.abs(b64) + 1, (k + 1) * EPS["fp64"])


def test_bf16_operands():
    """Read as bf16 from memory (the bits of the rounded values): the host has no bf16 rounding."""
    m, n, k = 16, 16, 16
    a, b, a64, b64 = operands(m, n, k, "bf16", seed=25)
    a, b = ((x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16) for x in (a64, b64))
    got = emulate_dot(a, b, np.zeros((m, n), np.float32), np.float32, num_warps=2, warp_size=8, acc=False,
                      operand_type="bf16")
    check(got, a64 @ b64, np.abs(a64) @ np.abs(b64), (k + 1) * EPS["fp32"])


def tutorial_matmul(dtype: str, bm: int, bn: int, bk: int) -> str:
    """Tutorial 03's matmul on ``dtype`` at ``tile-opt`` (every size and stride a runtime value)."""
    types = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{dtype}", **{name: "i32" for name in (
        "M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")}}
    return tile_opt(matmul_kernel, types, {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk,
                                           "GROUP_SIZE_M": 2})


def test_tutorial_matmul_on_ragged_sizes_with_a_barrier_between_iterations():
    (M, N, K), (BM, BN, BK) = (33, 40, 40), (16, 32, 16)
    a, b, a64, b64 = operands(M, N, K, "fp32", seed=26)
    c = np.full((M, N), np.nan, np.float32)
    text = tutorial_matmul("fp32", BM, BN, BK)
    grid = (-(-M // BM) * -(-N // BN),)
    with tile.context():
        module = laid_out(text, 4, 8)
        loop = next(op for op in walk(module.operation) if op.name == "scf.for")
        body = [op.operation.name for op in loop.regions[0].blocks[0].operations]
        assert body.index("tile.barrier") < body.index("tile.dot")  # the last iteration may still read
        run(module, grid, [a, b, c, M, N, K, K, 1, N, 1, N, 1], num_warps=4, warp_size=8)
    check(c, a64 @ b64, np.abs(a64) @ np.abs(b64), (K + 1) * EPS["fp32"])


def test_a_product_of_a_product_waits_for_the_first_to_be_read():
    """Both dots use the same scratch: a barrier goes between the first's reads and the second's writes."""
    m, k = 16, 32
    a, b, a64, b64 = operands(m, k, k, "fp32", seed=27)
    out, sums = np.full((m, k), np.nan, np.float32), np.full(m, np.nan, np.float32)
    text = tile_opt(composed_kernel, {"a_ptr": "*fp32", "b_ptr": "*fp32", "out_ptr": "*fp32", "sums_ptr": "*fp32",
                                      "flag": "i32"}, {"M": m, "K": k})
    with tile.context():
        module = laid_out(text, 4, 8)
        names = [op.name for op in walk(module.operation)]
        second = [i for i, name in enumerate(names) if name == "tile.dot"][1]
        assert "tile.barrier" in names[names.index("tile.dot"):second]
        run(module, (1,), [a, b, out, sums, 1], num_warps=4, warp_size=8)
    want, bound = a64 @ b64 @ b64, np.abs(a64) @ np.abs(b64) @ np.abs(b64)
    check(out, want, bound, 2 * (k + 1) * EPS["fp32"])
    check(sums, want.sum(axis=1), bound.sum(axis=1), 3 * (k + 1) * EPS["fp32"])


@pytest.mark.parametrize("bs,m,n,k,num_warps", [(4, 16, 16, 16, 2), (2, 8, 32, 32, 4), (8, 2, 4, 16, 2)])
def test_batched_products(bs, m, n, k, num_warps):
    pairs = [operands(m, n, k, "fp32", seed=30 + i) for i in range(bs)]
    a, b = np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])
    a64, b64 = np.stack([p[2] for p in pairs]), np.stack([p[3] for p in pairs])
    c = np.random.default_rng(29).standard_normal((bs, m, n)).astype(np.float32)
    out = np.full((bs, m, n), np.nan, np.float32)
    text = tile_opt(batched_kernel, POINTERS, {"B": bs, "M": m, "N": n, "K": k, "ACC": True})
    with tile.context():
        module = laid_out(text, num_warps, 8)
        dot = next(op for op in walk(module.operation) if op.name == "tile.dot")
        assert scratch_bytes(dot) == bs * (m + n) * k * 4
        run(module, (1,), [a, b, c, out], num_warps=num_warps, warp_size=8)
    check(out, a64 @ b64 + c, np.abs(a64) @ np.abs(b64) + np.abs(c), (k + 1) * EPS["fp32"])


def test_each_thread_reads_its_consecutive_columns_of_b_as_one_vector():
    m, n, k = 16, 32, 16
    a, b, a64, b64 = operands(m, n, k, "fp32", seed=40)
    out = np.full((m, n), np.nan, np.float32)
    text = tile_opt(dot_kernel, POINTERS, {"M": m, "N": n, "K": k, "IN": None, "ACC": False, "PREC": "ieee",
                                           "OUT": tl.float32, "LOOPS": 1}, divisible=tuple(POINTERS))
    with tile.context():
        module = laid_out(text, 2, 8)
        dot = next(op for op in walk(module.operation) if op.name == "tile.dot")
        per_thread = tile.blocked_fields(dot.results[0].type.encoding)["size_per_thread"][-1]
        llvm_ir = run(module, (1,), [a, b, np.zeros((m, n), np.float32), out], num_warps=2, warp_size=8)
    loop = llvm_ir[llvm_ir.index("dot.k:"):llvm_ir.index("dot.k.end:")]
    assert per_thread > 1 and f"load <{per_thread} x float>" in loop
    check(out, a64 @ b64, np.abs(a64) @ np.abs(b64), (k + 1) * EPS["fp32"])
