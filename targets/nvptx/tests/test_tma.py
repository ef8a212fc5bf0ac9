"""Host tensor descriptors' blocks copied by TMA (sm_90 on) without a GPU: the blocks a pipelined
product reads become ``cp.async.bulk.tensor`` copies into the ring, completing on one ``mbarrier``
per slot, with the tensor maps as grid-constant parameters after the kernel's own and in the
compile metadata; everything else stays pointer loads. Numbers are checked on the GPU (the
conformance suite's host-descriptor cases, Triton's tutorial 06)."""

from __future__ import annotations

import re

import pytest
import tritium
import tritium.language as tl
from tritium.passes import software_pipeline
from tritium.runtime.compiler import compile_specialized
from tritium_conformance.cases_host_descriptor import host_matmul_kernel
from tritium_nvptx import toolchain
from tritium_nvptx.target import ARCH_ENV, NvptxTarget


@pytest.fixture
def hopper(monkeypatch) -> NvptxTarget:
    monkeypatch.setenv(ARCH_ENV, "sm_90a")
    return NvptxTarget()


def matmul(target, dtype: str, bm: int, bn: int, bk: int, stages: int = 3):
    block = {"a_desc": [bm, bk], "b_desc": [bk, bn], "c_desc": [bm, bn]}
    types = {name: f"tensordesc<{dtype}{shape}>" for name, shape in block.items()} | {"K": "i32"}
    return compile_specialized(host_matmul_kernel, target, types, {"BM": bm, "BN": bn, "BK": bk}, {},
                               {"num_warps": 4, "num_stages": stages})


def copies(ptx: str) -> list[str]:
    return re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes", ptx)


@pytest.mark.parametrize("dtype,bm,bn,bk,stages", [("fp16", 128, 128, 64, 3), ("fp32", 64, 64, 32, 4),
                                                    ("fp16", 64, 256, 64, 2)])
def test_pipelined_descriptor_blocks_are_tma_copies(hopper, dtype, bm, bn, bk, stages):
    k = matmul(hopper, dtype, bm, bn, bk, stages)
    layout, ptx = k.asm["tile-layout"], k.asm["ptx"]
    assert "tile.descriptor_load" not in layout
    for op in ("tensor_copy_init", "async_tensor_copy", "tensor_copy_wait", "tensor_copy_done"):
        assert f'"tile.{op}"' in layout
    size = 2 if dtype == "fp16" else 4
    blocks = {name: max(1, cols * size // 128) for name, cols in (("a", bk), ("b", bn))}  # 128-byte column blocks
    # stages - 1 ahead before the loop and one in it, per column block, for a and b (c is stored)
    assert len(copies(ptx)) == stages * (blocks["a"] + blocks["b"])
    assert ptx.count("mbarrier.init.shared::cta.b64") == 2 * stages
    assert "mbarrier.try_wait.parity.shared::cta.b64" in ptx and "mbarrier.inval.shared::cta.b64" in ptx
    assert len(re.findall(r"\.param \.align 64 \.b8 host_matmul_kernel_param_1[34]\[128\]", ptx)) == 2
    assert "cvta.param.u64" in ptx and "cp.async.cg" not in ptx
    assert k.metadata["tensor_maps"] == [
        {"base": 0, "rank": 2, "box": [min(bk, 128 // size), bm], "element_bytes": size,
         "swizzle": min(128, bk * size)},
        {"base": 4, "rank": 2, "box": [min(bn, 128 // size), bk], "element_bytes": size,
         "swizzle": min(128, bn * size)}]
    # the rings (slots, then a barrier object per slot) start 1024-byte aligned, as swizzled boxes need
    assert all(int(o) % 1024 == 0 for o in re.findall(r"tile\.shared_offset = (\d+)", layout))
    if toolchain.ptxas_path():
        assert k.metadata["spills"] == 0


def test_an_arch_without_tma_keeps_pointer_copies(monkeypatch):
    monkeypatch.setenv(ARCH_ENV, "sm_80")
    k = matmul(NvptxTarget(), "fp16", 64, 64, 32)
    assert not copies(k.asm["ptx"]) and '"tile.async_copy"' in k.asm["tile-layout"] and "tensor_maps" not in k.metadata


@tritium.jit
def transposed_kernel(a_desc, w_desc, out, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """``a @ w.T`` with w ``[N, K]``: its block, copied as stored, is the product's K-major B."""
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([0, k]), w_desc.load([0, k]).T, acc)
    tl.store(out + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], acc)


def test_a_transposed_descriptor_block_is_read_k_major_from_its_ring(hopper):
    types = {"a_desc": "tensordesc<fp16[128, 64]>", "w_desc": "tensordesc<fp16[64, 64]>", "out": "*fp32", "K": "i32"}
    k = compile_specialized(transposed_kernel, hopper, types, {"BM": 128, "BN": 64, "BK": 64}, {},
                            {"num_warps": 4, "num_stages": 3})
    ptx = k.asm["ptx"]
    assert len(copies(ptx)) == 3 * 2
    # both operands K-major from the rings: no transposes, no staging through the product's scratch
    assert re.search(r"wgmma\.mma_async[^;]*, p, 1, 1, 0, 0;", ptx)
    assert "st.shared" not in ptx.split("wgmma.fence")[0].split("mbarrier.try_wait")[-1]


@tritium.jit
def copy_kernel(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    dst.store([0, 0], src.load([0, 0]) * 2)


def test_descriptor_blocks_no_product_reads_stay_pointer_loads(hopper):
    types = {"src": "tensordesc<fp16[64, 64]>", "dst": "tensordesc<fp16[64, 64]>"}
    k = compile_specialized(copy_kernel, hopper, types, {"BM": 64, "BN": 64}, {}, {"num_warps": 4})
    assert not copies(k.asm["ptx"]) and "tensor_maps" not in k.metadata


def test_a_kept_block_outside_a_ring_copies_through_its_scratch_and_waits(hopper, monkeypatch):
    """Where the pipeline leaves a block it was kept for (here: told to pipeline nothing), the
    block is copied into its own scratch with its own barrier, and read from there."""
    monkeypatch.setattr(software_pipeline._Loop, "pipeline", lambda self: 0)
    k = matmul(hopper, "fp16", 64, 64, 64)
    ptx = k.asm["ptx"]
    assert len(copies(ptx)) == 2 and ptx.count("mbarrier.init.shared::cta.b64") == 2
    assert '"tile.descriptor_load"' in k.asm["tile-layout"] and len(k.metadata["tensor_maps"]) == 2
