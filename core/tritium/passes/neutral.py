"""Target-neutral optimisation of ``tile`` IR: core's inliner, then upstream MLIR passes that apply
as they are."""

from __future__ import annotations

from typing import Any

from ..ir.mlir import passmanager
from .analysis import stored_arguments
from .combine import expand_reshaped_ranges, fold_dot_accumulation
from .inline import inline_calls

#: run in order on the whole module after ``inline_calls`` has folded the @jit helpers into the kernel
NEUTRAL_PASSES = ("canonicalize", "cse", "loop-invariant-code-motion", "sccp", "canonicalize", "cse")


def optimize(module: Any, ctx: Any) -> Any:
    """Inline the @jit helpers, then canonicalize, cse, licm, sccp on the ``tile`` module (in
    place), and core's own combines (``passes.combine``); records which arguments the kernel stores
    through (``metadata["stored_args"]``)."""
    inline_calls(module)
    expand_reshaped_ranges(module)
    pm = passmanager.PassManager.parse(f"builtin.module({','.join(NEUTRAL_PASSES)})")
    pm.run(module.operation)
    fold_dot_accumulation(module)
    ctx.metadata["stored_args"] = stored_arguments(module, ctx.signature.name)
    return module
