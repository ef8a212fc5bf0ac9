"""``AmdgpuTarget``: kernels compiled for AMD GPUs (AMDGPU code objects through llvmlite and ld.lld).

Compiling needs no GPU: the arch comes from the ``arch`` option, else ``TRITIUM_AMDGPU_ARCH``, else
gfx942 (``arch``). Running needs ROCm's HIP runtime, which this package does not drive yet
(``driver``): ``tritium targets`` shows why amdgpu is unavailable, and launching raises it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import llvmlite
from tritium.errors import ArgumentError, TargetError, TritiumError
from tritium.runtime.args import bind_scalar
from tritium.runtime.cache import source_hash
from tritium.target import Driver, LaunchOptions, Target

from . import arch as archs
from . import device_libs
from .driver import AmdgpuDriver, unavailable_reason


@dataclasses.dataclass(frozen=True)
class AmdgpuOptions(LaunchOptions):
    """Triton's launch options, plus ``arch`` (``gfx942``...): empty means ``TRITIUM_AMDGPU_ARCH`` or
    gfx942."""

    arch: str = ""
    #: float adds and multiplies may fuse into FMAs, as in Triton (False: every operation rounds)
    enable_fp_fusion: bool = True


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
        return False, unavailable_reason()

    def arch(self, options: AmdgpuOptions | None = None) -> archs.Arch:
        return archs.chosen_arch(options.arch if options is not None else "")

    def version(self) -> str:
        try:
            arch = self.arch().name
        except TritiumError:
            arch = "none"  # compiling fails then, saying why
        libs = device_libs.folder() or "none"  # which math a kernel may use, and the code it calls
        return f"tritium-amdgpu-{source_hash('tritium_amdgpu')} llvmlite-{llvmlite.__version__} arch-{arch} rocm-libs-{libs}"

    def pointer_bits(self, address_space: int) -> int:
        return 32 if address_space in (3, 5) else 64

    def parse_options(self, options: dict[str, Any]) -> AmdgpuOptions:
        parsed = AmdgpuOptions.parse(options, self.name)
        arch = archs.check_arch(parsed.arch) if parsed.arch else self.arch()
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
        if not arg_type.startswith("*"):
            return bind_scalar(value, arg_type, arg_name, "amdgpu")
        if value is None:
            raise ArgumentError(f"argument '{arg_name}' is None, but the kernel takes a pointer ({arg_type})")
        raise TargetError(f"target 'amdgpu' cannot take array argument '{arg_name}': {unavailable_reason()}")

    @property
    def driver(self) -> Driver:
        if self._driver is None:
            self._driver = AmdgpuDriver()
        return self._driver
