"""Pointer arguments of nvptx kernels: core's ``DeviceArrays`` for CUDA memory (torch CUDA tensors,
CuPy arrays, ``DeviceBuffer``, ``__cuda_array_interface__``, CUDA DLPack), whose GPU the driver is
asked for where an array does not say."""

from __future__ import annotations

from tritium.errors import ArgumentError
from tritium.runtime.device_arrays import DLPACK_CUDA, DLPACK_CUDA_MANAGED, DeviceArrays

from .memory import DeviceBuffer


def _device_of_address(address: int, name: str) -> int:
    """The ordinal of the GPU holding ``address`` (asked of the driver)."""
    from . import cuda

    d = cuda.api()
    try:
        return int(cuda.check("cuPointerGetAttribute", d.cuPointerGetAttribute(
            d.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, address)))
    except cuda.CudaError as e:
        raise ArgumentError(f"argument '{name}': its __cuda_array_interface__ address is not GPU memory ({e})") from None


ARRAYS = DeviceArrays("nvptx", DeviceBuffer, (DLPACK_CUDA, DLPACK_CUDA_MANAGED), _device_of_address,
                      "torch.as_tensor({name}, device='cuda') or cupy.asarray({name})")
#: ``NvptxTarget.bind_arg``
bind_argument = ARRAYS.bind
