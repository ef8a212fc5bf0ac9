"""``tritium.testing``: ``do_bench`` (Triton's signature, quantiles and return modes) and
``perf_report`` / ``Benchmark`` (table, CSV, optional matplotlib plot)."""

from __future__ import annotations

import csv
import sys

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.errors import TritiumError
from tritium.testing import Benchmark, do_bench, perf_report, summarize


def test_do_bench_synchronises_through_the_target_driver(target, monkeypatch):
    """Without device timing (the host clock), each timed call is waited for."""
    syncs, calls = [], []
    monkeypatch.setattr(target.driver, "synchronize", lambda: syncs.append(len(calls)))
    monkeypatch.setattr(target.driver, "timer", lambda: None)
    times = do_bench(lambda: calls.append(1), warmup=0.1, rep=0.5, return_mode="all")
    assert isinstance(times, list) and times and all(t >= 0 for t in times)
    # the first call, 5 estimating calls, at least one warm-up, then one call per time, each waited for
    assert len(calls) >= 7 + len(times) and len(syncs) >= 3 + len(times)
    assert syncs[-len(times):] == list(range(len(calls) - len(times) + 1, len(calls) + 1))


def test_do_bench_times_on_the_device_where_the_driver_can(target, monkeypatch):
    """With the driver's ``timer()``: the cache flushed before each timed call, the call between
    two marks, one synchronisation after them all, the times those the device reports."""
    from tritium.target import DeviceTimer

    events, calls, syncs = [], [], []

    class Recording(DeviceTimer):
        def flush(self):
            events.append(("flush", len(calls)))

        def record(self):
            events.append(("mark", len(calls)))
            return len(events)

        def elapsed_ms(self, start, end):
            return float(end - start)  # 1.0 for adjacent marks

    monkeypatch.setattr(target.driver, "timer", lambda: Recording())
    monkeypatch.setattr(target.driver, "synchronize", lambda: syncs.append(len(calls)))
    times = do_bench(lambda: calls.append(1), warmup=0.1, rep=0.5, return_mode="all")
    assert times and times == [1.0] * len(times)
    assert events[:3] == [("flush", len(calls) - len(times)), ("mark", len(calls) - len(times)),
                          ("mark", len(calls) - len(times) + 1)]
    assert len(events) == 3 * len(times) and syncs[-1] == len(calls)


def test_do_bench_return_modes_and_quantiles(target):
    for mode in ("min", "max", "mean", "median"):
        assert isinstance(do_bench(lambda: None, warmup=0.1, rep=0.2, return_mode=mode), float)
    lo, mid, hi = do_bench(lambda: sum(range(100)), warmup=0.1, rep=0.5, quantiles=[0.2, 0.5, 0.8])
    assert 0 <= lo <= mid <= hi
    assert isinstance(do_bench(lambda: None, warmup=0.1, rep=0.2, quantiles=[0.5]), float)
    with pytest.raises(ValueError, match="return_mode must be one of"):
        do_bench(lambda: None, return_mode="average")
    with pytest.raises(ValueError, match="quantiles must be in"):
        do_bench(lambda: None, warmup=0.1, rep=0.1, quantiles=[1.5])


def test_summarize_interpolates_quantiles_as_numpy_does():
    times = [5.0, 1.0, 4.0, 2.0, 8.0, 3.0]
    qs = [0.0, 0.2, 0.5, 0.75, 1.0]
    np.testing.assert_allclose(summarize(times, qs), np.quantile(times, qs))
    assert summarize(times, None, "mean") == pytest.approx(np.mean(times))
    assert summarize(times, None, "median") == 3.5 and summarize(times, None, "min") == 1.0
    assert summarize(times, None, "max") == 8.0 and summarize(times, None, "all") == times


def test_do_bench_clears_gradients(target):
    class Tensor:
        grad = "stale"

    t, seen = Tensor(), []
    do_bench(lambda: seen.append(t.grad), warmup=0.1, rep=0.2, grad_to_none=[t])
    assert t.grad is None and seen[-1] is None


def _report(**benchmark):
    @perf_report(Benchmark(x_names=["size"], x_vals=[1, 4, 16], line_arg="provider", line_vals=["a", "b"],
                           line_names=["A", "B"], plot_name="sizes", args={"scale": 2.0}, ylabel="GB/s",
                           styles=[("blue", "-"), ("green", "--")], **benchmark))
    def bench(size, provider, scale):
        value = size * scale * (1 if provider == "a" else 3)
        return (value, value - 1, value + 1) if provider == "a" else value
    return bench


def test_perf_report_prints_a_table_and_writes_csv(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as where matplotlib is not installed
    with pytest.warns(UserWarning, match="matplotlib is not installed, so no plot is drawn"):
        assert _report().run(print_data=True, save_path=str(tmp_path / "out")) is None
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "sizes:"
    assert lines[1].split() == ["size", "A", "B"]
    assert [line.split() for line in lines[2:]] == [["0", "1", "2.000000", "6.000000"],
                                                    ["1", "4", "8.000000", "24.000000"],
                                                    ["2", "16", "32.000000", "96.000000"]]
    with open(tmp_path / "out" / "sizes.csv", newline="") as f:
        assert list(csv.reader(f)) == [["size", "A", "B"], ["1", "2.000000", "6.000000"],
                                       ["4", "8.000000", "24.000000"], ["16", "32.000000", "96.000000"]]
    assert not (tmp_path / "out" / "sizes.png").exists()


def test_perf_report_without_matplotlib_puts_the_tables_in_the_page_and_says_so_once(tmp_path, monkeypatch):
    import warnings
    from html.parser import HTMLParser

    class Page(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.cells = [], []

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)

        def handle_data(self, data):
            if self.tags[-1] in ("td", "th") and data.strip():
                self.cells.append(data)

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as where matplotlib is not installed
    report = perf_report([_report().benchmarks, Benchmark(["n"], [2], "p", ["q"], ["Q<1>"], "other", {})])(
        lambda **a: float(a.get("size", a.get("n"))))
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        report.run(save_path=str(tmp_path))
    (w,) = got  # one warning for the run, naming both plots
    assert "no plot is drawn (sizes, other); results.html shows the tables instead" in str(w.message)
    page = Page()
    page.feed((tmp_path / "results.html").read_text())
    assert "image" not in page.tags and page.tags.count("table") == 2
    assert page.cells == ["size", "A", "B", "1", "1.000000", "1.000000", "4", "4.000000", "4.000000",
                          "16", "16.000000", "16.000000", "n", "Q<1>", "2", "2.000000"]


def test_perf_report_draws_a_plot_with_matplotlib(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    _report(x_log=True).run(save_path=str(tmp_path))
    assert (tmp_path / "sizes.png").stat().st_size > 0


def test_perf_report_without_a_plot_says_nothing_about_matplotlib(capsys, recwarn, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    _report().run(print_data=False)
    assert capsys.readouterr().out == "" and not recwarn.list


def test_perf_report_errors(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(TritiumError, match="pandas is not installed"):
        _report().run(return_df=True)

    @perf_report(Benchmark(x_names=["m", "n"], x_vals=[(1, 2), (3,)], line_arg="p", line_vals=[0], line_names=["P"],
                           plot_name="mn", args={}))
    def two(m, n, p):
        return m * n

    with pytest.raises(TritiumError, match=r"x value \(3,\) does not give one value for each of m, n"):
        two.run()
    with pytest.raises(TritiumError, match="2 line_vals but 1 line_names"):
        Benchmark(["x"], [1], "p", [0, 1], ["P"], "bad", {})


def test_autotune_with_the_real_do_bench(target):
    @tritium.autotune([tritium.Config({"BLOCK": 32}), tritium.Config({"BLOCK": 128})], key=["n"],
                      reset_to_zero=["out_ptr"], warmup=0.5, rep=1)
    @tritium.jit
    def add_into(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=m) + tl.load(x_ptr + offs, mask=m), mask=m)

    x = np.arange(200, dtype=np.float32)
    xd, outd = target.driver.to_device(x), target.driver.to_device(np.ones(200, np.float32))
    add_into[lambda meta: (tritium.cdiv(200, meta["BLOCK"]),)](xd, outd, 200)
    assert add_into.best_config.kwargs["BLOCK"] in (32, 128)
    assert set(add_into.configs_timings) == {tritium.Config({"BLOCK": 32}), tritium.Config({"BLOCK": 128})}
    np.testing.assert_array_equal(target.driver.to_host(outd), x)
