"""The nvptx target without a GPU: discovery, availability, options and arch, PTX ISA choice,
argument binding, and compiling through core's pipeline."""

from __future__ import annotations

import struct

import numpy as np
import pytest
import tritium
import tritium.language as tl
from tritium import plugins
from tritium.errors import ArgumentError, TritiumError
from tritium.runtime import native_launch as launch
from tritium.runtime.device_arrays import DevicePointer
from tritium.target import KernelSignature
from tritium_nvptx import arch, cuda, driver, libcuda, toolchain
from tritium_nvptx.driver import NvptxLauncher
from tritium_nvptx.target import ARCH_ENV, NvptxTarget

no_driver = pytest.mark.skipif(cuda.driver_version() is not None, reason="an NVIDIA driver is installed here")


def test_found_through_its_entry_point_above_cpu():
    infos = {i.name: i for i in plugins.target_infos()}
    assert infos["nvptx"].distribution == "tritium-nvptx"
    assert infos["nvptx"].priority > infos["cpu"].priority


@no_driver
def test_unavailable_without_a_driver_with_the_drivers_reason():
    ok, why = NvptxTarget().availability()
    assert not ok and "driver" in why.lower()


@no_driver
def test_without_a_gpu_kernels_compile_for_sm_90_unless_told(monkeypatch):
    monkeypatch.delenv(ARCH_ENV, raising=False)
    assert NvptxTarget().arch() == "sm_90"
    monkeypatch.setenv(ARCH_ENV, "sm_80")
    assert NvptxTarget().arch() == "sm_80"


@pytest.mark.parametrize("name", ["sm_999", "sm900", "gfx942", "sm_75"])
def test_unknown_arch_names_are_refused(name, monkeypatch):
    with pytest.raises(TritiumError, match="unknown NVIDIA arch"):
        NvptxTarget().parse_options({"arch": name})
    monkeypatch.setenv(ARCH_ENV, name)
    with pytest.raises(TritiumError, match="unknown NVIDIA arch"):
        NvptxTarget().arch()


def test_triton_s_arch_spelling_and_clusters_before_hopper():
    """Triton spells arches ``sm90a``; it refuses ``num_ctas > 1`` before Hopper with a ValueError
    (its test_num_ctas_pre_sm90)."""
    assert NvptxTarget().parse_options({"arch": "sm90a"}).arch == "sm_90a"
    assert NvptxTarget().parse_options({"arch": "sm_90", "num_ctas": 2}).arch == "sm_90"
    with pytest.raises(ValueError, match=r"num_ctas > 1 requires NVIDIA SM90\+ \(Hopper\)"):
        NvptxTarget().parse_options({"arch": "sm80", "num_ctas": 2})


def test_arch_option_wins_over_the_environment(monkeypatch):
    monkeypatch.setenv(ARCH_ENV, "sm_80")
    t = NvptxTarget()
    assert t.arch(t.parse_options({"arch": "sm_90a"})) == "sm_90a"
    assert t.arch(t.parse_options({})) == "sm_80"


@pytest.mark.parametrize("warps", [0, 3, 64])
def test_num_warps_must_be_a_power_of_two_up_to_32(warps):
    with pytest.raises(TritiumError, match="num_warps"):
        NvptxTarget().parse_options({"num_warps": warps})


def test_capability_to_arch_follows_triton():
    assert arch.arch_of_capability(9, 0) == "sm_90a"
    assert arch.arch_of_capability(8, 0) == "sm_80"
    assert arch.arch_of_capability(8, 9) == "sm_89"
    with pytest.raises(TritiumError, match="compute capability 7.5"):
        arch.arch_of_capability(7, 5)


@pytest.mark.parametrize("cuda_version, ptx", [(11080, 78), (12000, 80), (12040, 84), (12060, 85), (12080, 87),
                                               (12090, 88), (13000, 90), (13010, 91)])
def test_ptx_isa_of_a_cuda_release(cuda_version, ptx):
    assert arch.ptx_of_cuda(cuda_version) == ptx


def test_ptx_version_is_the_newest_every_consumer_accepts():
    assert arch.ptx_version("sm_90", None, None) == arch.LLVM_MAX_PTX == 90  # compile-only: LLVM's newest
    assert arch.ptx_version("sm_90", 12040, None) == 84  # the driver's CUDA 12.4
    assert arch.ptx_version("sm_90", 13000, 12090) == 88  # ptxas 12.9 under a CUDA 13 driver
    assert arch.ptx_version("sm_80", 11080, None) == 78
    with pytest.raises(TritiumError, match=r"sm_100a needs PTX ISA 8.6.*CUDA 12.4"):
        arch.ptx_version("sm_100a", 12040, None)


def test_generated_ptx_header_has_the_chosen_version(target, monkeypatch, vector_add_ir):
    from tritium_nvptx import compiler

    monkeypatch.setattr(target, "_driver_cuda", lambda: 12040)
    ctx = type("Ctx", (), {})()
    ctx.target, ctx.options, ctx.metadata = target, target.parse_options({"arch": "sm_80"}), {}
    ctx.signature = KernelSignature("vector_add", (), ())
    ptx = compiler.ptx(vector_add_ir(), ctx)
    assert "\n.version 8.4\n.target sm_80\n" in ptx and ctx.metadata["ptx_version"] == "8.4"


def test_version_names_arch_driver_and_ptxas(target, monkeypatch):
    v = target.version()
    assert "arch-sm_90 " in v and "driver-" in v and "ptxas-" in v
    monkeypatch.setattr(target, "_driver_cuda", lambda: 12040)
    assert target.version() != v  # another driver may take another PTX ISA version


# -- arguments ---------------------------------------------------------------------------------
def test_a_numpy_array_is_refused_with_what_to_do():
    with pytest.raises(ArgumentError) as info:
        NvptxTarget().bind_arg(np.zeros(4, np.float32), "*fp32", "x_ptr")
    msg = str(info.value)
    assert "'x_ptr'" in msg and "host array" in msg and "GPU" in msg and "cupy.asarray(x_ptr)" in msg
    assert isinstance(info.value, ValueError)  # as Triton's launcher (its test_pointer_arguments)


def _framework_array(module: str, **attrs):
    """An object that looks like a torch tensor or CuPy array to the binding (neither is installed)."""
    cls = type("Array", (), {"__module__": module, **attrs})
    return cls()


def _torch_tensor(on_gpu: int | None):
    """What the binding reads of a torch tensor: is_cuda, data_ptr(), get_device() (and device)."""
    return _framework_array("torch", data_ptr=lambda self: 8192, is_cuda=on_gpu is not None,
                            get_device=lambda self: -1 if on_gpu is None else on_gpu,
                            device="cpu" if on_gpu is None else f"cuda:{on_gpu}")


def test_torch_cuda_tensors_bind_their_data_pointer_device_and_stream_owner():
    p = NvptxTarget().bind_arg(_torch_tensor(1), "*fp32", "x")
    assert p == 8192 and p.device == 1 and p.framework == "torch"


def test_binding_the_same_tensor_again_allocates_nothing():
    target = NvptxTarget()
    first = target.bind_arg(_torch_tensor(1), "*fp32", "x")
    assert target.bind_arg(_torch_tensor(1), "*fp32", "y") is first  # same device and address
    other = target.bind_arg(_torch_tensor(0), "*fp32", "x")
    assert other == first and other.device == 0 and other is not first


def test_a_cpu_torch_tensor_is_refused_with_cuda_as_the_fix():
    with pytest.raises(ArgumentError, match=r"'x' is a torch tensor on cpu.*x\.cuda\(\)"):
        NvptxTarget().bind_arg(_torch_tensor(None), "*fp32", "x")


def test_cupy_arrays_bind_their_pointer_and_device():
    data = type("MemoryPointer", (), {"ptr": 4096})()
    a = _framework_array("cupy._core.core", data=data, device=type("Device", (), {"id": 2})())
    p = NvptxTarget().bind_arg(a, "*fp16", "x")
    assert p == 4096 and p.device == 2 and p.framework == "cupy"


def test_dlpack_memory_of_another_device_is_refused():
    class OnHost:
        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(ArgumentError, match="'x'.*DLPack memory on device type 1"):
        NvptxTarget().bind_arg(OnHost(), "*fp32", "x")


def test_a_cuda_dlpack_object_binds_its_data_address_and_device():
    """A DLPack capsule built by hand (numpy's exporter with the device patched to CUDA 1)."""
    import ctypes

    from tritium.runtime.device_arrays import DLTensor as _DLTensor

    host = np.arange(8, dtype=np.float32)

    class OnGpu:
        def __dlpack_device__(self):
            return (2, 1)

        def __dlpack__(self):
            capsule = host.__dlpack__()
            get = ctypes.pythonapi.PyCapsule_GetPointer
            get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
            _DLTensor.from_address(get(capsule, b"dltensor")).byte_offset = 8
            return capsule

    p = NvptxTarget().bind_arg(OnGpu(), "*fp32", "x")
    assert isinstance(p, DevicePointer) and p == host.ctypes.data + 8 and p.device == 1 and p.framework == ""


def test_scalars_are_range_checked():
    t = NvptxTarget()
    assert t.bind_arg(7, "i32", "n") == 7 and t.bind_arg(True, "i1", "f") == 1
    assert isinstance(t.bind_arg(1, "fp32", "a"), float)
    with pytest.raises(ArgumentError, match=r"'n' = 2147483648 is out of range for i32"):
        t.bind_arg(2**31, "i32", "n")


def _pointer(address: int, device: int) -> DevicePointer:
    return DevicePointer.at(address, device, "")


def test_arguments_on_two_gpus_are_refused_before_any_driver_call():
    sig = KernelSignature("k", ("x", "y", "n"), ("*fp32", "*fp32", "i32"))
    launcher = NvptxLauncher(b"", sig, {"num_warps": 4, "shared": 0})
    with pytest.raises(ArgumentError, match="'y' is on GPU 1 but 'x' is on GPU 0"):
        launcher((1, 1, 1), [_pointer(256, 0), _pointer(512, 1), 3])


def test_grid_limits_of_axes_1_and_2():
    sig = KernelSignature("k", ("n",), ("i32",))
    with pytest.raises(ArgumentError, match="65535"):
        NvptxLauncher(b"", sig, {"num_warps": 4})((1, 70000, 1), [1])


@pytest.mark.parametrize("implementation", ["native", "python"])
def test_launcher_packs_every_parameter_type(monkeypatch, fake_driver, implementation):
    """The ``void**`` array holds each value's bits when the driver is called, from the native
    launch and from its Python equivalent alike."""
    if implementation == "native" and launch.native_launch is None:
        pytest.skip("the native launcher was not built (no C compiler when the package was installed)")
    monkeypatch.setattr(driver, "launch", launch.native_launch if implementation == "native" else launch.python_launch)
    fake = fake_driver()
    sig = KernelSignature("k", ("p", "a", "b", "h", "g", "d", "u"), ("*fp32", "i32", "i1", "fp16", "bf16", "fp64", "u64"))
    launcher = NvptxLauncher(b"", sig, {"num_warps": 4})
    launcher.launch_on((1, 1, 1), [_pointer(4096, 0), -5, 1, 1.5, 1.5, 0.25, 2**64 - 1], 0, "")
    read = fake.calls[-1][1][9]
    assert len(read) == 7
    assert read[0] == (4096).to_bytes(8, "little")
    assert read[1][:4] == (-5).to_bytes(4, "little", signed=True)
    assert read[2][0] == 1
    assert read[3][:2] == np.float16(1.5).tobytes()
    assert read[4][:2] == np.float32(1.5).tobytes()[2:]  # bf16: the high half of the f32
    assert read[5] == np.float64(0.25).tobytes()
    assert read[6] == b"\xff" * 8


@pytest.mark.parametrize("implementation", ["native", "python"])
def test_tma_tensor_maps_follow_the_parameters(monkeypatch, fake_driver, implementation):
    """A kernel that copies a host descriptor's blocks with TMA gets the descriptor's tensor map
    after its parameters: encoded from the launch's base, shape and strides (innermost first, strides
    in bytes), with the box and swizzle the compile metadata says, once per tensor."""
    if implementation == "native" and launch.native_launch is None:
        pytest.skip("the native launcher was not built (no C compiler when the package was installed)")
    monkeypatch.setattr(driver, "launch", launch.native_launch if implementation == "native" else launch.python_launch)
    fake = fake_driver()
    encoded = []

    def encode(*args):
        encoded.append(args)
        return 0, bytes(range(128))
    fake.cuTensorMapEncodeTiled = encode
    sig = KernelSignature("k", ("d", "d.shape[0]", "d.shape[1]", "d.strides[0]", "n"),
                          ("*fp16", "i32", "i32", "i64", "i32"))
    maps = [{"base": 0, "rank": 2, "box": [64, 128], "element_bytes": 2, "swizzle": 128}]
    launcher = NvptxLauncher(b"", sig, {"num_warps": 4, "tensor_maps": maps})
    for _ in range(2):
        launcher.launch_on((1, 1, 1), [_pointer(4096, 0), 300, 200, 256, 7], 0, "")
    # fp16 as 16-bit unsigned (1), dims and byte strides innermost first, 128-byte swizzle (3)
    assert encoded == [(1, 4096, [200, 300], [512], [64, 128], 3)]
    read = fake.calls[-1][1][9]
    assert len(read) == 6 and read[4][:4] == (7).to_bytes(4, "little") and read[5] == bytes(range(8))


def test_the_native_launcher_is_built_where_a_c_compiler_is():
    import shutil
    import sysconfig

    if not (shutil.which(sysconfig.get_config_var("CC").split()[0] or "cc")):
        pytest.skip("no C compiler here: the package installs without the native launcher")
    assert launch.native_launch is not None and launch.launch is launch.native_launch


@pytest.mark.parametrize("implementation", ["native", "python"])
def test_launch_refuses_what_it_cannot_pack(fake_driver, implementation):
    run = launch.native_launch if implementation == "native" else launch.python_launch
    if run is None:
        pytest.skip("the native launcher was not built")
    fake = fake_driver()
    with pytest.raises(ValueError, match="2 parameter codes for 1 arguments"):
        run(fake.entry_address, 1, 1, 1, 1, 128, 0, 0, b"qq", (1,))
    with pytest.raises((TypeError, struct.error)):
        run(fake.entry_address, 1, 1, 1, 1, 128, 0, 0, b"Q", ("not a pointer",))
    with pytest.raises(ValueError, match="no launch function"):
        run(0, 1, 1, 1, 1, 128, 0, 0, b"q", (1,))
    assert not [c for c in fake.calls if c[0] == "cuLaunchKernel"]
    assert run(fake.entry_address, 7, 2, 3, 4, 128, 256, 0x70, b"qd", (-3, 0.5)) == 0
    assert fake.calls[-1][1] == (7, 2, 3, 4, 128, 1, 1, 256, 0x70, [(-3).to_bytes(8, "little", signed=True),
                                                                      np.float64(0.5).tobytes()], None)


# -- through core's pipeline -------------------------------------------------------------------
@tritium.jit
def add_kernel(x, y, z, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(z + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)


def test_llir_using_shared_memory_of_unknown_size_is_refused(target):
    llir = """target triple = "nvptx64-nvidia-cuda"
@tritium_shared = external addrspace(3) global [0 x i8], align 16
define ptx_kernel void @add_kernel(ptr addrspace(1) %x, ptr addrspace(1) %y, ptr addrspace(1) %z, i32 %n) {
  store i8 1, ptr addrspace(3) @tritium_shared
  ret void
}
"""
    with pytest.raises(TritiumError, match="tile-layout stage"):
        tritium.compile(add_kernel, "*fp32, *fp32, *fp32, i32", {"BLOCK": 512}, target=target, source=llir,
                        stage="llir")


def test_compile_from_the_llir_stage_to_a_binary(target, vector_add_ir):
    """tritium.compile continues from given LLVM IR through the ptx and cubin stages."""
    compiled = tritium.compile(add_kernel, "*fp32, *fp32, *fp32, i32", {"BLOCK": 512}, target=target,
                               source=vector_add_ir().replace('@"k"', '@"add_kernel"'), stage="llir")
    assert list(compiled.asm)[-2:] == ["ptx", "cubin"]
    assert compiled.metadata["num_warps"] == 4 and compiled.metadata["shared"] == 0
    assert ".visible .entry add_kernel(" in compiled.asm["ptx"]
    fmt = compiled.metadata["binary_format"]
    assert fmt == ("cubin" if toolchain.ptxas_path() else "ptx")
    if fmt == "cubin":
        assert compiled.asm["cubin"][:4] == b"\x7fELF" and compiled.metadata["registers"] > 0


def test_launch_loads_once_and_passes_grid_block_shared_stream_and_params(monkeypatch, fake_driver):
    fake = fake_driver()
    monkeypatch.setattr(cuda, "attribute", lambda device, name: 227 * 1024)
    sig = KernelSignature("k", ("x", "n"), ("*fp32", "i32"))
    launcher = NvptxLauncher(b"PTX", sig, {"num_warps": 8, "shared": 64 * 1024, "binary_format": "ptx"})
    for n in (5, 6):
        launcher((3, 2, 1), [_pointer(4096, 1), n])
    names = [c[0] for c in fake.calls]
    assert names.count("cuModuleLoadData") == 1 and names.count("cuLaunchKernel") == 2
    assert fake.calls[names.index("cuModuleLoadData")][1][0] == b"PTX\0"  # PTX goes NUL-terminated
    assert fake.calls[names.index("cuModuleGetFunction")][1][1] == b"k"
    assert ("cuFuncSetAttribute", (fake.FUNCTION, 8, 64 * 1024)) in fake.calls  # above 48 KB
    assert ("make_current", (1,)) in fake.calls  # the arguments' GPU
    fn, gx, gy, gz, bx, by, bz, shared, stream, slots, extra = fake.calls[-1][1]
    assert (fn, gx, gy, gz, bx, by, bz, shared, stream, extra) == (fake.FUNCTION, 3, 2, 1, 256, 1, 1,
                                                                   64 * 1024, None, None)
    assert slots == [(4096).to_bytes(8, "little"), (6).to_bytes(8, "little")]


def test_failed_launch_names_the_error(fake_driver):
    fake_driver(result=libcuda.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
    launcher = NvptxLauncher(b"", KernelSignature("k", ("n",), ("i32",)), {"num_warps": 4})
    with pytest.raises(cuda.CudaError, match="cuLaunchKernel of kernel k failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"):
        launcher((1, 1, 1), [1])


def test_the_ptxas_release_is_asked_once_per_binary_and_remembered(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.9, V12.9.86'\n")
    fake.chmod(0o755)
    toolchain.ptxas_cuda_version.cache_clear()
    assert toolchain.ptxas_cuda_version(str(fake)) == 12090
    fake.chmod(0o644)  # it can no longer run: a new process reads what the first one found
    toolchain.ptxas_cuda_version.cache_clear()
    assert toolchain.ptxas_cuda_version(str(fake)) == 12090
    fake.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n")  # another binary
    fake.chmod(0o755)
    toolchain.ptxas_cuda_version.cache_clear()
    assert toolchain.ptxas_cuda_version(str(fake)) == 13000
    toolchain.ptxas_cuda_version.cache_clear()


def test_nvptx_compiles_by_name_and_lists_its_stages_even_where_it_cannot_run(tmp_path, monkeypatch):
    import subprocess
    import sys

    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    k = tritium.compile(_scale_kernel, signature="*fp32,i32", constants={"BLOCK": 128}, target="nvptx")
    assert ".entry _scale_kernel" in k.asm["ptx"]
    out = subprocess.run([sys.executable, "-m", "tritium", "pipeline", "--target", "nvptx"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "tile-layout" in out.stdout and "ptx: " in out.stdout and "cubin: " in out.stdout


@tritium.jit
def _scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def test_the_current_stream_is_torch_s_where_torch_is_imported(monkeypatch):
    """Regression: ``driver.active.get_current_stream()`` on nvptx imported a helper that did not
    exist, once torch was imported."""
    import sys
    import types

    from tritium.runtime import device_arrays

    fake = types.ModuleType("torch")
    fake._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: 0x5000 + device)
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setitem(device_arrays.STREAMS, "torch", device_arrays._torch_stream)
    assert NvptxTarget().current_stream(1) == 0x5001
    monkeypatch.delitem(sys.modules, "torch")
    assert NvptxTarget().current_stream(1) == 0
