"""``tl.target_info``: what the kernel is compiled for, as Triton's ``triton.language.target_info``
asks it: constexpr functions of the active driver's current target (``driver.active``), callable
from kernels (to choose a code path while compiling) and from host code."""

from __future__ import annotations

from ..runtime.constexpr_function import constexpr_function
from ..target import GPUTarget

__all__ = ["current_target"]

#: AMD's CDNA3 and CDNA4 architectures
HIP_CDNA3_ARCHS = frozenset({"gfx942"})
HIP_CDNA4_ARCHS = frozenset({"gfx950"})


def current_target() -> GPUTarget | None:
    """The active driver's current target (backend, arch, warp size), or None without one."""
    from ..errors import TritiumError
    from ..runtime.driver import driver

    try:
        return driver.active.get_current_target()
    except TritiumError:
        return None


@constexpr_function
def is_cuda() -> bool:
    target = current_target()
    return target is not None and target.backend == "cuda"


@constexpr_function
def cuda_capability_geq(major: int, minor: int = 0) -> bool:
    """Whether the target is an NVIDIA GPU of compute capability ``(major, minor)`` or above."""
    target = current_target()
    return target is not None and target.backend == "cuda" and target.arch >= major * 10 + minor


@constexpr_function
def is_hip() -> bool:
    target = current_target()
    return target is not None and target.backend == "hip"


@constexpr_function
def is_hip_cdna3() -> bool:
    target = current_target()
    return target is not None and target.backend == "hip" and target.arch in HIP_CDNA3_ARCHS


@constexpr_function
def is_hip_cdna4() -> bool:
    target = current_target()
    return target is not None and target.backend == "hip" and target.arch in HIP_CDNA4_ARCHS
