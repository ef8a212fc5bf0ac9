"""``ld.lld``, which links LLVM's AMDGPU object into a loadable code object (HSACO).

Looked for in this order: ``TRITIUM_LD_LLD`` (a path), ``ld.lld`` or a versioned ``ld.lld-NN`` on
``PATH`` (Debian's ``lld`` packages, ROCm's), then the ``ziglang`` pip wheel, whose zig binary
bundles LLD (``pip install tritium-amdgpu[lld]``)."""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

from tritium.errors import TritiumError

LD_ENV = "TRITIUM_LD_LLD"
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
