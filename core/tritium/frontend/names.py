"""What Python statements bind, shared by the frontend and the interpreter's rewriter (kept free of
MLIR imports: the interpreter plugin loads on every launch)."""

from __future__ import annotations

import ast


def assigned_names(stmts: list[ast.stmt]) -> set[str]:
    """Names a block of statements (re)binds, including in nested blocks."""
    out: set[str] = set()
    for s in stmts:
        for node in ast.walk(s):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
    return out
