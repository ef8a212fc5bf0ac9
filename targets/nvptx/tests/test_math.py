"""Triton's math functions in the PTX they compile to: libdevice where Triton calls it, and the
correctly rounded instructions for ``sqrt_rn``/``div_rn`` where ``sqrt`` and ``/`` approximate."""

from __future__ import annotations

import re

import pytest
import tritium
import tritium.language as tl
from tritium.runtime.compiler import compile_specialized


@tritium.jit
def math_kernel(x_ptr, y_ptr, z_ptr, out_ptr, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    z = tl.load(z_ptr + offs)
    if FN == "erf":
        r = tl.erf(x)
    elif FN == "sqrt_rn":
        r = tl.sqrt_rn(x) + tl.sqrt(y)
    elif FN == "div_rn":
        r = tl.div_rn(x, y) + z / y
    elif FN == "fdiv_ieee":
        r = tl.fdiv(x, y, ieee_rounding=True)
    elif FN == "fdiv":
        r = tl.fdiv(x, y)
    elif FN == "fma":
        r = tl.fma(x, y, z)
    elif FN == "umulhi":
        r = tl.umulhi(x, y)
    elif FN == "clamp_nan":
        r = tl.clamp(x, y, z, propagate_nan=tl.PropagateNan.ALL)
    elif FN == "clamp":
        r = tl.clamp(x, y, z)
    else:
        r = tl.sigmoid(x)
    tl.store(out_ptr + offs, r)


def ptx_of(target, fn: str, dtype: str = "fp32") -> str:
    types = {name: f"*{dtype}" for name in ("x_ptr", "y_ptr", "z_ptr", "out_ptr")}
    k = compile_specialized(math_kernel, target, types, {"FN": fn, "BLOCK": 128}, {n: "D" for n in types},
                            {"num_warps": 1})
    return k.asm["ptx"]


@pytest.mark.parametrize("dtype, callee", [("fp32", "__nv_erff"), ("fp64", "__nv_erf")])
def test_erf_calls_libdevice(target, dtype, callee):
    ptx = ptx_of(target, "erf", dtype)
    # libdevice is linked in and inlined: its body replaces the call, no unresolved function is left
    assert not re.search(rf"\.extern\s+\.func.*{callee}", ptx)
    assert "call" not in ptx.split(".entry", 1)[1] and "erf" not in ptx.split(".entry", 1)[1]
    assert re.search(r"ex2\.approx|fma\.rn\.f(32|64)", ptx)


def test_erf_llvm_ir_names_libdevice(target):
    types = {name: "*fp32" for name in ("x_ptr", "y_ptr", "z_ptr", "out_ptr")}
    k = compile_specialized(math_kernel, target, types, {"FN": "erf", "BLOCK": 128}, {n: "D" for n in types},
                            {"num_warps": 1})
    assert re.search(r'call float @"?__nv_erff"?\(float', k.asm["llir"])


def test_sqrt_rn_is_sqrt_rn_beside_the_approximate_sqrt(target):
    ptx = ptx_of(target, "sqrt_rn")
    assert "sqrt.rn.f32" in ptx and "sqrt.approx.ftz.f32" in ptx


def test_div_rn_is_div_rn_beside_the_full_division(target):
    ptx = ptx_of(target, "div_rn")
    assert "div.rn.f32" in ptx and "div.full.f32" in ptx


@pytest.mark.parametrize("fn, instruction", [("fdiv_ieee", "div.rn.f32"), ("fdiv", "div.full.f32")])
def test_fdiv_honours_ieee_rounding(target, fn, instruction):
    ptx = ptx_of(target, fn)
    assert instruction in ptx and ("div.full.f32" if fn == "fdiv_ieee" else "div.rn.f32") not in ptx


@pytest.mark.parametrize("dtype, instruction", [("fp32", "fma.rn.f32"), ("fp64", "fma.rn.f64")])
def test_fma_is_one_instruction(target, dtype, instruction):
    assert instruction in ptx_of(target, "fma", dtype)


@pytest.mark.parametrize("dtype, instruction", [("i32", "mul.hi.u32"), ("u64", "mul.hi.u64")])
def test_umulhi_is_a_high_multiply(target, dtype, instruction):
    assert instruction in ptx_of(target, "umulhi", dtype)  # LLVM recognises the widened / split products


def test_clamp_propagating_nan_uses_the_nan_min_max(target):
    assert re.search(r"max\.NaN\.f32", ptx_of(target, "clamp_nan"))
    ptx = ptx_of(target, "clamp")
    assert "max.f32" in ptx and "min.f32" in ptx and "NaN" not in ptx


def test_sigmoid_uses_ex2_and_the_full_division(target):
    ptx = ptx_of(target, "sigmoid")
    assert "ex2.approx.f32" in ptx and "div.full.f32" in ptx


@tritium.jit
def xor_sum_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr, tl.xor_sum(tl.load(x_ptr + tl.arange(0, BLOCK))))


def test_xor_sum_shuffles_xors_across_the_warp_and_warps(target):
    k = compile_specialized(xor_sum_kernel, target, {"x_ptr": "*i32", "out_ptr": "*i32"}, {"BLOCK": 1024},
                            {"x_ptr": "D", "out_ptr": "D"}, {"num_warps": 4})
    ptx = k.asm["ptx"]
    assert "shfl.sync.bfly.b32" in ptx and re.search(r"xor\.b32", ptx) and "bar.sync" in ptx


@tritium.jit
def barrier_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))
    tl.debug_barrier()
    tl.store(out_ptr + BLOCK + offs, tl.load(out_ptr + (BLOCK - 1 - offs)))


def test_debug_barrier_is_a_cta_barrier(target):
    k = compile_specialized(barrier_kernel, target, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 128},
                            {"x_ptr": "D", "out_ptr": "D"}, {"num_warps": 4})
    assert k.asm["ptx"].count("bar.sync") == 1  # the user's, between the stores and the loads


@tritium.jit
def _product(a, b):
    return a * b


@tritium.jit
def product_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr, tl.reduce(tl.load(x_ptr + tl.arange(0, BLOCK)), 0, _product))


def test_reduce_with_a_user_combine_function_shuffles_it(target):
    k = compile_specialized(product_kernel, target, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 1024},
                            {"x_ptr": "D", "out_ptr": "D"}, {"num_warps": 4})
    ptx = k.asm["ptx"]
    assert "shfl.sync.bfly.b32" in ptx and "mul.f32" in ptx and "call" not in ptx  # the helper is inlined


@tritium.jit
def rand_kernel(out_ptr, seed, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.rand(seed, offs) + tl.randn(seed, offs))


def test_random_numbers_are_philox_rounds_of_high_multiplies(target):
    k = compile_specialized(rand_kernel, target, {"out_ptr": "*fp32", "seed": "i32"}, {"BLOCK": 128},
                            {"out_ptr": "D", "seed": ""}, {"num_warps": 4})
    ptx = k.asm["ptx"]
    assert len(re.findall(r"mul\.hi\.u32", ptx)) >= 15  # two per round, ten rounds (zero counters fold)
