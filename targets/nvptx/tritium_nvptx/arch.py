"""NVIDIA architecture names and PTX ISA versions.

LLVM only warns about an unknown ``cpu`` (``sm_999`` silently yields PTX 3.2), so arch names are
checked here. The PTX ISA version of a module is the newest that every consumer accepts: LLVM 22
(up to 9.0), the installed driver (when there is one) and the ptxas that assembles it.
"""

from __future__ import annotations

import re

from tritium.errors import TritiumError

#: arch -> the first PTX ISA version (major * 10 + minor) that can target it
ARCHS: dict[str, int] = {
    "sm_80": 70, "sm_86": 71, "sm_87": 74, "sm_89": 78, "sm_90": 78, "sm_90a": 80,
    "sm_100": 86, "sm_100a": 86, "sm_101": 86, "sm_101a": 86, "sm_103": 88, "sm_103a": 88,
    "sm_110": 90, "sm_110a": 90, "sm_120": 87, "sm_120a": 87, "sm_121": 88, "sm_121a": 88,
}
#: the newest PTX ISA LLVM 22's NVPTX back end emits (``+ptx90``)
LLVM_MAX_PTX = 90
#: compute capabilities whose arch-specific variant Triton compiles for (wgmma and friends)
_ARCH_SPECIFIC = {(9, 0), (10, 0), (10, 3)}


def check_arch(arch: str) -> str:
    """``arch`` if it is a known NVIDIA arch name (Triton's spelling ``sm90a`` taken for ``sm_90a``),
    else a TritiumError listing the known ones."""
    arch = re.sub(r"^sm(\d)", r"sm_\1", arch)
    if arch not in ARCHS:
        raise TritiumError(f"unknown NVIDIA arch {arch!r}; the nvptx target knows {', '.join(ARCHS)} "
                           "(sm_80 and newer)")
    return arch


def arch_of_capability(major: int, minor: int) -> str:
    """The arch a device of compute capability ``major.minor`` runs (``sm_90a`` for 9.0, as Triton)."""
    arch = f"sm_{major}{minor}" + ("a" if (major, minor) in _ARCH_SPECIFIC else "")
    if arch not in ARCHS:
        raise TritiumError(f"the GPU has compute capability {major}.{minor} ({arch}), which the nvptx target "
                           f"does not support; it supports {', '.join(ARCHS)}")
    return arch


def ptx_of_cuda(version: int) -> int:
    """The newest PTX ISA a CUDA release accepts, from its version number (12040 for 12.4)."""
    major, minor = version // 1000, version % 1000 // 10
    if major >= 13:
        return 90 + minor
    if major == 12:
        return 80 + minor if minor <= 5 else {6: 85, 7: 86, 8: 87}.get(minor, 88)
    return 70 + min(minor, 8) if major == 11 else 60


def cuda_of_release(text: str) -> int | None:
    """The CUDA version number in a tool's ``--version`` output (``release 12.9`` -> 12090)."""
    m = re.search(r"release (\d+)\.(\d+)", text)
    return int(m[1]) * 1000 + int(m[2]) * 10 if m else None


def ptx_version(arch: str, driver_cuda: int | None, assembler_cuda: int | None) -> int:
    """The PTX ISA version for ``arch``: the newest LLVM emits that the driver (its CUDA version,
    None without one) and ptxas (None when the driver assembles) accept."""
    cap, limits = LLVM_MAX_PTX, []
    for who, cuda in (("the installed driver", driver_cuda), ("ptxas", assembler_cuda)):
        if cuda is not None and ptx_of_cuda(cuda) < cap:
            cap = ptx_of_cuda(cuda)
            limits.append(f"{who} (CUDA {cuda // 1000}.{cuda % 1000 // 10}) accepts PTX up to {cap // 10}.{cap % 10}")
    need = ARCHS[check_arch(arch)]
    if need > cap:
        raise TritiumError(f"{arch} needs PTX ISA {need // 10}.{need % 10}, but {'; '.join(limits)}: "
                           "update the NVIDIA driver or the CUDA toolkit, or compile for an older arch")
    return cap
