"""Triton's ``triton.compiler.errors``: the compile errors, under the names Triton's code imports."""

from ..errors import CompilationError, CompileTimeAssertionFailure

__all__ = ["CompilationError", "CompileTimeAssertionFailure"]
