"""tritium's cpu target beside numpy, in one run on one machine.

Times the kernels of ``examples/`` (vector add, softmax, layer norm) against numpy doing the same
work, the tutorial's matmul (fp32, 1024^3) against numpy's BLAS with the thread counts of both, and
measures what a user waits for before the first result: the first launch with an empty
kernel cache (compilation included), and the first launch in a new process with a warm cache.
Also times vector add and softmax in debug mode (every access bounds-checked) against the
normal build: the cost of ``debug=True``.
Prints a table with each goal and writes JSON (``--out``, default ``benchmarks/results/cpu.json``).

    python benchmarks/cpu.py [--out PATH] [--rep-ms MS] [--startup-runs N] [--matmul-size N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"
sys.path.insert(0, str(EXAMPLES))

GOALS = {  # what "good" means: a minimum numpy/tritium time ratio, or a maximum time in seconds
    "vector_add": ("ratio", 1.0), "softmax": ("ratio", 1.5), "layernorm": None, "matmul": ("ratio", 0.5),
    "cold_compile": ("seconds", 0.5), "warm_first_launch": ("seconds", 0.05), "warm_import_and_first_launch": None,
}


# -- kernels beside numpy ------------------------------------------------------------------------
def numpy_softmax(x, out):
    """Unfused: max, subtract, exp, sum and divide, each a pass over memory."""
    np.subtract(x, x.max(axis=1, keepdims=True), out=out)
    np.exp(out, out=out)
    np.divide(out, out.sum(axis=1, keepdims=True), out=out)


def numpy_layernorm(x, w, b, eps, out):
    mean = x.mean(axis=1, keepdims=True)
    np.subtract(x, mean, out=out)
    rstd = 1.0 / np.sqrt(np.mean(np.square(out), axis=1, keepdims=True) + eps)
    out *= rstd
    out *= w
    out += b


def kernel_benchmarks(dev, rep_ms: float) -> list[dict]:
    """Each example kernel and its numpy twin: check both against float64, then time them."""
    from layernorm import layer_norm, layer_norm_reference
    from softmax import softmax
    from tritium.testing import do_bench
    from vector_add import add

    rng = np.random.default_rng(0)
    rows = []

    def measure(name, shape, nbytes, run_tritium, run_numpy, outputs, want, rtol, atol):
        run_tritium()
        dev.synchronize()
        run_numpy()
        checks = []
        for label, got in outputs().items():
            try:
                np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
                checks.append(f"{label} ok")
            except AssertionError:
                checks.append(f"{label} MISMATCH (max err {np.max(np.abs(got - want)):.3g})")
        t = do_bench(run_tritium, warmup=rep_ms / 5, rep=rep_ms)
        n = do_bench(run_numpy, warmup=rep_ms / 5, rep=rep_ms)
        rows.append({"name": name, "dtype": "fp32", "shape": list(shape), "bytes": nbytes,
                     "tritium_ms": t, "numpy_ms": n, "tritium_gbps": nbytes / t / 1e6, "numpy_gbps": nbytes / n / 1e6,
                     "ratio": n / t, "check": ", ".join(checks)})

    n = 1 << 24
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    xd, yd, zd, z = dev.to_device(x), dev.to_device(y), dev.empty((n,), np.float32), np.empty_like(x)
    measure("vector_add", (n,), 3 * x.nbytes, lambda: add(xd, yd, zd), lambda: np.add(x, y, out=z),
            lambda: {"tritium": dev.to_host(zd), "numpy": z}, x.astype(np.float64) + y, 1e-6, 0.0)

    M, N = 4096, 1024
    x = rng.standard_normal((M, N), dtype=np.float32)
    xd, yd, out = dev.to_device(x), dev.empty((M, N), np.float32), np.empty_like(x)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    measure("softmax", (M, N), 2 * x.nbytes, lambda: softmax(xd, yd), lambda: numpy_softmax(x, out),
            lambda: {"tritium": dev.to_host(yd), "numpy": out}, e / e.sum(axis=1, keepdims=True), 1e-5, 1e-7)

    eps = 1e-5
    w, b = rng.random(N, dtype=np.float32) + 0.5, rng.standard_normal(N, dtype=np.float32)
    wd, bd = dev.to_device(w), dev.to_device(b)
    mean, rstd = dev.empty((M,), np.float32), dev.empty((M,), np.float32)
    measure("layernorm", (M, N), 2 * x.nbytes + w.nbytes + b.nbytes,
            lambda: layer_norm(xd, wd, bd, yd, mean, rstd, eps), lambda: numpy_layernorm(x, w, b, eps, out),
            lambda: {"tritium": dev.to_host(yd), "numpy": out}, layer_norm_reference(x, w, b, eps)[0], 1e-5, 1e-5)
    return rows


def blas_threads() -> str:
    """How many threads numpy's BLAS uses: its own report where threadpoolctl is installed, else
    what the usual environment variables say (OpenBLAS defaults to every logical cpu)."""
    try:
        from threadpoolctl import threadpool_info

        counts = [f"{i['internal_api']} {i['num_threads']}" for i in threadpool_info() if i.get("user_api") == "blas"]
        if counts:
            return ", ".join(counts)
    except ImportError:
        pass
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(var):
            return f"{os.environ[var]} ({var})"
    return f"{os.cpu_count()} (the BLAS default: every logical cpu)"


def matmul_benchmark(dev, rep_ms: float, size: int, rounds: int = 3) -> dict:
    """The tutorial's matmul (``examples/matmul.py``, fp32) beside ``numpy.matmul`` on ``size``^3.
    The two alternate for ``rounds`` rounds and each keeps its best median: other work on the
    machine slows both, never speeds one up."""
    from matmul import CPU_BLOCKS, matmul
    from tritium.testing import do_bench

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((size, size), dtype=np.float32), rng.standard_normal((size, size), dtype=np.float32)
    ad, bd, cd, c = dev.to_device(a), dev.to_device(b), dev.empty((size, size), np.float32), np.empty((size, size),
                                                                                                      np.float32)
    run_tritium, run_numpy = (lambda: matmul(ad, bd, cd)), (lambda: np.matmul(a, b, out=c))
    run_tritium()
    dev.synchronize()
    run_numpy()
    want = a.astype(np.float64) @ b
    errors = {"tritium": np.max(np.abs(dev.to_host(cd) - want)), "numpy": np.max(np.abs(c - want))}
    bound = 2 * size * 2.0**-24 * np.max(np.abs(a).astype(np.float64) @ np.abs(b))
    check = ", ".join(f"{k} ok" if e <= bound else f"{k} MISMATCH (max err {e:.3g})" for k, e in errors.items())
    t = n = float("inf")
    for _ in range(rounds):
        t = min(t, do_bench(run_tritium, warmup=rep_ms / 5, rep=rep_ms))
        n = min(n, do_bench(run_numpy, warmup=rep_ms / 5, rep=rep_ms))
    flops = 2 * size**3
    tritium_threads = os.cpu_count()  # the cpu driver's pool: one thread per logical cpu
    return {"name": "matmul", "dtype": "fp32", "shape": [size, size, size], "blocks": CPU_BLOCKS,
            "tritium_ms": t, "numpy_ms": n, "tritium_gflops": flops / t / 1e6, "numpy_gflops": flops / n / 1e6,
            "ratio": n / t, "tritium_threads": tritium_threads, "numpy_threads": blas_threads(), "check": check}


def debug_benchmarks(dev, rep_ms: float) -> list[dict]:
    """Vector add and softmax with ``TRITIUM_DEBUG=1`` (bounds checks) beside the normal build."""
    from softmax import softmax
    from tritium.testing import do_bench
    from vector_add import add

    rng = np.random.default_rng(0)
    n, (M, N) = 1 << 24, (4096, 1024)
    x, y, z = (dev.to_device(rng.random(n, dtype=np.float32)) for _ in range(3))
    a, b = dev.to_device(rng.standard_normal((M, N), dtype=np.float32)), dev.empty((M, N), np.float32)
    rows, before = [], os.environ.get("TRITIUM_DEBUG")
    for name, run in (("vector_add", lambda: add(x, y, z)), ("softmax", lambda: softmax(a, b))):
        times = {}
        for mode in ("normal", "debug"):
            os.environ["TRITIUM_DEBUG"] = "1" if mode == "debug" else "0"
            try:
                run()
                times[mode] = do_bench(run, warmup=rep_ms / 5, rep=rep_ms)
            finally:  # the user's own setting, for the benchmarks that follow
                if before is None:
                    os.environ.pop("TRITIUM_DEBUG", None)
                else:
                    os.environ["TRITIUM_DEBUG"] = before
        rows.append({"name": name, "normal_ms": times["normal"], "debug_ms": times["debug"],
                     "debug_over_normal": times["debug"] / times["normal"]})
    return rows


# -- startup: the first launch in a fresh process --------------------------------------------------
FIRST_LAUNCH = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    t_import = time.perf_counter()
    sys.path.insert(0, sys.argv[1])
    from tritium import plugins
    from vector_add import add
    dev = plugins.get_target().driver
    x = dev.to_device(np.ones(4096, np.float32))
    out = dev.empty((4096,), np.float32)
    t_launch = time.perf_counter()
    add(x, x, out)
    dev.synchronize()
    t_end = time.perf_counter()
    assert (dev.to_host(out) == 2).all(), "wrong result"
    print(json.dumps({"first_launch_s": t_end - t_launch, "import_and_first_launch_s": t_end - t_import}))
""")


def first_launch(cache_dir: str, target: str) -> dict:
    env = dict(os.environ, TRITIUM_CACHE_DIR=cache_dir, TRITIUM_TARGET=target)
    env.pop("TRITIUM_CACHE_DISABLE", None)
    proc = subprocess.run([sys.executable, "-c", FIRST_LAUNCH, str(EXAMPLES)], env=env, capture_output=True,
                          text=True, timeout=600)
    if proc.returncode:
        raise RuntimeError(f"first-launch subprocess failed:\n{proc.stderr.strip()}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def startup_benchmarks(target: str, runs: int) -> dict:
    """Medians over ``runs`` processes: cold (an empty cache each time) and warm (a filled one)."""
    cold, warm = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="tritium-bench-cache-") as cache:
            cold.append(first_launch(cache, target))
            warm.append(first_launch(cache, target))
    return {"cold_compile": statistics.median(r["first_launch_s"] for r in cold),
            "warm_first_launch": statistics.median(r["first_launch_s"] for r in warm),
            "warm_import_and_first_launch": statistics.median(r["import_and_first_launch_s"] for r in warm),
            "runs": runs}


# -- report ----------------------------------------------------------------------------------------
def verdict(name: str, value: float) -> tuple[str, bool | None]:
    goal = GOALS.get(name)
    if goal is None:
        return "-", None
    kind, limit = goal
    if kind == "ratio":
        return f">= {limit:g}x", value >= limit
    return f"<= {limit * 1e3:g} ms", value <= limit


def mark(met: bool | None) -> str:
    return "" if met is None else ("met" if met else "MISSED")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(HERE / "results" / "cpu.json"), help="where to write the JSON results")
    parser.add_argument("--target", default="cpu", help="the tritium target to benchmark (default: cpu)")
    parser.add_argument("--rep-ms", type=float, default=1000.0, help="time spent timing each kernel")
    parser.add_argument("--startup-runs", type=int, default=3, help="fresh processes per startup measurement")
    parser.add_argument("--matmul-size", type=int, default=1024, help="M = N = K of the matmul benchmark")
    args = parser.parse_args()
    os.environ["TRITIUM_TARGET"] = args.target  # the examples launch on the selected target

    import tritium
    from tritium import plugins

    dev = plugins.get_target().driver
    kernels = kernel_benchmarks(dev, args.rep_ms)
    mm = matmul_benchmark(dev, args.rep_ms, args.matmul_size)
    debug = debug_benchmarks(dev, args.rep_ms)
    startup = startup_benchmarks(args.target, args.startup_runs)

    print(f"tritium {tritium.__version__} target '{args.target}' vs numpy {np.__version__} on "
          f"{platform.processor() or platform.machine()} ({os.cpu_count()} logical cpus)\n")
    print(f"{'kernel':12} {'shape':>11} {'tritium ms':>11} {'GB/s':>7} {'numpy ms':>9} {'GB/s':>7} "
          f"{'numpy/tritium':>14} {'goal':>8}  check")
    ok = True
    for r in kernels:
        goal, met = verdict(r["name"], r["ratio"])
        r.update(goal=goal, goal_met=met)
        ok &= "MISMATCH" not in r["check"]
        shape = "x".join(map(str, r["shape"]))
        print(f"{r['name']:12} {shape:>11} {r['tritium_ms']:11.3f} {r['tritium_gbps']:7.2f} {r['numpy_ms']:9.3f} "
              f"{r['numpy_gbps']:7.2f} {r['ratio']:13.2f}x {goal:>8} {mark(met):6} {r['check']}")
    goal, met = verdict("matmul", mm["ratio"])
    mm.update(goal=goal, goal_met=met)
    ok &= "MISMATCH" not in mm["check"]
    print(f"\n{'matmul (tutorial 03)':22} {'shape':>14} {'tritium ms':>11} {'GFLOP/s':>8} {'numpy ms':>9} "
          f"{'GFLOP/s':>8} {'numpy/tritium':>14} {'goal':>8}")
    print(f"{'fp32':22} {'x'.join(map(str, mm['shape'])):>14} {mm['tritium_ms']:11.3f} {mm['tritium_gflops']:8.1f} "
          f"{mm['numpy_ms']:9.3f} {mm['numpy_gflops']:8.1f} {mm['ratio']:13.2f}x {goal:>8} {mark(met):6} {mm['check']}")
    print(f"  threads: tritium {mm['tritium_threads']} (one program per thread), numpy BLAS {mm['numpy_threads']}; "
          f"blocks {mm['blocks']}")
    print()
    for r in debug:
        print(f"{r['name'] + ' debug=True':24} {r['debug_ms']:9.3f} ms vs {r['normal_ms']:.3f} ms normal: "
              f"{r['debug_over_normal']:.2f}x the time")
    print()
    labels = {"cold_compile": "cold compile (vector_add, first launch, empty cache)",
              "warm_first_launch": "first launch in a new process, warm cache",
              "warm_import_and_first_launch": "import + first launch, warm cache"}
    startup_rows = []
    for key, label in labels.items():
        goal, met = verdict(key, startup[key])
        startup_rows.append({"name": key, "seconds": startup[key], "goal": goal, "goal_met": met})
        print(f"{label:54} {startup[key] * 1e3:9.1f} ms {goal:>10} {mark(met)}")

    result = {
        "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                    "logical_cpus": os.cpu_count(), "python": platform.python_version()},
        "versions": {"tritium": tritium.__version__, "numpy": np.__version__},
        "target": args.target, "rep_ms": args.rep_ms, "kernels": kernels, "matmul": mm, "debug_mode": debug,
        "startup": {"runs": startup["runs"], "measurements": startup_rows},
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"\nwrote {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
