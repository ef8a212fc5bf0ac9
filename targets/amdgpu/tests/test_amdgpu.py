"""The amdgpu target without an AMD GPU: kernels compile to code objects for wave64 (gfx942) and
wave32 (gfx1100) archs, linked by ld.lld, whose metadata note is read back; the AMDGPU pieces of the
code (ids, the dispatch packet, barriers, ``ds_bpermute``, LDS, sync scopes) are in the assembly;
math the back end cannot compute fails at the kernel's line; running says why it cannot.
Numbers are not checked here: no AMD GPU runs these kernels (see the README)."""

from __future__ import annotations

import numpy as np
import pytest
import tritium
import tritium.language as tl
from tritium.errors import TargetError, TargetLimitation
from tritium_amdgpu import code_object, device_libs, toolchain
from tritium_amdgpu.arch import ARCH_ENV

from tritium_conformance.kernels import add_kernel

ARCHS = {"gfx942": 64, "gfx1100": 32}
needs_lld = pytest.mark.skipif(toolchain.linker() is None, reason="no ld.lld (pip install 'tritium-amdgpu[lld]')")


@tritium.jit
def row_sum_kernel(x_ptr, out_ptr, count_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    tl.store(out_ptr + row, tl.sum(x, 0))
    tl.atomic_add(count_ptr, tl.num_programs(0), scope="gpu")
    tl.atomic_add(count_ptr + 1, 1, scope="cta")


def compile_for(kernel, signature, constants, arch, **options):
    return tritium.compile(kernel, signature=signature, constants=constants, target="amdgpu", arch=arch, **options)


ADD = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}


@needs_lld
@pytest.mark.parametrize("arch", ARCHS)
def test_vector_add_is_a_code_object_whose_metadata_names_the_kernel(arch):
    c = compile_for(add_kernel, ADD, {"BLOCK": 1024}, arch, num_warps=4)
    hsaco = c.asm["hsaco"]
    assert hsaco[:4] == b"\x7fELF"
    (entry,) = code_object.kernels(hsaco)
    assert entry[".name"] == "add_kernel" and entry[".symbol"] == "add_kernel.kd"
    assert entry[".max_flat_workgroup_size"] == 4 * ARCHS[arch]
    md = c.metadata
    assert md["wavefront_size"] == ARCHS[arch] and md["arch"] == arch and md["binary_format"] == "hsaco"
    # three pointers and an i32, packed as HIP packs kernel arguments
    assert md["args"] == [{"offset": 0, "size": 8}, {"offset": 8, "size": 8}, {"offset": 16, "size": 8},
                          {"offset": 24, "size": 4}]
    assert md["kernarg_size"] >= 28 and 0 < md["vgprs"] <= 512 and md["sgprs"] > 0 and md["spills"] == 0
    asm = c.asm["amdgcn"]
    assert f'.amdgcn_target "amdgcn-amd-amdhsa--{arch}' in asm and ".amdhsa_code_object_version 5" in asm
    assert "global_load" in asm and "global_store" in asm


@needs_lld
@pytest.mark.parametrize("arch", ARCHS)
def test_a_reduction_across_wavefronts_uses_lds_bpermute_barriers_and_the_dispatch_packet(arch):
    c = compile_for(row_sum_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "count_ptr": "*i32"}, {"N": 1024},
                    arch, num_warps=4)
    llir, asm = c.asm["llir"], c.asm["amdgcn"]
    assert "llvm.amdgcn.ds.bpermute" in llir and "ds_bpermute_b32" in asm  # lanes of a wavefront
    assert "llvm.amdgcn.s.barrier" in llir and "s_barrier" in asm  # wavefronts of the workgroup
    assert 'fence syncscope("workgroup") release' in llir and 'fence syncscope("workgroup") acquire' in llir
    assert "addrspace(3)" in llir and c.metadata["lds"] == c.metadata["shared"] > 0
    assert "llvm.amdgcn.dispatch.ptr" in llir  # num_programs: the grid's size from the dispatch packet
    assert 'syncscope("agent") acq_rel' in llir and 'syncscope("workgroup") acq_rel' in llir  # Triton's scopes
    assert '"amdgpu-flat-work-group-size"="1,{}"'.format(4 * ARCHS[arch]) in llir


def test_math_the_back_end_cannot_compute_fails_at_the_kernel_s_line(tmp_path, monkeypatch):
    monkeypatch.setenv(device_libs.ENV, str(tmp_path))  # no ROCm device libraries (OCML) there

    @tritium.jit
    def tanh_kernel(x_ptr):
        tl.store(x_ptr, tl.extra.libdevice.tanh(tl.load(x_ptr)))

    with pytest.raises(TargetLimitation, match=r"'tanh' of fp32 is not available on target amdgpu.*OCML") as e:
        compile_for(tanh_kernel, {"x_ptr": "*fp32"}, {}, "gfx942")
    assert "tl.extra.libdevice.tanh" in str(e.value)  # the source line, quoted


@needs_lld
def test_math_the_back_end_computes_needs_no_library():
    @tritium.jit
    def exp_kernel(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.store(x_ptr + offs, tl.exp(x) + tl.sqrt(x) + tl.sin(x) + tl.log2(x))

    c = compile_for(exp_kernel, {"x_ptr": "*fp32"}, {"BLOCK": 256}, "gfx942")
    assert "v_exp_f32" in c.asm["amdgcn"] and "s_swappc" not in c.asm["amdgcn"]  # no calls


def test_the_arch_comes_from_the_environment_and_unknown_ones_are_named(monkeypatch):
    from tritium_amdgpu.target import AmdgpuTarget

    monkeypatch.setenv(ARCH_ENV, "gfx1100")
    assert AmdgpuTarget().arch().wave == 32
    with pytest.raises(tritium.errors.TritiumError, match="does not know the arch 'gfx9999'.*gfx942"):
        compile_for(add_kernel, ADD, {"BLOCK": 64}, "gfx9999")
    with pytest.raises(tritium.errors.TritiumError, match="num_warps must be at most 16 on gfx942"):
        compile_for(add_kernel, ADD, {"BLOCK": 64}, "gfx942", num_warps=32)


def test_without_a_hip_runtime_the_target_says_why_and_launching_raises_it():
    from tritium import plugins

    target = plugins.targets()["amdgpu"]
    available, reason = target.availability()
    assert not available and "kernels compile only" in reason
    from tritium.runtime.launch import run_kernel

    x = np.zeros(64, np.float32)
    with pytest.raises(TargetError, match="target 'amdgpu' cannot .*kernels compile only"):
        run_kernel(target, add_kernel, (1,), (x, x, x, 64), {"BLOCK": 64})
