"""Crash isolation: cases run in worker processes, so a case that aborts, segfaults, exits or hangs
is reported as that case's crash or timeout and the run goes on (the cases in isolation_cases.py)."""

from __future__ import annotations

import json
import os
import re
import sys
from types import SimpleNamespace

import pytest
from tritium import plugins

from tritium_conformance import CASES
from tritium_conformance.cli import main

pytestmark = pytest.mark.skipif("cpu" not in plugins.targets(), reason="the cpu target is not installed")

FILE = os.path.join(os.path.dirname(__file__), "isolation_cases.py")


@pytest.fixture(autouse=True)
def registry():
    """The cases that --cases registers in this process are forgotten after each test."""
    before, modules = dict(CASES), set(sys.modules)
    yield
    CASES.clear()
    CASES.update(before)
    for name in set(sys.modules) - modules:
        del sys.modules[name]


def _run(tmp_path, *args: str, name: str = "out") -> tuple[int, dict[str, dict]]:
    path = tmp_path / f"{name}.json"
    code = main(["--target", "cpu", "--cases", FILE, "--json", str(path), *args])
    return code, {r["case_id"]: r for r in json.loads(path.read_text())["results"]}


CRASHES = ["-k", "isolation-add", "-k", "isolation-abort", "-k", "isolation-segfault", "-k", "isolation-exit",
           "-k", "isolation-prints"]


def test_a_case_that_kills_its_worker_is_a_crash_and_the_run_goes_on_with_one_or_two_workers(tmp_path, capsys):
    code, results = _run(tmp_path, *CRASHES, "--report", str(tmp_path / "report.md"), "-n", "2")
    assert code == 1
    assert {i: r["status"] for i, r in results.items()} == {
        "isolation-add-n1": "pass", "isolation-add-n5": "pass", "isolation-add-n9": "pass",
        "isolation-add-n13": "pass", "isolation-abort": "crash", "isolation-segfault": "crash",
        "isolation-exit": "crash", "isolation-prints": "pass"}
    # the end of stderr before the Python stack that faulthandler dumps, then its innermost frames
    assert re.fullmatch(r"killed by SIGABRT; stderr: LLVM ERROR: a pretended abort \| at isolation_cases.py:\d+ in "
                        r"abort \| at suite.py:\d+ in run \| at suite.py:\d+ in run_case",
                        results["isolation-abort"]["message"])
    assert re.fullmatch(r"killed by SIGSEGV; stderr: at __init__.py:\d+ in string_at \| at isolation_cases.py:\d+ in "
                        r"segfault \| at suite.py:\d+ in run", results["isolation-segfault"]["message"])
    assert results["isolation-exit"]["message"] == "exited with status 3"
    out = capsys.readouterr().out
    assert "8 cases: 5 passed, 0 failed, 3 crashed, 0 timed out, 0 xfailed" in out
    assert "CRASH  isolation-abort" in out
    report = (tmp_path / "report.md").read_text()
    assert "| `isolation-segfault` | crash |  |" in report and "3 crashed" in report
    assert "\n- Crashed or timed out: `isolation-abort` (crash), `isolation-segfault` (crash), `isolation-exit` " \
        "(crash)\n" in report
    code, alone = _run(tmp_path, *CRASHES, "-n", "1", name="one-worker")  # the same results with one worker
    assert code == 1 and list(alone) == list(results)
    assert [(r["status"], r["message"]) for r in alone.values()] == \
        [(r["status"], r["message"]) for r in results.values()]


def test_a_hanging_case_times_out_and_its_worker_is_replaced(tmp_path, capsys):
    code, results = _run(tmp_path, "-k", "isolation-hang", "-k", "isolation-add-n5", "--timeout", "2")
    assert code == 1
    assert results["isolation-hang"]["status"] == "timeout"
    assert results["isolation-hang"]["message"] == "no answer within 2 s; its worker was killed"
    assert results["isolation-add-n5"]["status"] == "pass"
    assert "2 cases: 1 passed, 0 failed, 0 crashed, 1 timed out" in capsys.readouterr().out


def test_a_crash_that_needs_an_earlier_case_is_still_a_crash(tmp_path):
    code, results = _run(tmp_path, "-k", "isolation-breaks", "-k", "isolation-dies")
    assert code == 1
    assert results["isolation-breaks-the-process"]["status"] == "pass"
    r = results["isolation-dies-in-a-broken-process"]
    assert r["status"] == "crash"
    assert r["message"].startswith("died after other cases in the same process (killed by SIGABRT; stderr: at "
                                   "isolation_cases.py:")
    assert r["message"].endswith("in run_case); alone it gives pass (an earlier case may have left the process broken)")


def test_the_cases_after_one_that_loses_the_device_run_in_a_fresh_worker(tmp_path):
    """Without a fresh worker, every case after it would fail (as after a device fault on a GPU)."""
    code, results = _run(tmp_path, "-k", "isolation-loses", "-k", "isolation-add")  # batches of 2
    assert code == 1
    assert [(i, r["status"]) for i, r in results.items()] == [
        ("isolation-loses-the-device", "fail"), ("isolation-add-n1", "pass"), ("isolation-add-n5", "pass"),
        ("isolation-add-n9", "pass"), ("isolation-add-n13", "pass")]
    message = results["isolation-loses-the-device"]["message"]
    assert message.startswith("RuntimeError: an illegal address (at isolation_cases.py:")
    assert message.endswith("; the device was unusable after it: the cases after it ran in a fresh worker")


@pytest.fixture
def gaps():
    declared: dict[str, str] = {}
    plugins.register(SimpleNamespace(tritium_conformance_expectations=plugins.hookimpl(
        lambda target: declared if target.name == "cpu" else {})), name="isolation-test-gaps")
    yield declared
    plugins.reset()


def test_a_declared_gap_that_crashes_is_an_expected_failure(tmp_path, gaps):
    gaps["isolation-abort"] = "aborts on purpose"
    code, results = _run(tmp_path, "-k", "isolation-abort", "-k", "isolation-add-n5")
    assert code == 0
    assert [r["status"] for r in results.values()] == ["pass", "xfail"]
    assert results["isolation-abort"]["message"].startswith(
        "declared gap: aborts on purpose; crash: killed by SIGABRT; stderr: LLVM ERROR: a pretended abort | at ")


def test_compile_only_runs_in_workers(tmp_path, capsys):
    code, results = _run(tmp_path, "--compile-only", "-k", "isolation-add", "-k", "isolation-abort", "-n", "2")
    assert code == 1
    assert [r["status"] for r in results.values()] == ["compiled"] * 4 + ["crash"]
    assert "5 cases: 4 compiled, 0 failed to compile, 1 crashed, 0 timed out, 0 xfailed" in capsys.readouterr().out


def test_a_missing_cases_file_is_a_usage_error(tmp_path, capsys):
    assert main(["--target", "cpu", "--cases", str(tmp_path / "none.py")]) == 2
    assert "none.py" in capsys.readouterr().err
