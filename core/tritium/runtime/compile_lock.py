"""The lock that serialises compilation and loading in a process, and lets it go while a compile
waits for another process.

MLIR contexts and LLVM are not safe to drive from several threads at once, so every compile holds
``COMPILE_LOCK``. But a compile spends much of its time waiting for other processes: the forked
LLVM worker (``passes.llvm_worker``) and a target's assembler (``ptxas``). Around those waits it
calls ``COMPILE_LOCK.waiting()``, which lets another thread's compile run its own front end
meanwhile; nothing of this process's MLIR or LLVM state is touched while it waits. So the
autotuner's configs compile side by side (``runtime.autotuner``), in about the front end's time each.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator


class CompileLock:
    """A re-entrant lock that its holder can let go of, however deep, while it waits."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._depth = threading.local()

    def __enter__(self) -> CompileLock:
        self._lock.acquire()
        self._depth.n = getattr(self._depth, "n", 0) + 1
        return self

    def __exit__(self, *exc) -> None:
        self._depth.n -= 1
        self._lock.release()

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """Let other threads compile until the block ends (a no-op where this thread holds none)."""
        depth = getattr(self._depth, "n", 0)
        for _ in range(depth):
            self._lock.release()
        self._depth.n = 0
        try:
            yield
        finally:
            for _ in range(depth):
                self._lock.acquire()
            self._depth.n = depth


#: the process's one compile lock
COMPILE_LOCK = CompileLock()
