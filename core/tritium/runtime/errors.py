"""``tritium.runtime.errors``: where Triton keeps ``OutOfResources`` and ``InterpreterError``
(``triton.runtime.errors``)."""

from ..errors import InterpreterError, OutOfResources, TritonError

__all__ = ["InterpreterError", "OutOfResources", "TritonError"]
