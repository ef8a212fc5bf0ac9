"""nvptx's memory for tests and the conformance suite: core's ``DeviceBuffer`` on the CUDA driver's
calls (cuMemAlloc, cuMemcpy), in the device's primary context."""

from __future__ import annotations

from typing import Any

from tritium.runtime import device_memory

from . import cuda


class CudaMemory(device_memory.GpuMemory):
    def allocate(self, nbytes: int, device: int) -> int:
        cuda.make_current(device)
        return int(cuda.check("cuMemAlloc", cuda.api().cuMemAlloc(nbytes)))

    def free(self, address: int, device: int) -> None:
        cuda.api().cuMemFree(address)

    def copy_in(self, address: int, host_address: int, nbytes: int, device: int) -> None:
        cuda.make_current(device)
        cuda.check("cuMemcpyHtoD", cuda.api().cuMemcpyHtoD(address, host_address, nbytes))

    def copy_out(self, host_address: int, address: int, nbytes: int, device: int) -> None:
        cuda.make_current(device)
        cuda.check("cuCtxSynchronize", cuda.api().cuCtxSynchronize())
        cuda.check("cuMemcpyDtoH", cuda.api().cuMemcpyDtoH(host_address, address, nbytes))


class DeviceBuffer(device_memory.DeviceBuffer):
    """A cuMemAlloc allocation (see core's ``DeviceBuffer``)."""

    memory = CudaMemory()


def to_device(array: Any, device: int = 0) -> DeviceBuffer:
    return DeviceBuffer.of(array, device)


def to_host(buffer: Any) -> Any:
    """A numpy copy of a DeviceBuffer or any C-contiguous ``__cuda_array_interface__`` array."""
    return device_memory.to_host(buffer, DeviceBuffer.memory, cuda.current_device())
