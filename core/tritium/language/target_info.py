"""``tl.target_info``: what the kernel is compiled for, as Triton's ``triton.language.target_info``
asks it: constexpr functions of the active driver's current target (``driver.active``), callable
from kernels (to choose a code path while compiling) and from host code. Each target states which
predicates hold for it (``GPUTarget.traits``, ``GPUTarget.capability``)."""

from __future__ import annotations

from ..runtime.constexpr_function import constexpr_function
from ..target import GPUTarget

__all__ = ["current_target"]

def current_target() -> GPUTarget | None:
    """The active driver's current target (backend, arch, warp size), or None without one."""
    from ..errors import TritiumError
    from ..runtime.driver import driver

    try:
        return driver.active.get_current_target()
    except TritiumError:
        return None


def _holds(trait: str) -> bool:
    target = current_target()
    return target is not None and trait in target.traits


@constexpr_function
def is_cuda() -> bool:
    return _holds("is_cuda")


@constexpr_function
def cuda_capability_geq(major: int, minor: int = 0) -> bool:
    """Whether the target is an NVIDIA GPU of compute capability ``(major, minor)`` or above."""
    target = current_target()
    return target is not None and target.capability is not None and target.capability >= major * 10 + minor


@constexpr_function
def is_hip() -> bool:
    return _holds("is_hip")


@constexpr_function
def is_hip_cdna3() -> bool:
    return _holds("is_hip_cdna3")


@constexpr_function
def is_hip_cdna4() -> bool:
    return _holds("is_hip_cdna4")
