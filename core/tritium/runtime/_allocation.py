"""Triton's module of the scratch-memory allocator API (``triton.runtime._allocation``), where
Triton's code and tests import it from: ``set_allocator`` (``tritium.runtime.allocation``) and
``NullAllocator``, the allocator of a context where none was set."""

from __future__ import annotations

from typing import Any

from ..errors import TritiumError
from .allocation import current_allocator, set_allocator

__all__ = ["NullAllocator", "current_allocator", "set_allocator"]


class NullAllocator:
    """An allocator that refuses: a kernel that needs global scratch memory was launched without
    ``set_allocator`` (tritium's own kernels never need it)."""

    def __call__(self, size: int, alignment: int, stream: Any) -> Any:
        raise TritiumError("kernels that need global scratch memory require an allocator: call "
                           "triton.set_allocator(fn) with fn(size, alignment, stream) -> buffer first")
