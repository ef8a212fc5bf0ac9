"""``tl.tuple`` and ``tl.slice``, Triton's names for the tuples kernels pass around (``@jit``
functions returning several values, ``tl.reduce`` over several tensors) and for a slice of one.

Inside a kernel a tuple is a Python tuple of language values; ``tl.tuple`` is that tuple with
Triton's ``type`` (a ``tuple_type`` of its elements' types), so ``isinstance(t, tuple)`` code and
``t.type`` both work. Indexing with a ``tl.slice`` is indexing with the Python slice it names.
"""

from __future__ import annotations

import builtins
from typing import Any, Iterable

from .dtypes import slice_type, tuple_type


def _type_of(value: Any) -> Any:
    from .core import constexpr

    t = getattr(value, "type", None)
    return t if t is not None else constexpr(value).type


class tuple(builtins.tuple):  # noqa: A001 - Triton's name
    """An immutable sequence of language values (tensors, constexprs, tuples)."""

    def __new__(cls, args: Iterable[Any] = (), type: tuple_type | None = None):  # noqa: A002
        t = super().__new__(cls, args)
        t._type = type
        return t

    @property
    def type(self) -> tuple_type:
        return self._type or tuple_type([_type_of(v) for v in self])

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            index = builtins.slice(index.start, index.stop, index.step)
        index = getattr(index, "value", index)  # a constexpr index
        got = super().__getitem__(index)
        return tuple(got) if isinstance(index, builtins.slice) else got

    def __add__(self, other: Any) -> tuple:
        return tuple(builtins.tuple(self) + builtins.tuple(other))

    def __repr__(self) -> str:
        return f"tl.tuple({list(self)!r})"


class slice:  # noqa: A001 - Triton's name
    """``start:stop:step`` of a tuple, as a value a kernel can pass on."""

    def __init__(self, start: Any, stop: Any, step: Any):
        self.start, self.stop, self.step = start, stop, step
        self.type = slice_type()

    def __repr__(self) -> str:
        return f"tl.slice({self.start!r}, {self.stop!r}, {self.step!r})"
