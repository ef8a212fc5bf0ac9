"""amdgpu's HIP runtime side, without an AMD GPU: a stand-in for ROCm's ``libamdhip64`` (memory in
host memory, a C-callable ``hipModuleLaunchKernel`` that records what core's native launch passes)
takes the calls the launcher makes. The code objects are real: compiled here, their metadata says
which kernarg sizes the HIP runtime will read from each parameter, and the tests check that every
parameter holds its value in those bytes. Nothing here runs a kernel (see the README)."""

from __future__ import annotations

import ctypes
import struct

import numpy as np
import pytest
import tritium
import tritium.language as tl
from tritium.errors import ArgumentError, TritiumError
from tritium.runtime import native_launch
from tritium.runtime.launch import run_kernel
from tritium.target import GPUTarget, KernelSignature
from tritium_amdgpu import code_object, driver, hip, libhip, toolchain
from tritium_amdgpu.arch import ARCH_ENV
from tritium_amdgpu.memory import DeviceBuffer
from tritium_amdgpu.target import AmdgpuTarget

from tritium_conformance.kernels import add_kernel

pytestmark = pytest.mark.skipif(toolchain.linker() is None, reason="no ld.lld (pip install 'tritium-amdgpu[lld]')")


class HostHip:
    """The HIP calls of the launcher and the memory API on host memory; ``calls`` records them, and
    launches reach ``entry`` (C-callable, ``hipModuleLaunchKernel``'s signature), which records
    ``(function, grid, block, shared, stream, slots)``, ``slots`` the 8 bytes of each parameter."""

    FUNCTION = 0x4242
    hipDeviceAttribute_t, hipFunction_attribute, hipPointer_attribute = \
        libhip.hipDeviceAttribute_t, libhip.hipFunction_attribute, libhip.hipPointer_attribute

    def __init__(self, result: int = 0, sync_result: int = 0):
        self.calls, self.launches, self.images = [], [], []
        self.result, self.sync_result = result, sync_result
        self.allocations: dict[int, ctypes.Array] = {}
        self.entry = native_launch.LAUNCH_KERNEL(self._launch)

    def _launch(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        slots = []
        while params[len(slots)]:  # core's launch ends the array with NULL
            slots.append(ctypes.string_at(params[len(slots)], 8))
        self.launches.append((fn, (gx, gy, gz), (bx, by, bz), shared, stream or 0, slots))
        return self.result

    def hipModuleLoadData(self, image):
        self.images.append(bytes(image))
        return 0, 0x1000

    def hipModuleGetFunction(self, module, name):
        self.calls.append(("hipModuleGetFunction", name))
        return 0, self.FUNCTION

    def hipFuncGetAttribute(self, attribute, fn):
        return 0, 1024

    def hipSetDevice(self, device):
        self.calls.append(("hipSetDevice", device))
        return (0,)

    def hipMalloc(self, nbytes):
        buffer = ctypes.create_string_buffer(nbytes)
        self.allocations[ctypes.addressof(buffer)] = buffer
        return 0, ctypes.addressof(buffer)

    def hipFree(self, address):
        self.allocations.pop(address, None)
        return (0,)

    def hipMemcpyHtoD(self, dst, src, nbytes):
        ctypes.memmove(dst, src, nbytes)
        return (0,)

    def hipMemcpyDtoH(self, dst, src, nbytes):
        ctypes.memmove(dst, src, nbytes)
        return (0,)

    def hipDeviceSynchronize(self):
        return (self.sync_result,)

    def hipGetErrorName(self, error):
        return 0, {710: b"hipErrorAssert", 1: b"hipErrorInvalidValue"}.get(error)


@pytest.fixture
def host_hip(monkeypatch, tmp_path):
    """``host_hip(arch="gfx942", **kwargs)``: a HostHip in place of the HIP runtime, whose GPU 0 is ``arch``."""
    def install(arch: str = "gfx942", **kwargs) -> HostHip:
        fake = HostHip(**kwargs)
        monkeypatch.setattr(hip, "api", lambda: fake)
        monkeypatch.setattr(hip, "launch_entry", lambda: ctypes.cast(fake.entry, ctypes.c_void_p).value)
        monkeypatch.setattr(hip, "properties", lambda device: ("AMD Instinct (stand-in)", arch))
        monkeypatch.setattr(hip, "init", lambda: None)
        monkeypatch.setattr(hip._local, "device", None)
        monkeypatch.setattr(driver, "unavailable_reason", lambda: "")
        monkeypatch.setattr("tritium_amdgpu.target.unavailable_reason", lambda: "")
        return fake

    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(ARCH_ENV, raising=False)
    return install


def test_a_launch_passes_each_argument_in_the_bytes_its_code_object_says(host_hip):
    fake = host_hip()
    target = AmdgpuTarget()
    assert target.availability() == (True, "") and target.arch().name == "gfx942"  # the GPU's arch
    x, y = np.arange(1000, dtype=np.float32), np.full(1000, 2, np.float32)
    bx, by, bout = (target.driver.to_device(a) for a in (x, y, np.zeros_like(x)))
    run_kernel(target, add_kernel, (4,), (bx, by, bout, 1000), {"BLOCK": 256, "num_warps": 4})

    (image,) = fake.images  # the real code object, loaded once
    (entry,) = code_object.kernels(image)
    assert entry[".name"] == "add_kernel" and ("hipModuleGetFunction", b"add_kernel") in fake.calls
    (fn, grid, block, shared, stream, slots) = fake.launches[-1]
    assert fn == HostHip.FUNCTION and grid == (4, 1, 1) and block == (4 * 64, 1, 1) and shared == 0 and stream == 0
    explicit = [a for a in entry[".args"] if not a[".value_kind"].startswith("hidden_")]
    assert [a[".size"] for a in explicit] == [8, 8, 8, 4] and len(slots) == 4
    values = [slot[:a[".size"]] for slot, a in zip(slots, explicit)]
    assert values == [struct.pack("<Q", b.ptr) for b in (bx, by, bout)] + [struct.pack("<i", 1000)]
    np.testing.assert_array_equal(target.driver.to_host(bx), x)  # the memory API's round trip


@tritium.jit
def scalars_kernel(out, a, b, h, g, d, u):
    tl.store(out, a + b + h + g + d + u)


def test_every_scalar_type_fills_the_bytes_the_kernel_reads(host_hip):
    fake = host_hip()
    signature = {"out": "*fp64", "a": "i32", "b": "i1", "h": "fp16", "g": "bf16", "d": "fp64", "u": "u64"}
    c = tritium.compile(scalars_kernel, signature=signature, target="amdgpu", arch="gfx942")
    launcher = driver.HipLauncher(c.asm["hsaco"], KernelSignature("scalars_kernel", tuple(signature),
                                                                  tuple(signature.values())), c.metadata)
    launcher((1, 1, 1), [AmdgpuTarget.bind_arg(v, t, n) for (n, t), v in
                         zip(signature.items(), (DeviceBuffer((1,), np.float64), -5, True, 1.5, 1.5, 0.25, 2**64 - 1))])
    sizes = [a["size"] for a in c.metadata["args"]]
    read = [slot[:size] for slot, size in zip(fake.launches[-1][-1], sizes)]
    assert read[1:] == [struct.pack("<i", -5), b"\x01", np.float16(1.5).tobytes(), np.float32(1.5).tobytes()[2:],
                        np.float64(0.25).tobytes(), b"\xff" * 8]


def test_a_code_object_for_another_arch_is_refused_naming_both(host_hip, monkeypatch):
    host_hip(arch="gfx1100")
    monkeypatch.setenv(ARCH_ENV, "gfx942")
    target = AmdgpuTarget()
    x = target.driver.to_device(np.zeros(64, np.float32))
    with pytest.raises(TritiumError, match="compiled for gfx942, but GPU 0 is gfx1100: compile with arch='gfx1100'"):
        run_kernel(target, add_kernel, (1,), (x, x, x, 64), {"BLOCK": 64})


def test_a_trapped_kernel_is_reported_at_the_next_synchronisation(host_hip):
    host_hip(sync_result=libhip.HIP_ERROR_ASSERT)
    with pytest.raises(hip.HipAssertionError, match="hipDeviceSynchronize: a kernel launched earlier stopped "
                                                    r"\(hipErrorAssert\).*restart the process"):
        AmdgpuTarget().driver.synchronize()


def test_rocm_dlpack_arrays_bind_and_cuda_ones_are_refused(host_hip):
    host_hip()
    host = np.arange(8, dtype=np.float32)

    class OnDevice:
        def __init__(self, kind):
            self.kind = kind

        def __dlpack_device__(self):
            return (self.kind, 1)

        def __dlpack__(self):
            return host.__dlpack__()

    p = AmdgpuTarget.bind_arg(OnDevice(10), "*fp32", "x")  # kDLROCM
    assert p == host.ctypes.data and p.device == 1 and p.framework == ""
    with pytest.raises(ArgumentError, match="'x' is DLPack memory on device type 2"):
        AmdgpuTarget.bind_arg(OnDevice(2), "*fp32", "x")  # CUDA memory is not the AMD GPU's


@pytest.mark.parametrize("enum", ["hipDeviceAttribute_t", "hipFunction_attribute", "hipPointer_attribute"])
def test_enum_values_are_hip_python_s(enum):
    hip_python = pytest.importorskip("hip.hip")
    ours = vars(getattr(libhip, enum))
    assert ours and {name: int(getattr(getattr(hip_python, enum), name)) for name in ours} == ours


def test_a_missing_hip_runtime_is_named():
    with pytest.raises(OSError, match="no HIP runtime: its library libamdhip64-none.so cannot be loaded"):
        libhip.Runtime("libamdhip64-none.so")


@pytest.mark.parametrize("arch,traits", [("gfx942", {"is_hip", "is_hip_cdna3"}), ("gfx950", {"is_hip", "is_hip_cdna4"}),
                                         ("gfx1100", {"is_hip"})])
def test_the_current_target_states_tritons_target_info(host_hip, arch, traits):
    host_hip(arch=arch)
    current = AmdgpuTarget().current_target()
    assert current == GPUTarget("hip", arch, 32 if arch == "gfx1100" else 64) and current.traits == traits
    assert current.capability is None
