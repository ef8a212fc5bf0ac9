"""Worker processes that may die: the machinery the suite and the fuzzer share for crash isolation.

A worker is ``python -m MODULE ARGS`` speaking lines: it says ``ready`` once set up, then answers
each request line with one or more lines (``serve``). The parent (``Worker``) reads each answer
with a time limit; a worker that dies (an LLVM abort, a segfault, a device fault) or does not
answer in time comes back as a ``Death`` saying how, with the last lines of its stderr, and is
started afresh on the next request. Subprocesses, not fork: forking after CUDA or LLVM
initialisation is unsafe.
"""

from __future__ import annotations

import dataclasses
import faulthandler
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
from typing import Callable, Iterable

READY = "ready"
#: lines of a dead worker's stderr that its ``Death`` quotes, and innermost Python frames
TAIL_LINES, FRAMES = 6, 3


@dataclasses.dataclass
class Death:
    """Why a worker gave no answer: ``crash`` (it died) or ``timeout`` (it was killed)."""

    kind: str
    how: str


def exit_description(code: int) -> str:
    """``killed by SIGSEGV`` for a negative return code, ``exited with status N`` otherwise."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


def stderr_tail(text: str) -> list[str]:
    """The last lines of a dead worker's stderr; when ``faulthandler`` dumped the Python stack of a
    fatal signal, the last lines before the dump and the innermost frames of the dump, in short."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    fatal = next((i for i, line in enumerate(lines) if line.startswith("Fatal Python error")), None)
    if fatal is None:
        return lines[-TAIL_LINES:]
    frames = [re.sub(r'File "(?:[^"]*/)?([^"/]+)", line (\d+) in (.*)', r"at \1:\2 in \3", line.strip())
              for line in lines[fatal:] if line.strip().startswith("File ")]
    return lines[:fatal][-TAIL_LINES:] + frames[:FRAMES]


class Worker:
    """One worker process, started on the first request and again after it died or hung."""

    def __init__(self, argv: list[str], timeout: float, env: dict[str, str] | None = None,
                 workdir: str | None = None):
        self.argv, self.timeout, self.env, self.workdir = argv, timeout, env, workdir
        self.proc: subprocess.Popen | None = None
        self.used = False  #: whether the running process (if any) has been sent a request

    def start(self) -> Death | None:
        """Start a fresh process (closing a running one); a ``Death`` when it dies while setting up."""
        self.close()
        self.errlog = tempfile.TemporaryFile(dir=self.workdir)
        self.proc = subprocess.Popen([sys.executable, "-m", *self.argv], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.errlog, env=self.env, bufsize=0)
        line = self.receive(max(self.timeout, 60.0))
        if isinstance(line, Death) or line == READY:
            return line if isinstance(line, Death) else None
        return self._died(Death("crash", f"said {line!r} instead of {READY!r}"))

    def send(self, line: str) -> Death | None:
        """Send one request (starting the process when none runs)."""
        if self.proc is None or self.proc.poll() is not None:
            death = self.start()
            if death is not None:
                return death
        assert self.proc is not None and self.proc.stdin is not None
        self.used = True
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # it died: receive() says how
        return None

    def receive(self, timeout: float | None = None) -> str | Death:
        """The next answer line, or how the worker died (it is then closed). Unbuffered: a line
        read ahead into a buffer would hide from ``select``."""
        assert self.proc is not None and self.proc.stdout is not None
        limit = self.timeout if timeout is None else timeout
        ready, _, _ = select.select([self.proc.stdout], [], [], limit)
        if not ready:
            return self._died(Death("timeout", f"no answer within {limit:g} s"))
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            self.errlog.seek(0)
            tail = stderr_tail(self.errlog.read().decode(errors="replace"))
            stderr = "; stderr: " + " | ".join(tail) if tail else ""
            return self._died(Death("crash", exit_description(code) + stderr))
        return line.decode().rstrip("\n")

    def _died(self, death: Death) -> Death:
        self.close()
        return death

    def close(self) -> None:
        self.used = False
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc = None
            self.errlog.close()


def serve(handle: Callable[[str], Iterable[str]]) -> None:
    """The worker's side: answer each request line on stdin with the lines ``handle`` yields.

    Answers go to a private copy of stdout; what the work itself prints (a kernel's
    ``device_print``, a library's chatter) is sent to stderr so that it cannot garble them. A
    fatal signal dumps the Python stack to stderr (``faulthandler``): where the process died.
    """
    faulthandler.enable()
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    answers.write(READY + "\n")
    for request in sys.stdin:
        for line in handle(request.rstrip("\n")):
            answers.write(line + "\n")


def run_lanes(lanes: list[Callable[[], None]], on_failure: Callable[[], None] = lambda: None) -> None:
    """Run each of ``lanes`` in its own thread and wait for them all; the first exception one raised
    (the runner's own bug, not a case's) is re-raised here, in the caller's thread, after
    ``on_failure`` has been called in the failing lane (to stop the others). The threads are daemons:
    an interrupted run (Ctrl-C, whose SIGINT reaches the workers too) does not wait for them."""
    failures: list[BaseException] = []

    def guarded(lane: Callable[[], None]) -> None:
        try:
            lane()
        except BaseException as exc:
            failures.append(exc)
            on_failure()

    threads = [threading.Thread(target=guarded, args=(lane,), daemon=True) for lane in lanes]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if failures:
        raise failures[0]
