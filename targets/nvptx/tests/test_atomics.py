"""Atomics through the whole nvptx pipeline without a GPU: the PTX has ``atom`` with Triton's
ordering and scope and the operation and type of each op, and ptxas assembles it."""

from __future__ import annotations

import re

import pytest
import tritium
import tritium.language as tl
from tritium.runtime.compiler import compile_specialized
from tritium_nvptx import toolchain

pytest.importorskip("tritium.codegen.threads", reason="core's per-thread code generator is not in this tritium")


@tritium.jit
def rmw_kernel(x_ptr, v_ptr, out_ptr, OP: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr,
               BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p, v = x_ptr + offs, tl.load(v_ptr + offs)
    mask = offs < 100
    if OP == "add":
        old = tl.atomic_add(p, v, mask=mask, sem=SEM, scope=SCOPE)
    elif OP == "max":
        old = tl.atomic_max(p, v, mask=mask, sem=SEM, scope=SCOPE)
    elif OP == "min":
        old = tl.atomic_min(p, v, mask=mask, sem=SEM, scope=SCOPE)
    elif OP == "and":
        old = tl.atomic_and(p, v, mask=mask, sem=SEM, scope=SCOPE)
    elif OP == "or":
        old = tl.atomic_or(p, v, mask=mask, sem=SEM, scope=SCOPE)
    elif OP == "xor":
        old = tl.atomic_xor(p, v, mask=mask, sem=SEM, scope=SCOPE)
    elif OP == "xchg":
        old = tl.atomic_xchg(p, v, mask=mask, sem=SEM, scope=SCOPE)
    else:
        old = tl.atomic_cas(p, v, v, sem=SEM, scope=SCOPE)
    tl.store(out_ptr + offs, old)


@tritium.jit
def lock_kernel(lock_ptr, count_ptr, x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    if tl.load(count_ptr) == 0:
        tl.atomic_xchg(count_ptr, 1)
    else:
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1.0)
    tl.debug_barrier()
    tl.atomic_xchg(lock_ptr, 0)


@tritium.jit
def counter_kernel(counter_ptr, out_ptr, USE_OLD: tl.constexpr):
    old = tl.atomic_add(counter_ptr, 1)
    if USE_OLD:
        tl.store(out_ptr + tl.program_id(0), old)


def _compile(target, fn, types: dict, constants: dict, num_warps: int = 4):
    return compile_specialized(fn, target, types, constants, {}, {"num_warps": num_warps})


def _atoms(ptx: str) -> list[str]:
    return re.findall(r"atom\.[\w.]+", ptx)


def _assembled(k) -> None:
    if toolchain.ptxas_path():
        assert k.metadata["binary_format"] == "cubin"


@pytest.mark.parametrize("op,dtype,instructions", [
    ("add", "i32", ["add.u32"]), ("add", "u64", ["add.u64"]), ("add", "fp16", ["add.noftz.f16"]),
    ("add", "bf16", ["add.noftz.bf16"]), ("add", "fp32", ["add.f32"]), ("add", "fp64", ["add.f64"]),
    ("max", "i32", ["max.s32"]), ("max", "u32", ["max.u32"]), ("min", "i64", ["min.s64"]),
    ("min", "u64", ["min.u64"]), ("max", "fp32", ["max.s32", "min.u32"]), ("min", "fp64", ["min.s64", "max.u64"]),
    ("and", "i32", ["and.b32"]), ("or", "i64", ["or.b64"]), ("xor", "u32", ["xor.b32"]),
    ("xchg", "i32", ["exch.b32"]), ("xchg", "fp64", ["exch.b64"]), ("cas", "i32", ["cas.b32"]),
    ("cas", "fp16", ["cas.b16"]), ("cas", "i64", ["cas.b64"]),
])
def test_each_op_and_type_is_one_atom_instruction(target, op, dtype, instructions):
    types = {"x_ptr": f"*{dtype}", "v_ptr": f"*{dtype}", "out_ptr": f"*{dtype}"}
    k = _compile(target, rmw_kernel, types, {"OP": op, "SEM": None, "SCOPE": None, "BLOCK": 128})
    atoms = _atoms(k.asm["ptx"])
    prefix = "atom.global.acq_rel.gpu" if op == "cas" else "atom.global.gpu.acq_rel"  # Triton's orders
    assert sorted(atoms) == sorted(f"{prefix}.{i}" for i in instructions)
    _assembled(k)


@pytest.mark.parametrize("sem", ["acquire", "release", "acq_rel", "relaxed"])
@pytest.mark.parametrize("scope", ["gpu", "cta", "sys"])
def test_sem_and_scope_reach_the_instruction(target, sem, scope):
    types = {"x_ptr": "*fp32", "v_ptr": "*fp32", "out_ptr": "*fp32"}
    k = _compile(target, rmw_kernel, types, {"OP": "add", "SEM": sem, "SCOPE": scope, "BLOCK": 128})
    assert _atoms(k.asm["ptx"]) == [f"atom.global.{scope}.{sem}.add.f32"]
    _assembled(k)


def test_each_element_is_updated_by_one_thread_under_its_mask(target):
    # 128 elements over 128 threads: one each, no copies, so the old values need no shared memory
    types = {"x_ptr": "*i32", "v_ptr": "*i32", "out_ptr": "*i32"}
    k = _compile(target, rmw_kernel, types, {"OP": "add", "SEM": None, "SCOPE": None, "BLOCK": 128})
    assert k.metadata["shared"] == 0
    # 32 elements over 128 threads: four warps hold each element; one does the atomic, all get the old value
    k = _compile(target, rmw_kernel, types, {"OP": "add", "SEM": None, "SCOPE": None, "BLOCK": 32})
    ptx = k.asm["ptx"]
    assert k.metadata["shared"] == 32 * 4 and "st.shared.b32" in ptx and "ld.shared.b32" in ptx
    assert "bar.sync" in ptx
    _assembled(k)


@pytest.mark.parametrize("use_old", [False, True])
def test_scalar_atomics_broadcast_their_old_value_only_when_used(target, use_old):
    k = _compile(target, counter_kernel, {"counter_ptr": "*i32", "out_ptr": "*i32"}, {"USE_OLD": use_old})
    ptx = k.asm["ptx"]
    assert _atoms(ptx) == ["atom.global.gpu.acq_rel.add.u32"]
    assert (k.metadata["shared"] > 0) == use_old and ("bar.sync" in ptx) == use_old
    _assembled(k)


def test_tutorial_05_lock_acquires_with_cas_and_releases_with_exch(target):
    k = _compile(target, lock_kernel, {"lock_ptr": "*i32", "count_ptr": "*i32", "x_ptr": "*fp32"}, {"N": 256})
    atoms = _atoms(k.asm["ptx"])
    assert atoms.count("atom.global.acq_rel.gpu.cas.b32") == 1
    assert atoms.count("atom.global.gpu.acq_rel.exch.b32") == 2
    _assembled(k)


def test_bf16_add_before_sm_90_is_a_compare_and_swap_loop(monkeypatch):
    from tritium_nvptx.target import ARCH_ENV, NvptxTarget

    monkeypatch.setenv(ARCH_ENV, "sm_80")
    types = {"x_ptr": "*bf16", "v_ptr": "*bf16", "out_ptr": "*bf16"}
    k = _compile(NvptxTarget(), rmw_kernel, types, {"OP": "add", "SEM": None, "SCOPE": None, "BLOCK": 128})
    assert _atoms(k.asm["ptx"]) == ["atom.acq_rel.gpu.global.cas.b16"]
    _assembled(k)
