"""Block pointers on nvptx without a GPU: the block-pointer matmul of the conformance suite compiles
to PTX whose loads are predicated by the boundary checks and whose K loop carries the advanced
offsets, and ptxas assembles it without spills."""

from __future__ import annotations

import re

import pytest
from tritium.runtime.compiler import compile_specialized
from tritium_conformance.cases_block_ptr import block_matmul_kernel, block_tile_kernel
from tritium_nvptx import toolchain

SCALARS = ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")


@pytest.mark.parametrize("dtype,block,num_warps", [("fp32", 64, 4), ("fp16", 64, 4), ("fp32", 32, 2)])
def test_block_pointer_matmul_assembles(target, dtype, block, num_warps):
    types = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{dtype}", **{s: "i32" for s in SCALARS}}
    k = compile_specialized(block_matmul_kernel, target, types, {"BLOCK_M": block, "BLOCK_N": block, "BLOCK_K": 32},
                            {"stride_ak": "1", "stride_bk": "1", "stride_cn": "1"}, {"num_warps": num_warps})
    ptx = k.asm["ptx"]
    # boundary-checked loads are predicated, or (pipelined into a product's ring) zero-filling copies
    assert re.search(r"@%p\d+ ld\.global|cp\.async\.c[ag]\.shared\.global \[%rd\d+\], \[%rd\d+\], \d+, %r", ptx)
    # tensor cores (test_dot): fp32 at Triton's default precision as tf32
    assert ("mma.sync.aligned.m16n8k8" if dtype == "fp32" else "mma.sync.aligned.m16n8k16") in ptx
    if toolchain.ptxas_path():
        assert k.metadata["registers"] > 0 and k.metadata["spills"] == 0


def test_padded_tile_assembles(target):
    types = {"x_ptr": "*fp16", "y_ptr": "*fp16", **{s: "i32" for s in ("M", "N", "sxm", "sxn", "off_m", "off_n")}}
    k = compile_specialized(block_tile_kernel, target, types, {"BM": 32, "BN": 64, "ORDER": (1, 0), "PAD": "nan"},
                            {"sxn": "1"}, {"num_warps": 4})
    assert "st.global" in k.asm["ptx"]
    if toolchain.ptxas_path():
        assert k.metadata["spills"] == 0
