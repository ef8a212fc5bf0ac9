"""Ctrl-C during a long cpu launch raises KeyboardInterrupt promptly, and the pool stays usable: a
launch of many programs stops between programs, one long program at its next loop iteration."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

CHILD = textwrap.dedent("""
    import sys, time
    import numpy as np
    import tritium
    import tritium.language as tl

    @tritium.jit
    def spin(out_ptr, n):
        acc = 0.0
        for i in range(n):
            acc = acc * 0.5 + 1.0
        tl.store(out_ptr + tl.program_id(0), acc)

    programs, n = int(sys.argv[1]), int(sys.argv[2])
    out = np.zeros(4096, np.float32)
    spin[(4,)](out, 10)  # compiled and warm
    print("launching", flush=True)
    start = time.perf_counter()
    try:
        spin[(programs,)](out, n)  # minutes of work
    except KeyboardInterrupt:
        print(f"interrupted after {time.perf_counter() - start:.2f}s", flush=True)
        spin[(8,)](out, 3)  # the pool still runs kernels
        assert out[:8].tolist() == [1.75] * 8, out[:8]
        print("relaunched", flush=True)
        sys.exit(0)
    print("finished without interruption", flush=True)
    sys.exit(1)
""")


@pytest.mark.parametrize("programs,n", [(4096, 1 << 24), (1, 1 << 34)], ids=["many-programs", "one-program"])
def test_ctrl_c_stops_a_long_launch(tmp_path, programs, n):
    env = {**os.environ, "TRITIUM_CACHE_DIR": str(tmp_path), "TRITIUM_TARGET": "cpu"}
    script = tmp_path / "long_launch.py"
    script.write_text(CHILD)
    proc = subprocess.Popen([sys.executable, str(script), str(programs), str(n)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "launching", proc.stderr.read()
        time.sleep(0.5)
        sent = time.perf_counter()
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        waited = time.perf_counter() - sent
    finally:
        proc.kill()
    assert proc.returncode == 0, (out, err)
    assert "interrupted after" in out and "relaunched" in out, (out, err)
    assert waited < 5, f"took {waited:.1f}s to stop"
