"""``tl.dot`` through the whole nvptx pipeline without a GPU: the tutorial's matmul at its block
sizes becomes FMA loops over operands in shared memory, assembled by ptxas without spills."""

from __future__ import annotations

import re

import pytest
import tritium
import tritium.language as tl
from tritium.runtime.compiler import compile_specialized
from tritium_conformance.cases_dot import matmul_kernel  # the conformance suite's tutorial-03 kernel
from tritium_nvptx import toolchain

SCALARS = ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")
BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}


def compile_matmul(target, dtype: str, bm: int, bn: int, bk: int, num_warps: int):
    types = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{dtype}", **{s: "i32" for s in SCALARS}}
    specs = {name: "D" for name in types} | {"stride_ak": "1", "stride_bn": "1", "stride_cn": "1"}
    constants = {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8}
    return compile_specialized(matmul_kernel, target, types, constants, specs, {"num_warps": num_warps})


FMA_CONFIGS = [("fp32", 64, 64, 32, 4), ("fp32", 128, 128, 32, 8), ("fp32", 64, 64, 32, 8)]


@pytest.mark.parametrize("dtype,bm,bn,bk,num_warps", FMA_CONFIGS, ids=["-".join(map(str, c)) for c in FMA_CONFIGS])
def test_fp32_tutorial_matmul_compiles_to_fma_loops_without_spills(target, dtype, bm, bn, bk, num_warps):
    k = compile_matmul(target, dtype, bm, bn, bk, num_warps)
    ptx = k.asm["ptx"]
    per_thread = bm * bn // (32 * num_warps)
    assert len(re.findall(r"\bfma\.rn\.f32", ptx)) == per_thread  # one per accumulator in the K loop
    assert "ld.shared" in ptx and "bar.sync" in ptx
    assert k.metadata["shared"] == (bm + bn) * bk * BYTES[dtype]
    if toolchain.ptxas_path():
        assert k.metadata["registers"] > 0 and k.metadata["spills"] == 0


MMA_CONFIGS = [("fp16", 64, 64, 32, 4), ("fp16", 128, 64, 64, 4), ("fp16", 128, 128, 32, 8), ("bf16", 64, 128, 32, 4)]


@pytest.mark.parametrize("dtype,bm,bn,bk,num_warps", MMA_CONFIGS, ids=["-".join(map(str, c)) for c in MMA_CONFIGS])
def test_16_bit_tutorial_matmul_runs_on_tensor_cores(target, dtype, bm, bn, bk, num_warps):
    """One m16n8k16 ``mma`` per 16 x 8 tile of the warp's block in each step of the K loop (fp32
    accumulators); LLVM may unroll the loop's ``bk / 16`` steps."""
    k = compile_matmul(target, dtype, bm, bn, bk, num_warps)
    ptx = k.asm["ptx"]
    kind = {"fp16": "f16", "bf16": "bf16"}[dtype]
    tiles_per_warp = bm // 16 * (bn // 8) // num_warps
    found = len(re.findall(rf"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.{kind}\.{kind}\.f32", ptx))
    assert found in (tiles_per_warp, tiles_per_warp * bk // 16)
    assert "fma.rn.f32" not in ptx
    assert k.metadata["shared"] == max((bm + bn) * bk * 2, bm * bn * 4)  # the operands, then the accumulator
    if toolchain.ptxas_path():
        assert k.metadata["registers"] > 0


@tritium.jit
def int8_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


@pytest.mark.parametrize("operand,result,instruction", [("i8", "i32", r"mul\.wide\.s16|mad\.lo\.s32|mul\.lo\.s32"),
                                                         ("fp64", "fp64", r"fma\.rn\.f64")])
def test_int8_and_fp64_products(target, operand, result, instruction):
    types = {"a_ptr": f"*{operand}", "b_ptr": f"*{operand}", "c_ptr": f"*{result}"}
    k = compile_specialized(int8_kernel, target, types, {"M": 32, "N": 32, "K": 32}, {n: "D" for n in types},
                            {"num_warps": 4})
    assert re.search(instruction, k.asm["ptx"])
    if toolchain.ptxas_path():
        assert k.metadata["spills"] == 0


@tritium.jit
def batched_kernel(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rb = tl.arange(0, B)[:, None, None]
    a = tl.load(a_ptr + rb * M * K + tl.arange(0, M)[None, :, None] * K + tl.arange(0, K)[None, None, :])
    b = tl.load(b_ptr + rb * K * N + tl.arange(0, K)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    tl.store(c_ptr + rb * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :], tl.dot(a, b))


def test_batched_product_keeps_fma(target):
    types = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"}
    k = compile_specialized(batched_kernel, target, types, {"B": 4, "M": 32, "N": 32, "K": 32},
                            {n: "D" for n in types}, {"num_warps": 4})
    assert len(re.findall(r"\bfma\.rn\.f32", k.asm["ptx"])) == 4 * 32 * 32 // 128
    assert k.metadata["shared"] == 4 * (32 + 32) * 32 * 2
    if toolchain.ptxas_path():
        assert k.metadata["spills"] == 0


def test_warps_split_the_tiles_to_read_the_fewest_fragments():
    from tritium.codegen.threads.warp_matrix import warp_grid
    from tritium_nvptx.hooks import NvptxHooks

    mma = NvptxHooks().warp_matrix_op("fp16", "fp32")
    assert warp_grid(8, 16, 4, mma) == (2, 2)  # 4 x 8 tiles a warp: 16 + 16 fragment reads a step
    assert warp_grid(2, 8, 4, mma) in ((1, 4), (2, 2))
    assert warp_grid(1, 2, 4, mma) is None  # 16 x 16: too few tiles for 4 warps
    assert NvptxHooks().warp_matrix_op("fp32", "fp32") is None


def test_a_product_too_small_for_the_warps_keeps_fma(target):
    types = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"}
    k = compile_specialized(int8_kernel, target, types, {"M": 16, "N": 16, "K": 16}, {n: "D" for n in types},
                            {"num_warps": 4})
    assert "mma.sync" not in k.asm["ptx"] and re.search(r"\bfma\.rn\.f32", k.asm["ptx"])
