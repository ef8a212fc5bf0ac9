"""Every conformance case compiles for each installed target that cannot run here (a GPU target on
a machine without a GPU, as in CI): through the target's binary stage, running nothing. What
``python -m tritium_conformance --target NAME --compile-only`` reports, one test per case."""

import functools

import pytest
from tritium import plugins
from tritium.errors import TritiumError

from tritium_conformance import CASES, CompileOnlyDevice, compile_case, declared_gap


def _compile_only_targets() -> list[str]:
    try:
        installed = plugins.targets()
    except TritiumError:  # duplicate target names: test_plugins reports them
        return []
    return [name for name, t in installed.items() if t.compiles and not plugins.availability(t)[0]]


@functools.cache
def _device(name: str):
    target = plugins.targets()[name]
    return CompileOnlyDevice(target), plugins.conformance_expectations(target)


@pytest.mark.parametrize("case_id", list(CASES))
@pytest.mark.parametrize("target", _compile_only_targets())
def test_case_compiles(target, case_id):
    dev, expectations = _device(target)
    gap = declared_gap(case_id, expectations)
    result = compile_case(CASES[case_id], dev, gap)
    assert result.status in (("compiled", "xfail") if gap else ("compiled",)), \
        f"{case_id} does not compile for {target}: {result.message}"
