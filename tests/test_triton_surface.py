"""Triton 3.6's public surface, name by name (tests/data/triton_3_6_surface.json, read from an
installed Triton): every name of ``triton.language`` and ``triton.language.math`` and every
top-level ``triton`` name exists in tritium with the same parameters, or using it raises
``NotImplementedYet`` (and ``hasattr`` is False for it)."""

import inspect
import json
from pathlib import Path

import pytest
import tritium
import tritium.language as tl
from tritium.errors import NotImplementedYet

SURFACE = json.loads((Path(__file__).parent / "data" / "triton_3_6_surface.json").read_text())
#: names of triton.language that are Python plumbing there, not language: nothing to port
PLUMBING = {"TRITON_MAX_TENSOR_NUMEL"}


def _present_or_not_yet(module, name: str) -> bool:
    """True when ``module.name`` exists; False when using it raises NotImplementedYet."""
    try:
        getattr(module, name)
        return True
    except NotImplementedYet:
        assert not hasattr(module, name)
        return False


@pytest.mark.parametrize("name", sorted(SURFACE["language"]))
def test_every_triton_language_name_exists_with_triton_s_parameters(name):
    if not _present_or_not_yet(tl, name):
        return
    want = SURFACE["language"][name]
    obj = getattr(tl, name)
    if want is None or not callable(obj) or isinstance(obj, type) or name in PLUMBING:
        return
    got = [p for p in inspect.signature(obj).parameters if not p.startswith("_")]
    assert [p.lstrip("*") for p in want] == got, f"tl.{name}{inspect.signature(obj)}"


@pytest.mark.parametrize("name", SURFACE["math"])
def test_every_triton_math_name_exists(name):
    assert hasattr(tl.math, name)


@pytest.mark.parametrize("name", SURFACE["top"])
def test_every_top_level_triton_name_exists_or_says_not_yet(name):
    _present_or_not_yet(tritium, name)


def test_tensor_methods_are_triton_s():
    builtins_not_yet = {n for n in SURFACE["tensor_methods"] if n in tl.NOT_YET}
    missing = [n for n in SURFACE["tensor_methods"] if not hasattr(tl.tensor, n) and n not in builtins_not_yet
               and n != "store"]  # tensor.store: Triton lists its descriptors' method there (desc.store here)
    assert not missing
