"""``ld.lld``, which links LLVM's AMDGPU object into a loadable code object (HSACO), and the
assembler for the kernels whose object llvmlite cannot emit.

``ld.lld`` is looked for in this order: ``TRITIUM_LD_LLD`` (a path), ``ld.lld`` or a versioned
``ld.lld-NN`` on ``PATH`` (Debian's ``lld`` packages, ROCm's), then the ``ziglang`` pip wheel, whose
zig binary bundles LLD (``pip install tritium-amdgpu[lld]``).

llvmlite's LLVM has no AMDGPU assembly parser, so it cannot emit the object of a module holding
inline assembly (``tl.inline_asm_elementwise``; older ROCm device libraries mark places with
assembly comments). Those kernels are assembled from their ``amdgcn`` text by the clang inside the
``ziglang`` wheel, or an ``llvm-mc-NN`` on ``PATH`` as new as llvmlite's LLVM."""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tritium.errors import TritiumError

LD_ENV = "TRITIUM_LD_LLD"
#: LLVM IR inline assembly with an instruction or comment in it (an empty one needs no assembler)
INLINE_ASSEMBLY = re.compile(r'\basm\s+(?:sideeffect\s+)?(?:alignstack\s+)?(?:inteldialect\s+)?"[^"]')
#: versioned names Debian and Ubuntu install LLD under
_VERSIONED = [f"ld.lld-{v}" for v in range(30, 14, -1)]


@functools.cache
def linker() -> tuple[str, ...] | None:
    """The command that runs ``ld.lld`` (its arguments follow), or None."""
    given = os.environ.get(LD_ENV, "").strip()
    if given:
        return (given,)
    for name in ("ld.lld", *_VERSIONED):
        path = shutil.which(name)
        if path:
            return (path,)
    if importlib.util.find_spec("ziglang") is not None:
        return (sys.executable, "-m", "ziglang", "ld.lld")
    return None


@functools.cache
def assembler() -> tuple[str, ...] | None:
    """The command that assembles AMDGPU assembly (``-mcpu=`` and files follow), or None. It must
    read what llvmlite's LLVM prints: the clang of the ``ziglang`` wheel, else a versioned
    ``llvm-mc-NN`` at least as new as that LLVM."""
    if importlib.util.find_spec("ziglang") is not None:
        return (sys.executable, "-m", "ziglang", "clang", "-target", "amdgcn-amd-amdhsa", "-c", "-x", "assembler")
    from llvmlite import binding as llvm

    for version in range(30, llvm.llvm_version_info[0] - 1, -1):
        path = shutil.which(f"llvm-mc-{version}")
        if path:
            return (path, "-triple=amdgcn-amd-amdhsa", "-filetype=obj")
    return None


def assemble(assembly: str, arch: str, kernel: str) -> bytes:
    """The relocatable object of ``amdgcn`` assembly text for ``arch``."""
    command = assembler()
    if command is None:
        raise TritiumError(f"kernel {kernel} holds inline assembly, which amdgpu assembles with the clang of the "
                           "ziglang wheel or an llvm-mc as new as llvmlite's LLVM, and neither was found: pip "
                           "install 'tritium-amdgpu[lld]'")
    with tempfile.TemporaryDirectory(prefix="tritium-amdgpu-") as tmp:
        src, out = os.path.join(tmp, "kernel.s"), os.path.join(tmp, "kernel.o")
        with open(src, "w") as f:
            f.write(assembly)
        run = subprocess.run([*command, f"-mcpu={arch}", "-o", out, src], capture_output=True, text=True)
        if run.returncode != 0:
            raise TritiumError(f"kernel {kernel}: the assembler ({' '.join(command)}) refused its assembly:\n"
                               f"{run.stderr.strip() or run.stdout.strip()}")
        with open(out, "rb") as f:
            return f.read()


def link(obj: bytes, kernel: str) -> bytes:
    """The code object of the relocatable AMDGPU object ``obj``: ``ld.lld -shared``."""
    command = linker()
    if command is None:
        raise TritiumError(f"kernel {kernel}: amdgpu needs ld.lld to link its code object, and none was found; "
                           "install one (pip install 'tritium-amdgpu[lld]', or Debian's lld package) or name it in "
                           f"{LD_ENV}")
    with tempfile.TemporaryDirectory(prefix="tritium-amdgpu-") as tmp:
        src, out = os.path.join(tmp, "kernel.o"), os.path.join(tmp, "kernel.hsaco")
        with open(src, "wb") as f:
            f.write(obj)
        run = subprocess.run([*command, "-shared", "--no-undefined", "-o", out, src], capture_output=True, text=True)
        if run.returncode != 0:
            raise TritiumError(f"kernel {kernel}: ld.lld ({' '.join(command)}) could not link the code object:\n"
                               f"{run.stderr.strip() or run.stdout.strip()}")
        with open(out, "rb") as f:
            return f.read()
