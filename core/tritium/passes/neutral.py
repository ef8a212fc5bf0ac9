"""Target-neutral optimisation of ``tile`` IR: upstream MLIR passes that apply as they are."""

from __future__ import annotations

from typing import Any

from ..ir.mlir import passmanager
from .analysis import stored_arguments

#: run in order on the whole module; ``inline`` folds @jit helpers into the kernel and
#: ``symbol-dce`` drops them afterwards
NEUTRAL_PASSES = ("inline", "symbol-dce", "canonicalize", "cse", "loop-invariant-code-motion",
                  "sccp", "canonicalize", "cse")


def optimize(module: Any, ctx: Any) -> Any:
    """inline, symbol-dce, canonicalize, cse, licm, sccp on the ``tile`` module (in place); records
    which arguments the kernel stores through (``metadata["stored_args"]``)."""
    pm = passmanager.PassManager.parse(f"builtin.module({','.join(NEUTRAL_PASSES)})")
    pm.run(module.operation)
    ctx.metadata["stored_args"] = stored_arguments(module, ctx.signature.name)
    return module
