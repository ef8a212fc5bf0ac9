"""Starting the pipeline from a stage's text: an edited dump given to ``tritium.compile`` or found in
``TRITIUM_OVERRIDE_DIR``.

This is how a stage is debugged or tested without the stages before it (as Triton's IR and kernel
overrides do). MLIR stages' text is parsed back into a module in the ``tile`` dialect's context;
other stages' text (LLVM IR, assembly) is passed on as it is, and ``.bin`` files as bytes.
Metadata that a skipped stage would have recorded is recomputed from the given text where it can
be (``stored_args`` from a ``tile`` module) and otherwise left at its safe default.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from pathlib import Path
from typing import Any

from ..errors import ArgumentError, CompilationError, warn

#: names the directory whose ``<kernel>.<stage>.<suffix>`` files replace those stages' outputs
OVERRIDE_ENV = "TRITIUM_OVERRIDE_DIR"


@dataclasses.dataclass(frozen=True)
class GivenStage:
    """The output of ``stage`` given as text (bytes for a binary): the pipeline continues after it.

    ``suffix`` is the dump file's suffix (``mlir``, ``ll``, ``s``, ``bin``): ``mlir`` is parsed into a
    module. ``origin`` says where the text came from, for messages.
    """

    stage: str
    text: str | bytes
    suffix: str
    origin: str

    def digest(self) -> str:
        data = self.text if isinstance(self.text, bytes) else self.text.encode()
        return hashlib.sha256(data).hexdigest()


def split_dump_name(name: str) -> tuple[str, str, str] | None:
    """``<kernel>.<stage>.<suffix>`` (or a dump's ``<kernel>.<key>.<stage>.<suffix>``) -> the three
    names; None for a name of another form."""
    parts = name.split(".")
    if len(parts) == 4 and re.fullmatch(r"[0-9a-f]{8}", parts[1]):
        parts = [parts[0], parts[2], parts[3]]
    if len(parts) != 3 or not all(parts):
        return None
    return parts[0], parts[1], parts[2]


def read_dump(path: str | os.PathLike, kernel: str) -> GivenStage:
    """The stage a dump file holds, from its name ``<kernel>.<stage>.<suffix>``."""
    path = Path(path)
    parts = split_dump_name(path.name)
    if parts is None:
        raise ArgumentError(f"kernel '{kernel}': cannot tell the stage from the file name '{path.name}'; name it "
                            f"'<kernel>.<stage>.<suffix>' as dumps are (e.g. '{kernel}.tile-layout.mlir'), or "
                            "pass its text with stage=")
    name, stage, suffix = parts
    if name != kernel:
        raise ArgumentError(f"kernel '{kernel}': the file '{path.name}' is a dump of kernel '{name}'")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ArgumentError(f"kernel '{kernel}': cannot read the '{stage}' stage from '{path}': {e}") from None
    return GivenStage(stage, _text_or_bytes(data), suffix, f"file '{path}'")


def _text_or_bytes(data: bytes) -> str | bytes:
    """A dump's content as the stage produced it: text for text stages, bytes for binaries (whose
    suffix each target names, so the content decides)."""
    if b"\0" in data:
        return data
    try:
        return data.decode()
    except UnicodeDecodeError:
        return data


def override_files(kernel: str) -> list[Path]:
    """The files in ``TRITIUM_OVERRIDE_DIR`` named for ``kernel`` (``<kernel>.<stage>.<suffix>``)."""
    root = os.environ.get(OVERRIDE_ENV, "").strip()
    if not root or not os.path.isdir(root):
        return []
    return sorted(p for p in Path(root).iterdir()
                  if p.is_file() and (split_dump_name(p.name) or ("",))[0] == kernel)


def choose_override(kernel: str, stages: list[str]) -> GivenStage | None:
    """The stage to continue from under ``TRITIUM_OVERRIDE_DIR``: the last one it holds a file for
    (that file replaces what every earlier stage produced). Warns which stage comes from which file."""
    found: dict[str, Path] = {}
    for path in override_files(kernel):
        stage = split_dump_name(path.name)[1]
        if path.name.count(".") != 2:  # a dump of one specialisation: <kernel>.<key>.<stage>.<suffix>
            warn(f"{OVERRIDE_ENV}: '{path}' is ignored: an override applies to every specialisation of "
                 f"'{kernel}', so name it '{kernel}.{stage}.{path.suffix[1:]}'")
        elif stage not in stages:
            warn(f"{OVERRIDE_ENV}: '{path}' names no stage of kernel '{kernel}'s pipeline; the stages are "
                 f"{', '.join(stages)}")
        else:
            found[stage] = path
    if not found:
        return None
    last = max(found, key=stages.index)
    given = read_dump(found[last], kernel)
    warn_override(kernel, last, given.origin, [s for s in found if s != last])
    return given


def warn_override(kernel: str, stage: str, origin: str, shadowed: list[str] = ()) -> None:
    """The warning every overridden compilation (or cache hit of one: the override is chosen before
    the cache is looked up) gives."""
    text = f"kernel '{kernel}': stage '{stage}' overridden from {origin} ({OVERRIDE_ENV})"
    if shadowed:
        text += (f"; the override files of the earlier stages {', '.join(shadowed)} have no effect, since "
                 f"'{stage}' replaces what they produce (remove '{stage}' to test an earlier edit)")
    warn(text)


def stage_value(given: GivenStage, kernel: str, ctx: Any) -> Any:
    """The given text as the stage's output: a verified ``tile`` module for MLIR (in the current
    context), the text or bytes otherwise. Records the metadata it can recompute."""
    if given.suffix != "mlir":
        return given.text
    from ..ir.mlir import ir
    from .analysis import stored_arguments

    where = f"the '{given.stage}' stage's text ({given.origin})"
    if isinstance(given.text, bytes):
        raise CompilationError(kernel, f"{where} is bytes; an MLIR stage takes text")
    try:
        module = ir.Module.parse(given.text)
    except Exception as e:  # MLIRError: the diagnostics say where
        raise CompilationError(kernel, f"cannot parse {where} as MLIR: {e}") from None
    try:
        module.operation.verify()
    except Exception as e:
        raise CompilationError(kernel, f"{where} does not verify: {e}") from None
    functions = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in module.body.operations
                 if op.operation.name == "func.func"}
    if kernel not in functions:
        raise CompilationError(kernel, f"{where} defines no function '{kernel}' (it defines: "
                               f"{', '.join(functions) or 'none'})")
    _check_arguments(functions[kernel], ctx.signature, where)
    ctx.metadata["stored_args"] = stored_arguments(module, kernel)
    return module


def _check_arguments(fn: Any, signature: Any, where: str) -> None:
    """The kernel function's parameters must be the signature's: the launcher passes those."""
    from ..frontend.ir_builder import scalar_type
    from ..language.dtypes import from_signature

    given = [str(a.type) for a in fn.regions[0].blocks[0].arguments]
    expected = [str(scalar_type(from_signature(t))) for t in signature.arg_types]
    if given != expected:
        raise CompilationError(signature.name, f"{where} gives '{signature.name}' the parameters "
                               f"({', '.join(given)}), but the signature ({', '.join(signature.arg_types)}) "
                               f"means ({', '.join(expected)}); compile with the signature the text was made for")


class StageOutputs(dict):
    """``CompileContext.outputs`` after a given stage: asking for a stage that did not run is a
    clear error (the target cannot continue from the given stage), never a stale value."""

    def __init__(self, kernel: str, given: GivenStage):
        super().__init__()
        self.kernel, self.given, self.current = kernel, given, given.stage

    def __missing__(self, stage: str):
        g = self.given
        raise CompilationError(self.kernel, f"stage '{self.current}' needs the output of stage '{stage}', which did "
                               f"not run: the pipeline continued from the given '{g.stage}' stage ({g.origin}); "
                               f"give stage '{stage}' or an earlier one instead")
