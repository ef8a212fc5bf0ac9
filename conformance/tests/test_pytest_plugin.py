"""``pytest --pyargs tritium_conformance --tritium-target NAME``: every case a test, declared gaps
strict xfails, crashes isolated, xdist workers pinned one per device, and the report (run in a
subprocess pytest, with the pretend two-device target of multidevice_cases.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from tritium import plugins

pytestmark = pytest.mark.skipif("cpu" not in plugins.targets(), reason="the cpu target is not installed")

FILE = os.path.join(os.path.dirname(__file__), "multidevice_cases.py")


def _pytest(tmp_path, *args: str) -> tuple[int, str]:
    # not this run's xdist worker: the plugin would take the inner run for worker K, on device K % 2
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--pyargs", "tritium_conformance",
                           "-rA", *args], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    return proc.returncode, proc.stdout + proc.stderr


def _outcomes(text: str) -> dict[str, str]:
    """Case id -> PASSED / FAILED / XFAIL / ... from pytest's -rA summary."""
    return {m[2]: m[1] for m in re.finditer(r"^(PASSED|FAILED|XFAIL|XPASS|ERROR)\S* \S*::(\S+)", text, re.M)}


def test_every_case_is_a_test_gaps_are_strict_xfails_and_a_crash_fails_only_its_case(tmp_path):
    code, text = _pytest(tmp_path, "--tritium-target", "fake-two-devices", "--tritium-cases", FILE, "-k", "devices-")
    assert code == 1, text
    assert _outcomes(text) == {
        "devices-add-n3": "PASSED", "devices-add-n7": "PASSED", "devices-add-n11": "PASSED",
        "devices-add-n19": "PASSED", "devices-gap-fails": "XFAIL", "devices-gap-passes": "FAILED",
        "devices-abort": "FAILED"}, text
    assert "[XPASS(strict)] declared gap: a gap that was fixed" in text
    assert re.search(r"devices-abort: crash on 0: killed by SIGABRT; stderr: at multidevice_cases.py:\d+ in abort",
                     text)
    assert "declared gap: a known gap" in text


def test_xdist_pins_one_worker_per_device_and_the_report_names_them(tmp_path):
    pytest.importorskip("xdist")
    code, text = _pytest(tmp_path, "--tritium-target", "fake-two-devices", "--tritium-cases", FILE, "-k",
                         "devices-add or devices-gap-fails", "-n", "2", "--tritium-report", str(tmp_path / "rep"))
    assert code == 0, text
    (md,) = (tmp_path / "rep").glob("*.md")
    out = json.loads(md.with_suffix(".json").read_text())
    results = out["results"]
    assert sorted(r["case_id"] for r in results) == sorted(
        ["devices-add-n3", "devices-add-n7", "devices-add-n11", "devices-add-n19", "devices-gap-fails"])
    for r in results:  # xdist worker gwK runs on device K % 2
        assert r["device"] == f"{r['worker'] % 2}: fake GPU {r['worker'] % 2}"
    assert "- Devices used: " in md.read_text() and "| worker " in md.read_text()


def test_in_process_without_isolation(tmp_path):
    code, text = _pytest(tmp_path, "--tritium-target", "fake-two-devices", "--tritium-cases", FILE,
                         "--tritium-in-process", "-k", "devices-add-n3 or devices-gap")
    assert code == 1, text
    assert _outcomes(text) == {"devices-add-n3": "PASSED", "devices-gap-fails": "XFAIL",
                               "devices-gap-passes": "FAILED"}, text


def test_compile_only_compiles_for_a_target_that_cannot_run_here(tmp_path):
    if "nvptx" not in plugins.targets():
        pytest.skip("the nvptx target is not installed")
    code, text = _pytest(tmp_path, "--tritium-target", "nvptx", "--tritium-compile-only", "-k", "vector_add-n17-")
    assert code == 0, text
    assert _outcomes(text) == {"vector_add-n17-block32": "PASSED", "vector_add-n17-block1024": "PASSED"}


def test_an_unknown_target_is_one_usage_error(tmp_path):
    code, text = _pytest(tmp_path, "--tritium-target", "no-such-target", "-k", "vector_add-n1-")
    assert code != 0
    assert "tritium-conformance: unknown target 'no-such-target'" in text
