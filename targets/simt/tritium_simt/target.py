"""``SimtTarget``: GPU code generation run on the host, one OS thread per GPU thread.

It compiles as a GPU target does: core's ``tile-layout`` stage for warps of ``TRITIUM_SIMT_WARP_SIZE``
threads (32 by default; 64 and 32 are AMD's wavefronts) and core's per-thread code generator, with
``emulator.HostThreadHooks`` for the host, ``tl.dot`` on FMAs or on the matrix instruction a target
declares (``TRITIUM_SIMT_MATRIX``), emulated from its declared fragments; then it runs every program of a launch on that many OS
threads (``emulator.launch``), meeting in Python at barriers and shuffles. Slow (a program of 256
threads costs milliseconds), so it is named, never chosen: it runs the conformance suite on the
layouts, reductions, scans and shuffles a GPU target compiles, at the warp size of a GPU that is
not here, and it is where a new GPU target's hooks are best brought up first. Memory is host memory.
"""

from __future__ import annotations

import linecache

import importlib
import os
from typing import Any, Mapping

import llvmlite
from llvmlite import binding as llvm
from tritium.errors import DeviceAssertionError, OutOfResources, TritiumError
from tritium.runtime.args import bind_scalar
from tritium.runtime.cache import source_hash
from tritium.runtime.host import HostMemory, host_address
from tritium.target import Driver, KernelSignature, LaunchOptions, Target

WARP_ENV = "TRITIUM_SIMT_WARP_SIZE"
#: ``module:function``, a target's ``warp_matrix_op(operand, accumulator)``: ``tl.dot`` then runs on
#: that matrix instruction, emulated from its declared fragments (``tritium_amdgpu.matrix:cdna3_matrix_op``)
MATRIX_ENV = "TRITIUM_SIMT_MATRIX"
#: OS threads one emulated program may have
MAX_THREADS = 1024


def warp_size() -> int:
    """``TRITIUM_SIMT_WARP_SIZE``, else 32."""
    raw = os.environ.get(WARP_ENV, "").strip() or "32"
    if not raw.isdigit() or int(raw) < 1 or int(raw) & (int(raw) - 1) or int(raw) > 64:
        raise TritiumError(f"{WARP_ENV} must be a power of two up to 64 (the threads of a warp), got {raw!r}")
    return int(raw)


def matrix_instruction():
    """The ``warp_matrix_op`` that ``TRITIUM_SIMT_MATRIX`` names, or None."""
    named = os.environ.get(MATRIX_ENV, "").strip()
    if not named:
        return None
    module, _, name = named.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise TritiumError(f"{MATRIX_ENV}={named!r} names no function (module:function): {e}") from None


def hooks():
    from . import emulator

    return emulator.HostThreadHooks(warp_size(), matrix_instruction())


def tile_layout(module, ctx):
    from tritium.passes.gpu_layout import layout_stage  # imports the MLIR bindings: only when compiling

    from . import emulator

    module = layout_stage(hooks(), max_shared=emulator.SHARED_BYTES)(module, ctx)
    if ctx.metadata["shared"] > emulator.SHARED_BYTES:
        raise OutOfResources(ctx.metadata["shared"], emulator.SHARED_BYTES, "shared memory", ctx.signature.name)
    return module


def llir(module, ctx) -> str:
    from tritium.codegen.threads import generate

    from . import emulator

    ctx.metadata["warp_size"] = warp_size()
    machine = emulator.host_machine()
    return generate(module, hooks(), llvm.get_default_triple(), str(machine.target_data), ctx.options.num_warps,
                    ctx.options.debug)


def bitcode(llir_text: str, ctx) -> bytes:
    """The module as LLVM bitcode: the driver JIT-compiles it with the emulator's callbacks."""
    module = llvm.parse_assembly(llir_text)
    module.verify()
    return module.as_bitcode()


class SimtLauncher:
    def __init__(self, kernel: Any, threads: int, warp: int, name: str):
        self.kernel, self.threads, self.warp = kernel, threads, warp  # kernel: an ``emulator.Kernel``
        self.matrix, self.name = matrix_instruction(), name

    def __call__(self, grid: tuple[int, int, int], args) -> None:
        """Run the programs; a ``tl.device_assert`` that failed in any thread raises
        ``DeviceAssertionError`` once they have finished, as a GPU reports it at synchronisation."""
        from . import emulator

        if min(grid) > 0:
            before = len(emulator.failed_assertions)
            emulator.launch(self.kernel, grid, list(args), self.threads, self.warp, self.matrix)
            failed = emulator.failed_assertions[before:]
            if failed:
                line, tid, message, file = failed[0]
                raise DeviceAssertionError(self.name, f"device assertion failed: {message or 'assertion failed'} "
                                           f"(in {len(failed)} thread(s), first thread {tid})", filename=file,
                                           lineno=line or None,
                                           source_line=linecache.getline(file, line) if line else "")


class SimtDriver(HostMemory):
    def load(self, binary: bytes, signature: KernelSignature, metadata: Mapping[str, Any]) -> SimtLauncher:
        from . import emulator  # the code generator (and MLIR): only once a kernel is loaded

        warp = int(metadata["warp_size"])
        return SimtLauncher(emulator.load(llvm.parse_bitcode(bytes(binary))), int(metadata["num_warps"]) * warp, warp,
                            signature.name)


class SimtTarget(Target):
    name = "simt"
    priority = -50  # only when named
    binary_stage = "bitcode"
    stage_suffixes = {"bitcode": "bc"}
    compile_environment = (WARP_ENV, MATRIX_ENV)
    test_by_default = False  # seconds a case: the core tests and the fuzzer take it when named

    def __init__(self) -> None:
        self._driver: Driver | None = None

    def version(self) -> str:
        try:
            warp = warp_size()
        except TritiumError:
            warp = 0  # compiling fails then, saying why
        matrix = os.environ.get(MATRIX_ENV, "").strip() or "none"
        return f"tritium-simt-{source_hash('tritium_simt')} llvmlite-{llvmlite.__version__} warp-{warp} matrix-{matrix}"

    def parse_options(self, options: dict[str, Any]) -> LaunchOptions:
        parsed = LaunchOptions.parse(options, self.name)
        if parsed.num_warps * warp_size() > MAX_THREADS:
            raise TritiumError(f"num_warps must be at most {MAX_THREADS // warp_size()} on target simt at warp size "
                               f"{warp_size()} ({MAX_THREADS} threads per program), got {parsed.num_warps}")
        return parsed

    def add_stages(self, stages, options: LaunchOptions) -> None:
        stages["tile-layout"] = tile_layout
        stages["llir"] = llir
        stages["bitcode"] = bitcode

    def bind_arg(self, value: Any, arg_type: str, arg_name: str) -> Any:
        if arg_type.startswith("*"):
            return host_address(value, arg_name, self.name)
        return bind_scalar(value, arg_type, arg_name, self.name)

    @property
    def driver(self) -> Driver:
        if self._driver is None:
            self._driver = SimtDriver()
        return self._driver
