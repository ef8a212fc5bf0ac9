"""LLVM optimisation and code generation in a forked worker, so an LLVM abort is a compile error;
every target's back-end steps (``machine_code``: optimise, emit assembly and objects; ``link_bitcode``:
a device library) go through it.

llvmlite's LLVM is built with assertions on: a failed assertion (or ``report_fatal_error``) ends
the process running it, and no Python handler can catch that. Targets therefore run their LLVM
steps through ``run_isolated``: in a child forked for the step (copy-on-write, a few milliseconds;
the parent's target machines and caches come along), whose result returns through a pipe. When the
child dies, the step runs once more in a fresh child with LLVM's conservative pipeline
(``safe=True``) and a warning; when that dies too, the compile fails with a ``CompilationError``
naming the kernel, the stage and LLVM's last words. Without ``os.fork`` the step runs in process.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import re
import signal
import sys
import tempfile
import traceback
import warnings
from typing import Any, Callable, TypeVar

from llvmlite import binding as llvm

from ..errors import CompilationError, TritiumError
from ..runtime.compile_lock import COMPILE_LOCK

T = TypeVar("T")

#: the optimisation level of the normal pipeline
OPT_LEVEL = 3


class LLVMFallbackWarning(UserWarning):
    """LLVM failed on a kernel, which was then compiled with a conservative pipeline (slower code)."""


def optimize(module: llvm.ModuleRef, machine: llvm.TargetMachine, *, vectorize: bool, safe: bool = False) -> None:
    """Run LLVM's -O3 pipeline on ``module``: with the loop vectorizer where ``vectorize`` (SIMD
    hosts gain from it; SIMT code, one lane per thread, does not), and without the vectorizers,
    unrolling and the -O3 extras where ``safe`` (the retry after LLVM failed)."""
    pto = llvm.create_pipeline_tuning_options(speed_level=1 if safe else OPT_LEVEL)
    if safe or not vectorize:
        pto.loop_vectorization = pto.slp_vectorization = pto.loop_interleaving = False
    if safe:
        pto.loop_unrolling = False
    builder = llvm.create_pass_builder(machine, pto)
    builder.getModulePassManager().run(module, builder)


def machine_code(llir_text: str, machine: llvm.TargetMachine, kernel: str, stage: str, *, vectorize: bool,
                 outputs: tuple[str, ...] = ("assembly",),
                 prepare: Callable[[llvm.ModuleRef], None] | None = None) -> tuple:
    """The ``outputs`` (``"assembly"`` text, ``"object"`` bytes) of LLVM IR text for ``machine``, in
    a worker (``run_isolated``): parsed, ``prepare``d (a device library linked in: ``link_bitcode``),
    verified and optimised once (``optimize``), each output emitted from its own copy of the
    optimised module, since code generation may change the module it runs on (AMDGPU's does)."""

    def emit(safe: bool) -> tuple:
        module = llvm.parse_assembly(llir_text)
        if prepare is not None:
            prepare(module)
        module.verify()
        optimize(module, machine, vectorize=vectorize, safe=safe)
        optimized = str(module) if len(outputs) > 1 else ""
        out = []
        for i, what in enumerate(outputs):
            copy = module if i == 0 else llvm.parse_assembly(optimized)
            out.append(machine.emit_assembly(copy) if what == "assembly" else machine.emit_object(copy))
        return tuple(out)

    return run_isolated(kernel, stage, emit)


def link_bitcode(module: llvm.ModuleRef, bitcode: bytes, prefix: str) -> None:
    """Link the functions ``module`` declares whose names start with ``prefix`` (a device library's:
    NVIDIA's libdevice ``__nv_``) from ``bitcode`` into it, internalised so -O3 keeps only what is
    called. Nothing is linked where the module declares none."""
    if not any(f.is_declaration and f.name.startswith(prefix) for f in module.functions):
        return
    library = llvm.parse_bitcode(bitcode)
    library.triple, library.data_layout = module.triple, module.data_layout
    defined = {f.name for f in library.functions if not f.is_declaration}
    module.link_in(library)  # linkonce functions nothing calls are left out
    for f in module.functions:
        if f.name in defined and not f.is_declaration:
            f.linkage = "internal"


def run_isolated(kernel: str, stage: str, work: Callable[[bool], T]) -> T:
    """``work(safe)`` run in a forked child: ``safe=False`` first, then ``safe=True`` with a warning
    if LLVM killed the first child. Exceptions ``work`` raises are raised here; ``work`` must return
    a picklable value (text or bytes) and change nothing the caller reads afterwards."""
    if not hasattr(os, "fork"):
        return work(False)
    done, value = _in_child(work, False)
    if done:
        return value
    warnings.warn(f"kernel '{kernel}': LLVM failed in stage '{stage}' ({value.splitlines()[0]}); compiled it again "
                  "with a conservative LLVM pipeline, whose code may be slower. Please report this kernel.",
                  LLVMFallbackWarning, stacklevel=2)
    done, again = _in_child(work, True)
    if done:
        return again
    raise CompilationError(kernel, f"LLVM failed in stage '{stage}', also with its conservative pipeline, and "
                           f"the compilation was stopped (the process lives on). LLVM said:\n{again}\n"
                           "This is a bug of tritium or LLVM: please report the kernel with this message.")


def _in_child(work: Callable[[bool], T], safe: bool) -> tuple[bool, Any]:
    """(True, result) of ``work(safe)`` in a forked child, or (False, how the child died)."""
    read_fd, write_fd = os.pipe()
    with tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        with warnings.catch_warnings():  # Python 3.12 warns about forking a threaded process; the
            warnings.simplefilter("ignore", DeprecationWarning)  # child runs LLVM only, no locks
            parent, pid = os.getpid(), os.fork()
        if pid == 0:
            _end_with(parent)
            _child(work, safe, read_fd, write_fd, err.fileno())
        os.close(write_fd)
        try:
            with COMPILE_LOCK.waiting(), os.fdopen(read_fd, "rb") as answer:  # others compile meanwhile
                data = answer.read()
                _, status = os.waitpid(pid, 0)
        except BaseException:  # Ctrl-C while LLVM works: the child goes too
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise
        err.seek(0)
        said = err.read().decode(errors="replace")
    if status != 0 or not data:
        return False, _death(status, said)
    if said:
        sys.stderr.write(said)
    returned, value = pickle.loads(data)
    if not returned:
        raise value
    return True, value


def _end_with(parent: int) -> None:
    """Make this forked child die with ``parent`` (Linux's parent-death signal): a parent killed
    while LLVM works (a conformance case past its time) must not leave LLVM running on."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the child finishes its step, then exits
        return
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)


_PR_SET_PDEATHSIG = 1


def _child(work: Callable[[bool], Any], safe: bool, read_fd: int, write_fd: int, err_fd: int) -> None:
    """The forked child: run ``work``, send (returned, value or exception), and exit without running
    the parent's exit handlers or flushing its buffers a second time."""
    status = 1
    try:
        os.close(read_fd)
        os.dup2(err_fd, 2)  # LLVM's assertion text, for the parent's message
        faulthandler.disable()  # an abort here is the parent's to report, without a Python stack dump
        try:
            payload = (True, work(safe))
        except BaseException as e:  # noqa: BLE001 - every failure goes back to the parent
            payload = (False, _portable(e))
        with os.fdopen(write_fd, "wb") as out:
            pickle.dump(payload, out)
        sys.stderr.flush()
        status = 0
    finally:
        os._exit(status)


def _portable(e: BaseException) -> BaseException:
    """``e`` if it survives pickling, else a plain error with its text; a failure that is not
    tritium's own carries the child's traceback as a note."""
    if not isinstance(e, TritiumError):
        e.add_note("in the LLVM worker process:\n" + "".join(traceback.format_exception(e)))
    try:
        pickle.loads(pickle.dumps(e))
        return e
    except Exception:  # noqa: BLE001 - an exception type whose constructor pickling cannot replay
        kind = TritiumError if isinstance(e, TritiumError) else RuntimeError
        return kind(f"{type(e).__name__}: {e}")


def _death(status: int, said: str) -> str:
    """How the child ended, after LLVM's message: the lines of stderr that state the failure (an
    assertion, ``LLVM ERROR``), else its last lines."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        how = f"killed by {signal.Signals(sig).name}" if sig in set(signal.Signals) else f"killed by signal {sig}"
    else:
        how = f"exited with status {os.WEXITSTATUS(status)} and no result"
    lines = [line for line in said.strip().splitlines() if line.strip()]
    stated = [line for line in lines if re.search(r"Assertion|LLVM ERROR|error:", line)]
    return "\n".join((stated or lines)[-5:] + [f"(the LLVM worker process was {how})"])
