"""The text of ``tl.device_print``, ``tl.static_print`` and failed ``tl.device_assert``s.

Every target formats through these functions (the interpreter directly, compiled targets by calling
back into Python with the values), so a kernel prints the same text whichever target runs it.
The format is Triton's device-side one: one line per element,
``pid (x, y, z) idx (i, j)<prefix>(operand n) <value>``, the operand tag only when several are
printed, each index padded to the width of its dimension, values as C's ``%i``/``%u``/``%f`` or,
with ``hex=True``, as ``0x`` and all the bits of the type.
"""

from __future__ import annotations

import math
import sys
from typing import Callable, Sequence

import numpy as np

from ..language.dtypes import dtype

Pid = Sequence[int]


def print_prefix(prefix: str, has_args: bool) -> str:
    """Triton's tidying of a ``device_print`` prefix: with values to print it ends in ": ", and a
    non-empty one starts with a space (it follows the element index)."""
    if has_args and not prefix.endswith(" "):
        prefix += " "
    if has_args and not prefix.endswith(": "):
        prefix = prefix[:-1] + ": "
    if len(prefix) > 2 and not prefix.startswith(" "):
        prefix = " " + prefix
    return prefix


def print_lines(prefix: str, pid: Pid, values: Sequence[tuple[np.ndarray, dtype]], hex: bool) -> list[str]:
    """The lines one program prints for ``device_print`` of ``values`` (each an array of the
    operand's shape, with its language type; bf16 arrays hold their 16 bits as uint16)."""
    if not values:
        return [_pid(pid) + prefix]
    return [line for n, (array, t) in enumerate(values)
            for line in operand_lines(prefix, pid, array, t, hex, n, len(values))]


def operand_lines(prefix: str, pid: Pid, array: np.ndarray, t: dtype, hex: bool, operand: int,
                  count: int) -> list[str]:
    """The lines of operand ``operand`` of the ``count`` values of one ``device_print``."""
    head, tag = _pid(pid), (f"(operand {operand}) " if count > 1 else "")
    widths = [math.ceil(math.log10(d)) if d > 0 else 0 for d in array.shape]
    flat = array.reshape(-1)
    return [f"{head} idx ({', '.join(str(i).rjust(w) for i, w in zip(idx, widths))}){prefix}{tag}"
            f"{format_value(flat[k], t, hex)}" for k, idx in enumerate(np.ndindex(*array.shape))]


def _pid(pid: Pid) -> str:
    return "pid ({}, {}, {})".format(*(int(p) for p in pid))


def format_value(v: np.generic, t: dtype, hex: bool) -> str:
    """One element as C's printf would write it for Triton's format of type ``t``."""
    if t.is_ptr():
        return f"0x{int(v):x}"
    if t.name == "bf16":  # its bits: as compiled kernels pass it, or of the interpreter's bf16 value
        v = np.asarray(v).view(np.uint16)
    if hex:
        bits = t.primitive_bitwidth
        raw = int(np.asarray(v).view(f"u{bits // 8}")) if t.is_floating() and t.name != "bf16" else int(v)
        return "0x" + format(raw & ((1 << bits) - 1), f"0{bits // 4}x")
    if t.name == "bf16":
        return "%f" % float(np.array(int(v) << 16, dtype=np.uint32).view(np.float32))
    if t.is_floating():
        return "%f" % float(v)
    return str(int(v))


def static_text(values: Sequence, sep: str = " ") -> str:
    """What ``tl.static_print(*values, sep=sep)`` prints: Python's ``print`` of the compile-time
    values, with tensors shown by type and shape as Triton shows them (``fp32[constexpr[128]]``)."""
    return sep.join(_static(v) for v in values)


def _static(v) -> str:
    from ..language.core import constexpr, tensor

    if isinstance(v, constexpr):
        v = v.value
    if isinstance(v, tensor):
        return f"{_type_name(v.dtype)}[{', '.join(f'constexpr[{s}]' for s in v.shape)}]"
    return str(v)


def _type_name(t) -> str:
    """Triton's ``str`` of a type: its name (``fp32``, ``int32``), ``pointer<...>`` for pointers."""
    return f"pointer<{_type_name(t.element_ty)}>" if t.is_ptr() else t.name


def assertion_message(message: str, pid: Pid, index: Sequence[int]) -> str:
    """The text of a failed ``device_assert`` at element ``index`` (empty for a scalar) of program ``pid``."""
    where = f"{_pid(pid)} idx ({', '.join(str(int(i)) for i in index)})"
    return f"device assertion failed: {message or 'assertion failed'} ({where})"


#: numpy's type of the elements a whole-block kernel's print call passes, by signature spelling
#: (bf16 as its bits, pointers as 64-bit addresses)
_HOST_TYPES = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
               "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "fp16": np.float16, "bf16": np.uint16,
               "fp32": np.float32, "fp64": np.float64}


def call_lines(prefix: str, type_code: str, shape: str, read: Callable[[int], bytes] | None, hex: bool,
               operand: int, count: int, pid: Pid) -> list[str]:
    """The lines of one call of a whole-block kernel's print function (``codegen.block.hooks.
    PRINT_SYMBOL``, whose arguments these are, strings decoded): ``read(n)`` returns the first
    ``n`` bytes at the call's ``values``, None when it passed none."""
    from ..language.dtypes import from_signature

    if read is None:
        return print_lines(prefix, pid, [], hex)
    t, dims = from_signature(type_code), _dims(shape)
    host_type = np.dtype(np.uint64 if t.is_ptr() else _HOST_TYPES[t.short])
    array = np.frombuffer(read(int(np.prod(dims, dtype=np.int64)) * host_type.itemsize), host_type).reshape(dims)
    return operand_lines(prefix, pid, array, t, hex, operand, count)


def call_assertion(kernel: str, file: str, line: int, message: str, shape: str, pid: Pid, index: int):
    """The ``DeviceAssertionError`` of one call of a whole-block kernel's assert function
    (``codegen.block.hooks.ASSERT_SYMBOL``, strings decoded): element ``index`` (row-major) failed."""
    import linecache

    from ..errors import DeviceAssertionError

    dims = _dims(shape)
    where = np.unravel_index(index, dims) if dims else ()
    return DeviceAssertionError(kernel, assertion_message(message, pid, where), filename=file,
                                lineno=line or None, source_line=linecache.getline(file, line) if line else "")


def _dims(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in text.split(",")) if text else ()


def write(lines: Sequence[str]) -> None:
    """Write one program's lines together to ``sys.stdout`` (so capturing it captures them)."""
    if lines:
        sys.stdout.write("".join(line + "\n" for line in lines))
        sys.stdout.flush()
