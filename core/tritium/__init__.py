"""tritium: a Triton-style kernel compiler with pluggable targets.

``import tritium as triton; import tritium.language as tl`` ports a Triton kernel.
"""

__version__ = "0.1.0"

from .errors import (ArgumentError, CompilationError, InterpreterError, OutOfResources, TargetError,  # noqa: E402
                     TritiumError, TritonError)
from .runtime.allocation import set_allocator  # noqa: E402
from .runtime.args import MockTensor  # noqa: E402
from .runtime.async_compile import AsyncCompileMode, FutureKernel  # noqa: E402
from .runtime.compiler import CompiledKernel, compile  # noqa: E402,A004
from .runtime.constexpr_function import constexpr_function  # noqa: E402
from .runtime.jit import JITFunction, KernelInterface, jit  # noqa: E402
from .runtime.reinterpret import TensorWrapper, reinterpret  # noqa: E402


def cdiv(x, y):
    """Ceiling division: ``cdiv(10, 4) == 3``; works on ints and on integer tensors in kernels."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n (1 for n <= 1)."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


__all__ = ["ArgumentError", "AsyncCompileMode", "FutureKernel", "CompilationError", "CompiledKernel", "Config", "InterpreterError", "JITFunction",
           "KernelInterface", "MockTensor", "OutOfResources", "TargetError", "TensorWrapper", "TritiumError", "TritonError",
           "autotune", "cdiv", "compile", "constexpr_function", "heuristics",
           "jit", "must_use_result", "next_power_of_2", "reinterpret", "set_allocator"]

#: loaded on first use: the autotuner imports tritium.language, which ``import tritium`` does not need
_AUTOTUNER = frozenset({"autotune", "Config", "heuristics"})


def __getattr__(name: str):
    if name in _AUTOTUNER:
        from .runtime import autotuner

        return getattr(autotuner, name)
    if name == "must_use_result":  # a language decorator: tritium.language loads on first use
        from .language.core import must_use_result

        return must_use_result
    if name in ("testing", "tools"):  # Triton's ``import triton`` brings these too; here on first use
        import importlib

        return importlib.import_module(".testing", __name__)
    raise AttributeError(f"module 'tritium' has no attribute '{name}'")
