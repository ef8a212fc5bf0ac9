"""The amdgpu runtime side: load code objects through ROCm's HIP runtime (ctypes, ``hip``) and
launch them with core's native launch, which calls ``hipModuleLaunchKernel`` as nvptx's calls
``cuLaunchKernel`` (the two take the same parameters). The HIP runtime packs the parameters into
the kernarg segment by the code object's metadata, and fills the hidden arguments (the hostcall
buffer of kernels that print) itself. Shared memory is the code object's static LDS, so a launch
passes none.

Where there is no HIP runtime or no AMD GPU, ``unavailable_reason`` says so, compiling still works,
and every operation that would touch a GPU raises the reason.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Mapping, Sequence

from tritium.errors import ArgumentError, OutOfResources, TargetError, TritiumError
from tritium.runtime.device_arrays import STREAMS, placement
from tritium.runtime.native_launch import conversions, launch, parameter_codes
from tritium.target import Driver, KernelSignature

from . import hip, memory

#: threads a launch may have along the grid's axis 0 in all: the dispatch packet's grid size is a u32
_MAX_THREADS_X = 2**32 - 1
_MAX_GRID_YZ = 65535


@functools.cache
def unavailable_reason() -> str:
    """Why kernels cannot run here, or "" where they can."""
    try:
        hip.init()
    except hip.HipError as e:
        text = str(e)
        return (text if text.startswith("no HIP runtime") else f"no HIP runtime: {text}") + "; kernels compile only"
    return ""


class HipLauncher:
    """``launcher(grid, bound_args)`` for one kernel; its module is loaded on each GPU it runs on."""

    def __init__(self, binary: bytes, signature: KernelSignature, metadata: Mapping[str, Any]):
        self._name = signature.name
        if "num_warps" not in metadata or "wavefront_size" not in metadata:
            raise TritiumError(f"the compile metadata of kernel {signature.name} has no num_warps or "
                               "wavefront_size: recompile it")
        self._image = bytes(binary)
        self._block = int(metadata["num_warps"]) * int(metadata["wavefront_size"])
        self._arch = metadata.get("arch", "")
        types = signature.arg_types
        self._arg_names = signature.arg_names
        self._codes = parameter_codes(types).encode()
        self._converted = conversions(types)
        self._pointers = [i for i, t in enumerate(types) if t.startswith("*")]
        self._functions: dict[int, Any] = {}
        self._modules: list[Any] = []
        self._lock = threading.Lock()  # loads the module once per GPU
        self._entry = 0  # the address of hipModuleLaunchKernel, read at the first launch

    def function(self, device: int) -> Any:
        """The kernel loaded on ``device`` (loading it there the first time)."""
        with self._lock:
            fn = self._functions.get(device)
            if fn is None:
                fn = self._functions[device] = self._load(device)
                self._entry = self._entry or hip.launch_entry()
            return fn

    def _load(self, device: int) -> Any:
        r = hip.api()
        hip.make_current(device)
        _, arch = hip.properties(device)
        if self._arch and arch and arch != self._arch:
            raise TritiumError(f"kernel {self._name} was compiled for {self._arch}, but GPU {device} is {arch}: "
                               f"compile with arch='{arch}' (or TRITIUM_AMDGPU_ARCH={arch}), or leave both unset")
        try:
            module = hip.check("hipModuleLoadData", r.hipModuleLoadData(self._image))
        except hip.HipError as e:
            raise TritiumError(f"the HIP runtime could not load kernel {self._name}: {e}") from None
        self._modules.append(module)
        fn = hip.check("hipModuleGetFunction", r.hipModuleGetFunction(module, self._name.encode()))
        threads = hip.function_attribute(fn, "HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK")
        if self._block > threads:
            raise OutOfResources(self._block, threads, "threads", self._name)
        return fn

    def __call__(self, grid: tuple[int, int, int], args: Sequence[Any]) -> None:
        device, framework = placement(args, self._pointers, self._arg_names, self._name, hip.current_device())
        self.launch_on(grid, args, device, framework)

    def launch_on(self, grid: tuple[int, int, int], args: Sequence[Any], device: int, framework: str = "torch") -> None:
        """Launch on GPU ``device``, on ``framework``'s current stream there (the generated launch
        function calls it for torch tensors, whose addresses are plain ints in ``args``)."""
        gx, gy, gz = grid
        if gx * self._block > _MAX_THREADS_X or gy > _MAX_GRID_YZ or gz > _MAX_GRID_YZ:
            raise ArgumentError(f"kernel '{self._name}': grid {tuple(grid)} of {self._block}-thread programs exceeds "
                                f"HIP's limits ({_MAX_THREADS_X} threads along axis 0, {_MAX_GRID_YZ} programs "
                                "along axes 1 and 2)")
        if self._converted:
            args = list(args)
            for i, convert in self._converted:
                args[i] = convert(args[i])
        fn = self._functions.get(device)
        if fn is None:
            fn = self.function(device)
        hip.make_current(device)
        stream = STREAMS[framework](device)
        err = launch(self._entry, fn, gx, gy, gz, self._block, 0, stream, self._codes, tuple(args))
        if err:
            raise hip.failure(f"hipModuleLaunchKernel of kernel {self._name}", err)


class AmdgpuDriver(Driver):
    """Loads code objects with the HIP runtime; memory is ``memory.DeviceBuffer`` (hipMalloc). Where
    kernels cannot run, each operation raises ``unavailable_reason``."""

    def _check(self, what: str) -> None:
        reason = unavailable_reason()
        if reason:
            raise TargetError(f"target 'amdgpu' cannot {what}: {reason}")

    def load(self, binary: bytes, signature: KernelSignature, metadata: Mapping[str, Any]) -> HipLauncher:
        self._check(f"load kernel '{signature.name}'")
        return HipLauncher(binary, signature, metadata)

    def kernel_resources(self, launcher: HipLauncher, device: int) -> dict[str, int]:
        fn = launcher.function(device)
        return {"n_regs": hip.function_attribute(fn, "HIP_FUNC_ATTRIBUTE_NUM_REGS"),
                "n_spills": hip.function_attribute(fn, "HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES") // 4,
                "n_max_threads": hip.function_attribute(fn, "HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK")}

    def to_device(self, array: Any) -> memory.DeviceBuffer:
        self._check("allocate device memory")
        return memory.DeviceBuffer.of(array, hip.current_device())

    def empty(self, shape: Sequence[int], dtype: Any) -> memory.DeviceBuffer:
        self._check("allocate device memory")
        return memory.DeviceBuffer(shape, dtype, hip.current_device())

    def to_host(self, buffer: Any) -> Any:
        self._check("read device memory")
        return memory.to_host(buffer)

    def synchronize(self) -> None:
        """Wait for the GPU; what kernels printed appears now. A kernel that trapped (a failed
        ``tl.device_assert``) is a ``hip.HipAssertionError``."""
        self._check("synchronize")
        hip.make_current(hip.current_device())
        hip.check("hipDeviceSynchronize", hip.api().hipDeviceSynchronize())
