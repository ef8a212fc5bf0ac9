"""8-bit floats and round-toward-zero downcasts compile for NVIDIA GPUs (PTX assembled with ptxas
where it is installed): the conversions are integer and float arithmetic on the bits, the same
as on every target (the H100 runs the numeric tests of tests/test_fp8.py)."""

from __future__ import annotations

import pytest
from tritium.language import dtypes as T
from tritium.runtime.compiler import compile_specialized
from tritium_nvptx import toolchain


@pytest.mark.parametrize("kernel, types, constants", [
    ("to_fp8", {"x_ptr": "*fp32", "e4_ptr": "*u8", "e5_ptr": "*u8", "n": "i32"}, {"BLOCK": 256}),
    ("from_fp8", {"bits_ptr": "*u8", "f32_ptr": "*fp32", "f16_ptr": "*fp16", "f64_ptr": "*fp64", "other_ptr": "*u8"},
     {"E5": True, "BLOCK": 256}),
    ("fp8_pointers", {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "out_ptr": "*fp8e4nv", "n": "i32"}, {"BLOCK": 128}),
    ("to_variant", {"x_ptr": "*fp32", "out_ptr": "*u8", "n": "i32"}, {"FMT": "fp8e4b15", "BLOCK": 256}),
    ("to_variant", {"x_ptr": "*fp16", "out_ptr": "*u8", "n": "i32"}, {"FMT": "fp8e4b8", "BLOCK": 256}),
    ("from_variant", {"bits_ptr": "*u8", "f32_ptr": "*fp32", "f16_ptr": "*fp16", "bf16_ptr": "*fp32"},
     {"FMT": "fp8e5b16", "BF16": True, "BLOCK": 256}),
    ("toward_zero", {"x_ptr": "*fp64", "h_ptr": "*fp16", "hz_ptr": "*fp16", "f_ptr": "*fp32", "fz_ptr": "*fp32",
                     "n": "i32"}, {"BLOCK": 256}),
])
def test_fp8_kernels_compile_to_ptx(target, core_kernels, kernel, types, constants):
    kernel = getattr(core_kernels("fp8"), kernel)
    constants = {k: T.from_signature(v) if str(v).startswith("fp8") else v for k, v in constants.items()}
    k = compile_specialized(kernel, target, types, constants, {n: "D" for n in types if n != "n"}, {"num_warps": 4})
    ptx = k.asm["ptx"]
    assert ".entry" in ptx
    if toolchain.ptxas_path() is not None:  # assembled: a cubin, with its registers
        assert "cubin" in k.asm and k.metadata["registers"] > 0
