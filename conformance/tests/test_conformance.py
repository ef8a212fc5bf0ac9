"""The conformance suite on the interpreter and on the cpu target: one test per (target, case).

A target that is not installed or cannot run here is skipped with the reason; cases the target
declares as known gaps are expected failures (xfail).
"""

import functools

import pytest
from tritium import plugins

from tritium_conformance import CASES, Device, declared_gap, run_case

TARGETS = ("interpreter", "cpu")


@functools.cache
def _device(name: str):
    """(Device, expectations) for an installed, available target, or (None, why not)."""
    installed = plugins.targets()
    if name not in installed:
        return None, f"target '{name}' is not installed"
    ok, why = plugins.availability(installed[name])
    if not ok:
        return None, f"target '{name}' is not available here: {why}"
    return Device(installed[name]), plugins.conformance_expectations(installed[name])


@pytest.mark.parametrize("case_id", list(CASES))
@pytest.mark.parametrize("target", TARGETS)
def test_case(target, case_id, request):
    dev, expectations = _device(target)
    if dev is None:
        pytest.skip(expectations)
    gap = declared_gap(case_id, expectations)
    if gap is not None:
        request.applymarker(pytest.mark.xfail(reason=gap, strict=True))  # a gap that passes is news
    result = run_case(CASES[case_id], dev)
    assert result.status == "pass", f"{case_id} on {target}: max error {result.max_error}: {result.message}"
