"""A lock built from ``tl.atomic_cas``, stressed over thousands of concurrent programs.

The cpu runs a grid's programs on several OS threads at once (``abi``), so a lock kernel really
contends. The orderings are the user's, as in Triton: ``sem`` becomes the LLVM ordering of the
``cmpxchg``. A correct lock takes it with ``acquire`` (or ``acq_rel``) and gives it back with
``release``; ``release`` on the taking CAS has no acquire by the memory model, but on x86 every
atomic read-modify-write is a locked instruction, a full barrier, and LLVM keeps the critical
section between the CAS loop and the unlock. A lock that did let two programs in would lose updates,
never add them: a count above the number of programs means a program ran twice, which the per-program
run counts here rule out, also when the launching thread leaves for Python after every quota of
programs (the path Ctrl-C takes).
"""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
import tritium_cpu.driver
from tritium import plugins

PROGRAMS = 4000
REPEAT = tl.constexpr(8)
BLOCK = 1024


@tritium.jit
def serialized_add(data, lock, runs, inside, overlaps, SEM: tl.constexpr, N: tl.constexpr, LOCK: tl.constexpr):
    """Each program adds 1 to ``data`` ``REPEAT`` times under the lock; ``overlaps`` counts the
    programs that found another one inside."""
    if LOCK:
        while tl.atomic_cas(lock, 0, 1, sem=SEM) == 1:
            pass
    others = tl.atomic_add(inside, 1, sem="relaxed")
    tl.atomic_add(overlaps, (others != 0).to(tl.int32), sem="relaxed")
    offs = tl.arange(0, N)
    for _ in range(REPEAT):
        tl.store(data + offs, tl.load(data + offs) + 1)
    tl.atomic_add(inside, -1, sem="relaxed")
    if LOCK:
        tl.debug_barrier()
        tl.atomic_xchg(lock, 0, sem="release")
    tl.atomic_add(runs + tl.program_id(0), 1, sem="relaxed")


def run_serialized(sem: str, lock_dtype, lock: bool = True) -> tuple[np.ndarray, np.ndarray, int]:
    data, runs = np.zeros(BLOCK, np.int64), np.zeros(PROGRAMS, np.int32)
    locks, inside, overlaps = np.zeros(1, lock_dtype), np.zeros(1, np.int32), np.zeros(1, np.int32)
    serialized_add[(PROGRAMS,)](data, locks, runs, inside, overlaps, SEM=sem, N=BLOCK, LOCK=lock)
    assert locks[0] == 0 and inside[0] == 0
    return data, runs, int(overlaps[0])


@tritium.jit
def handshake(flags, seen, SPIN: tl.constexpr):
    """Two programs each raise a flag and wait (a bounded while) for the other's."""
    pid = tl.program_id(0)
    tl.atomic_xchg(flags + pid, 1)
    i = 0
    while (tl.atomic_add(flags + 1 - pid, 0) == 0) & (i < SPIN):
        i += 1
    tl.store(seen + pid, tl.atomic_add(flags + 1 - pid, 0))


@pytest.fixture
def cpu(monkeypatch, tmp_path):
    monkeypatch.setenv(plugins.TARGET_ENV, "cpu")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    return plugins.targets()["cpu"]


def test_programs_run_concurrently(cpu):
    if cpu.driver.threads < 2:
        pytest.skip("one cpu thread: programs cannot overlap")
    flags, seen = np.zeros(2, np.int32), np.zeros(2, np.int32)
    handshake[(2,)](flags, seen, SPIN=1 << 27)
    assert seen.tolist() == [1, 1], "each program saw the other's flag while it waited"


@pytest.mark.parametrize("yield_every_quota", [False, True], ids=["slices", "every-quota"])
@pytest.mark.parametrize("lock_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("sem", ["acquire", "acq_rel", "release"])
def test_lock_serializes_every_program_exactly_once(cpu, monkeypatch, sem, lock_dtype, yield_every_quota):
    if yield_every_quota:
        monkeypatch.setattr(tritium_cpu.driver, "_SLICE_NS", 0)
    for _ in range(3):
        data, runs, overlaps = run_serialized(sem, lock_dtype)
        assert (runs == 1).all(), f"programs ran {runs.min()} to {runs.max()} times"
        assert overlaps == 0, f"{overlaps} programs found another one holding the lock"
        assert (data == PROGRAMS * REPEAT).all(), f"counts {data.min()} to {data.max()}, want {PROGRAMS * REPEAT}"
