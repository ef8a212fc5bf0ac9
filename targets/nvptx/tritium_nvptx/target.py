"""``NvptxTarget``: kernels compiled for NVIDIA GPUs (PTX through llvmlite, cubin through ptxas).

Compiling needs no GPU: the arch comes from the ``arch`` option, else ``TRITIUM_NVPTX_ARCH``, else
the current GPU. Running needs the NVIDIA driver; without one the target is unavailable with the
driver's own reason, and ``tritium targets`` shows it.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any

import llvmlite
from tritium.errors import OptionError, TritiumError
from tritium.runtime.cache import source_hash
from tritium.runtime.device_arrays import torch_inline_array, torch_stream
from tritium.target import Driver, GPUTarget, InlineArray, LaunchOptions, Target

from . import arch as archs
from . import cuda, toolchain
from .args import bind_argument

#: compile for this arch when no ``arch`` option is given (e.g. without a GPU)
ARCH_ENV = "TRITIUM_NVPTX_ARCH"


@dataclasses.dataclass(frozen=True)
class NvptxOptions(LaunchOptions):
    """Triton's launch options, plus ``arch`` (``sm_90a``...): empty means ``TRITIUM_NVPTX_ARCH`` or
    the current GPU's."""

    arch: str = ""
    #: float adds and multiplies may fuse into FMAs, as in Triton (False: every operation rounds)
    enable_fp_fusion: bool = True
    #: f32 ``exp2`` flushes subnormal results to zero (``ex2.approx.ftz``), as libdevice does under
    #: Triton's default ``__CUDA_FTZ`` (False: ``ex2.approx``, which keeps them)
    enable_reflect_ftz: bool = True
    #: at most this many registers a thread (PTX's ``.maxnreg``), as Triton's ``maxnreg``; None: ptxas picks
    maxnreg: int | None = None


#: what kernels compile for where there is no GPU to ask (the H100's arch, without its ``a`` features)
NO_GPU_ARCH = "sm_90"


#: Triton's device property -> the CUDA device attribute it is (``CU_DEVICE_ATTRIBUTE_`` + name)
_PROPERTIES = {"max_shared_mem": "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", "max_num_regs": "MAX_REGISTERS_PER_BLOCK",
               "multiprocessor_count": "MULTIPROCESSOR_COUNT", "warpSize": "WARP_SIZE",
               "sm_clock_rate": "CLOCK_RATE", "mem_clock_rate": "MEMORY_CLOCK_RATE",
               "mem_bus_width": "GLOBAL_MEMORY_BUS_WIDTH"}
#: properties for people (bandwidth estimates), not for sizing kernels
_INFORMATIONAL = frozenset({"sm_clock_rate", "mem_clock_rate", "mem_bus_width"})


class NvptxTarget(Target):
    name = "nvptx"
    priority = 10  # above cpu: auto-selection picks the GPU when there is one
    binary_stage = "cubin"
    stage_suffixes = {"ptx": "ptx", "cubin": "cubin"}
    inline_asm = "ptx"
    compile_environment = (ARCH_ENV, toolchain.PTXAS_ENV)
    max_grid = (2**31 - 1, 65535, 65535)  # CUDA's grid limits
    max_programs = None

    def __init__(self) -> None:
        self._driver: Driver | None = None

    def availability(self) -> tuple[bool, str]:
        try:
            cuda.init()
            self.device_arch(0)  # a GPU older than sm_80 is no use
        except TritiumError as e:
            return False, str(e)
        return True, ""

    @functools.cache
    def device_arch(self, device: int) -> str:
        cuda.init()
        return archs.arch_of_capability(*cuda.capability(device))

    def arch(self, options: NvptxOptions | None = None) -> str:
        """The arch to compile for: the option, else ``TRITIUM_NVPTX_ARCH``, else the GPU's; without a
        GPU (compiling only), ``NO_GPU_ARCH``."""
        chosen = (options.arch if options is not None else "") or os.environ.get(ARCH_ENV, "").strip()
        if chosen:
            return archs.check_arch(chosen)
        try:
            return self.device_arch(cuda.current_device())
        except cuda.CudaError:
            return NO_GPU_ARCH

    def assembler(self, arch: str) -> str | None:
        """The ptxas that assembles cubins for ``arch``, or None (the driver JIT-compiles the PTX)."""
        path = toolchain.ptxas_path()
        if path is None:
            return None
        version = toolchain.ptxas_cuda_version(path)
        return path if version is not None and archs.ptx_of_cuda(version) >= archs.ARCHS[arch] else None

    def ptx_version(self, arch: str) -> int:
        """The PTX ISA version for ``arch`` (``84`` for 8.4): see ``arch.ptx_version``."""
        path = self.assembler(arch)
        return archs.ptx_version(arch, self._driver_cuda(), toolchain.ptxas_cuda_version(path) if path else None)

    @functools.cache
    def _driver_cuda(self) -> int | None:
        return cuda.driver_version()

    def options_for(self, gpu_target: GPUTarget) -> dict[str, Any] | None:
        """Triton's ``GPUTarget("cuda", 90, 32)``: the arch of that compute capability (``sm_90a``)."""
        if gpu_target.backend != "cuda" or not isinstance(gpu_target.arch, int) or gpu_target.warp_size != 32:
            return None
        return {"arch": archs.arch_of_capability(gpu_target.arch // 10, gpu_target.arch % 10)}

    def version(self) -> str:
        """The package's sources, LLVM, the default arch and what bounds the PTX ISA version (the
        driver's and ptxas's CUDA releases); an ``arch`` option is in the key as an option."""
        try:
            arch = self.arch()
        except TritiumError:
            arch = "none"  # compiling fails then, saying why
        path = toolchain.ptxas_path()
        ptxas = toolchain.ptxas_cuda_version(path) if path else None
        return (f"tritium-nvptx-{source_hash('tritium_nvptx')} llvmlite-{llvmlite.__version__} arch-{arch} "
                f"driver-{self._driver_cuda()} ptxas-{ptxas}")

    def device_description(self) -> str:
        device = cuda.current_device()
        cuda_version = self._driver_cuda() or 0
        return (f"{cuda.device_name(device)} ({self.device_arch(device)}), "
                f"driver CUDA {cuda_version // 1000}.{cuda_version % 1000 // 10}")

    # -- devices (``tritium.runtime.driver.active``): this thread's current GPU -----------------------
    def device_count(self) -> int:
        return cuda.device_count()

    def current_device(self) -> int:
        return cuda.current_device()

    def set_current_device(self, device: int) -> None:
        cuda.set_device(device)

    def current_target(self) -> GPUTarget:
        major, minor = cuda.capability(cuda.current_device())
        capability = major * 10 + minor
        return GPUTarget("cuda", capability, 32, traits=frozenset({"is_cuda"}), capability=capability)

    def device_properties(self, device: int) -> dict[str, int]:
        """The driver's attributes under Triton's keys (what Triton's ``get_device_properties`` asks);
        the clocks and the bus width, which newer drivers may no longer report, are 0 then."""
        cuda.init()
        props = {}
        for key, name in _PROPERTIES.items():
            try:
                props[key] = cuda.attribute(device, f"CU_DEVICE_ATTRIBUTE_{name}")
            except (cuda.CudaError, AttributeError):
                if key not in _INFORMATIONAL:
                    raise
                props[key] = 0
        return props

    def torch_device(self) -> tuple[str, int | None]:
        return "cuda", cuda.current_device()

    def prepare_torch(self, torch) -> None:
        """torch.cuda has all that device-agnostic code calls."""

    def current_stream(self, device: int) -> int:
        """torch's current stream on ``device`` when torch is loaded (what launches with torch tensors
        use), else the default stream."""
        return torch_stream(device)

    def kernel_resources(self, kernel) -> dict[str, int]:
        return {**self.driver.kernel_resources(kernel.launcher, cuda.current_device()),
                "shared": int(kernel.metadata.get("shared", 0))}

    def parse_options(self, options: dict[str, Any]) -> NvptxOptions:
        parsed = NvptxOptions.parse(options, self.name)
        if parsed.arch:
            parsed = dataclasses.replace(parsed, arch=archs.check_arch(parsed.arch))
            if options.get("num_ctas", 1) > 1 and archs.ARCHS[parsed.arch] < archs.ARCHS["sm_90"]:
                raise OptionError(f"num_ctas > 1 requires NVIDIA SM90+ (Hopper): thread-block clusters, which "
                                  f"{parsed.arch} does not have")
        if parsed.maxnreg is not None and (isinstance(parsed.maxnreg, bool) or not isinstance(parsed.maxnreg, int)
                                           or not 1 <= parsed.maxnreg <= 255):
            raise OptionError(f"maxnreg must be an int from 1 to 255 (registers a thread) or None, got "
                              f"{parsed.maxnreg!r}")
        if parsed.num_warps > 32:  # (a positive power of two: LaunchOptions.parse checks that on every target)
            raise TritiumError(f"num_warps must be at most 32 on {self.name} (1024 threads per program), "
                               f"got {parsed.num_warps}")
        return parsed

    def add_stages(self, stages, options: NvptxOptions) -> None:
        from . import compiler

        stages["tile-layout"] = compiler.tile_layout
        stages["llir"] = compiler.llir
        stages["ptx"] = compiler.ptx
        stages["cubin"] = compiler.cubin

    #: a plain function, not a method: a launch calls it once per argument
    bind_arg = staticmethod(bind_argument)

    def inline_array(self) -> InlineArray | None:
        """torch tensors, where torch is imported (core's ``torch_inline_array``): launched on torch's
        current stream (``NvptxLauncher.launch_on``)."""
        return torch_inline_array()

    @property
    def driver(self) -> Driver:
        if self._driver is None:
            from .driver import NvptxDriver

            self._driver = NvptxDriver()
        return self._driver
