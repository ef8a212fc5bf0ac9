"""Printing and assertions inside kernels: ``tl.device_print``, ``tl.static_print``,
``tl.device_assert`` (and the builtins ``print`` and ``assert`` that the frontend maps to them).

As for every builtin, the rules live here and the active builder emits: ``tile.print`` and
``tile.assert`` ops when compiling, the output itself when interpreting. Both builders format
through ``tritium.runtime.debug_output``, so the text is the same on every target.
"""

from __future__ import annotations

import string
from typing import Any, Sequence

from . import dtypes as T
from . import semantic
from ..runtime import debug_output


def device_print(prefix: Any, args: Sequence[Any], hex: bool = False) -> None:
    """Print every element of each of ``args`` in every program, after ``prefix`` (Triton's rules)."""
    from .core import constexpr

    prefix = prefix.value if isinstance(prefix, constexpr) else prefix
    if not isinstance(prefix, str):
        raise semantic.SemanticError(f"device_print's first argument is the prefix, a string; got {prefix!r}")
    if any(ch not in string.printable for ch in prefix):
        raise semantic.SemanticError(f"device_print's prefix must be printable ASCII, got {prefix!r}")
    tensors = [semantic.to_tensor(a) for a in args]
    semantic.builder().device_print(debug_output.print_prefix(prefix, bool(tensors)), bool(hex),
                                    [t.handle for t in tensors], [t.dtype for t in tensors],
                                    [t.shape for t in tensors])


def builtin_print(args: Sequence[Any], sep: str = " ") -> None:
    """``print(...)`` in a kernel: ``device_print`` with the leading strings (joined by ``sep``)
    as the prefix and the rest as the values."""
    from .core import constexpr

    plain = [a.value if isinstance(a, constexpr) else a for a in args]
    n = 0
    while n < len(plain) and isinstance(plain[n], str):
        n += 1
    if any(isinstance(a, str) for a in plain[n:]):
        raise semantic.SemanticError("print() in a kernel takes its strings first, then the values to print")
    device_print(sep.join(plain[:n]), args[n:])


def static_print(values: Sequence[Any], sep: str = " ", end: str = "\n") -> None:
    """Print compile-time values once: when the kernel is compiled (not when a cached binary is
    loaded), or once per launch on the interpreter."""
    text = debug_output.static_text(values, sep)
    semantic.builder().static_print(text + end[:-1] if end.endswith("\n") else text + end)


def device_assert(cond: Any, msg: Any = "", mask: Any = None) -> None:
    """Check ``cond`` (every element where ``mask``) when the kernel runs, in debug mode only
    (``debug=True`` or ``TRITIUM_DEBUG=1``); otherwise nothing is emitted, as in Triton."""
    from .core import constexpr

    msg = msg.value if isinstance(msg, constexpr) else msg
    mask = mask.value if isinstance(mask, constexpr) else mask
    if not isinstance(msg, str):
        raise semantic.SemanticError(f"device_assert's message must be a string, got {msg!r}")
    b = semantic.builder()
    if not b.debug:
        return
    cond = semantic.cast(semantic.to_tensor(cond), T.int1)
    if mask is not None:
        cond = semantic.logical("or", cond, semantic.logical_not(mask))
    b.device_assert(cond.handle, cond.shape, msg)
