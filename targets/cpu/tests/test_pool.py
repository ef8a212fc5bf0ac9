"""The cpu driver's helper threads live in native code: a launch starts them without the GIL,
whether they are still spinning after the last launch or asleep in the kernel, and a launch that
comes before a new helper thread first runs is not missed. The pool's code is compiled once per
host."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from llvmlite import binding as llvm

import tritium
import tritium.language as tl
from tritium.runtime.cache import Cache
from tritium_cpu.driver import HELPER_SPIN_S, CpuDriver, _jit


@tritium.jit
def twice_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)


def test_launches_find_helpers_spinning_and_asleep(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_TARGET", "cpu")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    x = np.arange(64 * 32, dtype=np.float32)
    for pause in (0.0, HELPER_SPIN_S / 10, HELPER_SPIN_S * 50):  # back to back, spinning, asleep
        for _ in range(20):
            out = np.zeros_like(x)
            twice_kernel[(64,)](x, out, BLOCK=32)
            np.testing.assert_array_equal(out, 2 * x)
            time.sleep(pause)


FRESH_POOLS = textwrap.dedent("""
    import numpy as np
    import tritium, tritium.language as tl
    from tritium_cpu.driver import CpuDriver

    @tritium.jit
    def twice_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)

    x = np.arange(64 * 32, dtype=np.float32)
    twice_kernel[(64,)](x, np.zeros_like(x), BLOCK=32)  # compiled once
    for i in range(2, 14):
        driver = CpuDriver(threads=i)  # a new pool of i threads, launched at once
        out = np.zeros_like(x)
        kernel = twice_kernel.warmup(x, out, BLOCK=32, grid=(64,))
        launcher = driver.load(kernel.binary, kernel.signature, kernel.metadata)
        launcher((64, 1, 1), [x.ctypes.data, out.ctypes.data])
        assert (out == 2 * x).all(), i
    print("ok")
""")


def test_a_launch_at_once_after_the_pool_starts_is_not_missed(tmp_path):
    env = {"TRITIUM_TARGET": "cpu", "TRITIUM_CACHE_DIR": str(tmp_path)}
    script = tmp_path / "fresh_pools.py"
    script.write_text(FRESH_POOLS)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env})
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_a_driver_runs_on_the_threads_it_was_given():
    assert CpuDriver(threads=3).pool.size == 3


def test_runtime_modules_are_compiled_once_per_host(monkeypatch, tmp_path):
    """The pool's, the signal handlers' and the conversion helpers' code is JIT-compiled on a
    host's first launch and read from the kernel cache after (a new process's first launch)."""
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    module = "define i32 @answer() {\n  ret i32 42\n}\n"
    _jit(module)
    assert [e.name for e in Cache().entries()] == ["cpu-runtime"]
    monkeypatch.setattr(llvm.TargetMachine, "emit_object", lambda *a: pytest.fail("compiled again"))
    engine = _jit(module)
    assert ctypes.CFUNCTYPE(ctypes.c_int32)(engine.get_function_address("answer"))() == 42


@tritium.jit
def count_runs_kernel(runs_ptr):
    pid = tl.program_id(0) + tl.num_programs(0) * (tl.program_id(1) + tl.num_programs(1) * tl.program_id(2))
    tl.atomic_add(runs_ptr + pid, 1)


@tritium.jit
def wait_for_the_rest_kernel(done_ptr, saw_ptr, SPIN: tl.constexpr):
    """Program 0 waits (a bounded while) until every other program of the grid has run."""
    pid = tl.program_id(0)
    if pid == 0:
        i = 0
        while (tl.atomic_add(done_ptr, 0) < tl.num_programs(0) - 1) & (i < SPIN):
            i += 1
        tl.store(saw_ptr, tl.atomic_add(done_ptr, 0))
    else:
        tl.atomic_add(done_ptr, 1)


def launcher_on(threads: int, kernel, *args, grid, **constants):
    """``kernel`` compiled for ``args`` and loaded on a pool of ``threads`` threads."""
    compiled = kernel.warmup(*args, grid=grid, **constants)
    return CpuDriver(threads=threads).load(compiled.binary, compiled.signature, compiled.metadata)


@pytest.mark.parametrize("grid", [(1,), (2,), (3,), (5,), (63,), (64,), (65,), (1000,), (4099,), (5, 3, 2), (1, 7, 9)])
def test_each_program_runs_once_whatever_the_grid_against_the_threads(monkeypatch, tmp_path, grid):
    """A grid is cut into one share a thread (``abi``): shares of one program, of none (fewer
    programs than threads), uneven shares and 3-D grids still run every program exactly once."""
    monkeypatch.setenv("TRITIUM_TARGET", "cpu")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    runs = np.zeros(int(np.prod(grid)), np.int32)
    launcher = launcher_on(4, count_runs_kernel, runs, grid=grid)
    for launch in range(1, 4):
        launcher((grid + (1, 1))[:3], [runs.ctypes.data])
        assert (runs == launch).all(), f"programs ran {runs.min()} to {runs.max()} times, want {launch}"


def test_a_held_up_thread_has_the_rest_of_its_share_run_by_the_others(monkeypatch, tmp_path):
    """Program 0 waits for all the others; they include the rest of its thread's share, which the
    other threads must take over once theirs are spent."""
    monkeypatch.setenv("TRITIUM_TARGET", "cpu")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    done, saw = np.zeros(1, np.int32), np.zeros(1, np.int32)
    launcher = launcher_on(4, wait_for_the_rest_kernel, done, saw, SPIN=1 << 30, grid=(64,))
    launcher((64, 1, 1), [done.ctypes.data, saw.ctypes.data])
    assert saw[0] == 63 and done[0] == 63
