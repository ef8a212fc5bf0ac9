"""Benchmarking helpers with Triton's interface (times in milliseconds)."""

from __future__ import annotations

import statistics
import time
from typing import Callable, Sequence


def do_bench(fn: Callable[[], object], warmup: float = 25, rep: float = 100,
             quantiles: Sequence[float] | None = None, return_mode: str = "median"):
    """Time ``fn()``: run it for about ``warmup`` ms, then about ``rep`` ms, and return the median
    (or ``return_mode`` in min/max/mean/median, or the given ``quantiles``) of the per-call times."""
    from . import plugins

    sync = plugins.get_target().driver.synchronize
    t0 = time.perf_counter()
    fn()
    sync()
    once = max(time.perf_counter() - t0, 1e-6)
    for _ in range(max(1, int(warmup / 1e3 / once))):
        fn()
    sync()
    times = []
    for _ in range(max(5, int(rep / 1e3 / once))):
        t = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t) * 1e3)
    if quantiles:
        qs = statistics.quantiles(times, n=100, method="inclusive")
        return [min(times) if q <= 0 else max(times) if q >= 1 else qs[int(q * 100) - 1] for q in quantiles]
    return {"min": min, "max": max, "mean": statistics.fmean, "median": statistics.median}[return_mode](times)
