"""The compile lock (``runtime.compile_lock``): a compile lets it go while it waits for another
process, so the autotuner's configs compile side by side, with the same results as one by one."""

from __future__ import annotations

import threading

import numpy as np

import tritium
import tritium.language as tl
from tritium.runtime import autotuner
from tritium.runtime.compile_lock import CompileLock


def test_a_waiting_holder_lets_another_thread_in_and_holds_as_deep_again():
    lock, entered, order = CompileLock(), threading.Event(), []

    def other():
        entered.wait()
        with lock:
            order.append("other")

    thread = threading.Thread(target=other)
    thread.start()
    with lock, lock:  # held twice, as a compile inside a launch holds it
        with lock.waiting():
            entered.set()
            thread.join(timeout=10)  # would time out if waiting() kept the lock
            order.append("waited")
        got = []
        probe = threading.Thread(target=lambda: got.append(lock._lock.acquire(blocking=False)))
        probe.start()
        probe.join()
    assert order == ["other", "waited"] and got == [False]  # held again after the wait
    with lock.waiting():  # a thread holding nothing waits as it is
        pass


@tritium.autotune(configs=[tritium.Config({"BLOCK": b}, num_warps=w) for b in (64, 128, 256) for w in (1, 2)],
                  key=["n"])
@tritium.jit
def scaled(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3.0, mask=offs < n)


def test_autotuned_configs_compile_side_by_side_as_one_by_one(monkeypatch):
    """On the cpu target, whose LLVM runs in a worker process: four threads compile the six configs
    (the front ends taking turns) into what one thread compiles."""
    monkeypatch.setenv("TRITIUM_TARGET", "cpu")
    monkeypatch.setenv("TRITIUM_CACHE_DISABLE", "1")
    monkeypatch.setattr(autotuner.os, "cpu_count", lambda: 4)
    x = np.arange(512, dtype=np.float32)
    out = np.zeros_like(x)
    texts, threads_used = [], []
    real = autotuner.AsyncCompileMode.submit

    def submit(self, key, compile_fn):
        threads_used.append(self.executor._max_workers)
        return real(self, key, compile_fn)

    monkeypatch.setattr(autotuner.AsyncCompileMode, "submit", submit)
    for threads in (1, 4):
        monkeypatch.setattr(autotuner, "MAX_COMPILE_THREADS", threads)
        scaled.fn.kernels.clear()
        compiled = scaled.warmup(x, out, 512, grid=(1,))
        texts.append([sorted((k, v) for k, v in c.asm.items() if isinstance(v, str)) for c in compiled])
    assert threads_used == [4] * 6  # one thread: compiled in the caller; four: all six on the pool
    assert len(texts[0]) == 6 and texts[0] == texts[1] and all(dict(t)["asm"] for t in texts[0])
