"""``--compile-only`` (every case compiled, none run, on a target that cannot run here) and the
Markdown report, on the cpu target and on a cpu target without a device."""

from __future__ import annotations

import datetime
import json
import os
import re
from types import SimpleNamespace

import numpy as np
import pytest
from tritium import plugins

from tritium_conformance import CASES, CompileOnlyDevice, Result, compile_case
from tritium_conformance import report as md
from tritium_conformance.cli import main

pytestmark = pytest.mark.skipif("cpu" not in plugins.targets(), reason="the cpu target is not installed")


def _no_device_target(fail_kernel: str = ""):
    """The cpu target as a GPU target looks on a machine without a GPU: unavailable, no driver;
    its binary stage refuses ``fail_kernel``."""
    cpu = type(plugins.targets()["cpu"])

    class NoDevice(cpu):
        name = "cpu-nodevice"

        def availability(self):
            return False, "no device in this test"

        @property
        def driver(self):
            raise AssertionError("compile-only must not touch the driver")

        def add_stages(self, stages, options):
            super().add_stages(stages, options)
            obj = stages["obj"]

            def binary(asm, ctx):
                if ctx.metadata["name"] == fail_kernel:
                    raise RuntimeError(f"the binary stage refuses {fail_kernel}")
                return obj(asm, ctx)
            stages["obj"] = binary

    return NoDevice()


@pytest.fixture
def no_device(monkeypatch, tmp_path):
    """Registers ``cpu-nodevice`` (its binary stage refuses softmax_kernel) and, when asked,
    declared gaps for it: in this process only, so the tests run it with ``-n 0``."""
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    gaps: dict[str, str] = {}
    target = _no_device_target("softmax_kernel")
    plugins.register(SimpleNamespace(
        tritium_targets=plugins.hookimpl(lambda: [target]),
        tritium_conformance_expectations=plugins.hookimpl(
            lambda target: gaps if target.name == "cpu-nodevice" else {})), name="no-device-test")
    yield gaps
    plugins.reset()


def test_compile_only_compiles_for_a_target_that_cannot_run_here(no_device, capsys):
    assert main(["--target", "cpu-nodevice", "-n", "0", "-k", "vector_add-n17-block32"]) == 2  # cannot run here
    assert "not available: no device in this test" in capsys.readouterr().err
    assert main(["--target", "cpu-nodevice", "-n", "0", "--compile-only", "-k", "vector_add-n17",
                 "-k", "loop-while"]) == 0
    out = capsys.readouterr().out
    assert "compile only (cannot run here: no device in this test)" in out
    assert "3 cases: 3 compiled, 0 failed to compile, 0 crashed, 0 timed out, 0 xfailed" in out
    assert re.search(r"COMPILED vector_add-n17-block32 .*ms", out)


def test_workers_that_cannot_start_are_a_usage_error_not_crashes(no_device, capsys):
    assert main(["--target", "cpu-nodevice", "--compile-only", "-k", "vector_add-n17-block32"]) == 2
    err = capsys.readouterr().err
    assert "tritium-conformance: a worker process (tritium_conformance.isolated --target cpu-nodevice " in err
    assert "did not start: exited with status 1; stderr: " in err and "unknown target 'cpu-nodevice'" in err


def test_a_compile_error_fails_the_case_and_the_run(no_device, capsys):
    assert main(["--target", "cpu-nodevice", "-n", "0", "--compile-only", "-k", "vector_add-n17-block32",
                 "-k", "softmax-1x1-"]) == 1
    out = capsys.readouterr().out
    assert "3 cases: 1 compiled, 2 failed to compile, 0 crashed, 0 timed out, 0 xfailed" in out
    assert "RuntimeError: the binary stage refuses softmax_kernel" in out


def test_a_declared_gap_that_fails_to_compile_is_xfail(no_device, capsys):
    no_device["softmax-*"] = "softmax is a known gap"
    assert main(["--target", "cpu-nodevice", "-n", "0", "--compile-only", "-k", "vector_add-n17-block32",
                 "-k", "softmax-1x1-"]) == 0
    assert "3 cases: 1 compiled, 0 failed to compile, 0 crashed, 0 timed out, 2 xfailed" in capsys.readouterr().out


def test_compile_case_runs_nothing_and_specialises_like_a_launch():
    dev = CompileOnlyDevice(plugins.targets()["cpu"])
    a = dev.to_device(np.arange(5, dtype=np.float32))
    assert a.__array_interface__["data"][0] % 256 == 0 and a.tolist() == [0, 1, 2, 3, 4]
    assert dev.empty((3, 2), np.int16).shape == (3, 2)
    first = compile_case(CASES["vector_add-n4096-block32"], dev)
    again = compile_case(CASES["vector_add-n4096-block32"], dev)
    assert (first.status, again.status) == ("compiled", "compiled")
    assert again.message == "add_kernel (earlier case)"
    assert first.message in ("add_kernel (compiled)", "add_kernel (disk cache)")
    # the aligned pointers and n = 4096 are divisible by 16, as in a launch on device memory
    from tritium_conformance.kernels import add_kernel

    tile = [k.asm["tile"] for k in add_kernel.kernels.values() if k.target is dev.target]
    assert any("%arg0: !tile.ptr<f32, 1 : i32> {tile.divisibility = 16 : i32}" in t
               and "%arg3: i32 {tile.divisibility = 16 : i32}" in t for t in tile)


def test_interpreter_has_nothing_to_compile(capsys):
    if "interpreter" not in plugins.targets():
        pytest.skip("the interpreter is not installed")
    assert main(["--target", "interpreter", "--compile-only", "-k", "vector_add-n17-block32"]) == 2
    assert "runs kernels without compiling them" in capsys.readouterr().err


def test_report_on_the_cpu_target(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["--target", "cpu", "-k", "vector_add-n17-block32", "-k", "grid-2d-tiles", "-q",
                 "--report", str(tmp_path / "results") + "/"]) == 0
    assert sorted(p.suffix for p in (tmp_path / "results").iterdir()) == [".json", ".md"]
    (path,) = (tmp_path / "results").glob("*.md")
    assert path.name.startswith("cpu-")
    assert json.loads(path.with_suffix(".json").read_text())["results"][0]["case_id"] == "vector_add-n17-block32"
    assert f"report: {path}" in capsys.readouterr().out
    text = path.read_text()
    assert text.startswith("# tritium conformance: target `cpu`\n")
    assert "- Device: host: " in text
    assert re.search(r"- Date: \d{4}-\d\d-\d\d \d\d:\d\d UTC", text)
    assert re.search(r"- Versions: python \d+\.\d+\.\d+, tritium [\d.]+( \(commit [0-9a-f]{12}\))?,.* llvmlite [\d.]+",
                     text)
    assert "- Result: 2 cases: 2 passed, 0 failed, 0 crashed, 0 timed out, 0 xfailed" in text
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert [r.split(" | ")[:2] for r in rows] == [["| `vector_add-n17-block32`", "pass"],
                                                  ["| `grid-2d-tiles`", "pass"]]
    assert all(re.match(r"\| `[^`]+` \| pass \| \d", r) for r in rows)  # a max error for each


def test_markdown_names_the_device_and_escapes_table_cells():
    class Gpu:
        name = "fakegpu"

        def device_description(self):
            return "Fake GPU X1 (sm_00), driver CUDA 99.0"

    results = [Result("a-case", "pass", 0.0), Result("b-case", "fail", 0.5, "x | y\nz", 0.25),
               Result("c-case", "xfail", None, "declared gap: slow")]
    when = datetime.datetime(2026, 1, 2, 3, 4, tzinfo=datetime.timezone.utc)
    text = md.markdown(Gpu(), "fake-dist 1.0", results, "3 cases", False, "cmd", now=when)
    assert "- Device: Fake GPU X1 (sm_00), driver CUDA 99.0\n- Date: 2026-01-02 03:04 UTC\n" in text
    assert "target fakegpu fake-dist 1.0" in text
    assert "- Command: `cmd`\n- Result: 3 cases\n" in text
    assert "| `b-case` | fail | 0.5 | 250.0 | x \\| y z |" in text
    assert "| `c-case` | xfail |  | 0.0 | declared gap: slow |" in text
    assert md.default_name(Gpu()) == "fakegpu-fake-gpu-x1-sm-00.md"  # the driver is not in the name


def test_written_reports_name_files_relative_to_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    where = os.path.join(str(tmp_path), "conformance", "cases_x.py")
    results = [Result("a-case", "xfail", None, f"declared gap: at {where}:25: not here")]
    written = md.write("out/", SimpleNamespace(name="t", device_description=lambda: "d"), "p", results, "1 case",
                       False)
    for text in (open(written).read(), open(os.path.splitext(written)[0] + ".json").read()):
        assert "at conformance/cases_x.py:25: not here" in text and str(tmp_path) not in text


def test_the_report_counts_outcomes_by_feature():
    results = [Result("a-x", "pass", 0.0), Result("a-y-1", "fail", 1.0), Result("b-z", "xfail", None),
               Result("b-w", "crash", None)]
    assert md.feature_table(results) == [
        "| feature | pass | fail | crash | xfail | cases |", "|---|---|---|---|---|---|",
        "| a | 1 | 1 |  |  | 2 |", "| b |  |  | 1 | 1 | 2 |", "| **all** | 1 | 1 | 1 | 1 | 4 |"]
    text = md.markdown(SimpleNamespace(name="t", device_description=lambda: "d"), "p", results, "4 cases", False)
    assert "## By feature\n\n| feature | pass |" in text and "\n## Cases\n\n| case | status |" in text
