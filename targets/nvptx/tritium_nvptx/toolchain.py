"""Where NVIDIA's tools are: ptxas (``TRITIUM_PTXAS``, else as libdevice) and libdevice from the
``nvidia-cuda-nvcc-cu12`` pip wheel (found through ``cuda.pathfinder``), ``PATH``, or a CUDA install
(``CUDA_HOME``, ``CUDA_PATH``, ``/usr/local/cuda``). Both are optional: without ptxas the driver JIT-compiles PTX; libdevice is
needed only by kernels calling math functions that LLVM cannot lower itself."""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil

from tritium.errors import TritiumError
from tritium.runtime.cache import Cache, cache_key

from .arch import cuda_of_release

#: what to install when a tool is missing
WHEEL = "nvidia-cuda-nvcc-cu12"


def _cuda_homes() -> list[str]:
    homes = [os.environ.get(v, "") for v in ("CUDA_HOME", "CUDA_PATH")]
    return [h for h in homes if h] + ["/usr/local/cuda"]


def _in_wheel(*parts: str) -> str | None:
    """A file of the installed ``nvidia-cuda-nvcc-cu12`` wheel (found without importing
    ``cuda.pathfinder``, which costs tens of milliseconds on the path of a cache hit)."""
    try:
        spec = importlib.util.find_spec("nvidia.cuda_nvcc")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(folder, *parts)
        if os.path.isfile(path):
            return path
    return None


def _pathfinder(function: str, name: str) -> str | None:
    try:
        import cuda.pathfinder as pathfinder

        return getattr(pathfinder, function)(name)
    except Exception:  # an older cuda-pathfinder without the function, or nothing found
        return None


#: the ptxas to use, where given (``tritium.knobs.nvidia.ptxas`` sets it)
PTXAS_ENV = "TRITIUM_PTXAS"


def ptxas_path() -> str | None:
    """The ptxas to assemble cubins with: ``TRITIUM_PTXAS``, else the pip wheel's, else one on
    ``PATH`` or in a CUDA install; None where there is none (the driver's JIT compiles the PTX then)."""
    return os.environ.get(PTXAS_ENV, "").strip() or _found_ptxas()


@functools.cache
def _found_ptxas() -> str | None:
    found = _in_wheel("bin", "ptxas") or shutil.which("ptxas")
    if found:
        return found
    for home in _cuda_homes():
        path = os.path.join(home, "bin", "ptxas")
        if os.access(path, os.X_OK):
            return path
    return _pathfinder("find_nvidia_binary_utility", "ptxas")  # last: importing it takes tens of ms


@functools.cache
def ptxas_cuda_version(path: str) -> int | None:
    """The CUDA release of the ptxas at ``path`` (12090 for 12.9), from ``ptxas --version``; kept as
    an entry of the kernel cache keyed by the binary's path, size and time, since the release is part of
    every cache key and a first launch with a warm cache should not start a process."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    cache = Cache()
    key = cache_key({"ptxas --version": path, "size": st.st_size, "mtime_ns": st.st_mtime_ns})
    known = cache.get(key)
    if known is not None:
        return known.metadata.get("cuda")
    import subprocess

    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    version = cuda_of_release(out)
    cache.put(key, b"", {"cuda": version}, name="ptxas --version")  # a failed write only asks again next time
    return version


@functools.cache
def libdevice_path() -> str | None:
    """``libdevice.10.bc`` from the pip wheel or a CUDA install, or None."""
    found = _in_wheel("nvvm", "libdevice", "libdevice.10.bc") or _pathfinder("find_bitcode_lib", "device")
    if found:
        return found
    for home in _cuda_homes():
        path = os.path.join(home, "nvvm", "libdevice", "libdevice.10.bc")
        if os.path.isfile(path):
            return path
    return None


def require_libdevice(functions: list[str]) -> str:
    """The libdevice path, or a TritiumError saying which functions need it and how to get it."""
    path = libdevice_path()
    if path is None:
        raise TritiumError(f"the kernel calls {', '.join(sorted(functions))}, which the nvptx target takes from "
                           f"NVIDIA's libdevice, and none was found: pip install {WHEEL} (or "
                           "pip install 'tritium-nvptx[ptxas]'), or set CUDA_HOME to a CUDA installation")
    return path
