"""ROCm's device libraries on amdgpu: found where they are installed, linked with the constants they
read, and what kernels may use with them and without them.

A small library written here stands in for OCML and OCKL where the tests check the linking (the
real ones are not pip-installable); where the real ones are found (ROCm, Debian's rocm-device-libs,
a Triton wheel), the last test compiles math and printing kernels against them."""

from __future__ import annotations

import struct

import pytest
import tritium
import tritium.language as tl
from llvmlite import binding as llvm
from llvmlite import ir as ll
from tritium.errors import NotImplementedYet, TargetLimitation
from tritium.language.extra import libdevice
from tritium_amdgpu import code_object, device_libs, toolchain

needs_lld = pytest.mark.skipif(toolchain.linker() is None, reason="no ld.lld (pip install 'tritium-amdgpu[lld]')")
ARCHS = {"gfx942": 64, "gfx1100": 32}
I8, I32, I64, F32 = ll.IntType(8), ll.IntType(32), ll.IntType(64), ll.FloatType()


@tritium.jit
def erf_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, libdevice.erf(tl.load(x_ptr + offs)))


@tritium.jit
def print_kernel(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_print("x", x)
    tl.device_assert(x < 100, "x is small")


def _stand_in_libraries(folder) -> None:
    """``ocml.bc`` whose ``__ocml_erf_f32(x)`` is x times the ISA version it reads (so the constant
    shows in the kernel's code), and ``ockl.bc`` with printf functions of OCKL's signatures; both
    ``linkonce_odr`` as ROCm's, with one function nothing calls."""
    def library(functions) -> bytes:
        m = ll.Module()
        m.triple = "amdgcn-amd-amdhsa"
        for name, ret, params, body in functions:
            fn = ll.Function(m, ll.FunctionType(ret, params), name)
            fn.linkage = "linkonce_odr"
            body(ll.IRBuilder(fn.append_basic_block()), fn, m)
        return llvm.parse_assembly(str(m)).as_bitcode()

    def isa_times(b, fn, m):
        isa = ll.GlobalVariable(m, I32, "__oclc_ISA_version", addrspace=4)
        isa.global_constant = True
        b.ret(b.fmul(fn.args[0], b.sitofp(b.load(isa), F32)))

    def first(b, fn, m):
        b.ret(fn.args[0])

    (folder / "ocml.bc").write_bytes(library([("__ocml_erf_f32", F32, [F32], isa_times),
                                              ("__ocml_unused_f32", F32, [F32], first)]))
    (folder / "ockl.bc").write_bytes(library([
        ("__ockl_printf_begin", I64, [I64], first),
        ("__ockl_printf_append_string_n", I64, [I64, ll.PointerType(), I64, I32], first),
        ("__ockl_printf_append_args", I64, [I64, I32, *[I64] * 7, I32], first)]))


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    _stand_in_libraries(tmp_path)
    monkeypatch.setenv(device_libs.ENV, str(tmp_path))
    return tmp_path


@pytest.fixture
def without_libraries(tmp_path, monkeypatch):
    monkeypatch.setenv(device_libs.ENV, str(tmp_path))  # an empty folder: nothing is found


def compile_for(kernel, signature, constants, arch, **options):
    return tritium.compile(kernel, signature=signature, constants=constants, target="amdgpu", arch=arch, **options)


def test_the_folder_named_in_the_environment_is_the_only_one_looked_in(stand_in, tmp_path, monkeypatch):
    assert device_libs.folder() == str(stand_in)
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "ocml.bc").write_bytes(b"")
    monkeypatch.setenv(device_libs.ENV, str(tmp_path / "half"))  # no ockl.bc: not a library folder
    assert device_libs.folder() is None


@pytest.mark.parametrize("arch, version", [("gfx942", 9402), ("gfx90a", 9010), ("gfx950", 9500),
                                           ("gfx1100", 11000), ("gfx1201", 12001)])
def test_the_isa_version_the_libraries_read_is_major_minor_stepping(arch, version):
    assert device_libs.isa_version(arch) == version


@needs_lld
@pytest.mark.parametrize("arch", ARCHS)
def test_math_the_back_end_lacks_calls_ocml_linked_with_the_arch_s_constants(stand_in, arch):
    c = compile_for(erf_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32"}, {"BLOCK": 128}, arch)
    assert '@"__ocml_erf_f32"' in c.asm["llir"]
    asm = c.asm["amdgcn"]
    isa = struct.unpack("<I", struct.pack("<f", float(device_libs.isa_version(arch))))[0]
    assert f"0x{isa:x}" in asm  # the stand-in's product with the ISA version, folded
    assert "s_swappc" not in asm and "__ocml_unused_f32" not in asm  # inlined; the unused one left out
    (entry,) = code_object.kernels(c.asm["hsaco"])  # linked with --no-undefined: every symbol resolved
    assert entry[".name"] == "erf_kernel" and c.metadata["args"] == [{"offset": 0, "size": 8},
                                                                       {"offset": 8, "size": 8}]


@needs_lld
def test_device_print_and_assert_call_ockl_s_printf_and_trap(stand_in):
    c = compile_for(print_kernel, {"x_ptr": "*fp32"}, {"BLOCK": 64}, "gfx942", debug=True)  # asserts checked
    llir = c.asm["llir"]
    assert 'call i64 @"__ockl_printf_begin"(i64 0)' in llir
    assert '@"__ockl_printf_append_args"' in llir and "call void @\"llvm.trap\"()" in llir
    assert "Device-side assertion `x is small' failed." in llir  # HIP's assert message
    assert "s_trap" in c.asm["amdgcn"]


def test_without_the_libraries_math_and_printing_fail_at_the_kernel_s_line_saying_how_to_get_them(
        without_libraries):
    with pytest.raises(TargetLimitation, match=r"'erf' of fp32 is not available on target amdgpu.*"
                                               r"rocm-device-libs.*TRITIUM_ROCM_DEVICE_LIBS") as e:
        compile_for(erf_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32"}, {"BLOCK": 128}, "gfx942")
    assert "libdevice.erf" in str(e.value)
    with pytest.raises(NotImplementedYet, match=r"tl.device_print on amdgpu prints through ROCm's device library") as e:
        compile_for(print_kernel, {"x_ptr": "*fp32"}, {"BLOCK": 64}, "gfx942")
    assert 'tl.device_print("x", x)' in str(e.value)


@tritium.jit
def double_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, tl.inline_asm_elementwise("v_add_u32 $0, $1, $1", "=v,v", [x], dtype=tl.int32,
                                                       is_pure=True, pack=1))


@needs_lld
@pytest.mark.skipif(toolchain.assembler() is None, reason="no AMDGPU assembler (pip install 'tritium-amdgpu[lld]')")
@pytest.mark.parametrize("arch", ARCHS)
def test_inline_amdgpu_assembly_is_assembled_into_the_code_object(arch):
    c = compile_for(double_kernel, {"x_ptr": "*i32"}, {"BLOCK": 128}, arch)
    assert any(line.strip().startswith("v_add_u32 v") for line in c.asm["amdgcn"].splitlines())
    (entry,) = code_object.kernels(c.asm["hsaco"])
    assert entry[".name"] == "double_kernel" and entry[".wavefront_size"] == ARCHS[arch]


@needs_lld
@pytest.mark.skipif(device_libs.folder() is None, reason=f"ROCm's device libraries not found: {device_libs.HOW_TO_GET}")
@pytest.mark.parametrize("arch", ARCHS)
def test_rocm_s_own_libraries_compute_fp64_math_and_print(arch):
    @tritium.jit
    def fp64_kernel(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.device_print("x", x)
        tl.store(x_ptr + offs, tl.exp(x) + libdevice.tanh(x) + libdevice.erf(x))

    c = compile_for(fp64_kernel, {"x_ptr": "*fp64"}, {"BLOCK": 128}, arch)
    assert all(f'@"__ocml_{fn}_f64"' in c.asm["llir"] for fn in ("exp", "tanh", "erf"))
    assert "hidden_hostcall_buffer" in c.metadata["hidden_args"]  # the HIP runtime gives printf its buffer
    assert c.metadata["args"] == [{"offset": 0, "size": 8}]
