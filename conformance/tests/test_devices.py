"""One worker per device: with several devices of a target, worker k runs on device k modulo their
count, and results and reports name the worker and device of each case (a pretend two-device target
from multidevice_cases.py; kernels run on the host)."""

from __future__ import annotations

import json
import os
import sys

import pytest
from tritium import plugins

from tritium_conformance import CASES
from tritium_conformance.cli import main
from tritium_conformance.pytest_plugin import pinned_device

pytestmark = pytest.mark.skipif("cpu" not in plugins.targets(), reason="the cpu target is not installed")

FILE = os.path.join(os.path.dirname(__file__), "multidevice_cases.py")


@pytest.fixture(autouse=True)
def registry():
    """The cases and the pretend target that --cases registers are forgotten after each test."""
    before, modules = dict(CASES), set(sys.modules)
    yield
    CASES.clear()
    CASES.update(before)
    for name in set(sys.modules) - modules:
        del sys.modules[name]
    plugins.reset()


def _run(tmp_path, *args: str) -> tuple[int, dict]:
    path = tmp_path / "out.json"
    code = main(["--target", "fake-two-devices", "--cases", FILE, "--json", str(path), "-q", *args])
    return code, json.loads(path.read_text())


@pytest.mark.parametrize("workers", [2, 3])
def test_each_worker_is_pinned_to_one_device_and_the_results_say_which(tmp_path, workers):
    code, out = _run(tmp_path, "-k", "devices-add", "-k", "devices-gap", "-n", str(workers),
                     "--report", str(tmp_path / "report.md"))
    assert code == 0
    results = out["results"]
    assert {r["case_id"]: r["status"] for r in results} == {
        "devices-add-n3": "pass", "devices-add-n7": "pass", "devices-add-n11": "pass", "devices-add-n19": "pass",
        "devices-gap-fails": "xfail", "devices-gap-passes": "xpass"}
    for r in results:  # worker k ran on device k % 2, and the device describes itself
        assert r["device"] == f"{r['worker'] % 2}: fake GPU {r['worker'] % 2}"
    used = {r["worker"] for r in results}
    assert used <= set(range(workers)) and len(used) >= 2  # every lane takes a batch before its worker starts
    assert set(out["devices"]) <= {"0: fake GPU 0", "1: fake GPU 1"}
    assert sorted(w for ws in out["devices"].values() for w in ws) == sorted(used)
    report = (tmp_path / "report.md").read_text()
    assert "- Devices used: 0: fake GPU 0 (worker" in report and "1: fake GPU 1 (worker" in report
    row = next(line for line in report.splitlines() if line.startswith("| `devices-add-n7` |"))
    w = next(r["worker"] for r in results if r["case_id"] == "devices-add-n7")
    assert row.endswith(f"| worker {w}, device {w % 2} |")


def test_a_crash_names_the_device_its_worker_was_pinned_to(tmp_path):
    code, out = _run(tmp_path, "-k", "devices-abort", "-n", "2")
    assert code == 1
    (r,) = out["results"]
    assert r["status"] == "crash" and r["message"].startswith("killed by SIGABRT")
    assert r["worker"] == 0 and r["device"] == "0"  # it died before answering: the lane's device


def test_in_process_runs_on_the_current_device(tmp_path):
    code, out = _run(tmp_path, "-k", "devices-add-n3", "-n", "0")
    assert code == 0
    (r,) = out["results"]
    assert r["worker"] is None and r["device"] == "0: fake GPU 0"


def test_xdist_workers_are_spread_over_the_devices():
    assert [pinned_device(k, 2) for k in range(5)] == [0, 1, 0, 1, 0]
    assert pinned_device(3, 1) == 0 and pinned_device(None, 4) is None
