"""``tl.extra.cuda``: the names of Triton's CUDA backend module. ``libdevice``, and the launch's
``num_warps()`` and ``num_threads()`` (``num_warps * 32``) as compile-time constants, are there on
every target; ``globaltimer()`` and ``smid()`` read NVIDIA's special registers in inline PTX, so
only a target that takes PTX (``nvptx``) compiles them, and the others say their inline assembly is
not theirs."""

from .. import semantic
from ..core import constexpr, tensor
from ..dtypes import int32, int64
from ..elementwise_fns import inline_asm_elementwise
from . import libdevice

__all__ = ["globaltimer", "libdevice", "num_threads", "num_warps", "smid"]


def num_warps() -> constexpr:
    """The ``num_warps`` the kernel is launched with, a constant of its specialisation."""
    return constexpr(semantic.builder().num_warps)


def num_threads() -> constexpr:
    """``num_warps() * 32``: the threads of a program on NVIDIA GPUs (Triton's definition, kept on
    every target so kernels size their blocks alike)."""
    return constexpr(semantic.builder().num_warps * 32)


def globaltimer() -> tensor:
    """The GPU's global nanosecond timer (``%globaltimer``), an int64 read where it is called."""
    return inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=int64, is_pure=False, pack=1)


def smid() -> tensor:
    """The number of the streaming multiprocessor the program runs on (``%smid``), an int32."""
    return inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=int32, is_pure=True, pack=1)
