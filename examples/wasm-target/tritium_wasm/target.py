"""``WasmTarget``: the compiler half (options, stages, version) and the device half (the wasmtime
runtime, argument binding) of the wasm target."""

from __future__ import annotations

import functools
from typing import Any

from tritium.codegen.block.debug_area import HostPointer
from tritium.runtime.args import bind_scalar
from tritium.runtime.cache import source_hash
from tritium.runtime.host import host_address
from tritium.target import Driver, GPUTarget, LaunchOptions, Target


class WasmTarget(Target):
    name = "wasm"
    priority = 0  # beside cpu (which wins the tie by name): chosen automatically only where it is alone
    binary_stage = "wasm"
    stage_suffixes = {"wasm-obj": "o", "wasm": "wasm"}
    compile_environment = ("TRITIUM_ZIG",)

    def __init__(self) -> None:
        self._driver: Driver | None = None

    def availability(self) -> tuple[bool, str]:
        try:
            import wasmtime  # noqa: F401
        except ImportError:
            return False, "the wasmtime package is not installed (pip install wasmtime)"
        return True, ""

    @functools.cache
    def version(self) -> str:
        import llvmlite

        from .codegen import zig

        return f"tritium-wasm-{source_hash('tritium_wasm')} llvmlite-{llvmlite.__version__} zig-{' '.join(zig())}"

    def parse_options(self, options: dict[str, Any]) -> LaunchOptions:
        return LaunchOptions.parse(options, self.name)

    def add_stages(self, stages, options: LaunchOptions) -> None:
        from tritium.codegen.block.layout import layout_stage

        from . import codegen

        stages["tile-layout"] = layout_stage(codegen.WasmHooks.vector_bits)
        stages["llir"] = codegen.llir
        stages["wasm-obj"] = codegen.wasm_obj
        stages["wasm"] = codegen.wasm

    def bind_arg(self, value: Any, arg_type: str, arg_name: str) -> Any:
        """Host arrays (numpy, CPU torch tensors, DLPack), which a launch copies into the module's
        memory and back; numbers as the signature types them."""
        if arg_type.startswith("*"):
            pointer = HostPointer(host_address(value, arg_name, self.name))
            pointer.array = value
            return pointer
        return bind_scalar(value, arg_type, arg_name, self.name)

    def current_target(self) -> GPUTarget:
        return GPUTarget("wasm", "wasm32", 1)

    def device_properties(self, device: int) -> dict[str, int]:
        """One program at a time, on one thread, its blocks on an 8 MiB stack."""
        from .codegen import STACK_BYTES

        return {"multiprocessor_count": 1, "max_shared_mem": STACK_BYTES, "max_num_regs": 1024, "warpSize": 1,
                "max_threads_per_sm": 1, "sm_clock_rate": 0, "mem_clock_rate": 0, "mem_bus_width": 0}

    @property
    def driver(self) -> Driver:
        if self._driver is None:
            from .runtime import WasmDriver

            self._driver = WasmDriver()
        return self._driver
