"""``tl.extra.cuda``: the names of Triton's CUDA backend module that tritium has on every target:
``libdevice``, and the launch's ``num_warps()`` and ``num_threads()`` (``num_warps * 32``) as
compile-time constants."""

from .. import semantic
from ..core import constexpr
from . import libdevice

__all__ = ["libdevice", "num_threads", "num_warps"]


def num_warps() -> constexpr:
    """The ``num_warps`` the kernel is launched with, a constant of its specialisation."""
    return constexpr(semantic.builder().num_warps)


def num_threads() -> constexpr:
    """``num_warps() * 32``: the threads of a program on NVIDIA GPUs (Triton's definition, kept on
    every target so kernels size their blocks alike)."""
    return constexpr(semantic.builder().num_warps * 32)
