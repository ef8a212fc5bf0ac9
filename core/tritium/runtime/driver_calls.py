"""A GPU driver library's C functions as Python calls through ctypes, in cuda-python's convention:
each call returns a tuple, the status (an int, 0 for success) first, then its outputs. nvptx's CUDA
driver calls and amdgpu's HIP calls are made this way: no binding package to import on the launch
path, and no C compiled at run time."""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Mapping, Sequence


def bind_calls(library: ctypes.CDLL, signatures: Mapping[str, Sequence[Any]],
               output_first: set[str]) -> dict[str, Callable[..., tuple]]:
    """``name -> call`` for each ``name: (symbol, *parameter types)`` of ``signatures``; the calls
    named in ``output_first`` take their first parameter (a pointer) as an output, returned after
    the status, and are called without it."""
    calls = {}
    for name, (symbol, *params) in signatures.items():
        fn = getattr(library, symbol)
        fn.argtypes, fn.restype = params, ctypes.c_int
        calls[name] = _output_first(fn, params[0]._type_) if name in output_first else _result(fn)
    return calls


def _result(fn: Any) -> Callable[..., tuple]:
    """A call that returns only its status, as a 1-tuple."""
    return lambda *args: (fn(*args),)


def _output_first(fn: Any, kind: Any) -> Callable[..., tuple]:
    """A call whose first parameter is an output: ``(status, output)``."""
    def call(*args) -> tuple[int, object]:
        out = kind()
        return fn(ctypes.byref(out), *args), out.value

    return call
