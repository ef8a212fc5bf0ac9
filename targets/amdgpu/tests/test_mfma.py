"""``tl.dot`` on CDNA's matrix cores (``v_mfma_f32_16x16x16``), executed: the products' code is
generated with the amdgpu target's instruction declaration and run on the SIMT emulator at 64 lanes,
the instruction emulated from an independent statement of AMD's operand layout; and compiled: the
code objects of gfx942 hold the instructions, where RDNA's (gfx1100) multiply with FMAs."""

from __future__ import annotations

import numpy as np
import pytest
import tritium
import tritium.language as tl
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.passes.gpu_layout import assign_gpu_layouts
from tritium_amdgpu import toolchain
from tritium_amdgpu.hooks import AmdgpuHooks
from tritium_simt.emulator import HostThreadHooks, run

WAVE = 64


class AmdLayout:
    """AMD's statement of ``v_mfma_f32_16x16x16_f16``'s operands (the matrix instruction calculator's
    formulas), one 32-bit register (two K elements of A and B) or one accumulator an entry."""

    def __init__(self, which: str):
        self.which = which

    def coordinates(self, lane: int, entry: int) -> tuple[int, int]:
        i, group = lane % 16, lane // 16
        if self.which == "a":  # A[i][k]: lane i + 16 (k // 4), item k % 4
            return i, 4 * group + 2 * entry
        if self.which == "b":  # B[k][j]: lane j + 16 (k // 4)
            return 4 * group + 2 * entry, i
        return 4 * group + entry, i  # D[i][j]: lane j + 16 (i // 4), item i % 4


TRUTH = (AmdLayout("a"), AmdLayout("b"), AmdLayout("c"))


@tritium.jit
def chained_kernel(a_ptr, b_ptr, v_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                   LOOPS: tl.constexpr):
    """A K loop carrying its accumulator, a row softmax on it, and a second product (attention's)."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    acc = tl.zeros((M, N), tl.float32)
    for i in range(LOOPS):
        a = tl.load(a_ptr + i * M * K + rm[:, None] * K + rk[None, :])
        b = tl.load(b_ptr + i * K * N + rk[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    p = tl.exp(acc - tl.max(acc, 1)[:, None])
    v = tl.load(v_ptr + rn[:, None] * N + rn[None, :])
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], tl.dot(p.to(tl.float16), v))


SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "v_ptr": "*fp16", "out_ptr": "*fp32"}


@pytest.mark.parametrize("m,n,k,loops,num_warps", [(16, 16, 16, 1, 1), (64, 32, 32, 2, 4), (32, 64, 16, 3, 2)])
def test_products_on_mfma_match_float64_at_64_lanes(m, n, k, loops, num_warps):
    mfma = AmdgpuHooks(WAVE, matrix_cores=True).warp_matrix_op("fp16", "fp32")
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((loops, m, k)).astype(np.float16)
    b = rng.standard_normal((loops, k, n)).astype(np.float16)
    v = rng.standard_normal((n, n)).astype(np.float16)
    out = np.full((m, n), np.nan, np.float32)
    compiled = tritium.compile(chained_kernel, signature=SIG, constants={"M": m, "N": n, "K": k, "LOOPS": loops},
                               target="amdgpu", arch="gfx942", num_warps=num_warps)
    with tile.context():
        module = ir.Module.parse(compiled.asm["tile-opt"])
        assign_gpu_layouts(module, num_warps, WAVE, matrix_unit=HostThreadHooks(WAVE, mfma).warp_matrix_op)
        assert "#tile.mma" in str(module)
        run(module, (1,), [a, b, v, out], num_warps=num_warps, warp_size=WAVE, matrix=mfma, truth=TRUTH)
    acc = sum(a[i].astype(np.float64) @ b[i].astype(np.float64) for i in range(loops))
    p = np.exp(acc - acc.max(1, keepdims=True))
    want = p.astype(np.float16).astype(np.float64) @ v.astype(np.float64)
    scale = (np.abs(p) @ np.abs(v.astype(np.float64))).max()
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-3 * scale)  # p rounded to fp16 alike; sums in fp32


@pytest.mark.skipif(toolchain.linker() is None, reason="no ld.lld")
@pytest.mark.parametrize("arch,count", [("gfx942", 4 + 16), ("gfx1100", 0)])
def test_cdna_code_objects_hold_the_instruction_rdna_ones_fma(arch, count):
    """Per wavefront of 4: the first product 4 tiles of one K step, the second 4 of four."""
    c = tritium.compile(chained_kernel, signature=SIG, constants={"M": 64, "N": 64, "K": 16, "LOOPS": 1},
                        target="amdgpu", arch=arch, num_warps=4)
    asm = c.asm["amdgcn"]
    assert asm.count("v_mfma_f32_16x16x16") == count and c.metadata["spills"] == 0
    assert ("v_fma" in asm or "v_fmac" in asm or "v_pk_fma" in asm) if not count else True


@tritium.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :]),
                     tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :]), acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@pytest.mark.skipif(toolchain.linker() is None, reason="no ld.lld")
def test_pipelines_that_would_not_fit_lds_run_shallower():
    """128 x 128 x 64 fp16 blocks: three stages of rings are 96 KiB, more than a CDNA workgroup's
    64 KiB of LDS; the layout stage pipelines less deep instead of failing (and says so)."""
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "K": "i32"}
    c = tritium.compile(matmul_kernel, signature=sig, constants={"BM": 128, "BN": 128, "BK": 64}, target="amdgpu",
                        arch="gfx942", num_warps=4, num_stages=3)
    assert c.metadata["num_stages"] < 3 and c.metadata["lds"] == c.metadata["shared"] <= 65536
    assert "v_mfma_f32_16x16x16" in c.asm["amdgcn"]
    small = tritium.compile(matmul_kernel, signature=sig, constants={"BM": 32, "BN": 32, "BK": 32}, target="amdgpu",
                            arch="gfx942", num_warps=4, num_stages=3)
    assert "num_stages" not in small.metadata  # three stages fit: as asked


@pytest.mark.skipif(toolchain.linker() is None, reason="no ld.lld")
def test_bf16_products_run_on_the_bf16_instruction():
    sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*fp32", "K": "i32"}
    c = tritium.compile(matmul_kernel, signature=sig, constants={"BM": 32, "BN": 32, "BK": 32}, target="amdgpu",
                        arch="gfx90a", num_warps=4)
    assert "v_mfma_f32_16x16x16bf16_1k" in c.asm["amdgcn"]
