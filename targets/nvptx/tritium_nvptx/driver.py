"""The NVPTX driver: load cubins (or PTX, JIT-compiled by the driver) into the primary context of
the arguments' GPU and launch them on the current stream of the framework whose arrays were passed.

A launch is one ``cuLaunchKernel`` with a pre-built ``void**`` parameter array: each launcher owns
ctypes storage for its arguments, and a launch only writes the new values into it (the cheapest
way to launch from Python; see the project's notes on launch costs). The context is made current
when a thread first launches on a device, or switches devices.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from typing import Any, Mapping, Sequence

from tritium.errors import ArgumentError, OutOfResources, TritiumError
from tritium.language.dtypes import bf16_bits
from tritium.target import Driver, KernelSignature

from . import cuda, memory
from .memory import DevicePointer

#: dynamic shared memory above this needs the function attribute (CUDA's default limit per block)
DEFAULT_SHARED_LIMIT = 48 * 1024
_MAX_GRID_YZ = 65535
#: ctypes storage per signature type; integers sit in 8 bytes (the kernel reads its parameter's width)
_SLOT = {"fp32": ctypes.c_float, "fp64": ctypes.c_double, "fp16": ctypes.c_uint16, "bf16": ctypes.c_uint16,
         "u64": ctypes.c_uint64}
_HALF = struct.Struct("<e")


def _fp16_bits(value: float) -> int:
    return int.from_bytes(_HALF.pack(value), "little")


_CONVERT = {"fp16": _fp16_bits, "bf16": bf16_bits}


def _torch_stream(device: int) -> int:
    """torch's current stream on ``device`` as an int (what Triton calls: no Stream object)."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None) or \
        (lambda device: torch.cuda.current_stream(device).cuda_stream)
    _STREAMS["torch"] = raw
    return raw(device)


def _cupy_stream(device: int) -> int:
    import cupy

    with cupy.cuda.Device(device):
        return cupy.cuda.get_current_stream().ptr


#: framework -> its current stream on a device; "" (no framework) is the default stream
_STREAMS: dict[str, Any] = {"torch": _torch_stream, "cupy": _cupy_stream, "": lambda device: 0}


class NvptxLauncher:
    """``launcher(grid, bound_args)`` for one kernel; its module is loaded on each GPU it runs on."""

    def __init__(self, binary: bytes, signature: KernelSignature, metadata: Mapping[str, Any]):
        self._name = signature.name
        if "num_warps" not in metadata:
            raise TritiumError(f"the compile metadata of kernel {signature.name} has no num_warps: recompile it")
        self._image = bytes(binary) + (b"\0" if metadata.get("binary_format") == "ptx" else b"")
        self._block = int(metadata["num_warps"]) * 32
        self._shared = int(metadata.get("shared", 0))
        self._functions: dict[int, Any] = {}
        self._modules: list[Any] = []
        types = signature.arg_types
        self._arg_names = signature.arg_names
        self._slots = [(ctypes.c_uint64 if t.startswith("*") else _SLOT.get(t, ctypes.c_int64))() for t in types]
        self._params = (ctypes.c_void_p * max(1, len(types)))(*[ctypes.addressof(s) for s in self._slots])
        self._params_address = ctypes.addressof(self._params)
        self._plain = [(i, s) for i, (s, t) in enumerate(zip(self._slots, types)) if t not in _CONVERT]
        self._converted = [(i, s, _CONVERT[t]) for i, (s, t) in enumerate(zip(self._slots, types)) if t in _CONVERT]
        self._pointers = [i for i, t in enumerate(types) if t.startswith("*")]
        self._first_pointer = self._pointers[0] if self._pointers else 0
        self._other_pointers = self._pointers[1:]
        self._lock = threading.Lock()
        self._launch = cuda.api().cuLaunchKernel

    def _load(self, device: int) -> Any:
        d = cuda.api()
        cuda.make_current(device)
        try:
            module = cuda.check("cuModuleLoadData", d.cuModuleLoadData(self._image))
        except cuda.GpuAssertionError:
            raise
        except cuda.CudaError as e:
            raise TritiumError(f"the GPU driver could not load kernel {self._name}: {e} (a PTX ISA or arch newer "
                               "than the driver supports is the usual cause: update the driver)") from None
        self._modules.append(module)
        fn = cuda.check("cuModuleGetFunction", d.cuModuleGetFunction(module, self._name.encode()))
        threads = cuda.function_attribute(fn, "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK")  # fewer with many registers
        if self._block > threads:
            raise OutOfResources(self._block, threads, "threads", self._name)
        if self._shared > DEFAULT_SHARED_LIMIT:
            limit = cuda.attribute(device, "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
            if self._shared > limit:
                raise OutOfResources(self._shared, limit, "shared memory", self._name)
            cuda.check("cuFuncSetAttribute", d.cuFuncSetAttribute(
                fn, d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, self._shared))
        self._functions[device] = fn
        return fn

    def function(self, device: int) -> Any:
        """The kernel loaded on ``device`` (loading it there the first time)."""
        with self._lock:
            fn = self._functions.get(device)
            return fn if fn is not None else self._load(device)

    def _placement(self, args: Sequence[Any]) -> tuple[int, str]:
        """The GPU and framework of the pointer arguments, which must all be on one GPU."""
        device, framework, first = -1, "", 0
        for i in self._pointers:
            p = args[i]
            if not isinstance(p, DevicePointer):
                continue
            if device < 0:
                device, framework, first = p.device, p.framework, i
            elif p.device != device:
                raise ArgumentError(f"kernel '{self._name}': argument '{self._arg_names[i]}' is on GPU {p.device} "
                                    f"but '{self._arg_names[first]}' is on GPU {device}; pass arrays of one GPU")
        return (device if device >= 0 else cuda.current_device()), framework

    def __call__(self, grid: tuple[int, int, int], args: Sequence[Any]) -> None:
        gx, gy, gz = grid
        if gy > _MAX_GRID_YZ or gz > _MAX_GRID_YZ:
            raise ArgumentError(f"kernel '{self._name}': grid {tuple(grid)} exceeds CUDA's limit of "
                                f"{_MAX_GRID_YZ} programs along axes 1 and 2")
        p = args[self._first_pointer] if self._pointers else None
        if type(p) is DevicePointer:  # the common case inline: the first pointer names the GPU, the rest agree
            device, framework = p.device, p.framework
            for i in self._other_pointers:
                q = args[i]
                if type(q) is not DevicePointer or q.device != device:
                    device, framework = self._placement(args)
                    break
        else:
            device, framework = self._placement(args)
        stream = _STREAMS[framework](device)
        with self._lock:
            fn = self._functions.get(device)
            if fn is None:
                fn = self._load(device)
            else:
                cuda.make_current(device)
            for i, slot in self._plain:
                slot.value = args[i]
            for i, slot, convert in self._converted:
                slot.value = convert(args[i])
            err, = self._launch(fn, gx, gy, gz, self._block, 1, 1, self._shared, stream, self._params_address, 0)
        if err:
            raise cuda.failure(f"cuLaunchKernel of kernel {self._name}", err)


class NvptxDriver(Driver):
    """Loads kernels with the CUDA driver API; memory is ``DeviceBuffer`` (cuMemAlloc)."""

    def load(self, binary: bytes, signature: KernelSignature, metadata: Mapping[str, Any]) -> NvptxLauncher:
        """The launcher; the module is loaded on a GPU when the kernel first runs there."""
        cuda.init()
        return NvptxLauncher(binary, signature, metadata)

    def kernel_resources(self, launcher: NvptxLauncher, device: int) -> dict[str, int]:
        """What the kernel uses once loaded on ``device`` (what Triton's ``load_binary`` reports);
        ``OutOfResources`` when it does not fit (see ``NvptxLauncher._load``)."""
        fn = launcher.function(device)
        return {"n_regs": cuda.function_attribute(fn, "CU_FUNC_ATTRIBUTE_NUM_REGS"),
                "n_spills": cuda.function_attribute(fn, "CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES") // 4,
                "n_max_threads": cuda.function_attribute(fn, "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK")}

    # memory goes to this thread's current GPU (``NvptxTarget.set_current_device``)
    def to_device(self, array: Any) -> memory.DeviceBuffer:
        return memory.to_device(array, cuda.current_device())

    def empty(self, shape: Sequence[int], dtype: Any) -> memory.DeviceBuffer:
        return memory.DeviceBuffer(shape, dtype, cuda.current_device())

    def to_host(self, buffer: Any) -> Any:
        return memory.to_host(buffer)

    def synchronize(self) -> None:
        """Wait for the GPU; what kernels printed appears now. A failed device assertion is a
        ``cuda.GpuAssertionError`` (a ``DeviceAssertionError``)."""
        cuda.make_current(cuda.current_device())
        cuda.check("cuCtxSynchronize", cuda.api().cuCtxSynchronize())
