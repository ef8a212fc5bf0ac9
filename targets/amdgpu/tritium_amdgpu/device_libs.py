"""ROCm's device libraries: OCML (math) and OCKL (printf through the HIP runtime's hostcall buffer),
as LLVM bitcode, linked into the kernels that call them, as HIP and Triton's AMD backend do.

Looked for in this order: ``TRITIUM_ROCM_DEVICE_LIBS`` (a folder holding ``ocml.bc`` and
``ockl.bc``); a ROCm install (``$ROCM_PATH``, ``/opt/rocm``: ``amdgcn/bitcode``); Debian's and
Ubuntu's ``rocm-device-libs`` package; an installed Triton wheel, which ships both for its AMD
backend. Where none is found, kernels still compile with what the AMDGPU back end computes itself,
and a kernel that needs more fails at its line, saying how to get them.

The libraries read a few constants the compiler defines (ROCm's ``oclc_*`` control libraries hold
them for clang): the ISA version, the wavefront size, the code object ABI, and the math modes.
tritium asks for IEEE math: no unsafe or finite-only shortcuts, correctly rounded fp32 sqrt,
denormals kept.
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import os
from typing import Any

from .toolchain import INLINE_ASSEMBLY

ENV = "TRITIUM_ROCM_DEVICE_LIBS"
LIBRARIES = ("ocml.bc", "ockl.bc")
#: what to do where none is found, for messages
HOW_TO_GET = (f"install ROCm, Debian's or Ubuntu's rocm-device-libs package, or pip's triton wheel, or "
              f"set {ENV} to a folder holding {' and '.join(LIBRARIES)}")
#: the code object ABI the kernels are built for (``hooks.CODE_OBJECT_VERSION``)
ABI_VERSION = 500


def _candidates(given: str) -> list[str]:
    if given:
        return [given]
    roots = [os.environ.get("ROCM_PATH", ""), "/opt/rocm"]
    folders = [os.path.join(r, "amdgcn", "bitcode") for r in roots if r]
    folders += sorted(glob.glob("/usr/lib/*/amdgcn/bitcode")) + sorted(glob.glob("/usr/lib/llvm-*/lib/clang/*/lib/amdgcn/bitcode"))
    spec = importlib.util.find_spec("triton")  # found, not imported
    for location in (spec.submodule_search_locations or []) if spec else []:
        folders.append(os.path.join(location, "backends", "amd", "lib"))
    return folders


def folder() -> str | None:
    """The folder holding OCML and OCKL, or None. ``TRITIUM_ROCM_DEVICE_LIBS``, when set, is the only
    place looked in: a wrong one is not silently replaced by another."""
    return _folder(os.environ.get(ENV, "").strip())


@functools.cache
def _folder(given: str) -> str | None:
    for candidate in _candidates(given):
        if all(os.path.isfile(os.path.join(candidate, lib)) for lib in LIBRARIES):
            return os.path.abspath(candidate)
    return None


def has_assembly() -> bool:
    """Whether the libraries found hold inline assembly that is not empty (ROCm 5's OCKL marks
    places with assembly comments), which makes the kernels calling them need an assembler."""
    where = folder()
    return where is not None and _has_assembly(where)


@functools.cache
def _has_assembly(where: str) -> bool:
    from llvmlite import binding as llvm

    for lib in LIBRARIES:
        with open(os.path.join(where, lib), "rb") as f:
            if INLINE_ASSEMBLY.search(str(llvm.parse_bitcode(f.read()))):
                return True
    return False


def isa_version(arch: str) -> int:
    """``__oclc_ISA_version`` of ``gfx<major><minor><stepping>`` (the last two are hex digits):
    gfx942 -> 9402, gfx90a -> 9010, gfx1100 -> 11000."""
    digits = arch.removeprefix("gfx")
    return int(digits[:-2]) * 1000 + int(digits[-2], 16) * 100 + int(digits[-1], 16)


def control_constants(arch: str, wave: int) -> str:
    """LLVM IR defining the constants the libraries read, for ``arch`` at ``wave`` lanes."""
    values = {"__oclc_ISA_version": ("i32", isa_version(arch)), "__oclc_ABI_version": ("i32", ABI_VERSION),
              "__oclc_wavefrontsize64": ("i8", int(wave == 64)),
              "__oclc_wavefrontsize_log2": ("i32", wave.bit_length() - 1),
              "__oclc_unsafe_math_opt": ("i8", 0), "__oclc_finite_only_opt": ("i8", 0),
              "__oclc_daz_opt": ("i8", 0), "__oclc_correctly_rounded_sqrt32": ("i8", 1)}
    return "".join(f"@{name} = addrspace(4) constant {ty} {value}\n" for name, (ty, value) in values.items())


def link(module: Any, arch: str, wave: int) -> None:
    """Link the OCML and OCKL functions ``module`` (an llvmlite ``ModuleRef``) declares into it
    (``link_bitcode``), with the control constants they read; nothing where it declares none."""
    from llvmlite import binding as llvm
    from tritium.passes.llvm_worker import link_bitcode

    wanted = [f.name for f in module.functions if f.is_declaration and f.name.startswith(("__ocml_", "__ockl_"))]
    if not wanted:
        return
    where = folder()
    if where is None:  # the hooks declare none then; a module from elsewhere may
        raise RuntimeError(f"{', '.join(wanted)} need ROCm's device libraries, which were not found: {HOW_TO_GET}")
    constants = llvm.parse_assembly(control_constants(arch, wave))
    constants.triple, constants.data_layout = module.triple, module.data_layout
    module.link_in(constants)
    for lib, prefix in zip(LIBRARIES, ("__ocml_", "__ockl_")):
        with open(os.path.join(where, lib), "rb") as f:
            link_bitcode(module, f.read(), prefix)
    for g in module.global_variables:
        if g.name.startswith(("__oclc_", "__ocml", "__ockl", "__printf")) and not g.is_declaration:
            g.linkage = "internal"
