"""Real kernels through the whole nvptx pipeline (frontend, core's GPU layouts and per-thread code
generator, PTX, cubin), without a GPU."""

from __future__ import annotations

import re

import pytest
import tritium
import tritium.language as tl
from tritium.runtime.compiler import compile_specialized
from tritium_nvptx import toolchain

pytest.importorskip("tritium.passes.gpu_layout", reason="core's GPU layout pass is not in this tritium")
pytest.importorskip("tritium.codegen.threads", reason="core's per-thread code generator is not in this tritium")


@tritium.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tritium.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_stride + offs, num / tl.sum(num, axis=0), mask=mask)


def _compile(target, fn, types: dict, constants: dict, specs: dict, **options):
    return compile_specialized(fn, target, types, constants, specs, options)


def test_vector_add_loads_and_stores_16_byte_vectors(target):
    types = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    specs = {"x_ptr": "D", "y_ptr": "D", "out_ptr": "D", "n": "D"}
    k = _compile(target, add_kernel, types, {"BLOCK": 1024}, specs, num_warps=4)
    ptx = k.asm["ptx"]
    assert ".maxntid 128" in ptx
    assert len(re.findall(r"ld\.global\.v4", ptx)) >= 2 and re.search(r"st\.global\.v4", ptx)
    assert k.metadata["num_warps"] == 4
    if toolchain.ptxas_path():
        assert k.metadata["binary_format"] == "cubin" and k.metadata["registers"] > 0


def test_softmax_reduces_with_warp_shuffles_and_ex2(target):
    types = {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32", "out_stride": "i32", "n_cols": "i32"}
    specs = {"out_ptr": "D", "in_ptr": "D", "in_stride": "D", "out_stride": "D", "n_cols": ""}
    k = _compile(target, softmax_kernel, types, {"BLOCK": 1024}, specs, num_warps=8)
    ptx = k.asm["ptx"]
    assert "shfl.sync.bfly.b32" in ptx and "ex2.approx.f32" in ptx and ".maxntid 256" in ptx
    assert k.metadata["shared"] > 0  # the reduction crosses warps
    if toolchain.ptxas_path():
        assert k.metadata["registers"] > 0 and k.metadata["spills"] == 0


@tritium.jit
def fast_math_kernel(a_ptr, b_ptr, c_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a, b, c = tl.load(a_ptr + offs), tl.load(b_ptr + offs), tl.load(c_ptr + offs)
    tl.store(out_ptr + offs, (a * b + c) / tl.sqrt(c) + tl.rsqrt(a))


@pytest.mark.parametrize("fusion", [True, False])
def test_f32_math_uses_triton_s_approximations_and_fuses_multiply_adds(target, fusion):
    types = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "out_ptr": "*fp32"}
    specs = {name: "D" for name in types}
    k = _compile(target, fast_math_kernel, types, {"BLOCK": 128}, specs, num_warps=1, enable_fp_fusion=fusion)
    ptx = k.asm["ptx"]
    assert "div.full.f32" in ptx and "sqrt.approx.ftz.f32" in ptx and "rsqrt.approx.ftz.f32" in ptx
    assert "div.rn.f32" not in ptx
    if fusion:
        assert "fma.rn.f32" in ptx and "mul.rn.f32" not in ptx
    else:  # every operation rounds: ptxas may not fuse them either
        assert "fma.rn.f32" not in ptx and "mul.rn.f32" in ptx and "add.rn.f32" in ptx
