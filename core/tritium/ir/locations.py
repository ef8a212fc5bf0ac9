"""Source positions of MLIR locations, read from the location objects themselves (printing a
location escapes non-ASCII and backslashes in the path, so parsing its text gets files wrong)."""

from __future__ import annotations

from typing import Any


def file_line_col(loc: Any) -> tuple[str, int, int] | None:
    """``(file, line, column)`` of the first file position in ``loc`` (through fused and call-site
    locations, the callee first), or None when it has none (an unknown location)."""
    if hasattr(loc, "filename"):
        return loc.filename, loc.start_line, loc.start_col
    for inner in getattr(loc, "locations", None) or [getattr(loc, "callee", None)]:
        if inner is not None:
            found = file_line_col(inner)
            if found is not None:
                return found
    return None


def compilation_error(kernel: str, op: Any, message: str, kind: type | None = None):
    """A ``CompilationError`` (or its subclass ``kind``) of ``kernel`` about ``op``, at its source
    line when it has one."""
    import linecache

    from ..errors import CompilationError

    kind = kind or CompilationError
    found = file_line_col(op.location)
    if found is None:
        return kind(kernel, message)
    file, line, col = found
    return kind(kernel, message, filename=file, lineno=line, source_line=linecache.getline(file, line), col=col - 1)
