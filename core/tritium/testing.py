"""Benchmarking helpers with Triton's interface: ``do_bench`` (times in milliseconds) and
``perf_report`` / ``Benchmark`` (tables, CSV files and, when matplotlib is installed, plots).

Nothing here needs a framework: timing synchronises through the selected target's driver, and the
tables are printed and written without pandas.
"""

from __future__ import annotations

import csv
import html
import math
import os
import statistics
import time
from typing import Any, Callable, Sequence

from .errors import TritiumError, warn

_RETURN_MODES = ("min", "max", "mean", "median", "all")


def do_bench(fn: Callable[[], object], warmup: float = 25, rep: float = 100, grad_to_none: Sequence[Any] | None = None,
             quantiles: Sequence[float] | None = None, return_mode: str = "mean") -> Any:
    """Time ``fn()`` as Triton does: estimate one call from 5, run about ``warmup`` ms, then time
    about ``rep`` ms of calls one by one (each waits for the target's driver, so device work is in
    the time). Returns the ``quantiles`` of the per-call times (linear interpolation; a single
    quantile as a number), else their ``return_mode``: min, max, mean (default), median or all
    (the list). ``grad_to_none``: objects whose ``.grad`` is reset before each call. Unlike Triton,
    the L2 cache is not flushed between calls (the driver interface has no call for it)."""
    from . import plugins

    if return_mode not in _RETURN_MODES:
        raise ValueError(f"do_bench: return_mode must be one of {', '.join(_RETURN_MODES)}, got {return_mode!r}")
    driver = plugins.get_target().driver
    sync, timer = driver.synchronize, driver.timer()
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(5):
        fn()
    sync()
    estimate_ms = max((time.perf_counter() - start) * 1e3 / 5, 1e-4)
    for _ in range(max(1, int(warmup / estimate_ms))):
        fn()
    sync()
    times, marks = [], []
    for _ in range(max(1, int(rep / estimate_ms))):
        for x in grad_to_none or ():
            x.grad = None
        if timer is not None:
            timer.flush()
            start = timer.record()
            fn()
            marks.append((start, timer.record()))
            continue
        start = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    if timer is not None:
        sync()
        times = [timer.elapsed_ms(start, end) for start, end in marks]
    return summarize(times, quantiles, return_mode)


def summarize(times: Sequence[float], quantiles: Sequence[float] | None, return_mode: str = "mean") -> Any:
    """``do_bench``'s result from the per-call ``times`` (see there)."""
    if quantiles is not None:
        ordered = sorted(times)
        out = []
        for q in quantiles:
            if not 0 <= q <= 1:
                raise ValueError(f"do_bench: quantiles must be in [0, 1], got {q}")
            point = q * (len(ordered) - 1)
            lo, hi = math.floor(point), math.ceil(point)
            out.append(ordered[lo] + (point - lo) * (ordered[hi] - ordered[lo]))
        return out[0] if len(out) == 1 else out
    if return_mode == "all":
        return list(times)
    return {"min": min, "max": max, "mean": statistics.fmean, "median": statistics.median}[return_mode](times)


class Benchmark:
    """One table (and plot) of ``perf_report``: for each value of ``x_vals`` (of the ``x_names``
    arguments) a row, and for each value of ``line_vals`` (of the ``line_arg`` argument) a
    column named by ``line_names``; ``args`` are passed to every call. ``styles`` are
    (colour, line style) pairs for matplotlib."""

    def __init__(self, x_names: Sequence[str], x_vals: Sequence[Any], line_arg: str, line_vals: Sequence[Any],
                 line_names: Sequence[str], plot_name: str, args: dict[str, Any], xlabel: str = "",
                 ylabel: str = "", x_log: bool = False, y_log: bool = False,
                 styles: Sequence[tuple[str, str]] | None = None):
        self.x_names, self.x_vals, self.x_log = list(x_names), list(x_vals), x_log
        self.line_arg, self.line_vals, self.line_names = line_arg, list(line_vals), list(line_names)
        self.y_log, self.styles, self.xlabel, self.ylabel = y_log, styles, xlabel, ylabel
        self.plot_name, self.args = plot_name, dict(args)
        if len(self.line_names) != len(self.line_vals):
            raise TritiumError(f"Benchmark '{plot_name}': {len(self.line_vals)} line_vals but "
                               f"{len(self.line_names)} line_names; give one name per line")


class Mark:
    """A function decorated with ``perf_report``; ``.run(...)`` measures and reports it."""

    def __init__(self, fn: Callable[..., Any], benchmarks: Benchmark | Sequence[Benchmark]):
        self.fn = fn
        self.benchmarks = benchmarks

    def _measure(self, bench: Benchmark, **kwargs: Any) -> tuple[list[str], list[list[Any]]]:
        """The columns (x names, then each line's value, min and max) and one row per x value."""
        lines = bench.line_names
        columns = bench.x_names + lines + [f"{n}-min" for n in lines] + [f"{n}-max" for n in lines]
        rows = []
        for x in bench.x_vals:
            xs = list(x) if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
            if len(xs) != len(bench.x_names):
                raise TritiumError(f"Benchmark '{bench.plot_name}': x value {x!r} does not give one value for each "
                                   f"of {', '.join(bench.x_names)}")
            mean, low, high = [], [], []
            for y in bench.line_vals:
                ret = self.fn(**dict(zip(bench.x_names, xs)), **{bench.line_arg: y}, **bench.args, **kwargs)
                m, lo, hi = ret if isinstance(ret, (list, tuple)) else (ret, None, None)
                mean.append(m)
                low.append(lo)
                high.append(hi)
            rows.append(xs + mean + low + high)
        return columns, rows

    def _run(self, bench: Benchmark, save_path: str, show_plots: bool, print_data: bool, diff_col: bool = False,
             save_precision: int = 6, **kwargs: Any) -> tuple[list[str], list[list[Any]], bool]:
        """The table's columns and rows, and whether its plot was drawn."""
        columns, rows = self._measure(bench, **kwargs)
        drawn = bool(bench.plot_name and (show_plots or save_path)) and _plot(bench, columns, rows, save_path,
                                                                              show_plots)
        keep = [columns.index(c) for c in bench.x_names + bench.line_names]
        shown = [columns[i] for i in keep]
        table = [[row[i] for i in keep] for row in rows]
        if diff_col and len(shown) == 2:
            shown.append("Diff")
            table = [r + [_number(r[1]) - _number(r[0])] for r in table]
        if print_data:
            print(f"{bench.plot_name}:")
            print(format_table(shown, table))
        if save_path:
            with open(os.path.join(save_path, f"{bench.plot_name}.csv"), "w", newline="") as f:
                out = csv.writer(f)
                out.writerow(shown)
                out.writerows([[_csv(v, save_precision) for v in r] for r in table])
        return shown, table, drawn

    def run(self, show_plots: bool = False, print_data: bool = False, save_path: str = "",
            return_df: bool = False, **kwargs: Any) -> Any:
        """Measure every benchmark; print its table (``print_data``), write ``<plot_name>.csv`` and
        ``<plot_name>.png`` into ``save_path`` with a ``results.html`` page showing them, show the plot
        (``show_plots``). Plots need matplotlib (optional): without it, one warning says so and the page
        shows the tables instead. ``return_df`` returns pandas DataFrames (one, or a list for a list
        of benchmarks) and needs pandas."""
        single = isinstance(self.benchmarks, Benchmark)
        benchmarks = [self.benchmarks] if single else list(self.benchmarks)
        if save_path:
            os.makedirs(save_path, exist_ok=True)
        results = [self._run(b, save_path, show_plots, print_data, **kwargs) for b in benchmarks]
        undrawn = [b.plot_name for b, (_, _, drawn) in zip(benchmarks, results) if b.plot_name and not drawn]
        if undrawn and (show_plots or save_path):
            warn(f"perf_report: matplotlib is not installed, so no plot is drawn ({', '.join(undrawn)})"
                 + ("; results.html shows the tables instead" if save_path else "")
                 + ": pip install matplotlib for plots")
        if save_path:
            with open(os.path.join(save_path, "results.html"), "w") as page:
                page.write("<html><body>\n")
                for bench, (columns, table, drawn) in zip(benchmarks, results):
                    page.write(f'<image src="{html.escape(bench.plot_name)}.png"/>\n' if drawn
                               else _html_table(bench.plot_name, columns, table))
                page.write("</body></html>\n")
        if not return_df:
            return None
        try:
            import pandas as pd
        except ImportError:
            raise TritiumError("perf_report run(return_df=True) returns pandas DataFrames, and pandas is not "
                               "installed: pip install pandas, or read the CSV that save_path writes") from None
        frames = [pd.DataFrame(table, columns=cols) for cols, table, _ in results]
        return frames[0] if single else frames


def perf_report(benchmarks: Benchmark | Sequence[Benchmark]) -> Callable[[Callable[..., Any]], Mark]:
    """``@perf_report(Benchmark(...))`` above a function that returns a time (or (time, min, max))
    for its keyword arguments; then ``fn.run(print_data=True, save_path=...)``."""
    return lambda fn: Mark(fn, benchmarks)


def _number(v: Any) -> float:
    return math.nan if v is None else float(v)


def _csv(v: Any, precision: int) -> str:
    if isinstance(v, float) or (v is not None and type(v).__name__.startswith("float")):
        return f"{float(v):.{precision}f}"
    return "" if v is None else str(v)


def format_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A right-aligned text table with a row index, as pandas prints one."""
    body = [[str(i)] + [_cell(v) for v in r] for i, r in enumerate(rows)]
    head = [""] + list(columns)
    widths = [max(len(line[j]) for line in [head] + body) for j in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(line, widths)) for line in [head] + body)


def _cell(v: Any) -> str:
    """A table cell as the printed table and the page show it."""
    if v is None:
        return "NaN"
    return f"{float(v):.6f}" if isinstance(v, float) or type(v).__name__.startswith("float") else str(v)


def _html_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """One benchmark's table for ``results.html`` where its plot could not be drawn."""
    def row(cells: Sequence[str], tag: str) -> str:
        return "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>\n"

    body = "".join(row([_cell(v) for v in r], "td") for r in rows)
    return f"<h2>{html.escape(title)}</h2>\n<table>\n{row(columns, 'th')}{body}</table>\n"


def _plot(bench: Benchmark, columns: list[str], rows: list[list[Any]], save_path: str, show: bool) -> bool:
    """Draw the lines against the first x name (with the min..max band where given); False without
    matplotlib."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    col = {name: [r[i] for r in rows] for i, name in enumerate(columns)}
    xs = col[bench.x_names[0]]
    plt.figure()
    ax = plt.subplot()
    for i, name in enumerate(bench.line_names):
        colour, style = bench.styles[i] if bench.styles else (None, None)
        ax.plot(xs, [_number(v) for v in col[name]], label=name, color=colour, ls=style)
        low, high = col[f"{name}-min"], col[f"{name}-max"]
        if all(v is not None for v in low + high):
            ax.fill_between(xs, [float(v) for v in low], [float(v) for v in high], alpha=0.15, color=colour)
    ax.legend()
    ax.set_xlabel(bench.xlabel or bench.x_names[0])
    ax.set_ylabel(bench.ylabel)
    ax.set_xscale("log" if bench.x_log else "linear")
    ax.set_yscale("log" if bench.y_log else "linear")
    if show:
        plt.show()
    if save_path:
        plt.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))
    plt.close()
    return True


__all__ = ["Benchmark", "Mark", "do_bench", "perf_report"]
