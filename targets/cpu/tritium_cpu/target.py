"""``CpuTarget``: kernels compiled for the host CPU and run in process on all cores."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import llvmlite
from tritium.codegen.block.debug_area import HostPointer
from tritium.runtime.args import bind_scalar
from tritium.runtime.cache import source_hash
from tritium.runtime.host import host_address
from tritium.target import Driver, GPUTarget, LaunchOptions, Target



@dataclasses.dataclass(frozen=True)
class CpuOptions(LaunchOptions):
    """``num_warps``/``num_stages`` are accepted so Triton launches port unchanged; one program
    runs on one core, so they change nothing here (nor do other targets' tuning options, which
    ``LaunchOptions.parse`` drops). ``enable_fp_fusion`` lets ``a * b + c`` become one FMA where
    the CPU has it, as Triton's GPUs do by default; the cpu does not by default, so that its results
    are numpy's, operation by operation."""

    enable_fp_fusion: bool = False


#: what ``max_num_regs`` reports: a figure with no hardware meaning, divisible by every num_warps (1 to
#: 32), so that Triton's occupancy arithmetic ``max_num_regs // (n_regs * warpSize * num_warps)`` with
#: the ``n_regs`` a kernel reports (``kernel_resources``) gives one program per core, which is what runs
REGISTER_BUDGET = 1024


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
        from tritium.codegen.block.layout import layout_stage

        from . import compiler  # the compiler imports the MLIR bindings: a cache hit does without
        from .hooks import host_vector_bits

        stages["tile-layout"] = layout_stage(host_vector_bits(), prefetch=True)
        stages["llir"] = compiler.llir
        stages["asm"] = compiler.asm
        stages["obj"] = compiler.obj

    def bind_arg(self, value: Any, arg_type: str, arg_name: str) -> Any:
        if arg_type.startswith("*"):
            pointer = HostPointer(host_address(value, arg_name, self.name))
            pointer.array = value  # its span, for launches in debug mode
            return pointer
        return bind_scalar(value, arg_type, arg_name, self.name)

    # -- the device: the host. A program runs on one core at a time and holds it until done, with its
    # tiles on its worker thread's stack; the figures below say so in Triton's terms.
    def current_target(self) -> GPUTarget:
        from llvmlite import binding as llvm

        return GPUTarget("cpu", llvm.get_host_cpu_name(), 1)

    def device_properties(self, device: int) -> dict[str, int]:
        """The host: a core is a multiprocessor that runs one program (of one thread, so
        ``warpSize`` 1) at a time; ``max_shared_mem`` is the stack a program's tiles live on."""
        from .driver import WORKER_STACK_BYTES

        return {"multiprocessor_count": self.driver.threads, "max_shared_mem": WORKER_STACK_BYTES,
                "max_num_regs": REGISTER_BUDGET, "warpSize": 1, "max_threads_per_sm": 1,
                "sm_clock_rate": _clock_khz(), "mem_clock_rate": 0, "mem_bus_width": 0}

    def kernel_resources(self, kernel) -> dict[str, int]:
        """A program holds its core and its stack whole: ``n_regs`` is the register budget shared
        by its ``num_warps`` threads and ``shared`` the whole stack (so an occupancy computed from
        them is one program per core); nothing spills. Its threads are notional (one runs the
        program), so it may have as many as it asks for."""
        from .driver import WORKER_STACK_BYTES

        kernel.launcher  # loaded, as on a GPU: a broken object fails here, not at the first launch
        num_warps = max(1, int(kernel.metadata.num_warps))
        return {"n_regs": max(1, REGISTER_BUDGET // num_warps), "n_spills": 0, "n_max_threads": num_warps,
                "shared": WORKER_STACK_BYTES}

    @property
    def driver(self) -> Driver:
        if self._driver is None:
            from .driver import CpuDriver  # LLVM's JIT: loaded by the first cpu launch only

            self._driver = CpuDriver()
        return self._driver


def _clock_khz() -> int:
    """The host's CPU clock in kHz where the OS says it (Linux's ``/proc/cpuinfo``), else 0."""
    try:
        with open("/proc/cpuinfo") as f:
            mhz = next((line.split(":", 1)[1] for line in f if line.lower().startswith("cpu mhz")), "0")
        return int(float(mhz) * 1000)
    except (OSError, ValueError):
        return 0
