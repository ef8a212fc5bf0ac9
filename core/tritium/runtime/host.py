"""Host memory behind user arrays: the address of numpy arrays, CPU torch tensors, DLPack and
buffer-protocol objects, with clear refusals for device memory and non-arrays. Shared by every
target whose kernels read host memory directly (the cpu target, the interpreter)."""

from __future__ import annotations

from typing import Any, Sequence

from ..errors import ArgumentError
from ..target import Driver


def host_address(value: Any, name: str, target: str) -> int:
    """The address of the first element of ``value`` in host memory."""
    iface = getattr(value, "__array_interface__", None)
    if iface is not None and not hasattr(value, "__cuda_array_interface__"):  # numpy's: host memory, the
        return int(iface["data"][0])  # common case of every launch, answered first
    if _torch_device(value) not in (None, "cpu") or (_torch_device(value) is None
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
        import numpy as np

        return int(np.from_dlpack(value).__array_interface__["data"][0])
    try:
        import numpy as np

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
    import numpy as np

    arr = _as_numpy(value)
    if arr is None:
        return None
    lo, hi = np.lib.array_utils.byte_bounds(arr) if hasattr(np.lib, "array_utils") else np.byte_bounds(arr)
    return int(lo), int(hi)


def _as_numpy(value: Any) -> Any:
    import numpy as np

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


def _torch_device(value: Any) -> str | None:
    dev = getattr(value, "device", None)
    return getattr(dev, "type", None) if dev is not None and not isinstance(dev, str) else dev


class HostMemory(Driver):
    """The memory API of targets whose kernels read host memory: plain, C-contiguous numpy arrays."""

    def to_device(self, array: Any) -> Any:
        import numpy as np

        return np.array(array, copy=True, order="C")

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        import numpy as np

        return np.empty(shape, dtype=dtype)

    def to_host(self, buffer: Any) -> Any:
        import numpy as np

        return np.array(buffer, copy=True)
