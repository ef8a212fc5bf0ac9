"""The staged pipeline: an ordered mapping of stage name to callable, printable and extensible.

Each stage takes the previous stage's output and the ``CompileContext`` and returns its own output
(an MLIR module, LLVM IR text, assembly text or a binary). Core adds the target-neutral stages,
the target appends its own (``Target.add_stages``), and any plugin may add or replace stages through
the ``tritium_extend_pipeline`` hook. ``TRITIUM_DUMP`` writes each stage's text as it is produced.
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable

from ..errors import ArgumentError, CompilationError, TritiumError, warn
from ..target import KernelSignature, Target
from .given_stage import GivenStage, StageOutputs, stage_value

Stage = Callable[[Any, "CompileContext"], Any]


@dataclasses.dataclass
class CompileContext:
    """What every stage may read: the kernel's signature, the target and its options.

    ``outputs`` holds the output of every stage that already ran, by name, for stages that need
    more than their predecessor's (a binary stage compiling from ``llir`` rather than ``asm``).
    ``metadata`` collects facts stages record for the runtime (kept with the binary in the cache).
    """

    signature: KernelSignature
    target: Any
    options: Any
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)
    outputs: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: the cache key of this specialisation: dumps of several specialisations keep apart by it
    key: str = ""


class Pipeline(OrderedDict[str, Stage]):
    """Stage name -> callable, in order. ``print(pipeline)`` lists the stages."""

    def __str__(self) -> str:
        return "\n".join(f"{i}. {name}: {_describe(fn)}" for i, (name, fn) in enumerate(self.items(), 1))

    def run(self, value: Any, ctx: CompileContext, given: GivenStage | None = None) -> dict[str, Any]:
        """Run every stage; return each stage's output as text (bytes for binaries), by name.

        With ``given`` (a stage's text: an edited dump), the stages up to it do not run: its text is
        that stage's output and the pipeline continues after it.
        """
        outputs: dict[str, Any] = {}
        timings: dict[str, float] = {}
        check_dump_selection(list(self))
        stages = list(self.items())
        if given is not None:
            stages = stages[self._index(given.stage, ctx.signature.name) + 1:]
            ctx.outputs = StageOutputs(ctx.signature.name, given)
            value = ctx.outputs[given.stage] = stage_value(given, ctx.signature.name, ctx)
            outputs[given.stage] = stage_text(value)
        for name, fn in stages:
            t0 = time.perf_counter()
            value = ctx.outputs[name] = self._run_stage(name, fn, value, ctx, given)
            timings[name] = time.perf_counter() - t0
            outputs[name] = stage_text(value)
            dump(ctx.signature.name, {name: outputs[name]}, ctx.key, ctx.target)  # now: a later stage may fail
        ctx.metadata["stage_seconds"] = timings
        return outputs

    def _index(self, stage: str, kernel: str) -> int:
        if stage not in self:
            raise ArgumentError(f"kernel '{kernel}': no stage {stage!r} to start from; the stages are "
                                f"{', '.join(self)}")
        return list(self).index(stage)

    @staticmethod
    def _run_stage(name: str, fn: Stage, value: Any, ctx: CompileContext, given: GivenStage | None) -> Any:
        if given is None:
            return fn(value, ctx)
        ctx.outputs.current = name
        try:
            return fn(value, ctx)
        except TritiumError:
            raise
        except Exception as e:  # the given text is the user's: say which stage refused it and why
            raise CompilationError(ctx.signature.name, f"stage '{name}' failed on the '{given.stage}' stage's text "
                                   f"({given.origin}): {type(e).__name__}: {e}") from None


def stage_text(value: Any) -> Any:
    """Bytes stay bytes; MLIR modules print in their textual form; everything else is ``str``."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return str(value)


def _describe(fn: Callable) -> str:
    """``module.name - first sentence of the docstring``: the whole sentence, however many lines it spans."""
    paragraph = " ".join((getattr(fn, "__doc__", None) or "").strip().split("\n\n")[0].split())
    sentence = re.match(r"(.+?[.!?])(?=\s+[A-Z`]|$)", paragraph, re.S)
    name = getattr(fn, "__qualname__", repr(fn))
    doc = sentence.group(1) if sentence else paragraph
    return f"{getattr(fn, '__module__', '')}.{name}" + (f" - {doc}" if doc else "")


def dump(kernel: str, outputs: dict[str, Any], key: str, target: Target) -> None:
    """Write the stages ``TRITIUM_DUMP`` selects (``all`` or a comma list) to ``TRITIUM_DUMP_DIR``.

    The first specialisation of a kernel that a process dumps to a directory is
    ``<kernel>.<stage>.<suffix>``; the others (another cache ``key``) are
    ``<kernel>.<key[:8]>.<stage>.<suffix>``, so none overwrites another. ``target`` names the
    suffix of each stage (``Target.stage_suffix``). A dump that cannot be written is a warning (once
    per directory), not an error: the kernel compiles and runs, as with an unusable cache.
    """
    selected = _dump_selection()
    if selected is None:
        return
    name = _dump_name(kernel, key)
    for stage, text in outputs.items():
        if stage in selected or "all" in selected:
            try:
                _write_dump(f"{name}.{stage}.{target.stage_suffix(stage, text)}", text)
            except OSError as e:
                if _dump_dir() not in _warned_dirs:
                    _warned_dirs.add(_dump_dir())
                    warn(f"TRITIUM_DUMP: cannot write dumps to {_dump_dir()} ({e.strerror or e}); kernels compile "
                         "and run without them. Set TRITIUM_DUMP_DIR to a writable directory.")
                return


_first_dumped: dict[tuple[str, str], str] = {}  # (directory, kernel) -> key of the first dumped there
_warned_selections: set = set()
_warned_dirs: set[str] = set()  # dump directories that could not be written


def _dump_name(kernel: str, key: str) -> str:
    first = _first_dumped.setdefault((_dump_dir(), kernel), key)
    return kernel if key == first else f"{kernel}.{key[:8]}"


def check_dump_selection(stages: list[str]) -> None:
    """Warn (once per selection and pipeline) about ``TRITIUM_DUMP`` names that are no stage."""
    selected = _dump_selection()
    if not selected:
        return
    unknown = sorted(selected - set(stages) - {"all"})
    if unknown and (tuple(unknown), tuple(stages)) not in _warned_selections:
        _warned_selections.add((tuple(unknown), tuple(stages)))
        warn(f"TRITIUM_DUMP names no stage {', '.join(map(repr, unknown))}; the stages are {', '.join(stages)} "
             "(or 'all')")


def _dump_selection() -> set[str] | None:
    raw = os.environ.get("TRITIUM_DUMP", "").strip()
    if not raw:
        return None
    return {s.strip() for s in raw.split(",") if s.strip()}


def _dump_dir() -> str:
    return os.path.abspath(os.environ.get("TRITIUM_DUMP_DIR", "tritium_dump"))


def _write_dump(filename: str, text: Any) -> None:
    out = Path(_dump_dir())
    out.mkdir(parents=True, exist_ok=True)
    path = out / filename
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
