"""``AmdgpuTarget``: kernels compiled for AMD GPUs (AMDGPU code objects through llvmlite and ld.lld).

Compiling needs no GPU: the arch comes from the ``arch`` option, else ``TRITIUM_AMDGPU_ARCH``, else
the current GPU's, else gfx942 (``arch``). Running needs ROCm's HIP runtime and an AMD GPU
(``driver``); without them ``tritium targets`` shows why amdgpu is unavailable, and launching raises it.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import llvmlite
from tritium.errors import TargetError, TritiumError
from tritium.runtime.cache import source_hash
from tritium.runtime.device_arrays import torch_inline_array, torch_stream
from tritium.target import Driver, GPUTarget, InlineArray, LaunchOptions, Target

from . import arch as archs
from . import device_libs, hip, memory
from .driver import AmdgpuDriver, unavailable_reason

#: Triton's device property -> the HIP device attribute it is (``hipDeviceAttribute`` + name)
_PROPERTIES = {"max_shared_mem": "MaxSharedMemoryPerBlock", "max_num_regs": "MaxRegistersPerBlock",
               "multiprocessor_count": "MultiprocessorCount", "warpSize": "WarpSize",
               "sm_clock_rate": "ClockRate", "mem_clock_rate": "MemoryClockRate",
               "mem_bus_width": "MemoryBusWidth"}


@dataclasses.dataclass(frozen=True)
class AmdgpuOptions(LaunchOptions):
    """Triton's launch options, plus ``arch`` (``gfx942``...): empty means ``TRITIUM_AMDGPU_ARCH``,
    else the current GPU's, else gfx942."""

    arch: str = ""
    #: float adds and multiplies may fuse into FMAs, as in Triton (False: every operation rounds)
    enable_fp_fusion: bool = True
    #: the block of CDNA's MFMA that ``tl.dot`` runs on, as Triton's AMD option: 16 (16x16, and 0:
    #: the default) or 32 (32x32: fewer LDS reads per product, more accumulator registers)
    matrix_instr_nonkdim: int = 0


class AmdgpuTarget(Target):
    name = "amdgpu"
    priority = 5  # below nvptx, above cpu: never chosen while it cannot run kernels
    binary_stage = "hsaco"
    stage_suffixes = {"amdgcn": "s", "hsaco": "hsaco"}
    max_grid = (2**31 - 1, 65535, 65535)
    max_programs = None
    compile_environment = (archs.ARCH_ENV, device_libs.ENV)
    inline_asm = "amdgcn"

    def __init__(self) -> None:
        self._driver: Driver | None = None

    def availability(self) -> tuple[bool, str]:
        reason = unavailable_reason()
        return not reason, reason

    def arch(self, options: AmdgpuOptions | None = None) -> archs.Arch:
        """The ``arch`` option, else ``TRITIUM_AMDGPU_ARCH``, else the current GPU's, else gfx942."""
        chosen = (options.arch if options is not None else "") or os.environ.get(archs.ARCH_ENV, "").strip()
        if not chosen and not unavailable_reason():
            chosen = hip.properties(hip.current_device())[1]
        return archs.chosen_arch(chosen)

    def version(self) -> str:
        try:
            arch = self.arch().name
        except TritiumError:
            arch = "none"  # compiling fails then, saying why
        libs = device_libs.folder() or "none"  # which math a kernel may use, and the code it calls
        return f"tritium-amdgpu-{source_hash('tritium_amdgpu')} llvmlite-{llvmlite.__version__} arch-{arch} rocm-libs-{libs}"

    def parse_options(self, options: dict[str, Any]) -> AmdgpuOptions:
        parsed = AmdgpuOptions.parse(options, self.name)
        arch = archs.check_arch(parsed.arch) if parsed.arch else self.arch()
        if parsed.matrix_instr_nonkdim not in (0, 16, 32):
            raise TritiumError(f"matrix_instr_nonkdim must be 16 or 32 (0: 16), got {parsed.matrix_instr_nonkdim}")
        if parsed.num_warps * arch.wave > archs.MAX_THREADS:
            raise TritiumError(f"num_warps must be at most {archs.MAX_THREADS // arch.wave} on {arch.name} "
                               f"({archs.MAX_THREADS} threads per program, {arch.wave} per wavefront), "
                               f"got {parsed.num_warps}")
        return parsed

    def add_stages(self, stages, options: AmdgpuOptions) -> None:
        from . import compiler

        stages["tile-layout"] = compiler.tile_layout
        stages["llir"] = compiler.llir
        stages["amdgcn"] = compiler.amdgcn
        stages["hsaco"] = compiler.hsaco

    @staticmethod
    def bind_arg(value: Any, arg_type: str, arg_name: str) -> Any:
        """Core's ``DeviceArrays`` binding for ROCm memory (``memory.ARRAYS``); where kernels cannot
        run, an array argument raises the reason first."""
        if arg_type[0] == "*" and unavailable_reason():
            raise TargetError(f"target 'amdgpu' cannot take array argument '{arg_name}': {unavailable_reason()}")
        return memory.ARRAYS.bind(value, arg_type, arg_name)

    def inline_array(self) -> InlineArray | None:
        """torch tensors (ROCm's torch), where torch is imported: core's ``torch_inline_array``."""
        return torch_inline_array()

    # -- devices (``tritium.runtime.driver.active``): this thread's current GPU -----------------------
    def device_count(self) -> int:
        return hip.device_count()

    def current_device(self) -> int:
        return hip.current_device()

    def set_current_device(self, device: int) -> None:
        hip.set_device(device)

    def options_for(self, gpu_target: GPUTarget) -> dict[str, Any] | None:
        """Triton's ``GPUTarget("hip", "gfx942", 64)``: that arch, when its wavefront is that wide."""
        if gpu_target.backend != "hip":
            return None
        try:
            arch = archs.check_arch(str(gpu_target.arch))
        except TritiumError:
            return None
        return {"arch": arch.name} if arch.wave == gpu_target.warp_size else None

    def current_target(self) -> GPUTarget:
        arch = self.arch()
        return GPUTarget("hip", arch.name, arch.wave, traits=frozenset({"is_hip", *arch.target_info}))

    def device_description(self) -> str:
        name, arch = hip.properties(hip.current_device())
        return f"{name} ({arch})"

    def device_properties(self, device: int) -> dict[str, int]:
        """The HIP runtime's attributes under Triton's keys (``max_shared_mem`` is the LDS a
        workgroup may use)."""
        return {key: hip.attribute(device, f"hipDeviceAttribute{name}") for key, name in _PROPERTIES.items()}

    def torch_device(self) -> tuple[str, int | None]:
        return "cuda", hip.current_device()  # ROCm's torch keeps CUDA's device name

    def prepare_torch(self, torch) -> None:
        """torch.cuda has all that device-agnostic code calls."""

    def current_stream(self, device: int) -> int:
        return torch_stream(device)

    def kernel_resources(self, kernel) -> dict[str, int]:
        return {**self.driver.kernel_resources(kernel.launcher, hip.current_device()),
                "shared": int(kernel.metadata.get("shared", 0))}

    @property
    def driver(self) -> Driver:
        if self._driver is None:
            self._driver = AmdgpuDriver()
        return self._driver
