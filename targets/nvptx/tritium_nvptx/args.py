"""Pointer arguments of GPU kernels: the device address of torch CUDA tensors, CuPy arrays, anything
with ``__cuda_array_interface__`` and CUDA DLPack objects, with the device they live on and the
framework whose current stream a launch uses. Host arrays are refused with what to do instead."""

from __future__ import annotations

import ctypes
from typing import Any

from tritium.errors import ArgumentError
from tritium.runtime.args import bind_scalar
from tritium.runtime.reinterpret import TensorWrapper

from .memory import DeviceBuffer, DevicePointer

#: DLPack device types of memory a CUDA kernel can address (kDLCUDA, kDLCUDAManaged)
_DLPACK_CUDA = (2, 13)


#: classes known to be torch tensors (the launch path's fast case, looked up by class)
_TORCH_CLASSES: dict[type, bool] = {}
#: device -> address -> its DevicePointer: launches on the same tensors (a training loop, a
#: benchmark) allocate no new objects, which keeps Python's garbage collector off the launch path
_TORCH_POINTERS: dict[int, dict[int, DevicePointer]] = {}
_CACHED_POINTERS = 1 << 14


def device_pointer(value: Any, name: str) -> DevicePointer:
    """The address of ``value``'s first element in GPU memory, or an ArgumentError saying what to pass."""
    cls = type(value)
    if cls is DeviceBuffer:
        return value.pointer
    if cls is TensorWrapper:  # tritium.reinterpret: the array's memory, device and stream
        return device_pointer(value.base, name)
    torch = _TORCH_CLASSES.get(cls)
    if torch:  # on every launch: one call, no helper
        device = value.get_device()  # -1 on the host
        by_address = _TORCH_POINTERS.get(device)
        if by_address is not None:
            p = by_address.get(value.data_ptr())
            if p is not None:
                return p
        if device < 0:
            raise _host(name, f"a torch tensor on {value.device}", f"{name}.cuda()")
        return _torch_pointer(value.data_ptr(), device)
    if torch is None:
        _TORCH_CLASSES[cls] = cls.__module__.startswith("torch") and hasattr(cls, "data_ptr")
        return device_pointer(value, name)
    module = cls.__module__
    if module.startswith("cupy"):
        return DevicePointer.at(value.data.ptr, value.device.id, "cupy")
    iface = getattr(value, "__cuda_array_interface__", None)
    if iface is not None:
        return DevicePointer.at(iface["data"][0], _device_of_address(iface["data"][0], name), "")
    if hasattr(value, "__array_interface__") or isinstance(value, (memoryview, bytearray, bytes)):
        raise _host(name, f"a host array ({type(value).__module__}.{type(value).__name__})",
                    f"torch.as_tensor({name}, device='cuda') or cupy.asarray({name})")
    if hasattr(value, "__dlpack_device__"):
        kind, device = value.__dlpack_device__()
        if int(kind) in _DLPACK_CUDA:
            return DevicePointer.at(_dlpack_address(value, name), int(device), "")
        raise _host(name, f"DLPack memory on device type {int(kind)}", "an array in CUDA memory")
    raise ArgumentError(f"argument '{name}' ({type(value).__name__}) is not a GPU array: pass a torch CUDA tensor, "
                        "a CuPy array, or an object with __cuda_array_interface__ or CUDA DLPack")


def _torch_pointer(address: int, device: int) -> DevicePointer:
    by_address = _TORCH_POINTERS.get(device)
    if by_address is None:
        by_address = _TORCH_POINTERS[device] = {}
    p = by_address.get(address)
    if p is None:
        if len(by_address) >= _CACHED_POINTERS:
            by_address.clear()
        p = by_address[address] = DevicePointer.at(address, device, "torch")
    return p


def bind_argument(value: Any, arg_type: str, arg_name: str) -> Any:
    """``NvptxTarget.bind_arg`` as a plain function (a launch calls it once per argument), with
    ``device_pointer``'s case of a torch tensor seen before inline."""
    if arg_type[0] == "*":
        if _TORCH_CLASSES.get(type(value)):
            by_address = _TORCH_POINTERS.get(value.get_device())
            if by_address is not None:
                p = by_address.get(value.data_ptr())
                if p is not None:
                    return p
        return device_pointer(value, arg_name)
    return bind_scalar(value, arg_type, arg_name, "nvptx")


def _host(name: str, what: str, fix: str) -> ArgumentError:
    return ArgumentError(f"argument '{name}' is {what}, but the nvptx target runs kernels on the GPU: move it "
                         f"to the GPU first (e.g. {fix}), or run on the host with TRITIUM_TARGET=cpu")


def _device_of_address(address: int, name: str) -> int:
    """The ordinal of the GPU holding ``address`` (asked of the driver)."""
    from . import cuda

    d = cuda.api()
    try:
        return int(cuda.check("cuPointerGetAttribute", d.cuPointerGetAttribute(
            d.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, address)))
    except cuda.CudaError as e:
        raise ArgumentError(f"argument '{name}': its __cuda_array_interface__ address is not GPU memory ({e})") from None


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", ctypes.c_uint32), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


def _dlpack_address(value: Any, name: str) -> int:
    """``data + byte_offset`` of the DLTensor a ``__dlpack__`` capsule holds (the capsule is not
    consumed: its deleter runs when it is collected, the producer keeps the memory)."""
    capsule = value.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    try:
        tensor = _DLTensor.from_address(get(capsule, b"dltensor"))  # DLManagedTensor starts with its DLTensor
    except ValueError:
        raise ArgumentError(f"argument '{name}': its __dlpack__ gave no DLPack tensor") from None
    return int(tensor.data or 0) + int(tensor.byte_offset)
