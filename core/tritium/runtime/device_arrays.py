"""Pointer arguments of GPU kernels, for every GPU target: the device address of torch tensors, CuPy
arrays, a target's own buffers, anything with ``__cuda_array_interface__`` and DLPack objects in the
target's memory, with the device they live on and the framework whose current stream a launch
uses. Host arrays are refused with what to do instead.

nvptx and amdgpu bind through one ``DeviceArrays`` each, which differ in the DLPack device types
they take (CUDA's or ROCm's), the buffer class of their memory API, how they ask the driver which
GPU holds an address, and the words of their errors. ROCm builds of torch and CuPy keep CUDA's
Python API, so the same code reads their tensors.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Sequence

from ..errors import ArgumentError, MemoryPlaceError
from ..target import InlineArray
from .args import bind_scalar
from .reinterpret import TensorWrapper

#: DLPack's device types (``DLDeviceType``) of GPU memory: CUDA, CUDA managed, ROCm
DLPACK_CUDA, DLPACK_CUDA_MANAGED, DLPACK_ROCM = 2, 13, 10


class DevicePointer(int):
    """A device address for a launch; ``device`` is its GPU and ``framework`` ("torch", "cupy" or "")
    says whose current stream the launch runs on (the default stream for "")."""

    device: int
    framework: str

    @classmethod
    def at(cls, address: int, device: int, framework: str) -> "DevicePointer":
        p = cls(address)
        p.device, p.framework = device, framework
        return p


def _torch_stream(device: int) -> int:
    """torch's current stream on ``device`` as an int (what Triton calls: no Stream object); ROCm
    builds of torch keep CUDA's names for HIP's streams."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None) or \
        (lambda device: torch.cuda.current_stream(device).cuda_stream)
    STREAMS["torch"] = raw
    return raw(device)


def _cupy_stream(device: int) -> int:
    import cupy

    with cupy.cuda.Device(device):
        return cupy.cuda.get_current_stream().ptr


#: framework (``DevicePointer.framework``) -> its current stream on a device, an int: a launch with
#: its arrays runs there; "" (no framework) is the default stream
STREAMS: dict[str, Callable[[int], int]] = {"torch": _torch_stream, "cupy": _cupy_stream, "": lambda device: 0}


def torch_stream(device: int) -> int:
    """torch's current stream on ``device`` where torch is imported (launches with its tensors run
    there), else the default stream: a GPU target's ``Target.current_stream``."""
    import sys

    return STREAMS["torch"](device) if "torch" in sys.modules else 0


def placement(args: Sequence[Any], pointers: Sequence[int], arg_names: Sequence[str], kernel: str,
              default_device: int) -> tuple[int, str]:
    """The GPU and framework of a launch's pointer arguments (at ``pointers``), which must all be
    on one GPU; ``default_device`` and no framework where none is a DevicePointer."""
    device, framework, first = -1, "", 0
    for i in pointers:
        p = args[i]
        if not isinstance(p, DevicePointer):
            continue
        if device < 0:
            device, framework, first = p.device, p.framework, i
        elif p.device != device:
            raise ArgumentError(f"kernel '{kernel}': argument '{arg_names[i]}' is on GPU {p.device} "
                                f"but '{arg_names[first]}' is on GPU {device}; pass arrays of one GPU")
    return (device if device >= 0 else default_device), framework


def torch_inline_array() -> InlineArray | None:
    """torch tensors, where torch is imported: a GPU target's ``Target.inline_array``. The launch
    path reads their address and GPU itself and calls the launcher's ``launch_on``; subclasses of
    ``torch.Tensor`` and tensors on the host take ``bind_arg``'s path, which words the error."""
    import sys

    tensor = getattr(sys.modules.get("torch"), "Tensor", None)
    if not isinstance(tensor, type):
        return None
    return InlineArray(tensor, address="{v}.data_ptr()", placement="{v}.get_device()", launch="launch_on")


#: device -> address -> its DevicePointer: launches on the same tensors (a training loop, a
#: benchmark) allocate no new objects, which keeps Python's garbage collector off the launch path
_CACHED_POINTERS = 1 << 14


class DeviceArrays:
    """Binds the pointer arguments of one GPU target (``bind``, its ``Target.bind_arg``).

    ``target`` names it in errors, ``buffer_type`` is its memory API's array class (with a
    ``pointer`` attribute, a DevicePointer), ``dlpack_devices`` the DLPack device types it
    addresses, ``device_of_address(address, name)`` asks its driver which GPU holds an address
    (for ``__cuda_array_interface__`` objects, which do not say), and ``to_gpu`` how to move a
    host array there, for the error that refuses one."""

    def __init__(self, target: str, buffer_type: type, dlpack_devices: tuple[int, ...],
                 device_of_address: Callable[[int, str], int], to_gpu: str):
        self.target, self.buffer_type, self.dlpack_devices = target, buffer_type, dlpack_devices
        self.device_of_address, self.to_gpu = device_of_address, to_gpu
        #: classes known to be torch tensors (the launch path's fast case, looked up by class)
        self.torch_classes: dict[type, bool] = {}
        self.torch_pointers: dict[int, dict[int, DevicePointer]] = {}
        self.bind = self._binder()

    def _binder(self) -> Callable[[Any, str, str], Any]:
        """``bind(value, arg_type, arg_name)`` as a plain function (a launch calls it once per
        argument), with ``device_pointer``'s case of a torch tensor seen before inline."""
        torch_classes, torch_pointers, device_pointer, target = (self.torch_classes, self.torch_pointers,
                                                                 self.device_pointer, self.target)

        def bind(value: Any, arg_type: str, arg_name: str) -> Any:
            if arg_type[0] == "*":
                if torch_classes.get(type(value)):
                    by_address = torch_pointers.get(value.get_device())
                    if by_address is not None:
                        p = by_address.get(value.data_ptr())
                        if p is not None:
                            return p
                return device_pointer(value, arg_name)
            return bind_scalar(value, arg_type, arg_name, target)
        return bind

    def device_pointer(self, value: Any, name: str) -> DevicePointer:
        """The address of ``value``'s first element in GPU memory, or an ArgumentError saying what to pass."""
        cls = type(value)
        if cls is self.buffer_type:
            return value.pointer
        if cls is TensorWrapper:  # tritium.reinterpret: the array's memory, device and stream
            return self.device_pointer(value.base, name)
        torch = self.torch_classes.get(cls)
        if torch:
            device = value.get_device()  # -1 on the host
            by_address = self.torch_pointers.get(device)
            if by_address is not None:
                p = by_address.get(value.data_ptr())
                if p is not None:
                    return p
            if device < 0:
                raise self._host(name, f"a torch tensor on {value.device}", f"{name}.cuda()")
            return self._torch_pointer(value.data_ptr(), device)
        if torch is None:
            self.torch_classes[cls] = cls.__module__.startswith("torch") and hasattr(cls, "data_ptr")
            return self.device_pointer(value, name)
        if cls.__module__.startswith("cupy"):
            return DevicePointer.at(value.data.ptr, value.device.id, "cupy")
        iface = getattr(value, "__cuda_array_interface__", None)
        if iface is not None:
            return DevicePointer.at(iface["data"][0], self.device_of_address(iface["data"][0], name), "")
        if hasattr(value, "__array_interface__") or isinstance(value, (memoryview, bytearray, bytes)):
            raise self._host(name, f"a host array ({cls.__module__}.{cls.__name__})", self.to_gpu.format(name=name))
        if hasattr(value, "__dlpack_device__"):
            kind, device = value.__dlpack_device__()
            if int(kind) in self.dlpack_devices:
                return DevicePointer.at(dlpack_address(value, name), int(device), "")
            raise self._host(name, f"DLPack memory on device type {int(kind)}", f"an array in {self.target}'s GPU memory")
        raise ArgumentError(f"argument '{name}' ({cls.__name__}) is not a GPU array: pass a torch GPU tensor, a CuPy "
                            f"array, or an object with __cuda_array_interface__ or DLPack in GPU memory")

    def _torch_pointer(self, address: int, device: int) -> DevicePointer:
        by_address = self.torch_pointers.get(device)
        if by_address is None:
            by_address = self.torch_pointers[device] = {}
        p = by_address.get(address)
        if p is None:
            if len(by_address) >= _CACHED_POINTERS:
                by_address.clear()
            p = by_address[address] = DevicePointer.at(address, device, "torch")
        return p

    def _host(self, name: str, what: str, fix: str) -> MemoryPlaceError:
        return MemoryPlaceError(f"argument '{name}' is {what}, but the {self.target} target runs kernels on the GPU: move "
                             f"it to the GPU first (e.g. {fix}), or run on the host with TRITIUM_TARGET=cpu")


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLTensor(ctypes.Structure):
    """DLPack's ``DLTensor``, the head of the ``DLManagedTensor`` a ``__dlpack__`` capsule holds."""
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", ctypes.c_uint32), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


def dlpack_address(value: Any, name: str) -> int:
    """``data + byte_offset`` of the DLTensor a ``__dlpack__`` capsule holds (the capsule is not
    consumed: its deleter runs when it is collected, the producer keeps the memory)."""
    capsule = value.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    try:
        tensor = DLTensor.from_address(get(capsule, b"dltensor"))  # DLManagedTensor starts with its DLTensor
    except ValueError:
        raise ArgumentError(f"argument '{name}': its __dlpack__ gave no DLPack tensor") from None
    return int(tensor.data or 0) + int(tensor.byte_offset)
