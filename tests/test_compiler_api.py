"""Triton's compile-only API and host tools: ``triton.compile(ASTSource(...), target=GPUTarget(...))``
picks the installed target that compiles for that GPUTarget (``Target.options_for``) without a
device; ``triton.tools.mxfp``'s E2M1 and E8M0 encodings against their definitions in float64."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource, target_options
from tritium.compiler.errors import CompilationError
from tritium.errors import TargetError
from tritium.tools.mxfp import MXFP4Tensor, MXScaleTensor


@tritium.jit
def offset_copy(a, o, N: tl.constexpr):
    tl.store(o + N, tl.load(a + N))


def _source():  # the signature in another order than the parameters', as Triton's tests give it
    return ASTSource(fn=offset_copy, signature={"N": "constexpr", "o": "*fp32", "a": "*fp32"}, constexprs={"N": 32})


def test_compile_for_the_selected_target_s_device(monkeypatch):
    monkeypatch.setenv("TRITIUM_TARGET", "cpu")
    target = tritium.runtime.driver.active.get_current_target()
    kernel = tritium.compile(src=_source(), target=target)
    assert kernel.target.name == "cpu" and kernel.signature.arg_names == ("a", "o")


@pytest.mark.parametrize("gpu, name, text, needle", [
    (GPUTarget("cuda", 90, 32), "nvptx", "ptx", ".target sm_90a"),
    (GPUTarget("cuda", 80, 32), "nvptx", "ptx", ".target sm_80"),
    (GPUTarget("hip", "gfx942", 64), "amdgpu", "amdgcn", "gfx942"),
])
def test_compile_for_a_gpu_target_without_the_gpu(gpu, name, text, needle):
    kernel = tritium.compile(_source(), target=gpu)
    assert kernel.target.name == name and needle in kernel.asm[text]


def test_a_gpu_target_no_installed_target_compiles_for_is_refused():
    with pytest.raises(TargetError, match="no installed tritium target compiles for"):
        target_options(GPUTarget("hip", "gfx942", 32))  # gfx942 runs 64-wide wavefronts


def test_compile_errors_under_triton_s_module():
    @tritium.jit
    def broken():
        a += 1  # noqa: F821

    with pytest.raises(CompilationError, match="is not defined"):
        tritium.compile(ASTSource(fn=broken, signature={}, constexprs={}))


def test_divisibility_attributes_specialise_the_pointer():
    @tritium.jit
    def copy(a, o):
        tl.store(o + tl.arange(0, 64), tl.load(a + tl.arange(0, 64)))

    plain = tritium.compile(ASTSource(copy, {"a": "*fp32", "o": "*fp32"}), target="cpu")
    aligned = tritium.compile(ASTSource(copy, {"a": "*fp32", "o": "*fp32"}, attrs={(0,): [["tt.divisibility", 16]]}),
                              target="cpu")
    assert "tile.divisibility" not in plain.asm["tile"] and "tile.divisibility = 16" in aligned.asm["tile"]


def test_e2m1_rounds_to_nearest_even_and_saturates():
    values = np.array([0.0, -0.0, 0.25, 0.3, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 5.1, 7.0, -10.0, np.inf, -np.inf])
    want = [0.0, -0.0, 0.0, 0.5, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 6.0, 6.0, -6.0, 6.0, -6.0]
    got = MXFP4Tensor(values).to(np.float64)
    np.testing.assert_array_equal(got, want)
    assert np.signbit(got[1])
    every = np.array([s * v for s in (1, -1) for v in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)])
    np.testing.assert_array_equal(MXFP4Tensor(every).to(np.float64), every)  # each value is its own code


@pytest.mark.parametrize("shape, dim", [((7, 5), 1), ((7, 5), 0), ((3, 4, 6), 2), ((1,), 0)])
def test_e2m1_packing_round_trips(shape, dim):
    t = MXFP4Tensor(np.zeros(shape)).random()
    packed = t.to_packed_tensor(dim)
    assert packed.shape[dim] == (shape[dim] + 1) // 2
    low = np.take(t.data, np.arange(0, shape[dim], 2), axis=dim)
    np.testing.assert_array_equal(np.take(packed, np.arange(low.shape[dim]), axis=dim) & 0xF, low)
    np.testing.assert_array_equal(t.unpack_packed_tensor(packed, dim, shape), t.data)


def test_e8m0_is_a_biased_power_of_two():
    values = np.array([1.0, 2.0, 0.25, 2.0**-127, 2.0**127, 3.0, 0.0, -1.0, np.nan, np.inf])
    scales = MXScaleTensor(values)
    np.testing.assert_array_equal(scales.data, [127, 128, 125, 0, 254, 129, 255, 255, 255, 255])
    got = scales.to(np.float64)
    np.testing.assert_array_equal(got[:6], [1.0, 2.0, 0.25, 2.0**-127, 2.0**127, 4.0])
    assert np.isnan(got[6:]).all()
    drawn = MXScaleTensor(np.zeros(1000)).random(low=0.5, high=32.0).data
    assert drawn.min() >= 126 and drawn.max() <= 132
