"""``CpuTarget``: kernels compiled for the host CPU and run in process on all cores."""

from __future__ import annotations

import functools
from typing import Any

import llvmlite
from tritium.runtime.args import bind_scalar
from tritium.runtime.cache import source_hash
from tritium.runtime.host import host_address
from tritium.target import Driver, LaunchOptions, Target

from .debug_area import HostPointer


class CpuOptions(LaunchOptions):
    """``num_warps``/``num_stages`` are accepted so Triton launches port unchanged; one program
    runs on one core, so they change nothing here."""


class CpuTarget(Target):
    name = "cpu"
    priority = 0
    binary_stage = "obj"
    stage_suffixes = {"asm": "s", "obj": "o"}

    def __init__(self) -> None:
        self._driver: Driver | None = None

    def availability(self) -> tuple[bool, str]:
        return True, ""

    @functools.cache
    def version(self) -> str:
        from llvmlite import binding as llvm  # imported when first compiling, not when plugins load

        features = llvm.get_host_cpu_features().flatten()  # the SIMD width too: it follows from them
        return (f"tritium-cpu-{source_hash('tritium_cpu')} llvmlite-{llvmlite.__version__} "
                f"cpu-{llvm.get_host_cpu_name()} features-{features}")

    def parse_options(self, options: dict[str, Any]) -> CpuOptions:
        return CpuOptions.parse(options, self.name)

    def add_stages(self, stages, options: CpuOptions) -> None:
        from . import compiler  # the compiler imports the MLIR bindings: a cache hit does without
        from .layout import layout_stage

        stages["tile-layout"] = layout_stage()
        stages["llir"] = compiler.llir
        stages["asm"] = compiler.asm
        stages["obj"] = compiler.obj

    def bind_arg(self, value: Any, arg_type: str, arg_name: str) -> Any:
        if arg_type.startswith("*"):
            pointer = HostPointer(host_address(value, arg_name, self.name))
            pointer.array = value  # its span, for launches in debug mode
            return pointer
        return bind_scalar(value, arg_type, arg_name, self.name)

    @property
    def driver(self) -> Driver:
        if self._driver is None:
            from .driver import CpuDriver  # LLVM's JIT: loaded by the first cpu launch only

            self._driver = CpuDriver()
        return self._driver
