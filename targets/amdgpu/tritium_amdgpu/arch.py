"""The AMD GPUs tritium compiles for: wavefront size and LDS (shared memory) per workgroup.

CDNA datacenter GPUs run 64-lane wavefronts, RDNA ones 32-lane wavefronts (the size LLVM's back end
uses for the arch by default). The arch comes from the ``arch`` option, else ``TRITIUM_AMDGPU_ARCH``,
else ``DEFAULT_ARCH``: compiling needs no GPU.
"""

from __future__ import annotations

import dataclasses
import os

from tritium.errors import TritiumError

#: compile for this arch when no ``arch`` option is given
ARCH_ENV = "TRITIUM_AMDGPU_ARCH"


@dataclasses.dataclass(frozen=True)
class Arch:
    name: str
    #: lanes per wavefront
    wave: int
    #: bytes of LDS one workgroup may use
    lds: int
    #: what it is, for people
    family: str
    #: the matrix instructions ``tl.dot`` runs on (``matrix``): "cdna2", "cdna3", "cdna4" (MFMA),
    #: "rdna3", "rdna4" (WMMA), or "" (FMA loops)
    matrix: str = ""

    @property
    def target_info(self) -> frozenset[str]:
        """Triton's ``tl.target_info`` predicates of the arch beside ``is_hip``: ``is_hip_cdna3``
        (gfx942), ``is_hip_cdna4`` (gfx950)."""
        return frozenset({f"is_hip_{self.matrix}"}) if self.matrix in ("cdna3", "cdna4") else frozenset()


ARCHS = {a.name: a for a in (
    Arch("gfx90a", 64, 65536, "CDNA2 (MI200)", matrix="cdna2"),
    Arch("gfx942", 64, 65536, "CDNA3 (MI300)", matrix="cdna3"),
    Arch("gfx950", 64, 163840, "CDNA4 (MI350)", matrix="cdna4"),
    Arch("gfx1100", 32, 65536, "RDNA3 (Radeon 7900)", matrix="rdna3"),
    Arch("gfx1201", 32, 65536, "RDNA4 (Radeon 9070)", matrix="rdna4"),
)}
#: what kernels compile for without an ``arch`` option or ``TRITIUM_AMDGPU_ARCH``
DEFAULT_ARCH = "gfx942"
#: threads a workgroup may have
MAX_THREADS = 1024


def check_arch(name: str) -> Arch:
    arch = ARCHS.get(name.strip())
    if arch is None:
        raise TritiumError(f"amdgpu does not know the arch '{name}'; it compiles for {', '.join(ARCHS)}")
    return arch


def chosen_arch(option: str = "") -> Arch:
    """The ``arch`` option, else ``TRITIUM_AMDGPU_ARCH``, else ``DEFAULT_ARCH``."""
    return check_arch(option or os.environ.get(ARCH_ENV, "").strip() or DEFAULT_ARCH)
