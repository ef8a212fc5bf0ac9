"""The NVPTX hooks, checked in the PTX (and cubin, where ptxas exists) they compile to."""

from __future__ import annotations

import re
import types

import pytest
from llvmlite import ir as ll
from tritium.target import KernelSignature
from tritium_nvptx import compiler, toolchain

GLOBAL, I32 = ll.PointerType(addrspace=1), ll.IntType(32)

SIGNATURE = KernelSignature("k", ("x", "y", "z", "n"), ("*fp32", "*fp32", "*fp32", "i32"))


def compile_ptx(target, llir: str, signature: KernelSignature = SIGNATURE) -> tuple[str, types.SimpleNamespace]:
    ctx = types.SimpleNamespace(target=target, options=target.parse_options({}), metadata={}, signature=signature)
    return compiler.ptx(llir, ctx), ctx


def test_kernel_entry_calling_convention_and_block_size(target, kernel_ir, vector_add_ir):
    ptx, ctx = compile_ptx(target, vector_add_ir())
    assert re.search(r"\.visible \.entry k\(", ptx)
    assert ".maxntid 128" in ptx  # ptxas knows the block size
    assert ".target sm_90" in ptx and ctx.metadata["arch"] == "sm_90"
    assert f".version {ctx.metadata['ptx_version']}" in ptx


def test_masked_fp32x4_loads_and_stores_are_single_predicated_vector_instructions(target, kernel_ir, vector_add_ir):
    ptx, _ = compile_ptx(target, vector_add_ir())
    assert len(re.findall(r"@%p\d+ ld\.global\.v4\.b32", ptx)) == 2
    assert len(re.findall(r"@%p\d+ st\.global\.v4\.b32", ptx)) == 1
    assert "bra" not in ptx  # no branches around the accesses


def test_masked_fp16x8_moves_as_four_words(target, kernel_ir, vector_add_ir):
    ptx, _ = compile_ptx(target, vector_add_ir(ll.VectorType(ll.HalfType(), 8)))
    assert re.search(r"@%p\d+ ld\.global\.v4\.b32", ptx) and re.search(r"@%p\d+ st\.global\.v4\.b32", ptx)


def test_masked_fp64x2_uses_64_bit_words(target, kernel_ir, vector_add_ir):
    ptx, _ = compile_ptx(target, vector_add_ir(ll.VectorType(ll.DoubleType(), 2)))
    assert re.search(r"@%p\d+ ld\.global\.v2\.b64", ptx) and re.search(r"@%p\d+ st\.global\.v2\.b64", ptx)


@pytest.mark.parametrize("ty, word", [(ll.FloatType(), "b32"), (ll.HalfType(), "b16"), (ll.DoubleType(), "b64")])
def test_masked_scalars_are_predicated_too(target, vector_add_ir, ty, word):
    ptx, _ = compile_ptx(target, vector_add_ir(ty))
    assert re.search(rf"@%p\d+ ld\.global\.{word} %\w+, \[%rd\d+\];", ptx)
    assert re.search(rf"@%p\d+ st\.global\.{word} \[%rd\d+\], %\w+;", ptx)


def test_unmasked_fp32x4_is_a_plain_vector_access(target, kernel_ir, vector_add_ir):
    ptx, _ = compile_ptx(target, vector_add_ir(masked=False))
    assert "ld.global.v4" in ptx and "st.global.v4" in ptx and "@%p" not in ptx


def test_masked_i8x4_falls_back_to_a_branch(target, kernel_ir, vector_add_ir):
    """Byte elements are not moved by the inline PTX: the default (a branch) handles them."""
    ptx, _ = compile_ptx(target, vector_add_ir(ll.VectorType(ll.IntType(8), 4)))
    assert "inline asm" not in ptx and "bra" in ptx


def test_masked_load_yields_other_where_masked_off(target, kernel_ir, vector_add_ir):
    def body(h, b, fn):
        x, y, _, n = fn.args
        ty = ll.VectorType(ll.FloatType(), 4)
        mask = b.icmp_signed("<", h.thread_id(b), n)
        v = h.load(b, x, ty, mask, ll.Constant(ty, [2.5] * 4), 16)
        h.store(b, y, v, None, 16)

    ptx, _ = compile_ptx(target, kernel_ir(body, [GLOBAL, GLOBAL, GLOBAL, I32]))
    # 2.5f has the bits 0x40200000 = 1075838976: moved into every output before the predicated load
    other = re.search(r"mov\.b32\s+(%r\d+), 1075838976;", ptx)
    asm = ptx[ptx.index("begin inline asm"):ptx.index("end inline asm")]
    assert other and len(re.findall(rf"mov\.b32 %r\d+, {other[1]};", asm)) == 4
    assert asm.index("mov.b32") < asm.index("ld.global")


def test_indices_barrier_and_shuffle(target, kernel_ir, vector_add_ir):
    def body(h, b, fn):
        x, _, _, n = fn.args
        total = b.add(b.add(h.thread_id(b), h.program_id(b, 1)), h.num_programs(b, 2))
        h.barrier(b)
        b.store(h.shuffle_xor(b, total, 16), x)

    ptx, _ = compile_ptx(target, kernel_ir(body, [GLOBAL, GLOBAL, GLOBAL, I32]))
    for needle in ("%tid.x", "%ctaid.y", "%nctaid.z", "bar.sync \t0", "shfl.sync.bfly.b32"):
        assert needle.replace(" \t", "\t") in ptx.replace(" \t", "\t"), needle
    assert re.search(r"shfl\.sync\.bfly\.b32\s+%r\d+, %r\d+, 16, 31, -1;", ptx)


def _math_kernel(kernel_ir, fn_name: str, element: ll.Type = ll.FloatType()) -> str:
    def body(h, b, fn):
        x, y, _, _ = fn.args
        vec = ll.VectorType(element, 2)
        b.store(h.call(b, fn_name, [b.load(x, typ=vec, align=16)]), y, align=16)

    return kernel_ir(body, [GLOBAL, GLOBAL, GLOBAL, I32])


def test_exp_of_fp32_is_ex2_approx_of_x_times_log2e(target, kernel_ir, vector_add_ir):
    ptx, _ = compile_ptx(target, _math_kernel(kernel_ir, "exp"))
    assert ptx.count("ex2.approx.f32") == 2
    assert "0f3FB8AA3B" in ptx  # log2(e) as an f32


def test_sin_links_libdevice_and_resolves_it_completely(target, kernel_ir, vector_add_ir):
    if toolchain.libdevice_path() is None:
        pytest.skip("libdevice is not installed")
    ptx, _ = compile_ptx(target, _math_kernel(kernel_ir, "sin"))
    assert "__nv_" not in ptx and "__nvvm_reflect" not in ptx and ".extern" not in ptx
    assert ".func" not in ptx  # internalised and inlined: only the kernel is left


def test_fp64_math_uses_the_double_libdevice_functions(target, kernel_ir, vector_add_ir):
    if toolchain.libdevice_path() is None:
        pytest.skip("libdevice is not installed")
    llir = _math_kernel(kernel_ir, "log", ll.DoubleType())
    assert "@\"__nv_log\"(double" in llir
    ptx, _ = compile_ptx(target, llir)
    assert "__nv_" not in ptx and ".f64" in ptx


def test_missing_libdevice_is_a_clear_error(target, monkeypatch, kernel_ir, vector_add_ir):
    monkeypatch.setattr(toolchain, "libdevice_path", lambda: None)
    with pytest.raises(Exception, match="nvidia-cuda-nvcc-cu12") as info:
        compile_ptx(target, _math_kernel(kernel_ir, "tanh"))
    assert "__nv_tanhf" in str(info.value)


def test_libdevice_is_found_in_the_pip_wheel_or_a_cuda_install():
    path = toolchain.libdevice_path()
    if path is None:
        pytest.skip("neither nvidia-cuda-nvcc-cu12 nor a CUDA install is present")
    assert path.endswith("libdevice.10.bc")
    with open(path, "rb") as f:
        assert f.read(4) == b"BC\xc0\xde"  # LLVM bitcode


@pytest.mark.skipif(toolchain.ptxas_path() is None, reason="ptxas is not installed")
def test_cubin_from_ptxas_reports_registers(target, kernel_ir, vector_add_ir):
    ptx, ctx = compile_ptx(target, vector_add_ir())
    binary = compiler.cubin(ptx, ctx)
    assert binary[:4] == b"\x7fELF"
    assert ctx.metadata["binary_format"] == "cubin"
    assert ctx.metadata["registers"] > 0 and ctx.metadata["spills"] == 0


def test_without_ptxas_the_binary_is_the_ptx_for_the_driver(target, monkeypatch, kernel_ir, vector_add_ir):
    monkeypatch.setattr(toolchain, "ptxas_path", lambda: None)
    ptx, ctx = compile_ptx(target, vector_add_ir())
    assert compiler.cubin(ptx, ctx) == ptx.encode() and ctx.metadata["binary_format"] == "ptx"


def test_cuda_release_of_a_tool_version_text():
    from tritium_nvptx.arch import cuda_of_release

    assert cuda_of_release("Cuda compilation tools, release 12.9, V12.9.86\nBuild cuda_12.9.r12.9") == 12090
    assert cuda_of_release("no version here") is None


@pytest.mark.skipif(toolchain.ptxas_path() is None, reason="ptxas is not installed")
def test_ptxas_is_found_and_reports_its_release():
    import os

    path = toolchain.ptxas_path()
    assert os.path.basename(path) == "ptxas" and os.access(path, os.X_OK)
    assert toolchain.ptxas_cuda_version(path) >= 11080


def test_exp2_of_fp32_is_ex2_approx_with_denormals_flushed_as_in_triton(target, kernel_ir, vector_add_ir):
    """Triton's ``math.exp2`` is libdevice's ``exp2f`` under ``__CUDA_FTZ``: one ``ex2.approx.ftz``,
    without the scaling that keeps subnormal results (two multiplies and a compare per element)."""
    ptx, _ = compile_ptx(target, _math_kernel(kernel_ir, "exp2"))
    assert ptx.count("ex2.approx.ftz.f32") == 2 and "ex2.approx.f32" not in ptx


@pytest.mark.parametrize("ftz", [True, False])
def test_enable_reflect_ftz_chooses_whether_exp2_flushes_subnormals(ftz):
    """Triton's ``enable_reflect_ftz`` launch option (True by default): ``exp2`` of f32 is
    ``ex2.approx.ftz`` with it, ``ex2.approx``, which keeps subnormal results, without."""
    import tritium
    import tritium.language as tl

    @tritium.jit
    def exp2(data):
        ptrs = data + tl.arange(0, 128)
        tl.store(ptrs, tl.math.exp2(tl.load(ptrs)))

    ptx = tritium.compile(exp2, {"data": "*fp32"}, target="nvptx", enable_reflect_ftz=ftz).asm["ptx"]
    assert ("ex2.approx.ftz.f32" in ptx) == ftz and ("ex2.approx.f32" in ptx) != ftz


def test_globaltimer_and_smid_read_the_special_registers():
    """``tl.extra.cuda.globaltimer()``/``smid()`` as Triton's: one ``mov`` from ``%globaltimer`` per
    call (not merged: the timer changes) and from ``%smid``."""
    import tritium
    import tritium.language as tl

    @tritium.jit
    def timed(out):
        start = tl.extra.cuda.globaltimer()
        tl.store(out + 1, tl.extra.cuda.smid().to(tl.int64))
        tl.store(out, tl.extra.cuda.globaltimer() - start)

    ptx = tritium.compile(timed, {"out": "*i64"}, target="nvptx").asm["ptx"]
    assert ptx.count("mov.u64 %rd") >= 2 and ptx.count("%globaltimer;") == 2 and ptx.count("%smid;") == 1


def test_maxnreg_limits_the_kernel_s_registers():
    """Triton's ``maxnreg`` launch option is PTX's ``.maxnreg`` on the kernel's entry; absent, ptxas picks."""
    import tritium
    import tritium.language as tl
    from tritium.errors import OptionError

    @tritium.jit
    def zero(x):
        tl.store(x, 0)

    assert re.search(r"\.visible \.entry [^{;]*\.maxnreg 42", tritium.compile(zero, {"x": "*i32"}, target="nvptx",
                                                                             maxnreg=42).asm["ptx"])
    assert ".maxnreg" not in tritium.compile(zero, {"x": "*i32"}, target="nvptx").asm["ptx"]
    with pytest.raises(OptionError, match="maxnreg must be an int from 1 to 255"):
        tritium.compile(zero, {"x": "*i32"}, target="nvptx", maxnreg=0)


@pytest.mark.parametrize("dtype", ["fp32", "fp64"])
def test_float_remainder_is_libdevice_s_exact_fmod(dtype):
    """``%`` of floats (and ``libdevice.fmod``) calls ``__nv_fmod[f]``: LLVM's NVPTX back end expands
    ``frem`` with a rounded quotient, wrong once ``x / y`` passes 2**24 (found by the conformance
    case of ``libdevice.remainder`` on an H200)."""
    import tritium
    import tritium.language as tl

    @tritium.jit
    def rem(x_ptr, y_ptr):
        offs = tl.arange(0, 64)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) % tl.load(y_ptr + offs))

    k = tritium.compile(rem, {"x_ptr": f"*{dtype}", "y_ptr": f"*{dtype}"}, target="nvptx")
    assert f'@"__nv_fmod{"f" if dtype == "fp32" else ""}"(' in k.asm["llir"] and " frem " not in k.asm["llir"]
