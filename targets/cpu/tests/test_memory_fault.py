"""A kernel that faults (an access far outside its arrays, without debug mode) still kills the
process, as a wild access must, but says first which kernel it was and how to find the access."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import faulthandler, sys
    import numpy as np
    import tritium
    import tritium.language as tl

    if sys.argv[1] == "faulthandler":
        faulthandler.enable()  # Python's own report comes after ours

    @tritium.jit
    def run_past_the_end(x_ptr, y_ptr, far):
        tl.store(y_ptr, tl.load(x_ptr + far))

    x, y = np.zeros(4, np.float32), np.zeros(1, np.float32)
    run_past_the_end[(1,)](x, y, 0)
    print("launched", flush=True)
    run_past_the_end[(1,)](x, y, 1 << 40)
    print("survived", flush=True)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fault handler is installed on Linux")
@pytest.mark.parametrize("mode", ["plain", "faulthandler"])
def test_a_memory_fault_names_the_kernel_and_suggests_debug_mode(tmp_path, mode):
    script = tmp_path / "fault.py"
    script.write_text(CHILD)
    env = {**os.environ, "TRITIUM_CACHE_DIR": str(tmp_path / "cache"), "TRITIUM_TARGET": "cpu"}
    env.pop("TRITIUM_DEBUG", None)
    proc = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, env=env, timeout=120)
    assert proc.stdout.splitlines() == ["launched"], (proc.stdout, proc.stderr)
    assert proc.returncode == -signal.SIGSEGV, (proc.returncode, proc.stderr)
    assert "tritium: the cpu kernel 'run_past_the_end' made a memory fault" in proc.stderr, proc.stderr
    assert "TRITIUM_DEBUG=1" in proc.stderr
    if mode == "faulthandler":
        assert "Fatal Python error: Segmentation fault" in proc.stderr, proc.stderr
