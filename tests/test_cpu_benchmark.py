"""``benchmarks/cpu.py``'s allocator setting: after a large temporary is freed, a later array of a
few MiB still gets freshly mapped pages (not the heap's reused ones, which made a kernel timed late
in the run slower than the same kernel in a fresh process)."""

import platform
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

PROBE = """
import sys
sys.path.insert(0, {benchmarks!r})
import numpy as np
if {fixed}:
    from cpu import fresh_pages_for_large_arrays
    fresh_pages_for_large_arrays()
big = np.ones(3 << 20)  # 24 MiB, freed: glibc raises its mmap threshold to that (up to 32 MiB)
del big
x = np.ones(1 << 22, np.float32)  # 16 MiB
address = x.ctypes.data
heap = [line.split()[0] for line in open("/proc/self/maps") if line.rstrip().endswith("[heap]")]
inside = any(int(lo, 16) <= address < int(hi, 16) for lo, hi in (r.split("-") for r in heap))
print("heap" if inside else "mapped")
"""


def where(fixed: bool) -> str:
    code = PROBE.format(benchmarks=str(BENCHMARKS), fixed=fixed)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc")
def test_large_arrays_get_fresh_pages_after_a_large_free():
    assert where(fixed=False) == "heap"  # the default behaviour the benchmark guards against
    assert where(fixed=True) == "mapped"
