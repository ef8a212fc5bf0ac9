"""nvptx's tools as Triton's knobs see them."""

from __future__ import annotations

import os

from tritium_nvptx import toolchain


def test_the_ptxas_knob_is_the_ptxas_cubins_are_assembled_with(monkeypatch, tmp_path):
    """``tritium.knobs.nvidia.ptxas`` (Triton's knob): the tool found, with its CUDA release; set
    to a path, it is the one the compiler uses (``TRITIUM_PTXAS``)."""
    from tritium import knobs

    monkeypatch.delenv(toolchain.PTXAS_ENV, raising=False)
    found = toolchain.ptxas_path()
    tool = knobs.nvidia.ptxas
    assert (tool is None) == (found is None)
    if tool is not None:
        assert tool.path == found and tool.version.count(".") == 1
    with knobs.nvidia.scope():
        knobs.nvidia.ptxas = str(tmp_path / "ptxas")
        assert toolchain.ptxas_path() == str(tmp_path / "ptxas") == knobs.nvidia.ptxas.path
    assert toolchain.PTXAS_ENV not in os.environ and toolchain.ptxas_path() == found
