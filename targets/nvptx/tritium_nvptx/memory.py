"""Device memory for tests and the conformance suite: ``DeviceBuffer`` (a cuMemAlloc allocation with
``__cuda_array_interface__``, so kernels, torch and CuPy all take it) and the copies to and from
numpy arrays."""

from __future__ import annotations

from typing import Any, Sequence

from . import cuda


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


class DeviceBuffer:
    """A C-contiguous array in the global memory of one GPU, freed when collected."""

    def __init__(self, shape: Sequence[int], dtype: Any, device: int = 0):
        import numpy as np

        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.device = device
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        cuda.make_current(device)
        # cuMemAlloc refuses 0 bytes; an empty array still gets a valid, distinct address
        self.ptr = int(cuda.check("cuMemAlloc", cuda.api().cuMemAlloc(max(self.nbytes, 1))))
        #: what a launch binds for this buffer (made once: binding is on every launch's path)
        self.pointer = DevicePointer.at(self.ptr, device, "")

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
                cuda.api().cuMemFree(ptr)
            except Exception:  # interpreter shutdown: the driver is going away anyway
                pass

    def __repr__(self) -> str:
        return f"DeviceBuffer(shape={self.shape}, dtype={self.dtype}, device={self.device})"


def to_device(array: Any, device: int = 0) -> DeviceBuffer:
    import numpy as np

    host = np.ascontiguousarray(array)
    buf = DeviceBuffer(host.shape, host.dtype, device)  # its device's context is current now
    if host.nbytes:
        cuda.check("cuMemcpyHtoD", cuda.api().cuMemcpyHtoD(buf.ptr, host.ctypes.data, host.nbytes))
    return buf


def to_host(buffer: Any) -> Any:
    """A numpy copy of a DeviceBuffer or any C-contiguous ``__cuda_array_interface__`` array."""
    import numpy as np

    iface = buffer.__cuda_array_interface__
    if iface.get("strides") is not None and not _contiguous(iface):
        raise cuda.CudaError("to_host copies C-contiguous device arrays only; make a contiguous copy first")
    host = np.empty(iface["shape"], dtype=np.dtype(iface["typestr"]))
    if host.nbytes:
        cuda.make_current(getattr(buffer, "device", cuda.current_device()))
        cuda.check("cuCtxSynchronize", cuda.api().cuCtxSynchronize())
        cuda.check("cuMemcpyDtoH", cuda.api().cuMemcpyDtoH(host.ctypes.data, iface["data"][0], host.nbytes))
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
