"""``CpuTarget``: kernels compiled for the host CPU and run in process on all cores."""

from __future__ import annotations

import functools
import numbers
from typing import Any

import llvmlite
from llvmlite import binding as llvm
from tritium.errors import ArgumentError
from tritium.runtime.cache import source_hash
from tritium.runtime.host import host_address
from tritium.target import Driver, LaunchOptions, Target

from .debug_area import HostPointer
from .driver import CpuDriver


class CpuOptions(LaunchOptions):
    """``num_warps``/``num_stages`` are accepted so Triton launches port unchanged; one program
    runs on one core, so they change nothing here."""


_INT_RANGES = {f"{s}{bits}": ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if s == "i" else (0, (1 << bits) - 1))
               for s in "iu" for bits in (8, 16, 32, 64)}
_FLOATS = frozenset({"fp16", "bf16", "fp32", "fp64"})


class CpuTarget(Target):
    name = "cpu"
    priority = 0
    binary_stage = "obj"
    stage_suffixes = {"asm": "s", "obj": "o"}

    def __init__(self) -> None:
        self._driver: CpuDriver | None = None

    def availability(self) -> tuple[bool, str]:
        return True, ""

    @functools.cache
    def version(self) -> str:
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
        if arg_type == "i1":
            if not isinstance(value, (bool, numbers.Integral)):
                raise ArgumentError(f"argument '{arg_name}' must be a bool for type i1, not {type(value).__name__}")
            return int(bool(value))
        if arg_type in _INT_RANGES:
            if not isinstance(value, numbers.Integral):
                raise ArgumentError(f"argument '{arg_name}' must be an integer for type {arg_type}, "
                                    f"not {type(value).__name__}")
            lo, hi = _INT_RANGES[arg_type]
            if not lo <= int(value) <= hi:
                raise ArgumentError(f"argument '{arg_name}' = {value} is out of range for {arg_type} ({lo}..{hi})")
            return int(value)
        if arg_type in _FLOATS:
            if not isinstance(value, numbers.Real):
                raise ArgumentError(f"argument '{arg_name}' must be a number for type {arg_type}, "
                                    f"not {type(value).__name__}")
            return float(value)
        raise ArgumentError(f"argument '{arg_name}': the cpu target does not support arguments of type {arg_type}")

    @property
    def driver(self) -> Driver:
        if self._driver is None:
            self._driver = CpuDriver()
        return self._driver
