"""The launch path of torch tensors (``NvptxTarget.inline_array``): the generated launch function
reads their addresses and GPU inline and calls ``NvptxLauncher.launch_on``. Checked with a fake
driver and a fake torch module (no GPU here): what reaches ``cuLaunchKernel``, which kernel the key
selects, and what still takes the general path."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from tritium import plugins
from tritium.errors import ArgumentError
from tritium.runtime import device_arrays
from tritium_nvptx import cuda, driver
from tritium_nvptx.target import ARCH_ENV, NvptxTarget


class Tensor:
    """What the launch path reads of a torch tensor."""

    def __init__(self, address: int, device: int = 0, dtype: str = "float32"):
        self.address, self.device_index, self.dtype = address, device, np.dtype(dtype)

    def data_ptr(self) -> int:
        return self.address

    def get_device(self) -> int:
        return self.device_index

    @property
    def device(self) -> str:
        return "cpu" if self.device_index < 0 else f"cuda:{self.device_index}"


Tensor.__module__ = "torch"


@pytest.fixture
def gpu(monkeypatch, tmp_path, fake_driver, core_kernels):
    """A fake GPU for the nvptx target, and a fake torch whose current stream is ``streams[device]``;
    ``add_kernel`` is the core tests' vector add."""
    global add_kernel
    add_kernel = core_kernels("basic").add_kernel
    fake = fake_driver()
    monkeypatch.setattr(NvptxTarget, "availability", lambda self: (True, "fake GPU"))
    monkeypatch.setattr(cuda, "init", lambda: None)
    monkeypatch.setattr(cuda, "driver_version", lambda: 13000)
    monkeypatch.setattr(cuda, "attribute", lambda device, name: 227 * 1024)
    monkeypatch.setenv("TRITIUM_TARGET", "nvptx")
    monkeypatch.setenv(ARCH_ENV, "sm_90")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    torch = types.ModuleType("torch")
    torch.Tensor = Tensor
    fake.streams = {}
    torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: fake.streams.get(device, 0))
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(device_arrays.STREAMS, "torch", device_arrays._torch_stream)
    plugins.reset()
    add_kernel.binders.clear()
    add_kernel.kernels.clear()
    add_kernel._last_launch = None
    yield fake
    plugins.reset()
    add_kernel.binders.clear()
    add_kernel.kernels.clear()
    add_kernel._last_launch = None


def _launches(fake) -> list[tuple]:
    """(grid, stream, the four parameters' bits) of each cuLaunchKernel call."""
    found = []
    for name, args in fake.calls:
        if name == "cuLaunchKernel":
            fn, gx, gy, gz, bx, by, bz, shared, stream, slots, extra = args
            values = tuple(int.from_bytes(slot, "little") for slot in slots[:3])
            found.append(((gx, gy, gz), stream, values + (int.from_bytes(slots[3][:4], "little", signed=True),)))
    return found


def test_a_warm_launch_of_torch_tensors_binds_them_inline(gpu, monkeypatch):
    x, y, out = Tensor(4096), Tensor(8192), Tensor(12288)
    first = add_kernel[(3,)](x, y, out, 100, BLOCK=64)
    calls = []
    monkeypatch.setattr(driver.NvptxLauncher, "__call__", lambda *a: pytest.fail("the warm launch took bind_arg"))
    real = driver.NvptxLauncher.launch_on
    monkeypatch.setattr(driver.NvptxLauncher, "launch_on", lambda self, *a: calls.append(a) or real(self, *a))
    assert add_kernel[(3,)](Tensor(16384), y, out, 100, BLOCK=64) is first  # same specialisation
    assert calls == [((3, 1, 1), (16384, 8192, 12288, 100), 0)]
    assert _launches(gpu)[-1] == ((3, 1, 1), None, (16384, 8192, 12288, 100))
    gpu.streams[0] = 0x7000  # torch's current stream, read on every launch
    add_kernel[(2, 5)](x, y, out, 7, BLOCK=64)
    assert _launches(gpu)[-1] == ((2, 5, 1), 0x7000, (4096, 8192, 12288, 7))


def test_the_key_sees_alignment_dtype_and_gpu(gpu):
    x, y, out = Tensor(4096), Tensor(8192), Tensor(12288)
    aligned = add_kernel[(1,)](x, y, out, 100, BLOCK=64)
    assert add_kernel[(1,)](Tensor(4100), y, out, 100, BLOCK=64) is not aligned  # not divisible by 16
    assert add_kernel[(1,)](Tensor(4096, dtype="float16"), y, out, 100, BLOCK=64) is not aligned
    on_1 = add_kernel[(1,)](Tensor(4096, 1), Tensor(8192, 1), Tensor(12288, 1), 100, BLOCK=64)
    assert ("make_current", (1,)) in gpu.calls  # launched on the tensors' GPU
    assert add_kernel[(1,)](Tensor(4096, 1), Tensor(8192, 1), Tensor(12288, 1), 100, BLOCK=64) is on_1
    assert add_kernel[(1,)](x, y, out, 100, BLOCK=64) is aligned


def test_tensors_of_two_gpus_or_the_host_take_the_general_path_and_its_errors(gpu):
    x, y, out = Tensor(4096), Tensor(8192), Tensor(12288)
    add_kernel[(1,)](x, y, out, 100, BLOCK=64)
    with pytest.raises(ArgumentError, match="'y_ptr' is on GPU 1 but 'x_ptr' is on GPU 0"):
        add_kernel[(1,)](x, Tensor(8192, 1), out, 100, BLOCK=64)
    with pytest.raises(ArgumentError, match="argument 'out_ptr' is a torch tensor on .*move it to the GPU"):
        add_kernel[(1,)](x, y, Tensor(12288, -1), 100, BLOCK=64)


def test_torch_tensors_beside_other_gpu_arrays_are_bound_by_the_general_path(gpu):
    class Wrapped:  # a __cuda_array_interface__ array: bound by bind_arg, on the GPU the driver names
        def __init__(self, address: int):
            self.__cuda_array_interface__ = {"data": (address, False), "shape": (64,), "typestr": "<f4", "version": 3}
            self.dtype = np.dtype(np.float32)

    gpu.CUpointer_attribute = types.SimpleNamespace(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL=9)
    gpu.cuPointerGetAttribute = lambda attribute, address: (0, address // 100_000)
    for _ in range(2):  # cold, then warm
        add_kernel[(1,)](Tensor(4096), Wrapped(8192), Tensor(12288), 100, BLOCK=64)
        assert _launches(gpu)[-1] == ((1, 1, 1), None, (4096, 8192, 12288, 100))
    for _ in range(2):
        with pytest.raises(ArgumentError, match="'y_ptr' is on GPU 2 but 'x_ptr' is on GPU 0"):
            add_kernel[(1,)](Tensor(4096), Wrapped(200_000), Tensor(12288), 100, BLOCK=64)


def test_a_warm_launch_of_descriptors_on_torch_tensors_reads_their_bases_inline(gpu, monkeypatch, core_kernels):
    """Host tensor descriptors over torch tensors: bound inline like the tensors themselves, their
    parts (base, shape, strides but the last) spread into the kernel's parameters."""
    from tritium.tools.tensor_descriptor import TensorDescriptor

    copy = core_kernels("descriptors").scale_kernel
    copy.binders.clear()
    copy.kernels.clear()
    src, dst = TensorDescriptor(Tensor(4096), [20, 30], [32, 1], [16, 16]), \
        TensorDescriptor(Tensor(8192), [20, 30], [32, 1], [16, 16])
    first = copy[(2, 2)](src, dst, 2.0, BM=16, BN=16)
    with pytest.raises(ArgumentError, match="argument 'dst' is on GPU 0 but 'src' is on GPU 1; pass arrays of one GPU"):
        copy[(1, 1)](TensorDescriptor(Tensor(4096, 1), [20, 30], [32, 1], [16, 16]), dst, 1.0, BM=16, BN=16)
    calls = []
    monkeypatch.setattr(driver.NvptxLauncher, "__call__", lambda *a: pytest.fail("the warm launch took bind_arg"))
    real = driver.NvptxLauncher.launch_on
    monkeypatch.setattr(driver.NvptxLauncher, "launch_on", lambda self, *a: calls.append(a) or real(self, *a))
    other = TensorDescriptor(Tensor(16384), [7, 9], [48, 1], [16, 16])
    assert copy[(1, 1)](other, dst, 3.0, BM=16, BN=16) is first  # shapes and strides are parameters
    assert calls == [((1, 1, 1), (16384, 7, 9, 48, 8192, 20, 30, 32, 3.0), 0)]
    fn, *_, slots, extra = [a for name, a in gpu.calls if name == "cuLaunchKernel"][-1]
    sizes = (8, 4, 4, 8, 8, 4, 4, 8)
    assert [int.from_bytes(s[:n], "little") for s, n in zip(slots, sizes)] == [16384, 7, 9, 48, 8192, 20, 30, 32]
