"""Measure the cpu target on the sample programs against numpy (not a test; prints a table).

    python targets/cpu/benchmarks/bench_samples.py

Vector add (2**24 fp32, BLOCK 1024..4096) vs ``np.add(x, y, out=z)``; row softmax vs numpy's
unfused max/exp/sum/div; cold compile time of the stages; launch overhead of an empty grid.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.passes.pipeline import CompileContext, Pipeline
from tritium.target import KernelSignature
from tritium_cpu.target import CpuTarget

IR = Path(__file__).resolve().parent.parent / "tests" / "ir"
TARGET = CpuTarget()


def compile_text(text: str, names, types):
    with tile.context():
        module = ir.Module.parse(text)
        name = ir.StringAttr(module.body.operations[0].attributes["sym_name"]).value
    sig = KernelSignature(name, tuple(names), tuple(types))
    stages = Pipeline()
    options = TARGET.parse_options({})
    TARGET.add_stages(stages, options)
    ctx = CompileContext(sig, TARGET, options)
    out = stages.run(module, ctx)
    return TARGET.driver.load(out["obj"], sig, ctx.metadata), ctx.metadata["stage_seconds"]


def best(fn, repeat=20) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def bench_add() -> None:
    n = 1 << 24
    x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    z = np.empty_like(x)
    t_np = best(lambda: np.add(x, y, out=z))
    print(f"vector add 2^24 fp32: numpy {t_np * 1e3:.2f} ms ({3 * 4 * n / t_np / 1e9:.1f} GB/s)")
    text = (IR / "vector_add.mlir").read_text()
    for block in (1024, 2048, 4096):
        k, secs = compile_text(text.replace("1024", str(block)), ("x", "y", "out", "n"),
                               ("*fp32", "*fp32", "*fp32", "i32"))
        args = [x.ctypes.data, y.ctypes.data, z.ctypes.data, n]
        grid = ((n + block - 1) // block, 1, 1)
        t = best(lambda: k(grid, args))
        assert np.array_equal(z, x + y)
        compile_s = secs["llir"] + secs["asm"] + secs["obj"]
        print(f"  BLOCK {block}: {t * 1e3:.2f} ms ({3 * 4 * n / t / 1e9:.1f} GB/s) speedup {t_np / t:.2f}x"
              f"  compile llir->obj {compile_s * 1e3:.0f} ms")
    t_launch = best(lambda: k((1, 1, 1), [x.ctypes.data, y.ctypes.data, z.ctypes.data, 0]), 200)
    t_launch_mt = best(lambda: k((64, 1, 1), [x.ctypes.data, y.ctypes.data, z.ctypes.data, 0]), 200)
    print(f"  launch overhead: 1 program {t_launch * 1e6:.1f} us, 64 programs (all threads) {t_launch_mt * 1e6:.1f} us")


def numpy_softmax(x):
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=1, keepdims=True)


def bench_softmax() -> None:
    rows, cols = 1 << 14, 256
    x = np.random.randn(rows, cols).astype(np.float32)
    out = np.empty_like(x)
    t_np = best(lambda: numpy_softmax(x), 10)
    k, secs = compile_text((IR / "softmax_rows.mlir").read_text(),
                           ("out", "inp", "stride", "n_rows", "n_cols"), ("*fp32", "*fp32", "i32", "i32", "i32"))
    programs = 64
    args = [out.ctypes.data, x.ctypes.data, cols, rows, cols]
    t = best(lambda: k((programs, 1, 1), args), 10)
    err = np.abs(out - numpy_softmax(x.astype(np.float64))).max()
    print(f"softmax {rows}x{cols} fp32: numpy {t_np * 1e3:.2f} ms, tritium {t * 1e3:.2f} ms, "
          f"speedup {t_np / t:.2f}x (max err {err:.1e}); compile llir->obj "
          f"{(secs['llir'] + secs['asm'] + secs['obj']) * 1e3:.0f} ms")


if __name__ == "__main__":
    import os

    print(f"host: {os.cpu_count()} cpus")
    bench_add()
    bench_softmax()
