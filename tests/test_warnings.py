"""Every warning tritium gives points at the user's line (the launch, the compile call, the
``run`` of a report), however deep inside tritium it was raised: never at tritium's own files."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.passes import pipeline
from tritium.runtime import cache
from tritium.testing import Benchmark, perf_report


@tritium.jit
def copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@tritium.jit
def viewed(x_ptr, out_ptr):
    offs = tl.arange(0, 16)
    tl.store(out_ptr + offs, tl.view(tl.load(x_ptr + offs), 4, 4).reshape(16))


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    """Warnings given once per process or selection give again; kernels compile again."""
    monkeypatch.setattr(cache, "_warned", False)
    monkeypatch.setattr(pipeline, "_warned_selections", set())
    copy.kernels.clear()
    viewed.kernels.clear()


def caught(launch) -> list[warnings.WarningMessage]:
    """The warnings ``launch()`` gives, after checking that each points at this file."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        launch()
    assert got, "no warning"
    for w in got:
        assert w.filename == __file__, f"{w.message} points at {w.filename}:{w.lineno}"
    return got


def arrays(target):
    x = np.arange(16, dtype=np.float32)
    return x, target.driver.to_device(x), target.driver.to_device(np.zeros(16, np.float32))


@pytest.mark.parametrize("how", ["launch", "run", "warmup"])
def test_a_dump_naming_no_stage(compiling_target, monkeypatch, tmp_path, how):
    monkeypatch.setenv("TRITIUM_DUMP", "no-such-stage")
    monkeypatch.setenv("TRITIUM_DUMP_DIR", str(tmp_path / "dump"))
    _, xd, outd = arrays(compiling_target)
    launch = {"launch": lambda: copy[(1,)](xd, outd, 16, BLOCK=16),
              "run": lambda: copy.run(xd, outd, 16, BLOCK=16, grid=(1,)),
              "warmup": lambda: copy.warmup(xd, outd, 16, BLOCK=16)}[how]
    assert "names no stage 'no-such-stage'" in str(caught(launch)[0].message)


def test_an_unusable_cache(compiling_target, monkeypatch, tmp_path):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "file"))
    x, xd, outd = arrays(compiling_target)
    (w,) = caught(lambda: copy[(1,)](xd, outd, 16, BLOCK=16))
    assert isinstance(w.message, cache.CacheWarning)
    np.testing.assert_array_equal(compiling_target.driver.to_host(outd), x)


def test_an_override_naming_no_stage(compiling_target, monkeypatch, tmp_path):
    (tmp_path / "copy.no-such-stage.mlir").write_text("")
    monkeypatch.setenv("TRITIUM_OVERRIDE_DIR", str(tmp_path))
    (w,) = caught(lambda: tritium.compile(copy, signature="*fp32, *fp32, i32", constants={"BLOCK": 16}))
    assert "names no stage of kernel 'copy'" in str(w.message)


def test_an_autotune_config_that_does_not_compile(target):
    kernel = tritium.autotune([tritium.Config({"BLOCK": 3}), tritium.Config({"BLOCK": 16})], key=["n"],
                              do_bench=lambda fn, quantiles: (fn(), [1.0] * len(quantiles))[1])(copy)
    _, xd, outd = arrays(target)
    (w,) = caught(lambda: kernel[(1,)](xd, outd, 16))
    assert "does not compile or load with config BLOCK: 3" in str(w.message)


def test_a_deprecated_builtin(target):
    _, xd, outd = arrays(target)
    for w in caught(lambda: viewed[(1,)](xd, outd)):  # the launch, or the kernel's line where it runs as Python
        assert "view is deprecated" in str(w.message)


def test_a_plot_without_matplotlib(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as where matplotlib is not installed
    report = perf_report(Benchmark(["n"], [1, 2], "p", ["a"], ["A"], "plot", {}))(lambda n, p: float(n))
    assert "matplotlib is not installed" in str(caught(lambda: report.run(save_path=str(tmp_path)))[0].message)


def test_with_no_user_frame_the_warning_points_at_tritium(monkeypatch):
    import threading

    monkeypatch.setenv("TRITIUM_DUMP", "no-such-stage")
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        worker = threading.Thread(target=pipeline.check_dump_selection, args=(["tile"],))  # as a compile thread
        worker.start()
        worker.join()
    (w,) = got
    assert w.filename == pipeline.__file__
