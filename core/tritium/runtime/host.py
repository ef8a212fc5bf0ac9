"""Host memory behind user arrays: the address of numpy arrays, CPU torch tensors, DLPack and
buffer-protocol objects, with clear refusals for device memory and non-arrays. Shared by every
target whose kernels read host memory directly (the cpu target, the interpreter)."""

from __future__ import annotations

import ctypes
from typing import Any, Sequence

import numpy as np

from ..errors import ArgumentError
from ..target import Driver


def _numpy_data_offset() -> int | None:
    """Where a numpy array object holds the address of its data: the ``data`` field of numpy's
    ``PyArrayObject``, after the object header, found on two probe arrays. Reading it is what
    numpy's own ``PyArray_DATA`` does, a tenth of the time of ``__array_interface__``, which builds
    a dictionary per call (a microsecond of each launch per array). None where it is not found."""
    base = np.zeros(8, np.uint8)
    probes = (base, base[3:])
    for offset in range(ctypes.sizeof(ctypes.c_void_p), 64, ctypes.sizeof(ctypes.c_void_p)):
        if all(ctypes.c_void_p.from_address(id(p) + offset).value == p.__array_interface__["data"][0]
               for p in probes):
            return offset
    return None


_DATA_OFFSET = _numpy_data_offset()
_POINTER_AT = ctypes.c_void_p.from_address


def host_address(value: Any, name: str, target: str) -> int:
    """The address of the first element of ``value`` in host memory."""
    if type(value) is np.ndarray and _DATA_OFFSET is not None:  # the common case of every launch
        return _POINTER_AT(id(value) + _DATA_OFFSET).value or 0
    iface = getattr(value, "__array_interface__", None)
    if iface is not None and not hasattr(value, "__cuda_array_interface__"):  # numpy's kind: host memory
        return int(iface["data"][0])
    if _torch_device(value) not in (None, TORCH_HOST) or (_torch_device(value) is None
                                                     and hasattr(value, "__cuda_array_interface__")):
        raise ArgumentError(
            f"argument '{name}' lives in GPU memory, but the {target} target runs on the host: pass a host "
            "array (e.g. tensor.cpu() or numpy), or pick a GPU target with TRITIUM_TARGET")
    if iface is not None:
        return int(iface["data"][0])
    if hasattr(value, "data_ptr"):
        return int(value.data_ptr())
    if hasattr(value, "__dlpack_device__"):
        dev_type, _ = value.__dlpack_device__()
        if int(dev_type) not in (1, 3):  # kDLCPU, kDLCUDAHost
            raise ArgumentError(f"argument '{name}' is DLPack memory on device type {int(dev_type)}; the "
                                f"{target} target needs host memory")
        return int(np.from_dlpack(value).__array_interface__["data"][0])
    try:
        arr = np.asarray(memoryview(value))
    except TypeError:
        raise ArgumentError(f"argument '{name}' ({type(value).__name__}) is not an array: pass a numpy "
                            "array, a torch tensor, or a DLPack/buffer-protocol object") from None
    return int(arr.__array_interface__["data"][0])


def host_span(value: Any) -> tuple[int, int] | None:
    """``(lo, hi)``: the bytes the elements of a host array view cover (numpy's byte bounds; torch
    and DLPack arrays through numpy, so strided and negative-stride views are exact); None when
    the extent cannot be known. Targets check pointer accesses against it (the interpreter always,
    compiled targets in debug mode)."""
    arr = _as_numpy(value)
    if arr is None:
        return _torch_span(value)
    lo, hi = np.lib.array_utils.byte_bounds(arr) if hasattr(np.lib, "array_utils") else np.byte_bounds(arr)
    return int(lo), int(hi)


def _torch_span(value: Any) -> tuple[int, int] | None:
    """The bytes of a host torch tensor numpy cannot view (bf16), from its strides."""
    if _torch_device(value) != TORCH_HOST or not hasattr(value, "data_ptr"):
        return None
    start, size = value.data_ptr(), value.element_size()
    if 0 in value.shape:
        return start, start
    reach = [(n - 1) * s for n, s in zip(value.shape, value.stride())]
    return start + size * sum(r for r in reach if r < 0), start + size * (sum(r for r in reach if r > 0) + 1)


def _as_numpy(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value
    if getattr(value, "requires_grad", False) and hasattr(value, "detach"):
        value = value.detach()  # torch exports no tensor that requires grad; the detached view shares its memory
    try:
        if hasattr(value, "__dlpack__"):
            return np.from_dlpack(value)
        return np.asarray(memoryview(value))
    except (TypeError, RuntimeError, BufferError, ValueError):
        return None


#: torch's device type of host memory (a place in memory, not a tritium target)
TORCH_HOST = "cpu"


def _torch_device(value: Any) -> str | None:
    dev = getattr(value, "device", None)
    return getattr(dev, "type", None) if dev is not None and not isinstance(dev, str) else dev


class HostMemory(Driver):
    """The memory API of targets whose kernels read host memory: plain, C-contiguous numpy arrays."""

    def to_device(self, array: Any) -> Any:
        return np.array(array, copy=True, order="C")

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        return np.empty(shape, dtype=dtype)

    def to_host(self, buffer: Any) -> Any:
        return np.array(buffer, copy=True)
