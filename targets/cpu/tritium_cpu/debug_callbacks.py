"""The driver's half of ``tile.print`` and ``tile.assert``: Python functions compiled kernels call.

A kernel that prints or asserts calls two external C functions (declared by core's
``tritium.codegen.block.debug``);
the driver binds them, through ``llvmlite.binding.add_symbol``, to ctypes callbacks that read the
values out of the kernel's stack and format them with ``tritium.runtime.debug_output``, the same
code the interpreter prints with. A callback takes the GIL: kernels with these ops run their grid
on the launching thread, one program after another in the interpreter's order, so output comes
in program order and the first failed assertion stops the launch.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable

from llvmlite import binding as llvm
from tritium.errors import DeviceAssertionError
from tritium.codegen.block.hooks import ASSERT_SYMBOL, PRINT_SYMBOL
from tritium.runtime import debug_output



#: ``print(prefix, type, shape, values, hex, operand, count, x, y, z)``: the elements at ``values``
#: (row-major) of operand ``operand`` of ``count``; ``type`` is its signature spelling (``i32``),
#: ``shape`` ``d0,d1`` (empty for a scalar); ``values`` is null when there is nothing to print
_PRINT = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p,
                          ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32,
                          ctypes.c_int32)
#: ``assert(kernel, file, line, message, shape, x, y, z, index)``: element ``index`` (row-major, of
#: a condition of ``shape`` ``d0,d1``) of program (x, y, z) is false
_ASSERT = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_char_p,
                           ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int64)


class LaunchState(threading.local):
    """What the callbacks of the launch running on this thread report back to its launcher."""

    def __init__(self) -> None:
        self.reset(None)

    def reset(self, stop: Callable[[], None] | None) -> None:
        self.stop = stop  # stops the launch after the programs in flight
        self.failure: DeviceAssertionError | None = None
        self.error: BaseException | None = None  # a bug in a callback, re-raised after the launch


STATE = LaunchState()


def _print(prefix: bytes, type_code: bytes, shape: bytes, values: int | None, hex: int, operand: int, count: int,
           x: int, y: int, z: int) -> None:
    try:
        read = (lambda n: ctypes.string_at(values, n)) if values else None  # noqa: E731
        debug_output.write(debug_output.call_lines(prefix.decode(), type_code.decode(), shape.decode(), read,
                                                   bool(hex), operand, count, (x, y, z)))
    except BaseException as e:  # noqa: BLE001 - must not unwind through the kernel's frames
        STATE.error = STATE.error or e


def _assert(kernel: bytes, file: bytes, line: int, message: bytes, shape: bytes, x: int, y: int, z: int,
            index: int) -> None:
    try:
        if STATE.failure is None:
            STATE.failure = debug_output.call_assertion(kernel.decode(), file.decode(), line, message.decode(),
                                                        shape.decode(), (x, y, z), index)
        if STATE.stop is not None:
            STATE.stop()
    except BaseException as e:  # noqa: BLE001
        STATE.error = STATE.error or e


_CALLBACKS = (_PRINT(_print), _ASSERT(_assert))  # kept alive as long as the module
_registered = False


def register() -> None:
    """Bind the kernels' external debug functions to the callbacks (before loading any object)."""
    global _registered
    if not _registered:
        llvm.add_symbol(PRINT_SYMBOL, ctypes.cast(_CALLBACKS[0], ctypes.c_void_p).value)
        llvm.add_symbol(ASSERT_SYMBOL, ctypes.cast(_CALLBACKS[1], ctypes.c_void_p).value)
        _registered = True


def raise_reported() -> None:
    """After a launch: raise what its callbacks reported (a failed assertion first)."""
    failure, error = STATE.failure, STATE.error
    STATE.reset(None)
    if error is not None:
        raise error
    if failure is not None:
        raise failure
