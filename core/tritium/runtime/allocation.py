"""``tritium.set_allocator``: Triton's hook for the global scratch memory some kernels need.

In Triton a kernel that builds TMA descriptors on the GPU (``tl.make_tensor_descriptor``) asks this
allocator, ``allocator(size, alignment, stream) -> buffer``, for memory to write them to, and
ported code sets one before launching such kernels. tritium's in-kernel descriptors are block
pointers held in registers, so no tritium kernel needs scratch memory: the allocator is kept, per
context as in Triton, and ``current_allocator`` returns it to a target that will need one.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Callable

_ALLOCATOR: ContextVar[Callable[..., Any] | None] = ContextVar("tritium_allocator", default=None)


def set_allocator(allocator: Callable[[int, int, Any], Any] | None) -> None:
    """Use ``allocator(size, alignment, stream)`` for kernels' global scratch memory in this
    context (None: no allocator)."""
    if allocator is not None and not callable(allocator):
        raise TypeError(f"set_allocator takes a callable (size, alignment, stream) -> buffer, got {allocator!r}")
    _ALLOCATOR.set(allocator)


def current_allocator() -> Callable[..., Any] | None:
    """The allocator ``set_allocator`` set in this context, or None."""
    return _ALLOCATOR.get()
