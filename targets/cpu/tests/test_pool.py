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
