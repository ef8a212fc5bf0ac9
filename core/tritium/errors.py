"""Errors users see. Each names the kernel and, where there is one, the source line to change."""

from __future__ import annotations

import functools
import sys
import warnings
from typing import Any, Callable


class TritiumError(Exception):
    """Base class of every error tritium raises on purpose."""


#: Triton's name of the base class (``triton.errors.TritonError``): ``except triton.TritonError`` ports
TritonError = TritiumError


class OutOfResources(TritiumError):
    """A kernel needs more of a device resource (shared memory, threads, registers) than a program
    may have; Triton's signature and message, plus the kernel's name when known."""

    def __init__(self, required: int, limit: int, name: str, kernel: str = ""):
        self.required, self.limit, self.name, self.kernel = required, limit, name, kernel
        super().__init__(str(self))

    def __str__(self) -> str:
        who = f"kernel '{self.kernel}': " if self.kernel else ""
        return (f"{who}out of resource: {self.name}, Required: {self.required}, Hardware limit: {self.limit}. "
                "Reducing block sizes or `num_stages` may help.")

    def __reduce__(self):  # picklable (the autotuner's and the suite's worker processes)
        return type(self), (self.required, self.limit, self.name, self.kernel)


class TargetError(TritiumError):
    """An unknown or unavailable target."""


class ArgumentError(TritiumError):
    """A kernel launched with arguments it cannot take."""


class ArgumentOverflowError(ArgumentError, OverflowError):
    """An integer argument outside the range of its parameter's type (or of 64 bits): an
    ``OverflowError`` too, as Triton's launcher raises."""


class MemoryPlaceError(ArgumentError, ValueError):
    """An array in memory the target's kernels cannot read (a host array for a GPU target): a
    ``ValueError`` too, as Triton's launcher raises."""


class OptionError(ArgumentError, ValueError, AssertionError):
    """A launch option out of its range (``num_warps=3``): a ``ValueError`` and an ``AssertionError``
    too, as Triton's backends raise one or assert the other, option by option."""


def option_error(kernel: str, e: TritiumError) -> ArgumentError:
    """``e``, raised checking launch options, as an error of the kernel ``kernel``: an
    ``ArgumentError`` of the same kind (an ``OptionError`` stays one)."""
    return (type(e) if isinstance(e, ArgumentError) else ArgumentError)(f"kernel '{kernel}': {e}")


class NotImplementedYet(TritiumError, AttributeError):
    """A Triton builtin tritium does not have yet: an ``AttributeError`` (so ``hasattr`` is False
    and feature checks work) whose message says it is not implemented yet, not that it is a typo."""


class LocatedError(TritiumError):
    """An error at a line of a kernel's source: the kernel, file:line, the message, the line and a caret."""

    def __init__(self, kernel: str, message: str, *, filename: str = "", lineno: int | None = None,
                 source_line: str = "", col: int | None = None):
        self.kernel, self.message, self.filename, self.lineno = kernel, message, filename, lineno
        self.error_message = message  # Triton's name for the message alone (``CompilationError.error_message``)
        #: the error that the source line raised, without its traceback (``__cause__`` when the
        #: error leaves tritium, as Triton's tests read it; see ``user_facing``)
        self.reason: BaseException | None = None
        where = f"{filename}:{lineno}" if lineno is not None else filename
        text = f"in kernel '{kernel}'" + (f" at {where}" if where else "") + f": {message}"
        if source_line.strip():
            text += f"\n    {source_line.strip()}"
            if col is not None:
                indent = len(source_line) - len(source_line.lstrip())
                text += "\n    " + " " * max(col - indent, 0) + "^"
        super().__init__(text)


class CompilationError(LocatedError):
    """A kernel that cannot be compiled; the message quotes the offending source line."""


class TargetLimitation(CompilationError):
    """A valid kernel uses what its target cannot compile (a math function its GPU computes only
    with a device library the target does not link): located like every compile error, and a class
    of its own, so that test tools tell a target's stated limit from a compiler bug."""


class CompileTimeAssertionFailure(CompilationError):
    """A ``tl.static_assert`` (or ``assert`` on constants) that failed while compiling; Triton's name."""


class KernelRuntimeError(LocatedError):
    """A running kernel did something wrong; the message names the program id (``pid``) as well."""


#: Triton's name for what a kernel raises when it fails while the interpreter runs it; in tritium
#: every run-time failure of a kernel (the interpreter's, and compiled targets' debug checks) is one
InterpreterError = KernelRuntimeError


class OutOfBoundsError(KernelRuntimeError):
    """A load or store outside the memory of the array its pointer derives from (checked by the
    interpreter always, and by compiled targets in debug mode)."""


class DeviceAssertionError(KernelRuntimeError):
    """A ``tl.device_assert`` that failed (checked under ``debug=True`` or ``TRITIUM_DEBUG=1``)."""


def user_facing(fn: Callable) -> Callable:
    """Mark an entry point users call (a launch, ``warmup``, ``compile``): a tritium error leaves it
    with a fresh traceback, so the user sees their own line and the message, not the library's frames."""
    @functools.wraps(fn)
    def entry(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TritiumError as e:
            raise e.with_traceback(None) from reason_of(e)
    return entry


def reason_of(e: BaseException) -> BaseException | None:
    """What a tritium error leaving to the user is chained to (``raise e from reason_of(e)``): for a
    located error, the error its source line raised, without a traceback (Triton chains its
    compile errors to that: ``e.__cause__``); None for others, so no library frames show."""
    return getattr(e, "reason", None)


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` at the user's line: the innermost frame that is not core tritium's (the
    ``tritium`` package, its generated launch code) nor the standard library's that it calls (``ast``'s
    visitors, ``functools``); a target package or the conformance suite calling core is a user too. A
    fixed ``stacklevel`` cannot find that frame, since launches, autotuning, ``warmup`` and compiles
    reach one warning through different depths. With no such frame (a compile on a worker thread),
    the warning points at tritium's line that gives it."""
    frame, level = sys._getframe(1), 2  # level 2: warn's caller, which sys._getframe(1) is
    while frame is not None and _is_library_frame(frame):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level if frame is not None else 2)


@functools.cache
def _stdlib() -> tuple[str, ...]:
    import sysconfig

    return tuple({sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib")})


def _is_library_frame(frame: Any) -> bool:
    package = (frame.f_globals.get("__name__") or "").partition(".")[0]
    filename = frame.f_code.co_filename
    return (package == "tritium" or filename.startswith("<tritium")
            or (filename.startswith(_stdlib()) and "site-packages" not in filename))
