"""Every conformance case compiles for a wave32 arch (gfx1100) too, and every code object it yields,
at both wave sizes, states the kernel, its arguments as HIP packs them, and register and LDS use
within the arch's limits (``conformance/tests/test_compile_only_targets.py`` compiles the suite
for the default wave64 arch, gfx942)."""

from __future__ import annotations

import functools

import pytest
from tritium import plugins
from tritium_amdgpu import code_object, toolchain
from tritium_amdgpu.arch import ARCH_ENV, ARCHS

from tritium_conformance import CASES, CompileOnlyDevice, compile_case, declared_gap

pytestmark = pytest.mark.skipif(toolchain.linker() is None, reason="no ld.lld (pip install 'tritium-amdgpu[lld]')")

#: bytes of each scalar type's kernel argument
_SIZES = {"i1": 1, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "fp16": 2, "bf16": 2, "i32": 4, "u32": 4, "fp32": 4,
          "i64": 8, "u64": 8, "fp64": 8}


@functools.cache
def _device(arch: str):
    target = plugins.targets()["amdgpu"]
    return CompileOnlyDevice(target), plugins.conformance_expectations(target)


def check_code_objects(kernels, arch: str) -> None:
    limits = ARCHS[arch]
    for k in kernels:
        (entry,) = code_object.kernels(k.asm["hsaco"])
        md = k.metadata
        assert entry[".name"] == k.name and md["wavefront_size"] == limits.wave
        types = k.signature.arg_types
        assert len(md["args"]) == len(types), (k.name, md["args"], types)
        for arg, t in zip(md["args"], types):
            assert arg["size"] == (8 if t.startswith("*") else _SIZES[t]), (k.name, arg, t)
        assert md["vgprs"] <= 512 and md["lds"] <= limits.lds and md["lds"] == md["shared"]


@pytest.mark.parametrize("case_id", list(CASES)[::7])
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_code_objects_state_what_the_loader_needs(monkeypatch, arch, case_id):
    """A seventh of the suite at each wave size: the code objects' metadata."""
    monkeypatch.setenv(ARCH_ENV, arch)
    dev, expectations = CompileOnlyDevice(plugins.targets()["amdgpu"]), {}
    gap = declared_gap(case_id, plugins.conformance_expectations(dev.target))
    result = compile_case(CASES[case_id], dev, gap)
    assert result.status in (("compiled", "xfail") if gap else ("compiled",)), result.message
    if result.status == "compiled":
        check_code_objects(dev.kernels, arch)


@pytest.mark.parametrize("case_id", list(CASES))
def test_case_compiles_for_wave32(monkeypatch, case_id):
    monkeypatch.setenv(ARCH_ENV, "gfx1100")
    dev, expectations = _device("gfx1100")
    gap = declared_gap(case_id, expectations)
    result = compile_case(CASES[case_id], dev, gap)
    assert result.status in (("compiled", "xfail") if gap else ("compiled",)), \
        f"{case_id} does not compile for gfx1100: {result.message}"
