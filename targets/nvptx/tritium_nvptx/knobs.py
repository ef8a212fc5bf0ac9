"""nvptx's section of ``tritium.knobs``: ``knobs.nvidia.ptxas``, the ptxas cubins are assembled
with (Triton's ``knobs.nvidia.ptxas``: its ``path`` and CUDA ``version``, "12.9"). Setting it to a
path sets ``TRITIUM_PTXAS``, which the compiler reads (``toolchain.ptxas_path``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from tritium.knobs import Knob, base_knobs

from . import toolchain


@dataclasses.dataclass(frozen=True)
class NvidiaTool:
    path: str
    #: the CUDA release it belongs to, "12.9"
    version: str


def tool(path: str | None) -> NvidiaTool | None:
    if not path:
        return None
    release = toolchain.ptxas_cuda_version(path)
    return NvidiaTool(path, f"{release // 1000}.{release % 1000 // 10}" if release else "")


class _Ptxas(Knob):
    def get(self) -> NvidiaTool | None:
        return tool(toolchain.ptxas_path())

    def to_env(self, value: Any) -> str | None:
        return value.path if isinstance(value, NvidiaTool) else value

    def transform(self, value: Any) -> NvidiaTool | None:
        return value if isinstance(value, NvidiaTool) else tool(value)


class nvidia_knobs(base_knobs):  # noqa: N801  (Triton's name)
    ptxas = _Ptxas(toolchain.PTXAS_ENV)
