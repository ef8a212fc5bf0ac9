"""GPU memory for the memory API of ``Driver`` (``to_device``, ``empty``, ``to_host``), which tests
and the conformance suite use: ``DeviceBuffer``, a C-contiguous array in one GPU's memory with
``__cuda_array_interface__`` (so kernels, torch and CuPy all take it), on top of the few calls a
GPU driver offers (``GpuMemory``). nvptx and amdgpu each give their driver's calls."""

from __future__ import annotations

from typing import Any, ClassVar, Sequence

from .device_arrays import DevicePointer


class GpuMemory:
    """A GPU driver's memory calls; addresses are ints. Each raises the driver's error."""

    def allocate(self, nbytes: int, device: int) -> int:
        raise NotImplementedError

    def free(self, address: int, device: int) -> None:
        raise NotImplementedError

    def copy_in(self, address: int, host_address: int, nbytes: int, device: int) -> None:
        """Host to device, synchronously."""
        raise NotImplementedError

    def copy_out(self, host_address: int, address: int, nbytes: int, device: int) -> None:
        """Device to host, after the device's queued work."""
        raise NotImplementedError


class DeviceBuffer:
    """A C-contiguous array in the global memory of one GPU, freed when collected. A GPU target
    subclasses it, naming its driver's calls in ``memory``."""

    memory: ClassVar[GpuMemory]

    def __init__(self, shape: Sequence[int], dtype: Any, device: int = 0):
        import numpy as np

        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.device = device
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        # drivers refuse 0 bytes; an empty array still gets a valid, distinct address
        self.ptr = int(self.memory.allocate(max(self.nbytes, 1), device))
        #: what a launch binds for this buffer (made once: binding is on every launch's path)
        self.pointer = DevicePointer.at(self.ptr, device, "")

    @classmethod
    def of(cls, array: Any, device: int = 0) -> "DeviceBuffer":
        """A copy of a host array."""
        import numpy as np

        host = np.ascontiguousarray(array)
        buf = cls(host.shape, host.dtype, device)
        if host.nbytes:
            cls.memory.copy_in(buf.ptr, host.ctypes.data, host.nbytes, device)
        return buf

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3,
                "strides": None}

    @property
    def size(self) -> int:
        return self.nbytes // self.dtype.itemsize

    def __len__(self) -> int:
        return self.shape[0]

    def __del__(self) -> None:
        ptr, self.ptr = getattr(self, "ptr", 0), 0
        if ptr:
            try:
                self.memory.free(ptr, self.device)
            except Exception:  # interpreter shutdown: the driver is going away anyway
                pass

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shape={self.shape}, dtype={self.dtype}, device={self.device})"


def to_host(buffer: Any, memory: GpuMemory, current_device: int) -> Any:
    """A numpy copy of a DeviceBuffer or any C-contiguous ``__cuda_array_interface__`` array, read
    through ``memory`` (on the buffer's device, else ``current_device``)."""
    import numpy as np

    from ..errors import TritiumError

    iface = buffer.__cuda_array_interface__
    if iface.get("strides") is not None and not _contiguous(iface):
        raise TritiumError("to_host copies C-contiguous device arrays only; make a contiguous copy first")
    host = np.empty(iface["shape"], dtype=np.dtype(iface["typestr"]))
    if host.nbytes:
        memory.copy_out(host.ctypes.data, iface["data"][0], host.nbytes, getattr(buffer, "device", current_device))
    return host


def _contiguous(iface: dict) -> bool:
    import numpy as np

    itemsize = np.dtype(iface["typestr"]).itemsize
    expected = []
    step = itemsize
    for extent in reversed(iface["shape"]):
        expected.append(step)
        step *= extent
    return tuple(reversed(expected)) == tuple(iface["strides"])
