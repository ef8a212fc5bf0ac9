"""``tl.extra.libdevice`` compiles for NVIDIA GPUs: the transcendental functions call libdevice (as
Triton does), the rounding ones are single instructions, and ptxas assembles the result."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from tritium.runtime.compiler import compile_specialized
from tritium_nvptx import toolchain


def _core_test_kernels():
    """The kernel of the core tests (tests/kernels/libdevice_fns.py), loaded by path: one copy."""
    path = Path(__file__).resolve().parents[3] / "tests" / "kernels" / "libdevice_fns.py"
    spec = importlib.util.spec_from_file_location("tritium_core_test_libdevice_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


K = _core_test_kernels()


@pytest.mark.parametrize("fn, instruction", [("tanh", None), ("tan", None), ("log10", None), ("rint", "cvt.rni"),
                                             ("trunc", "cvt.rzi"), ("round", None), ("copysign", None),
                                             ("isinf", "abs"), ("cuda-tanh", None)])
@pytest.mark.parametrize("dtype", ["fp32", "fp64"])
def test_libdevice_compiles(target, fn, instruction, dtype):
    types = {n: f"*{dtype}" for n in ("x_ptr", "y_ptr", "out_ptr")}
    k = compile_specialized(K.libdevice_kernel, target, types, {"FN": fn, "BLOCK": 128}, {n: "D" for n in types},
                            {"num_warps": 4})
    ptx = k.asm["ptx"]
    assert ".entry" in ptx and ".extern" not in ptx  # libdevice is linked in, nothing left unresolved
    if instruction:
        assert instruction in ptx
    if toolchain.ptxas_path() is not None:
        assert "cubin" in k.asm
