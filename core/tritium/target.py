"""The interface a target package implements: a compiler half and a driver half.

A backend is a ``Target`` (name, availability, options, the pipeline stages it adds after the
target-neutral ones) plus a ``Driver`` (load a binary, launch it on a grid, and a small memory API
so tests and the conformance suite need no framework). Targets reach core through the ``tritium``
entry-point group; see ``tritium.plugins`` for the hooks.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Callable, Mapping, Sequence


@dataclasses.dataclass(frozen=True)
class KernelSignature:
    """What a compiled kernel was specialised for; it travels with the binary in the cache.

    ``arg_types`` uses Triton's spelling, one per runtime argument: ``*fp32`` (pointer to fp32),
    ``i32``, ``i64``, ``fp32``, ``i1``. Constexpr arguments are not runtime arguments.
    """

    name: str
    arg_names: tuple[str, ...]
    arg_types: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class LaunchOptions:
    """Triton's launch keywords that every target accepts (``kernel[grid](..., num_warps=8)``).

    Targets that need more subclass it with their own fields; ``parse`` checks names and types.
    Options that tune only other targets' code are accepted and ignored (``OTHER_TARGETS_HINTS``):
    ``num_ctas`` among them. Triton runs a program of ``num_ctas=2`` on a cluster of two thread
    blocks, which changes its speed, never what it computes; tritium's targets run every program on
    one block (one core), so any ``num_ctas`` gives the same results as 1.
    """

    num_warps: int = 4
    num_stages: int = 3
    #: checks that cost time: ``tl.device_assert`` and bounds checks of every load and store
    #: (Triton's ``debug=True``); ``TRITIUM_DEBUG=1`` turns it on for every kernel
    debug: bool = False

    @classmethod
    def parse(cls, options: dict[str, Any], target: str) -> "LaunchOptions":
        from .errors import OptionError, TritiumError

        known = {f.name: f.type for f in dataclasses.fields(cls)}
        ctas = options.get("num_ctas", 1)
        if isinstance(ctas, bool) or not isinstance(ctas, int) or ctas < 1:
            raise TritiumError(f"num_ctas must be a positive int, as in Triton, got {ctas!r}")
        options = {k: v for k, v in options.items() if k in known or k not in OTHER_TARGETS_HINTS}
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise TritiumError(f"unknown launch option(s) or parameter(s) {', '.join(unknown)} for the {target} "
                               f"target; known options: {', '.join(sorted(known))}")
        for k, v in options.items():
            if known[k] in (int, "int") and (isinstance(v, bool) or not isinstance(v, int)):
                raise TritiumError(f"launch option {k} must be an int, got {v!r}")
            if known[k] in (bool, "bool") and not isinstance(v, bool):
                raise TritiumError(f"launch option {k} must be True or False, got {v!r}")
        warps = options.get("num_warps", 1)
        if warps < 1 or warps & (warps - 1):  # refused on every target, so a launch means the same everywhere
            raise OptionError(f"num_warps must be a power of 2 (1, 2, 4, 8, ...), as in Triton, got {warps}")
        if "debug" in known and "debug" not in options and debug_from_environment():
            options = {**options, "debug": True}
        fusion = _env_flag("TRITIUM_DEFAULT_FP_FUSION")  # knobs.language.default_fp_fusion
        if "enable_fp_fusion" in known and "enable_fp_fusion" not in options and fusion is not None:
            options = {**options, "enable_fp_fusion": fusion}
        return cls(**options)


#: Triton's launch options that only tune code for some GPUs, never change what a kernel computes; a
#: target without them ignores them, as Triton's backends do, so one autotuning config list serves
#: every target (Triton's tutorial 03 gives AMD's ``waves_per_eu`` to every target that is not CUDA).
#: Other unknown options are errors: a misspelt ``num_warp`` must not pass silently.
OTHER_TARGETS_HINTS = frozenset({"num_ctas", "maxnreg", "waves_per_eu", "matrix_instr_nonkdim", "kpack",
                                 "instruction_sched_variant", "schedule_hint"})


def debug_from_environment() -> bool:
    """``TRITIUM_DEBUG=1`` (or true/yes/on): every kernel compiles in debug mode."""
    return bool(_env_flag("TRITIUM_DEBUG"))


def _env_flag(name: str) -> bool | None:
    """The environment variable ``name`` as a flag (1/true/yes/on), None where it is unset."""
    text = os.environ.get(name, "").strip().lower()
    return text in ("1", "true", "yes", "on") if text else None


class Driver:
    """Runs compiled binaries and moves memory for one target."""

    def load(self, binary: bytes, signature: KernelSignature, metadata: Mapping[str, Any]) -> "Launcher":
        """Load ``binary`` (the target's ``binary_stage`` output) and return its launcher.

        ``metadata`` is what the stages recorded in ``CompileContext.metadata`` (``num_warps``, the
        shared-memory bytes, ...) next to core's entries (``name``, ``stage_seconds``), as the disk
        cache keeps it: JSON values, the same on a fresh compile and on a cache hit. Read it only.
        """
        raise NotImplementedError

    # -- memory API (numpy in, numpy out) used by tests and the conformance suite ---------------
    def to_device(self, array: Any) -> Any:
        raise NotImplementedError

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        raise NotImplementedError

    def to_host(self, buffer: Any) -> Any:
        raise NotImplementedError

    def synchronize(self) -> None:
        pass

    def timer(self) -> "DeviceTimer | None":
        """Timing on the device for ``tritium.testing.do_bench``, or None (the default): each call is
        then timed on the host clock, waiting for the driver after it."""
        return None


class DeviceTimer:
    """How ``do_bench`` times calls on a device, as Triton's does with CUDA events: ``flush()``
    evicts the device's cache before a timed call; ``record()`` marks the stream that launches go
    to and returns the mark; ``elapsed_ms(start, end)``, once the driver has synchronised, gives
    the milliseconds between two marks and releases them."""

    def flush(self) -> None:
        raise NotImplementedError

    def record(self) -> Any:
        raise NotImplementedError

    def elapsed_ms(self, start: Any, end: Any) -> float:
        raise NotImplementedError


@dataclasses.dataclass(frozen=True)
class GPUTarget:
    """What Triton's ``driver.active.get_current_target()`` returns: the backend (``"cuda"`` for
    NVIDIA GPUs, as Triton spells it; ``"cpu"`` for the host), the arch (an int such as ``90`` on
    NVIDIA, the CPU's name on the host) and the threads of a warp.

    ``traits`` are the predicates of Triton's ``tl.target_info`` that hold for it (``"is_cuda"``,
    ``"is_hip"``, ``"is_hip_cdna3"``, ``"is_hip_cdna4"``) and ``capability`` the compute capability
    ``cuda_capability_geq`` compares (``major * 10 + minor``): the target states them, core only
    asks. Neither takes part in equality, as Triton's GPUTarget has no such fields."""

    backend: str
    arch: int | str
    warp_size: int
    traits: frozenset[str] = dataclasses.field(default=frozenset(), compare=False, repr=False)
    capability: int | None = dataclasses.field(default=None, compare=False, repr=False)


#: how an MLIR module prints: attribute and type aliases (``#blocked = ...``), then the module op
#: a printed MLIR module: attribute/type aliases and ``//`` comments, then the module
_MLIR_MODULE = re.compile(r'(\s*([#!]|//)[^\n]*\n)*\s*(module\b|"builtin\.module")')

Launcher = Callable[[tuple[int, int, int], Sequence[Any]], None]
"""``launcher(grid, bound_args)``: run a loaded kernel on a 3-D grid with bound arguments."""


@dataclasses.dataclass(frozen=True)
class InlineArray:
    """The array class a target's launches bind inline, in the kernel's generated launch function
    (``runtime.binder``), instead of calling ``Target.bind_arg``: a call per argument costs a GPU
    launch a tenth of its time. The fields are Python expressions over the argument ``{v}``:

    - ``address``: the address of its first element, an int (bound in place of ``bind_arg``'s value);
    - ``placement``: an int naming the device it lives on; it is part of the specialisation key, so
      a launch whose arrays disagree takes the general path, which reports it;
    - ``dtype``: its element type, a hashable object (the key's element type).

    A launch whose array arguments are all of ``cls`` calls the launcher's method named ``launch``
    as ``launcher.<launch>(grid, bound_args, placement)``; a launch that mixes them with arrays of
    other classes takes the general path.
    """

    cls: type
    address: str
    placement: str
    launch: str
    dtype: str = "{v}.dtype"


class TargetCompiler:
    """The compiler half of a target (Triton's ``BaseBackend``): its options and stages, and what
    goes into cache keys. Everything here works on a machine without the device: compile-only
    runs (``python -m tritium_conformance --compile-only``) use this half, and of the other only
    ``bind_arg`` for scalar arguments."""

    #: the stage whose output ``Driver.load`` takes (and the disk cache keeps)
    binary_stage: str = ""
    #: file suffix of each of the target's stages in ``TRITIUM_DUMP`` dumps (``{"ptx": "ptx"}``);
    #: stages it does not name get core's default (see ``stage_suffix``)
    stage_suffixes: Mapping[str, str] = {}
    #: the assembly language ``tl.inline_asm_elementwise`` takes on this target ("ptx"), or None where
    #: the target cannot run foreign assembly (kernels that use it fail to compile, saying so); the
    #: code generator's ``DeviceHooks.inline_asm`` emits it
    inline_asm: str | None = None
    #: environment variables of the target's own that change what compiles (the arch to compile
    #: for): a launch reads them, so setting one makes the next launch compile again
    compile_environment: tuple[str, ...] = ()

    def version(self) -> str:
        """Everything of the target's own that changes generated code (goes into cache keys)."""
        return ""

    def parse_options(self, options: dict[str, Any]) -> Any:
        """Turn launch/compile keywords (num_warps, ...) into a hashable options object;
        raise ``tritium.errors.TritiumError`` for options the target does not know."""
        raise NotImplementedError

    def add_stages(self, stages: "Any", options: Any) -> None:
        """Append this target's stages (``tile-layout``, ``llir``, its assembly and binary) to the
        ordered ``stages`` mapping of stage name to callable. Stages that run LLVM's optimiser or
        back end do so through ``tritium.passes.llvm_worker.run_isolated``, so an LLVM abort is a
        ``CompilationError`` rather than the end of the user's process."""
        raise NotImplementedError

    def options_for(self, gpu_target: GPUTarget) -> dict[str, Any] | None:
        """The compile options that make this target compile for ``gpu_target`` (Triton's
        ``GPUTarget``, as ``triton.compile(src, target=GPUTarget("cuda", 90, 32))`` names one), or
        None when this target does not compile for it. The default: the current device's target
        (``current_target()``) and no option; a target that compiles for archs other than its
        device's (a GPU's) maps the arch to its option."""
        from .errors import TritiumError

        try:
            return {} if self.current_target() == gpu_target else None
        except TritiumError:
            return None

    def stage_suffix(self, stage: str, output: str | bytes) -> str:
        """The file suffix of ``stage``'s dump: the target's ``stage_suffixes`` entry, else ``ll`` for
        ``llir``, ``bin`` for bytes, ``mlir`` for an MLIR module's text and ``txt`` for other text."""
        suffix = self.stage_suffixes.get(stage)
        if suffix is not None:
            return suffix
        if isinstance(output, (bytes, bytearray)):
            return "bin"
        if stage == "llir":
            return "ll"
        return "mlir" if _MLIR_MODULE.match(output) else "txt"


class TargetDevice:
    """The device half of a target (Triton's ``DriverBase``): whether kernels can run here, the
    driver that loads and launches them, argument binding, launch limits, and the device
    queries of ``tritium.runtime.driver.active``."""

    #: the most programs a grid may have along axes 0, 1 and 2 (program ids are int32 everywhere)
    max_grid: tuple[int, int, int] = (2**31 - 1,) * 3
    #: the most programs one launch may run in all, or None for no limit beyond ``max_grid``: a host
    #: target counts its programs in an int32; a GPU launches each axis on its own
    max_programs: int | None = 2**31 - 1

    def availability(self) -> tuple[bool, str]:
        """``(True, "")`` when kernels can run here, else ``(False, why not)`` for humans."""
        return True, ""

    def device_description(self) -> str:
        """The device kernels run on, for people (``tritium targets``, conformance reports), e.g.
        ``NVIDIA H100 80GB HBM3 (sm_90a), driver CUDA 13.0``; asked only when the target is available.
        Empty when there is nothing to add to the target's name."""
        return ""

    def bind_arg(self, value: Any, arg_type: str, arg_name: str) -> Any:
        """Convert one user argument for the launcher (an address for pointers, a Python number
        for scalars); raise ``tritium.errors.ArgumentError`` naming what is wrong and how to fix it.
        Python ints of type ``i32`` and Python floats reach the launcher as they are, unconverted
        (``runtime.args.bind_scalar``'s rule), and so do the addresses of ``inline_array``'s class."""
        raise NotImplementedError

    def inline_array(self) -> InlineArray | None:
        """The array class that the kernels' generated launch functions bind inline (the common
        case of a GPU target: torch tensors), or None. Asked once per kernel, at its first launch."""
        return None

    @property
    def driver(self) -> Driver:
        raise NotImplementedError

    def execute(self, kernel: Any, grid: Any, args: tuple, kwargs: dict) -> Any:
        """Run a ``@jit`` kernel on ``grid`` without compiling it. Only targets that do not compile
        (the interpreter) implement it; the runtime compiles and launches for all the others."""
        raise NotImplementedError(f"target {self.name!r} compiles kernels: launch them through the runtime")

    # -- devices: what ``tritium.runtime.driver.active`` (Triton's ``driver.active``) asks ----------
    # The defaults describe a target that runs on the host: one device, index 0, torch's "cpu".
    def device_count(self) -> int:
        """How many devices of this target the machine has (the conformance suite runs one worker
        per device)."""
        return 1

    def current_device(self) -> int:
        """The index of the device launches and allocations of this thread use."""
        return 0

    def set_current_device(self, device: int) -> None:
        """Make ``device`` (``0 <= device < device_count()``) current for this thread."""
        if device != 0:
            from .errors import TargetError

            raise TargetError(f"target '{self.name}' has one device (0), not device {device}")

    def current_target(self) -> GPUTarget:
        """What kernels compile for on the current device (Triton's ``get_current_target()``)."""
        from .errors import TargetError

        raise TargetError(f"get_current_target() is not supported on target '{self.name}'")

    def device_properties(self, device: int) -> dict[str, int]:
        """Triton's ``driver.active.utils.get_device_properties(device)``: at least
        ``multiprocessor_count``, ``max_shared_mem`` (bytes a program may use), ``max_num_regs``
        (registers of a program's threads together), ``warpSize``, ``sm_clock_rate`` and
        ``mem_clock_rate`` (kHz) and ``mem_bus_width`` (bits); 0 where the device has no such figure."""
        from .errors import TargetError

        raise TargetError(f"device properties are not supported on target '{self.name}'")

    def torch_device(self) -> tuple[str, int | None]:
        """torch's device type and index of the current device (``("cuda", 0)``); ``("cpu", None)``
        for a target whose kernels read host memory."""
        return "cpu", None

    def prepare_torch(self, torch: Any) -> None:
        """Make torch's module for this target's device usable by device-agnostic code before
        ``get_active_torch_device`` hands out the device: Triton's tutorials call
        ``getattr(torch, DEVICE.type).set_stream(stream)``. The default, the host's: ``torch.cpu``
        has ``Stream``, ``current_stream`` and ``stream()``, none of which does anything on the host,
        but no ``set_stream``; it gets one that does nothing either. A target on another device
        (whose torch module needs nothing, as ``torch.cuda``) overrides it."""
        if not hasattr(torch.cpu, "set_stream"):
            torch.cpu.set_stream = lambda stream: None

    def current_stream(self, device: int) -> int:
        """The raw handle of the stream launches on ``device`` go to (0 where there are none)."""
        return 0

    def kernel_resources(self, kernel: Any) -> dict[str, int]:
        """What a loaded kernel (a ``CompiledKernel``) uses, as Triton's compiled kernel reports it
        after ``_init_handles()``: ``n_regs`` (registers per thread), ``n_spills`` (spilled 4-byte
        registers per thread), ``n_max_threads`` (threads a program of it may have) and ``shared``
        (bytes of on-chip scratch per program). Raise ``tritium.errors.OutOfResources`` when it does
        not fit the current device."""
        from .errors import TargetError

        raise TargetError(f"kernel resources (n_regs, n_spills) are not supported on target '{self.name}'")


class Target(TargetCompiler, TargetDevice):
    """One target: a compiler half and a device half (``TargetCompiler``, ``TargetDevice``).
    Subclass it in a target package and return an instance from the ``tritium_targets`` hook."""

    #: the name users pass in ``TRITIUM_TARGET``
    name: str = ""
    #: auto-selection (``TRITIUM_TARGET`` unset) picks the available target with the highest priority
    priority: int = 0
    #: False for a target too slow to run every test on (the SIMT emulator): test runs that take
    #: every available target (the core tests, the fuzzer) take it only when it is named
    test_by_default: bool = True


    @property
    def compiles(self) -> bool:
        """False for a target that runs kernels itself (it implements ``execute``)."""
        return type(self).execute is TargetDevice.execute
