"""amdgpu's memory for tests and the conformance suite: core's ``DeviceBuffer`` on the HIP runtime's
calls (hipMalloc, hipMemcpy), and the binding of array arguments: core's ``DeviceArrays`` for ROCm
memory (torch and CuPy ROCm arrays, ``DeviceBuffer``, ``__cuda_array_interface__``, ROCm DLPack)."""

from __future__ import annotations

from typing import Any

from tritium.errors import ArgumentError
from tritium.runtime import device_memory
from tritium.runtime.device_arrays import DLPACK_ROCM, DeviceArrays

from . import hip


class HipMemory(device_memory.GpuMemory):
    def allocate(self, nbytes: int, device: int) -> int:
        hip.make_current(device)
        return int(hip.check("hipMalloc", hip.api().hipMalloc(nbytes)))

    def free(self, address: int, device: int) -> None:
        hip.api().hipFree(address)

    def copy_in(self, address: int, host_address: int, nbytes: int, device: int) -> None:
        hip.make_current(device)
        hip.check("hipMemcpyHtoD", hip.api().hipMemcpyHtoD(address, host_address, nbytes))

    def copy_out(self, host_address: int, address: int, nbytes: int, device: int) -> None:
        hip.make_current(device)
        hip.check("hipDeviceSynchronize", hip.api().hipDeviceSynchronize())
        hip.check("hipMemcpyDtoH", hip.api().hipMemcpyDtoH(host_address, address, nbytes))


class DeviceBuffer(device_memory.DeviceBuffer):
    """A hipMalloc allocation (see core's ``DeviceBuffer``)."""

    memory = HipMemory()


def to_host(buffer: Any) -> Any:
    return device_memory.to_host(buffer, DeviceBuffer.memory, hip.current_device())


def _device_of_address(address: int, name: str) -> int:
    r = hip.api()
    try:
        return int(hip.check("hipPointerGetAttribute", r.hipPointerGetAttribute(
            r.hipPointer_attribute.HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, address)))
    except (hip.HipError, OSError) as e:
        raise ArgumentError(f"argument '{name}': its __cuda_array_interface__ address is not GPU memory ({e})") from None


ARRAYS = DeviceArrays("amdgpu", DeviceBuffer, (DLPACK_ROCM,), _device_of_address,
                      "torch.as_tensor({name}, device='cuda') on ROCm's torch, or cupy.asarray({name})")
