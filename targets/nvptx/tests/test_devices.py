"""The nvptx target's device queries (``driver.active``: properties, current target, devices) and
the resources of a loaded kernel, against a pretend CUDA driver (no GPU here)."""

from __future__ import annotations

import pytest
from tritium.errors import OutOfResources
from tritium.runtime.compiler import CompiledKernel
from tritium.runtime.driver import ActiveDriver
from tritium.target import GPUTarget, KernelSignature
from tritium_nvptx import cuda
from tritium_nvptx.driver import NvptxLauncher
from tritium_nvptx.target import NvptxTarget


class FakeCuda:
    """The driver API of two H100-like GPUs; kernels use 40 registers and spill 16 bytes."""

    class CUdevice_attribute:
        pass

    class CUfunction_attribute:
        pass

    DEVICE = {"MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 232448, "MAX_REGISTERS_PER_BLOCK": 65536,
              "MULTIPROCESSOR_COUNT": 132, "WARP_SIZE": 32, "CLOCK_RATE": 1980000, "MEMORY_CLOCK_RATE": 2619000,
              "GLOBAL_MEMORY_BUS_WIDTH": 5120, "COMPUTE_CAPABILITY_MAJOR": 9, "COMPUTE_CAPABILITY_MINOR": 0}

    def __init__(self, max_threads: int = 1024):
        self.function = {"NUM_REGS": 40, "LOCAL_SIZE_BYTES": 16, "MAX_THREADS_PER_BLOCK": max_threads,
                         "MAX_DYNAMIC_SHARED_SIZE_BYTES": 0}
        for name in self.DEVICE:
            setattr(self.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}", name)
        for name in self.function:
            setattr(self.CUfunction_attribute, f"CU_FUNC_ATTRIBUTE_{name}", name)
        self.calls: list[tuple] = []
        self.unsupported: set[str] = set()

    def cuInit(self, flags):
        return (0,)

    def cuDeviceGetCount(self):
        return 0, 2

    def cuDeviceGetAttribute(self, attribute, device):
        self.calls.append(("attribute", attribute, device))
        if attribute in self.unsupported:
            return 1, 0  # CUDA_ERROR_INVALID_VALUE
        return 0, self.DEVICE[attribute] // (1 if device == 0 else 2)  # GPU 1 is half a GPU 0

    def cuFuncGetAttribute(self, attribute, function):
        return 0, self.function[attribute]

    def cuModuleLoadData(self, image):
        return 0, "module"

    def cuModuleGetFunction(self, module, name):
        return 0, FakeFunction(name.decode())

    def cuFuncSetAttribute(self, function, attribute, value):
        self.calls.append(("set", attribute, value))
        return (0,)


class FakeFunction(str):
    """A CUfunction: its int is the handle the launcher passes to the driver."""

    def __int__(self) -> int:
        return 4096


@pytest.fixture
def fake(monkeypatch) -> FakeCuda:
    fake = FakeCuda()
    monkeypatch.setattr(cuda, "api", lambda: fake)
    monkeypatch.setattr(cuda, "_init_error", [])
    monkeypatch.setattr(cuda, "make_current", lambda device: setattr(cuda._local, "device", device))
    monkeypatch.setattr(cuda._local, "device", 0, raising=False)
    return fake


def test_device_properties_are_the_driver_attributes_under_tritons_keys(fake):
    drv = ActiveDriver(NvptxTarget())
    assert drv.utils.get_device_properties(0) == {
        "max_shared_mem": 232448, "max_num_regs": 65536, "multiprocessor_count": 132, "warpSize": 32,
        "sm_clock_rate": 1980000, "mem_clock_rate": 2619000, "mem_bus_width": 5120}
    assert drv.utils.get_device_properties(1)["multiprocessor_count"] == 66
    assert drv.get_current_target() == GPUTarget("cuda", 90, 32)


def test_a_clock_the_driver_no_longer_reports_is_0_but_a_size_it_lacks_is_an_error(fake):
    target = NvptxTarget()
    fake.unsupported = {"CLOCK_RATE"}
    assert target.device_properties(0)["sm_clock_rate"] == 0
    fake.unsupported = {"MULTIPROCESSOR_COUNT"}
    with pytest.raises(cuda.CudaError, match="cuDeviceGetAttribute failed"):
        target.device_properties(0)


def test_devices_are_counted_and_the_current_one_is_per_thread(fake):
    target = NvptxTarget()
    drv = ActiveDriver(target)
    assert drv.get_device_count() == 2 and drv.get_current_device() == 0
    drv.set_current_device(1)
    assert drv.get_current_device() == 1 and target.torch_device() == ("cuda", 1)
    assert drv.utils.get_device_properties(None)["multiprocessor_count"] == 66  # the current device's
    with pytest.raises(Exception, match="has 2 device"):
        drv.set_current_device(2)


def _kernel(target: NvptxTarget, num_warps: int, shared: int) -> CompiledKernel:
    sig = KernelSignature("k", ("x",), ("*fp32",))
    metadata = {"num_warps": num_warps, "shared": shared, "binary_format": "cubin", "name": "k"}
    return CompiledKernel(target, sig, {"ptx": ""}, metadata, b"cubin")


def test_init_handles_reads_registers_spills_and_threads_of_the_loaded_kernel(fake):
    target = NvptxTarget()
    kernel = _kernel(target, 8, 1024)
    kernel._init_handles()
    assert (kernel.n_regs, kernel.n_spills, kernel.n_max_threads, kernel.metadata.shared) == (40, 4, 1024, 1024)


def test_too_much_shared_memory_is_out_of_resources(fake):
    kernel = _kernel(NvptxTarget(), 4, 300000)
    with pytest.raises(OutOfResources, match=r"kernel 'k': out of resource: shared memory, Required: 300000, "
                       r"Hardware limit: 232448"):
        kernel._init_handles()
    launcher = NvptxLauncher(b"cubin", KernelSignature("k", ("n",), ("i32",)), {"num_warps": 4, "shared": 300000})
    with pytest.raises(OutOfResources):  # a launch says the same
        launcher((1, 1, 1), [1])


def test_too_many_registers_for_the_threads_is_out_of_resources(fake):
    fake.function["MAX_THREADS_PER_BLOCK"] = 128  # what the driver allows a kernel that uses many registers
    with pytest.raises(OutOfResources, match="out of resource: threads, Required: 256, Hardware limit: 128"):
        _kernel(NvptxTarget(), 8, 0)._init_handles()
