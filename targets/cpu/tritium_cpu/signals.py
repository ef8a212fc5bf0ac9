"""Signals during a cpu launch: a memory fault names the kernel, Ctrl-C stops long loops.

Kernels run natively in this process, so a wild access is a SIGSEGV (or SIGBUS) that kills it.
A native handler (``tritium_cpu_on_fault``, LLVM IR JIT-compiled here) first writes which kernel
was running (the launching thread's trampoline keeps its name in ``tritium_cpu_kernel`` for the
whole launch: no cost beyond one argument) and how to find the access (``TRITIUM_DEBUG=1``), then
puts the previous action back (the default, or Python's ``faulthandler``) and returns: the access
faults again and that action runs.

Python runs its SIGINT handler only between bytecodes, so a launch comes back to Python every
slice (``driver``), but one long program would hold it. ``tritium_cpu_on_interrupt`` sets the
flag ``tritium_cpu_interrupt``, which kernels test at every iteration of their loops (``scf.for``,
``scf.while``) and after each program, then calls Python's own handler. A program that sees the flag
returns at once; its launch raises ``KeyboardInterrupt``. The SIGINT handler is installed only over
Python's (a plain handler): an application's own native handler is left alone, and a later
``signal.signal(SIGINT, ...)`` replaces it (long programs then stop when they end, as before).

The handlers are installed once, on Linux (where ``struct sigaction`` has the layout below).
"""

from __future__ import annotations

import ctypes
import signal
import sys

from llvmlite import binding as llvm

INTERRUPT_SYMBOL = "tritium_cpu_interrupt"
KERNEL_SYMBOL = "tritium_cpu_kernel"

#: glibc's ``struct sigaction`` (x86-64 and AArch64): handler, 128-byte mask, int flags, restorer
_ACTION_BYTES = 152
_FLAGS_OFFSET = 136
_SA_SIGINFO = 4
_SA_ONSTACK = 0x08000000
_FAULTS = (signal.SIGSEGV, signal.SIGBUS)

_PREFIX = "\ntritium: the cpu kernel '"
_SUFFIX = ("' made a memory fault: a load or store outside the memory of its arguments (an offset past "
           "the end of an array, or a missing mask?). Run it with TRITIUM_DEBUG=1 to find it: every access "
           "is then checked, and a bad one raises an error that names the line.\n")


def _string(name: str, text: str) -> tuple[str, int]:
    """An LLVM constant holding ``text`` (no terminator), and its length."""
    data = text.encode()
    body = "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else f"\\{c:02X}" for c in data)
    return f'@{name} = private constant [{len(data)} x i8] c"{body}"', len(data)


def handlers_ir(triple: str, data_layout: str) -> str:
    """The flag, the running kernel's name and the two handlers (see the module docstring)."""
    prefix, prefix_len = _string("prefix", _PREFIX)
    suffix, suffix_len = _string("suffix", _SUFFIX)
    slots = len(_FAULTS) + 1  # the previous actions: one per fault signal, then SIGINT's
    return f"""
target triple = "{triple}"
target datalayout = "{data_layout}"
{prefix}
{suffix}
@{INTERRUPT_SYMBOL} = global i32 0, align 4
@{KERNEL_SYMBOL} = global ptr null, align 8
@tritium_cpu_previous = global [{slots} x [{_ACTION_BYTES} x i8]] zeroinitializer, align 16
declare i64 @write(i32, ptr, i64)
declare i64 @strlen(ptr)
declare i32 @sigaction(i32, ptr, ptr)
define void @tritium_cpu_on_fault(i32 %sig) {{
entry:
  %name = load atomic ptr, ptr @{KERNEL_SYMBOL} monotonic, align 8
  %running = icmp ne ptr %name, null
  br i1 %running, label %say, label %restore
say:
  %n = call i64 @strlen(ptr %name)
  call i64 @write(i32 2, ptr @prefix, i64 {prefix_len})
  call i64 @write(i32 2, ptr %name, i64 %n)
  call i64 @write(i32 2, ptr @suffix, i64 {suffix_len})
  br label %restore
restore:
  %bus = icmp eq i32 %sig, {int(signal.SIGBUS)}
  %slot = select i1 %bus, i64 1, i64 0
  %previous = getelementptr [{slots} x [{_ACTION_BYTES} x i8]], ptr @tritium_cpu_previous, i64 0, i64 %slot
  call i32 @sigaction(i32 %sig, ptr %previous, ptr null)
  ret void
}}
define void @tritium_cpu_on_interrupt(i32 %sig) {{
  store atomic i32 1, ptr @{INTERRUPT_SYMBOL} monotonic, align 4
  %previous = getelementptr [{slots} x [{_ACTION_BYTES} x i8]], ptr @tritium_cpu_previous, i64 0, i64 {slots - 1}
  %handler = load ptr, ptr %previous, align 8
  call void %handler(i32 %sig)
  ret void
}}
"""


class Signals:
    """The handlers, JIT-loaded in ``engine`` (from ``handlers_ir``), and the interrupt flag."""

    def __init__(self, engine: llvm.ExecutionEngine):
        self._engine = engine  # owns the code
        self.interrupt = ctypes.c_int32.from_address(engine.get_global_value_address(INTERRUPT_SYMBOL))


def install(engine: llvm.ExecutionEngine) -> Signals:
    """Export the flag and the name slot of ``engine`` to kernels and trampolines, and install the
    handlers (Linux only; elsewhere the flag simply stays 0). Once per process."""
    for symbol in (INTERRUPT_SYMBOL, KERNEL_SYMBOL):
        llvm.add_symbol(symbol, engine.get_global_value_address(symbol))
    if sys.platform.startswith("linux"):
        previous = engine.get_global_value_address("tritium_cpu_previous")
        libc = ctypes.CDLL(None, use_errno=True)
        for k, sig in enumerate(_FAULTS):
            _replace(libc, sig, engine.get_function_address("tritium_cpu_on_fault"),
                     previous + k * _ACTION_BYTES, only_over_plain=False)
        _replace(libc, signal.SIGINT, engine.get_function_address("tritium_cpu_on_interrupt"),
                 previous + len(_FAULTS) * _ACTION_BYTES, only_over_plain=True)
    return Signals(engine)


def _replace(libc: ctypes.CDLL, sig: int, handler: int, previous: int, only_over_plain: bool) -> None:
    """Save ``sig``'s action at ``previous`` and install ``handler`` with its mask; with
    ``only_over_plain``, only where the previous action is a plain handler function (which
    ``handler`` then calls)."""
    saved = (ctypes.c_char * _ACTION_BYTES).from_address(previous)
    if libc.sigaction(int(sig), None, saved) != 0:
        return
    old_handler = ctypes.c_void_p.from_address(previous).value or 0
    old_flags = ctypes.c_int.from_address(previous + _FLAGS_OFFSET).value
    if only_over_plain and (old_handler in (0, 1) or old_flags & _SA_SIGINFO):  # SIG_DFL, SIG_IGN
        return
    action = (ctypes.c_char * _ACTION_BYTES).from_buffer_copy(saved)
    ctypes.c_void_p.from_buffer(action).value = handler
    ctypes.c_int.from_buffer(action, _FLAGS_OFFSET).value = (old_flags & ~_SA_SIGINFO) | _SA_ONSTACK
    libc.sigaction(int(sig), action, None)
