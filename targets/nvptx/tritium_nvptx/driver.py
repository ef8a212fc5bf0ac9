"""The NVPTX driver: load cubins (or PTX, JIT-compiled by the driver) into the primary context of
the arguments' GPU and launch them on the current stream of the framework whose arrays were passed.

A launch is one call of core's ``native_launch.launch``, the native extension built at install time,
which packs the arguments on its stack and calls the driver's ``cuLaunchKernel`` (see the project's notes on
launch costs). The context is made current when a thread first launches on a device, or switches
devices.
"""

from __future__ import annotations

import threading
from typing import Any, Mapping, Sequence

from tritium.errors import ArgumentError, OutOfResources, TritiumError
from tritium.runtime.device_arrays import STREAMS, DevicePointer, placement, torch_stream
from tritium.runtime.native_launch import conversions, launch, parameter_codes
from tritium.target import DeviceTimer, Driver, KernelSignature

from . import cuda, memory
from .tensor_maps import TensorMaps

_local = cuda.local_state()

#: dynamic shared memory above this needs the function attribute (CUDA's default limit per block)
DEFAULT_SHARED_LIMIT = 48 * 1024
_MAX_GRID_YZ = 65535


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
        self._handles: dict[int, int] = {}  # device -> the CUfunction as an int, for launch (once launched there)
        types = signature.arg_types
        self._arg_names = signature.arg_names
        self._maps = TensorMaps(metadata.get("tensor_maps", ()), signature.name)
        self._has_maps = len(self._maps) > 0
        self._codes = (parameter_codes(types) + "B" * len(self._maps)).encode()
        self._converted = conversions(types)
        self._pointers = [i for i, t in enumerate(types) if t.startswith("*")]
        self._first_pointer = self._pointers[0] if self._pointers else 0
        self._other_pointers = self._pointers[1:]
        self._lock = threading.Lock()  # loads the module once per GPU
        self._entry = 0  # the address of the driver's cuLaunchKernel, read at the first launch

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
            if device not in self._functions:
                self._load(device)
            return self._functions[device]

    def _handle(self, device: int) -> int:
        """The kernel's CUfunction on ``device`` for ``launch``, loading it there the first time."""
        with self._lock:
            fn = self._functions.get(device) or self._load(device)
            self._entry = self._entry or cuda.launch_entry()
            handle = self._handles[device] = int(fn)
        cuda.make_current(device)
        return handle

    def _placement(self, args: Sequence[Any]) -> tuple[int, str]:
        """The GPU and framework of the pointer arguments, which must all be on one GPU."""
        return placement(args, self._pointers, self._arg_names, self._name, cuda.current_device())

    def __call__(self, grid: tuple[int, int, int], args: Sequence[Any]) -> None:
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
        self.launch_on(grid, args, device, framework)

    def launch_on(self, grid: tuple[int, int, int], args: Sequence[Any], device: int, framework: str = "torch") -> None:
        """Launch on GPU ``device``, on ``framework``'s current stream there. The generated launch
        function calls it for torch tensors, which it binds inline (``NvptxTarget.inline_array``):
        their addresses are plain ints in ``args``."""
        stream = STREAMS[framework](device)
        gx, gy, gz = grid
        if gy > _MAX_GRID_YZ or gz > _MAX_GRID_YZ:
            raise ArgumentError(f"kernel '{self._name}': grid {tuple(grid)} exceeds CUDA's limit of "
                                f"{_MAX_GRID_YZ} programs along axes 1 and 2")
        if self._converted:
            args = list(args)
            for i, convert in self._converted:
                args[i] = convert(args[i])
        if type(args) is not tuple:
            args = tuple(args)
        if self._has_maps:  # TMA's tensor maps follow the parameters
            args += self._maps(args)
        fn = self._handles.get(device)
        if fn is None:
            fn = self._handle(device)
        elif _local.device != device:
            cuda.make_current(device)
        err = launch(self._entry, fn, gx, gy, gz, self._block, self._shared, stream, self._codes, args)
        if err:
            raise cuda.failure(f"cuLaunchKernel of kernel {self._name}", err)


class NvptxDriver(Driver):
    """Loads kernels with the CUDA driver API; memory is ``DeviceBuffer`` (cuMemAlloc)."""

    def __init__(self) -> None:
        self._timers: dict[int, CudaTimer] = {}

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

    def timer(self) -> "CudaTimer":
        """CUDA events on the current GPU (one timer a GPU, kept: its flush buffer is 256 MB)."""
        device = cuda.current_device()
        if device not in self._timers:
            self._timers[device] = CudaTimer(device)
        return self._timers[device]

    def synchronize(self) -> None:
        """Wait for the GPU; what kernels printed appears now. A failed device assertion is a
        ``cuda.GpuAssertionError`` (a ``DeviceAssertionError``)."""
        cuda.make_current(cuda.current_device())
        cuda.check("cuCtxSynchronize", cuda.api().cuCtxSynchronize())


class CudaTimer(DeviceTimer):
    """``do_bench``'s timing on a GPU, as Triton's: CUDA events on the stream torch's launches go to
    (the default stream without torch), and a 256 MB buffer zeroed before each timed call, which
    evicts the L2."""

    FLUSH_BYTES = 256 << 20

    def __init__(self, device: int):
        cuda.make_current(device)
        self.device = device
        self.cache = cuda.check("cuMemAlloc", cuda.api().cuMemAlloc(self.FLUSH_BYTES))

    def flush(self) -> None:
        cuda.check("cuMemsetD32Async", cuda.api().cuMemsetD32Async(self.cache, 0, self.FLUSH_BYTES // 4,
                                                                   torch_stream(self.device)))

    def record(self) -> int:
        event = cuda.check("cuEventCreate", cuda.api().cuEventCreate(0))
        cuda.check("cuEventRecord", cuda.api().cuEventRecord(event, torch_stream(self.device)))
        return event

    def elapsed_ms(self, start: int, end: int) -> float:
        api = cuda.api()
        ms = cuda.check("cuEventElapsedTime", api.cuEventElapsedTime(start, end))
        for event in (start, end):
            cuda.check("cuEventDestroy", api.cuEventDestroy(event))
        return float(ms)
