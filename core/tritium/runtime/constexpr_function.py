"""``tritium.constexpr_function``: Triton's marker for plain Python functions that kernels call while
they compile (on compile-time constants, giving a constant), and that host code calls as usual."""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..errors import TritiumError


def constexpr_function(fn: Callable) -> Callable:
    """``fn`` callable from kernels at compile time: its arguments arrive as plain Python values
    (``tl.constexpr`` unwrapped); a tensor argument, known only when the kernel runs, is an error."""
    from ..language.core import constexpr, tensor

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        values = [a.value if isinstance(a, constexpr) else a for a in args]
        named = {k: v.value if isinstance(v, constexpr) else v for k, v in kwargs.items()}
        if any(isinstance(v, tensor) for v in [*values, *named.values()]):
            raise TritiumError(f"{fn.__name__} is a constexpr_function: its arguments must be compile-time "
                               "constants (tl.constexpr parameters or literals), not tensors")
        return fn(*values, **named)

    call.__tritium_constexpr_function__ = True
    return call
