"""tritium's cpu target beside numpy and numba, in one run on one machine.

Times the kernels of ``examples/`` (vector add, softmax, layer norm) against numpy doing the same
work and, where numba is installed (``pip install -e .[bench]``), numba's parallel kernels
(``numba_kernels``); the implementations alternate for a few rounds and each keeps its best median,
since other work on the machine slows a run and never speeds one up. The best vector-add GB/s of
the three is the machine's *streaming bandwidth*, the yardstick of the row kernels. Also the
tutorial's matmul (fp32, 1024^3) against numpy's BLAS, the cost of one launch, and what a user
waits for before the first result: the first launch with an empty kernel cache (compilation
included), and the first launch in a new process with a warm cache; and vector add and softmax in
debug mode (every access bounds-checked) beside the normal build.
Prints the CPU, its vector ISA and a table with each goal, and writes JSON (``--out``, default
``benchmarks/results/cpu.json``).

    python benchmarks/cpu.py [--out PATH] [--rep-ms MS] [--rounds N] [--startup-runs N] [--matmul-size N]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"
sys.path.insert(0, str(EXAMPLES))

#: what "good" means: ("min", x) a least value, ("max", x) a largest one (seconds for times)
GOALS = {
    "vector_add_vs_numba": ("min", 0.95), "vector_add_vs_numpy": ("min", 1.0),
    "softmax_vs_streaming": ("min", 0.8), "layernorm_vs_streaming": ("min", 0.8), "matmul": ("min", 0.8),
    "launch": ("max", 10e-6), "cold_compile": ("max", 0.5), "warm_first_launch": ("max", 0.05),
}


def machine() -> dict:
    """The CPU's model name (``/proc/cpuinfo`` where there is one), LLVM's name for it and the
    widest vector ISA it has, which the cpu target compiles for."""
    from llvmlite import binding as llvm

    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            model = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), model)
    except OSError:
        pass
    features = llvm.get_host_cpu_features()
    isa = next((name for flag, name in (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("neon", "NEON"),
                                        ("sse4.2", "SSE4.2")) if features.get(flag)), "scalar")
    return {"platform": platform.platform(), "cpu": model, "llvm_cpu": llvm.get_host_cpu_name(), "vector_isa": isa,
            "logical_cpus": os.cpu_count(), "python": platform.python_version()}


# -- kernels beside numpy and numba ----------------------------------------------------------------
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


def time_rounds(runs: dict, rep_ms: float, rounds: int) -> dict:
    """Each implementation's best median time in ms over ``rounds`` alternating rounds."""
    from tritium.testing import do_bench

    best = dict.fromkeys(runs, float("inf"))
    for _ in range(rounds):
        for name, run in runs.items():
            best[name] = min(best[name], do_bench(run, warmup=rep_ms / 5, rep=rep_ms, return_mode="median"))
    return best


def kernel_benchmarks(dev, rep_ms: float, rounds: int, peers) -> list[dict]:
    """Each example kernel, its numpy twin and numba's kernel (``peers``, may be None): check all
    against float64, then time them in alternating rounds."""
    from layernorm import layer_norm, layer_norm_reference
    from softmax import softmax
    from vector_add import add

    rng = np.random.default_rng(0)
    rows = []

    def measure(name, shape, nbytes, runs, outputs, want, rtol, atol):
        for run in runs.values():
            run()
        dev.synchronize()
        checks = []
        for label, got in outputs.items():
            got = dev.to_host(got) if label == "tritium" else got
            try:
                np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
                checks.append(f"{label} ok")
            except AssertionError:
                checks.append(f"{label} MISMATCH (max err {np.max(np.abs(got - want)):.3g})")
        ms = time_rounds(runs, rep_ms, rounds)
        rows.append({"name": name, "dtype": "fp32", "shape": list(shape), "bytes": nbytes, "ms": ms,
                     "gbps": {k: nbytes / t / 1e6 for k, t in ms.items()}, "check": ", ".join(checks)})

    def with_peer(runs, outputs, peer_run, peer_out):
        if peers is not None:
            runs["numba"], outputs["numba"] = peer_run, peer_out
        return runs, outputs

    n = 1 << 24
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    xd, yd, zd, z, zn = dev.to_device(x), dev.to_device(y), dev.empty((n,), np.float32), np.empty_like(x), np.empty_like(x)
    runs, outputs = with_peer({"tritium": lambda: add(xd, yd, zd), "numpy": lambda: np.add(x, y, out=z)},
                              {"tritium": zd, "numpy": z}, lambda: peers.vector_add(x, y, zn), zn)
    measure("vector_add", (n,), 3 * x.nbytes, runs, outputs, x.astype(np.float64) + y, 1e-6, 0.0)

    M, N = 4096, 1024
    x = rng.standard_normal((M, N), dtype=np.float32)
    xd, yd, out, outn = dev.to_device(x), dev.empty((M, N), np.float32), np.empty_like(x), np.empty_like(x)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    runs, outputs = with_peer({"tritium": lambda: softmax(xd, yd), "numpy": lambda: numpy_softmax(x, out)},
                              {"tritium": yd, "numpy": out}, lambda: peers.softmax(x, outn), outn)
    measure("softmax", (M, N), 2 * x.nbytes, runs, outputs, e / e.sum(axis=1, keepdims=True), 1e-5, 1e-7)

    eps = 1e-5
    w, b = rng.random(N, dtype=np.float32) + 0.5, rng.standard_normal(N, dtype=np.float32)
    wd, bd = dev.to_device(w), dev.to_device(b)
    mean, rstd = dev.empty((M,), np.float32), dev.empty((M,), np.float32)
    runs, outputs = with_peer({"tritium": lambda: layer_norm(xd, wd, bd, yd, mean, rstd, eps),
                               "numpy": lambda: numpy_layernorm(x, w, b, eps, out)},
                              {"tritium": yd, "numpy": out}, lambda: peers.layernorm(x, w, b, np.float32(eps), outn),
                              outn)
    measure("layernorm", (M, N), 2 * x.nbytes + w.nbytes + b.nbytes, runs, outputs,
            layer_norm_reference(x, w, b, eps)[0], 1e-5, 1e-5)
    return rows


def launch_benchmark(dev, launches: int = 2000, rounds: int = 5) -> float:
    """Seconds a launch of a one-program kernel with three arguments takes, kernel included (it
    copies one element): the best median over ``rounds`` rounds of ``launches`` launches."""
    import tritium
    import tritium.language as tl

    @tritium.jit
    def copy_one(src, dst, n):
        tl.store(dst, tl.load(src), mask=n > 0)

    src, dst = dev.to_device(np.ones(1, np.float32)), dev.empty((1,), np.float32)
    copy_one[(1,)](src, dst, 1)
    dev.synchronize()
    best = float("inf")
    for _ in range(rounds):
        times = []
        for _ in range(launches):
            t = time.perf_counter()
            copy_one[(1,)](src, dst, 1)
            times.append(time.perf_counter() - t)
        best = min(best, statistics.median(times))
    dev.synchronize()
    if dev.to_host(dst)[0] != 1:
        raise RuntimeError("the launch benchmark's kernel did not copy its element")
    return best


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
    best = time_rounds({"tritium": run_tritium, "numpy": run_numpy}, rep_ms, rounds)
    t, n = best["tritium"], best["numpy"]
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
    if kind == "min":
        return f">= {limit:g}x", value >= limit
    return (f"<= {limit * 1e6:g} us" if limit < 1e-3 else f"<= {limit * 1e3:g} ms"), value <= limit


def mark(met: bool | None) -> str:
    return "" if met is None else ("met" if met else "MISSED")


def kernel_goals(kernels: list[dict]) -> tuple[float, list[dict]]:
    """The streaming bandwidth (the best vector-add GB/s of any implementation) and each goal on the
    kernels: vector add beside numba (or numpy, without numba), the row kernels beside streaming."""
    add = next(r for r in kernels if r["name"] == "vector_add")
    streaming = max(add["gbps"].values())
    peer = "numba" if "numba" in add["gbps"] else "numpy"
    measures = [{"name": f"vector_add_vs_{peer}", "value": add["gbps"]["tritium"] / add["gbps"][peer]}]
    for r in kernels:
        if r["name"] != "vector_add":
            measures.append({"name": f"{r['name']}_vs_streaming", "value": r["gbps"]["tritium"] / streaming})
    for m in measures:
        m["goal"], m["goal_met"] = verdict(m["name"], m["value"])
    return streaming, measures


def fresh_pages_for_large_arrays() -> None:
    """Keep glibc serving every large allocation with freshly mapped pages, as in a new process.

    By default glibc raises its mmap threshold (up to 32 MiB) each time a large block is freed, so
    after the checks free their float64 temporaries, later arrays of a few MiB come from the heap's
    already-touched 4 KiB pages instead of fresh pages that numpy asks the kernel to back with huge
    pages. On the 16-core Xeon that alone made the layer norm measured after the other kernels take
    1.6x as long as in a fresh process (every implementation's arrays are affected alike, but the
    result depended on the order of the sections). Setting the threshold fixes it; no-op without
    glibc."""
    m_mmap_threshold = -3  # malloc.h
    try:
        ctypes.CDLL(None).mallopt(m_mmap_threshold, 128 * 1024)
    except (AttributeError, OSError):
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(HERE / "results" / "cpu.json"), help="where to write the JSON results")
    parser.add_argument("--target", default="cpu", help="the tritium target to benchmark (default: cpu)")
    parser.add_argument("--rep-ms", type=float, default=500.0, help="time spent timing each kernel in each round")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds; each implementation keeps its best")
    parser.add_argument("--startup-runs", type=int, default=3, help="fresh processes per startup measurement")
    parser.add_argument("--matmul-size", type=int, default=1024, help="M = N = K of the matmul benchmark")
    args = parser.parse_args()
    os.environ["TRITIUM_TARGET"] = args.target  # the examples launch on the selected target
    fresh_pages_for_large_arrays()

    import tritium
    from numba_kernels import kernels as numba_kernels
    from tritium import plugins

    dev = plugins.get_target().driver
    peers = numba_kernels()
    kernels = kernel_benchmarks(dev, args.rep_ms, args.rounds, peers)
    mm = matmul_benchmark(dev, args.rep_ms, args.matmul_size, args.rounds)
    launch = launch_benchmark(dev)
    debug = debug_benchmarks(dev, args.rep_ms)
    startup = startup_benchmarks(args.target, args.startup_runs)
    host = machine()

    peer_note = f"numba {peers.version} ({peers.threads} threads)" if peers else "numba not installed"
    print(f"tritium {tritium.__version__} target '{args.target}' beside numpy {np.__version__} and {peer_note}")
    print(f"on {host['cpu']} ({host['llvm_cpu']}, {host['vector_isa']}, {host['logical_cpus']} logical cpus)\n")
    impls = ["tritium", "numpy"] + (["numba"] if peers else [])
    print(f"{'kernel':11} {'shape':>10} " + " ".join(f"{i + ' ms':>11} {'GB/s':>6}" for i in impls) + "  check")
    ok = True
    for r in kernels:
        ok &= "MISMATCH" not in r["check"]
        shape = "x".join(map(str, r["shape"]))
        print(f"{r['name']:11} {shape:>10} " + " ".join(f"{r['ms'][i]:11.3f} {r['gbps'][i]:6.1f}" for i in impls)
              + f"  {r['check']}")
    streaming, measures = kernel_goals(kernels)
    print(f"\nstreaming bandwidth (the best vector add): {streaming:.1f} GB/s")
    for m in measures:
        print(f"  {m['name']:28} {m['value']:6.2f}x {m['goal']:>9} {mark(m['goal_met'])}")

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
    labels = {"launch": "launch (one program, three arguments)",
              "cold_compile": "cold compile (vector_add, first launch, empty cache)",
              "warm_first_launch": "first launch in a new process, warm cache",
              "warm_import_and_first_launch": "import + first launch, warm cache"}
    times = dict(startup, launch=launch)
    timing_rows = []
    for key, label in labels.items():
        goal, met = verdict(key, times[key])
        timing_rows.append({"name": key, "seconds": times[key], "goal": goal, "goal_met": met})
        value = f"{times[key] * 1e6:9.1f} us" if key == "launch" else f"{times[key] * 1e3:9.1f} ms"
        print(f"{label:54} {value} {goal:>10} {mark(met)}")

    result = {
        "machine": host, "versions": {"tritium": tritium.__version__, "numpy": np.__version__,
                                      "numba": peers.version if peers else None},
        "target": args.target, "rep_ms": args.rep_ms, "rounds": args.rounds, "kernels": kernels,
        "streaming_gbps": streaming, "kernel_goals": measures, "matmul": mm, "debug_mode": debug,
        "timings": {"startup_runs": startup["runs"], "measurements": timing_rows},
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"\nwrote {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
