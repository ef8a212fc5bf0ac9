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
import linecache
import threading

import numpy as np
from llvmlite import binding as llvm
from tritium.errors import DeviceAssertionError
from tritium.language import dtypes as T
from tritium.codegen.block.hooks import ASSERT_SYMBOL, PRINT_SYMBOL
from tritium.runtime import debug_output

from . import abi


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

_NUMPY = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
          "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "fp16": np.float16, "bf16": np.uint16,
          "fp32": np.float32, "fp64": np.float64}


class LaunchState(threading.local):
    """What the callbacks of the launch running on this thread report back to its launcher."""

    def __init__(self) -> None:
        self.reset(None)

    def reset(self, counter: ctypes.c_int32 | None) -> None:
        self.counter = counter  # the grid's program counter: set past the end to stop the launch
        self.failure: DeviceAssertionError | None = None
        self.error: BaseException | None = None  # a bug in a callback, re-raised after the launch


STATE = LaunchState()


def _dims(text: bytes) -> tuple[int, ...]:
    return tuple(int(d) for d in text.decode().split(",")) if text else ()


def _print(prefix: bytes, type_code: bytes, shape: bytes, values: int | None, hex: int, operand: int, count: int,
           x: int, y: int, z: int) -> None:
    try:
        if not values:
            lines = debug_output.print_lines(prefix.decode(), (x, y, z), [], bool(hex))
        else:
            t, dims = T.from_signature(type_code.decode()), _dims(shape)
            np_type = np.dtype(np.uint64 if t.is_ptr() else _NUMPY[t.short])
            memory = (ctypes.c_char * (int(np.prod(dims, dtype=np.int64)) * np_type.itemsize)).from_address(values)
            array = np.frombuffer(memory, dtype=np_type).reshape(dims)
            lines = debug_output.operand_lines(prefix.decode(), (x, y, z), array, t, bool(hex), operand, count)
        debug_output.write(lines)
    except BaseException as e:  # noqa: BLE001 - must not unwind through the kernel's frames
        STATE.error = STATE.error or e


def _assert(kernel: bytes, file: bytes, line: int, message: bytes, shape: bytes, x: int, y: int, z: int,
            index: int) -> None:
    try:
        if STATE.failure is None:
            dims = _dims(shape)
            where = np.unravel_index(index, dims) if dims else ()
            filename = file.decode()
            STATE.failure = DeviceAssertionError(
                kernel.decode(), debug_output.assertion_message(message.decode(), (x, y, z), where),
                filename=filename, lineno=line or None,
                source_line=linecache.getline(filename, line) if line else "")
        if STATE.counter is not None:
            ctypes.c_uint32.from_address(ctypes.addressof(STATE.counter)).value = abi.STOP  # stop the grid
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
