"""``tl.dot`` on Hopper's warpgroup instruction (``wgmma``, sm_90a) without a GPU: the tutorial's
matmul and attention's chained products become ``wgmma.mma_async`` reading swizzled shared memory
through descriptors (A from registers for the second product), each operand copied once with
``cp.async``, assembled by ptxas without spills. Numbers are checked on the GPU (the conformance
suite's dot and attention cases)."""

from __future__ import annotations

import re

import pytest
import tritium
import tritium.language as tl
from tritium.runtime.compiler import compile_specialized
from tritium_conformance.cases_attention import attention_forward_kernel
from tritium_nvptx import toolchain
from tritium_nvptx.target import ARCH_ENV, NvptxTarget

from .test_dot import compile_matmul


@pytest.fixture
def hopper(monkeypatch) -> NvptxTarget:
    monkeypatch.setenv(ARCH_ENV, "sm_90a")
    return NvptxTarget()


def wgmma(ptx: str) -> list[str]:
    return re.findall(r"wgmma\.mma_async\.sync\.aligned\.(m\d+n\d+k\d+\.\S+)\s+\{[^}]*\},\s*([^,]+),", ptx)


# dtype, BM, BN, BK, warps, stages: tutorial 03's Hopper configs and smaller ones
CONFIGS = [("fp16", 128, 256, 64, 8, 3), ("bf16", 64, 64, 32, 4, 4), ("fp16", 128, 64, 32, 4, 4),
           ("fp16", 64, 256, 32, 4, 4)]


@pytest.mark.parametrize("dtype,bm,bn,bk,warps,stages", CONFIGS, ids=["-".join(map(str, c)) for c in CONFIGS])
def test_tutorial_matmul_runs_on_warpgroup_instructions(hopper, dtype, bm, bn, bk, warps, stages):
    k = compile_matmul(hopper, dtype, bm, bn, bk, warps, stages)
    ptx = k.asm["ptx"]
    kind = {"fp16": "f16", "bf16": "bf16"}[dtype]
    # per K step of 16, each group of 4 warps issues one m64 instruction per 64 rows it owns, all of N
    shapes = [shape for shape, _ in wgmma(ptx)]
    assert shapes == [f"m64n{bn}k16.f32.{kind}.{kind}"] * (bk // 16 * bm // (16 * warps))
    assert not re.search(r"\bmma\.sync|ldmatrix", ptx)
    for statement in ("wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned"):
        assert statement in ptx
    # A K-major (trans-a 0), B stored along N (trans-b 1)
    assert re.search(r"wgmma\.mma_async[^;]*, p, 1, 1, 0, 1;", ptx)
    # every element copied by one thread: (BM + BN) * BK 16-byte copies per stage, stages - 1 ahead
    per_stage = (bm + bn) * bk * 2 // 16 // (32 * warps)
    assert len(re.findall(r"cp\.async\.cg\.shared\.global", ptx)) == per_stage * stages
    if toolchain.ptxas_path():
        assert k.metadata["spills"] == 0 and k.metadata["shared"] == stages * (bm + bn) * bk * 2


def test_k_steps_descriptors_are_one_add_from_their_tile_s(hopper):
    """Each operand tile's descriptor is made once per product (shift, mask, fields); every K step's
    is then one 64-bit add of a constant to it, as Triton's are: in attention's loop the whole
    descriptor per instruction cost about a hundred instructions an iteration."""
    ptx = compile_matmul(hopper, "fp16", 128, 256, 64, 8, 3).asm["ptx"]
    start = ptx.index("wgmma.fence.sync.aligned")
    issue = ptx[start:ptx.index("wgmma.commit_group", start)]
    assert len(wgmma(issue)) == 4  # BK / 16 steps of the group's 64 rows
    assert len(re.findall(r"shr\.u64", issue)) == 2  # the A and B tiles of this iteration's slot
    assert len(re.findall(r"add\.s64\s+%rd\d+, %rd\d+, (?:%rd\d+|\d+);", issue)) == 7  # one per other descriptor


@pytest.mark.parametrize("dtype,kind", [("fp8e4nv", "e4m3"), ("fp8e5", "e5m2")])
def test_tutorial_fp8_matmul_runs_on_fp8_warpgroup_instructions(hopper, dtype, kind):
    """Tutorial 03's fp8 path (b transposed, so K-major): the product takes the fp8 operands, not
    their fp16 widening, copied at a byte an element; B stored along N falls back to ``mma.sync``
    of fp8 (the instruction transposes only 16-bit operands)."""
    k = compile_matmul(hopper, dtype, 128, 256, 64, 8, 3, b_k_major=True)
    ptx = k.asm["ptx"]
    assert [shape for shape, _ in wgmma(ptx)] == [f"m64n256k32.f32.{kind}.{kind}"] * 2
    assert re.search(r"wgmma\.mma_async[^;]*, p, 1, 1; }", ptx)  # no transposes
    assert len(re.findall(r"cp\.async\.cg\.shared\.global", ptx)) == (128 + 256) * 64 // 16 // 256 * 3
    if toolchain.ptxas_path():
        assert k.metadata["spills"] == 0
    ptx = compile_matmul(hopper, dtype, 64, 64, 64, 4, 3).asm["ptx"]
    assert "wgmma" not in ptx and f"mma.sync.aligned.m16n8k32.row.col.f32.{kind}.{kind}.f32" in ptx


@pytest.mark.parametrize("bm,bn,warps,stages", [(128, 128, 8, 3), (128, 64, 4, 4)])
def test_fp32_matmul_with_b_k_major_runs_on_tf32_warpgroup_instructions(hopper, bm, bn, warps, stages):
    """``x @ w.T`` at Triton's default tf32: ``m64nNk8`` from both operands' K-major tiles; with B
    stored along N (which the instruction cannot read for 32-bit operands), ``mma.sync`` of tf32 on
    the warp grid that reads the fewest fragments, as before the group instruction existed."""
    k = compile_matmul(hopper, "fp32", bm, bn, 32, warps, stages, b_k_major=True)
    ptx = k.asm["ptx"]
    assert [shape for shape, _ in wgmma(ptx)] == [f"m64n{bn}k8.f32.tf32.tf32"] * (32 // 8 * bm // (16 * warps))
    assert re.search(r"wgmma\.mma_async[^;]*, p, 1, 1; }", ptx) and "mma.sync" not in ptx
    if toolchain.ptxas_path():
        assert k.metadata["spills"] == 0
    k = compile_matmul(hopper, "fp32", bm, bn, 32, warps, stages)
    assert "wgmma" not in k.asm["ptx"] and "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in k.asm["ptx"]
    grid = re.search(r"#tile\.mma<\[16 : i32, 8 : i32\], \[(\d+) : i32, (\d+) : i32\]", k.asm["tile-layout"]).groups()
    assert grid != (str(warps), "1")  # not the group instruction's rows-only split


@tritium.jit
def int8_matmul(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """int8 into int32, B K-major, the sum written ``acc += tl.dot(a, b)`` (folded into the product)."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.int32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] + rn[None, :] * K)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@pytest.mark.parametrize("bm,bn,warps", [(128, 256, 8), (64, 32, 4)])
def test_int8_products_run_on_int8_warpgroup_instructions(hopper, bm, bn, warps):
    types = {"a_ptr": "*i8", "b_ptr": "*i8", "c_ptr": "*i32", "K": "i32"}
    k = compile_specialized(int8_matmul, hopper, types, {"BM": bm, "BN": bn, "BK": 64}, {n: "D" for n in types},
                            {"num_warps": warps, "num_stages": 3})
    ptx = k.asm["ptx"]
    assert [shape for shape, _ in wgmma(ptx)] == [f"m64n{bn}k32.s32.s8.s8"] * (2 * bm // (16 * warps))
    assert re.search(r"wgmma\.mma_async[^;]*, p; }", ptx)  # an integer product takes only scale-d
    if toolchain.ptxas_path():
        assert k.metadata["spills"] == 0


def test_an_arch_without_warpgroup_instructions_keeps_warp_instructions(target):
    ptx = compile_matmul(target, "fp16", 128, 256, 64, 8, 3).asm["ptx"]  # sm_90, not sm_90a
    assert "wgmma" not in ptx and re.search(r"\bmma\.sync", ptx)


@pytest.mark.parametrize("head,bm,bn,warps", [(64, 128, 64, 8), (128, 128, 64, 8), (32, 64, 32, 4)])
def test_attention_reads_the_second_product_s_a_from_registers(hopper, head, bm, bn, warps):
    types = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp32", "sm_scale": "fp32", "N_CTX": "i32"}
    k = compile_specialized(attention_forward_kernel, hopper, types, {"HEAD": head, "BM": bm, "BN": bn, "CAUSAL": True},
                            {"Q": "D", "K": "D", "V": "D", "O": "D"}, {"num_warps": warps, "num_stages": 3})
    ptx = k.asm["ptx"]
    found = wgmma(ptx)
    steps = bm // (16 * warps)  # 64-row blocks a group owns
    qk = [shape for shape, a in found if not a.startswith("{")]
    pv = [shape for shape, a in found if a.startswith("{")]
    assert qk == [f"m64n{bn}k16.f32.f16.f16"] * (head // 16 * steps)
    assert pv == [f"m64n{head}k16.f32.f16.f16"] * (bn // 16 * steps)
    # q @ k^T: k's threads hold runs down its columns, stored as [N, K]: both operands K-major
    assert re.search(r"wgmma\.mma_async[^;]*\[?%rd\d+\]?, %rd\d+, p, 1, 1, 0, 0;", ptx)
    # p @ v: A from registers, v stored along N (trans-b 1)
    assert re.search(r"wgmma\.mma_async[^;]*\{%r\d+,%r\d+,%r\d+,%r\d+\}, %rd\d+, p, 1, 1, 1;", ptx)
    if toolchain.ptxas_path() and head < 128:
        assert k.metadata["spills"] == 0
