"""The amdgpu runtime side: whether kernels can run here, and why not.

Running needs ROCm's HIP runtime, reached through hip-python. Loading code objects and launching
them is not built yet, so the target is unavailable everywhere, with the reason: where HIP is
missing, what is missing; where it is there, that tritium does not launch on it yet. Compiling
needs none of this. Every operation that would touch the GPU raises the reason."""

from __future__ import annotations

import functools
from typing import Any, Mapping, Sequence

from tritium.errors import TargetError
from tritium.target import Driver


@functools.cache
def unavailable_reason() -> str:
    """Why kernels cannot run here."""
    try:
        from hip import hip
    except ImportError:
        return "no HIP runtime: hip-python is not installed (it needs ROCm's libamdhip64); kernels compile only"
    try:
        err = hip.hipInit(0)
    except RuntimeError as e:  # hip-python without ROCm: "failed to dlopen 'libamdhip64.so'"
        return f"no HIP runtime: {e}; kernels compile only"
    code = err[0] if isinstance(err, tuple) else err
    if int(code) != 0:
        return f"no HIP runtime: hipInit failed ({code}); kernels compile only"
    return "launching through HIP is not implemented in tritium-amdgpu yet; kernels compile only"


class AmdgpuDriver(Driver):
    """Raises the reason kernels cannot run here (``unavailable_reason``) on every operation."""

    def _refuse(self, what: str) -> TargetError:
        return TargetError(f"target 'amdgpu' cannot {what}: {unavailable_reason()}")

    def load(self, binary: bytes, signature: Any, metadata: Mapping[str, Any]) -> Any:
        raise self._refuse(f"load kernel '{metadata.get('name', '?')}'")

    def to_device(self, array: Any) -> Any:
        raise self._refuse("allocate device memory")

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        raise self._refuse("allocate device memory")

    def to_host(self, buffer: Any) -> Any:
        raise self._refuse("read device memory")
