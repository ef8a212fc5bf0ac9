"""The staged pipeline: an ordered mapping of stage name to callable, printable and extensible.

Each stage takes the previous stage's output and the ``CompileContext`` and returns its own output
(an MLIR module, LLVM IR text, assembly text or a binary). Core adds the target-neutral stages,
the target appends its own (``Target.add_stages``), and any plugin may add or replace stages through
the ``tritium_extend_pipeline`` hook. ``TRITIUM_DUMP`` writes each stage's text as it is produced.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable

from ..target import KernelSignature

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


class Pipeline(OrderedDict[str, Stage]):
    """Stage name -> callable, in order. ``print(pipeline)`` lists the stages."""

    def __str__(self) -> str:
        return "\n".join(f"{i}. {name}: {_describe(fn)}" for i, (name, fn) in enumerate(self.items(), 1))

    def run(self, value: Any, ctx: CompileContext) -> dict[str, Any]:
        """Run every stage; return each stage's output as text (bytes for binaries), by name."""
        outputs: dict[str, Any] = {}
        timings: dict[str, float] = {}
        for name, fn in self.items():
            t0 = time.perf_counter()
            value = ctx.outputs[name] = fn(value, ctx)
            timings[name] = time.perf_counter() - t0
            outputs[name] = stage_text(value)
            dump(ctx.signature.name, {name: outputs[name]})  # now: a later stage may fail
        ctx.metadata["stage_seconds"] = timings
        return outputs


def stage_text(value: Any) -> Any:
    """Bytes stay bytes; MLIR modules print in their textual form; everything else is ``str``."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return str(value)


def _describe(fn: Callable) -> str:
    doc = (getattr(fn, "__doc__", None) or "").strip().splitlines()
    name = getattr(fn, "__qualname__", repr(fn))
    return f"{getattr(fn, '__module__', '')}.{name}" + (f" - {doc[0]}" if doc else "")


def dump(kernel: str, outputs: dict[str, Any]) -> None:
    """Write the stages ``TRITIUM_DUMP`` selects (``all`` or a comma list) to ``TRITIUM_DUMP_DIR``."""
    selected = _dump_selection()
    if selected is None:
        return
    for stage, text in outputs.items():
        if stage in selected or "all" in selected:
            _write_dump(kernel, stage, text)


def _dump_selection() -> set[str] | None:
    raw = os.environ.get("TRITIUM_DUMP", "").strip()
    if not raw:
        return None
    return {s.strip() for s in raw.split(",") if s.strip()}


_SUFFIX = {"llir": "ll", "ptx": "ptx", "asm": "s", "amdgcn": "s"}


def _write_dump(kernel: str, stage: str, text: Any) -> None:
    out = Path(os.environ.get("TRITIUM_DUMP_DIR", "tritium_dump"))
    out.mkdir(parents=True, exist_ok=True)
    suffix = _SUFFIX.get(stage, "bin" if isinstance(text, bytes) else "mlir")
    path = out / f"{kernel}.{stage}.{suffix}"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
