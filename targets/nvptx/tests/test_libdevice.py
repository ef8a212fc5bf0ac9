"""``tl.extra.libdevice`` compiles for NVIDIA GPUs: the transcendental functions call libdevice (as
Triton does), the rounding ones are single instructions, and ptxas assembles the result."""

from __future__ import annotations

import pytest
from tritium.runtime.compiler import compile_specialized
from tritium_nvptx import toolchain


@pytest.mark.parametrize("fn, instruction", [("tanh", None), ("tan", None), ("log10", None), ("rint", "cvt.rni"),
                                             ("trunc", "cvt.rzi"), ("round", None), ("copysign", None),
                                             ("isinf", "abs"), ("cuda-tanh", None)])
@pytest.mark.parametrize("dtype", ["fp32", "fp64"])
def test_libdevice_compiles(target, core_kernels, fn, instruction, dtype):
    types = {n: f"*{dtype}" for n in ("x_ptr", "y_ptr", "out_ptr")}
    kernel = core_kernels("libdevice_fns").libdevice_kernel
    k = compile_specialized(kernel, target, types, {"FN": fn, "BLOCK": 128}, {n: "D" for n in types},
                            {"num_warps": 4})
    ptx = k.asm["ptx"]
    assert ".entry" in ptx and ".extern" not in ptx  # libdevice is linked in, nothing left unresolved
    if instruction:
        assert instruction in ptx
    if toolchain.ptxas_path() is not None:
        assert "cubin" in k.asm
