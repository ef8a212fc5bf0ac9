"""Block-wide operations compile in seconds on the cpu, whatever the host's vector width."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import numpy as np
    import tritium
    import tritium.language as tl
    import tritium_cpu.hooks

    tritium_cpu.hooks.host_vector_bits = lambda: 256  # AVX2's chunks, where the sort's IR explodes

    @tritium.jit
    def min_of_sorted(x_ptr, out_ptr, N: tl.constexpr):
        tl.store(out_ptr, tl.min(tl.sort(tl.load(x_ptr + tl.arange(0, N))), 0))

    x = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    out = np.zeros(1, np.float32)
    min_of_sorted[(1,)](x, out, N=64)
    assert out[0] == x.min(), (out, x.min())
""")


def test_sort_of_64_elements_compiles_in_seconds_at_8_lanes(tmp_path):
    """LLVM's CRC recogniser (loop-idiom) once spent minutes on the sort's xor network."""
    env = {**os.environ, "TRITIUM_CACHE_DISABLE": "1", "TRITIUM_TARGET": "cpu"}
    script = tmp_path / "sort64.py"
    script.write_text(CHILD)
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr
