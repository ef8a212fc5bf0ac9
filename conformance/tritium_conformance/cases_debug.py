"""Debugging ops as a target's contract: ``tl.device_print`` (and ``print`` in a kernel) writes
Triton's lines to the process's standard output, one per element, by the time the device is
synchronised; ``tl.device_assert`` is checked only in debug mode, where a failed one raises
``tritium.errors.DeviceAssertionError``.

The printed lines are read back from file descriptor 1 (where GPU drivers and C's printf write)
and parsed against Triton's format, written out here: ``pid (x, y, z) idx (i)<prefix><value>``,
integers as ``%i``, floats as ``%f``."""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import re
import sys
import tempfile

import numpy as np

import tritium.language as tl
from tritium import jit
from tritium.errors import DeviceAssertionError

from .suite import CompileOnlyDevice, Device, Output, cases, rng_for

PROGRAMS, BLOCK = 2, 8
#: the cases after which a GPU may be unusable in the process (a failed assertion loses a CUDA
#: context): the isolated runner checks the device after them, and retires the worker if so
LOSES_DEVICE = ("device_assert-fails-debug",)
_LINE = re.compile(r"pid \((\d+), 0, 0\) idx \(\s*(\d+)\) (x|y): (\S+)$")


@jit
def print_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.arange(0, BLOCK) + tl.program_id(0) * BLOCK)
    tl.device_print("x", x)
    tl.store(x_ptr + offs, x + 1)


@jit
def builtin_print_kernel(x_ptr, BLOCK: tl.constexpr):
    y = tl.load(x_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK))
    print("y", y)


@contextlib.contextmanager
def captured_stdout():
    """What is written to file descriptor 1 and to ``sys.stdout`` inside the block (C's and
    Python's buffers flushed; ``sys.stdout`` may be a test runner's capture, not the descriptor),
    as a list that holds the text once the block ends."""
    text: list[str] = []
    sys.stdout.flush()
    saved_fd, saved_stdout = os.dup(1), sys.stdout
    with tempfile.TemporaryFile(mode="w+b") as f:
        os.dup2(f.fileno(), 1)
        sys.stdout = io.TextIOWrapper(io.FileIO(os.dup(1), "w"), line_buffering=True)
        try:
            yield text
        finally:
            sys.stdout.close()
            sys.stdout = saved_stdout
            ctypes.CDLL(None).fflush(None)  # C's stdout (GPU drivers' printf buffers)
            os.dup2(saved_fd, 1)
            os.close(saved_fd)
            f.seek(0)
            text.append(f.read().decode(errors="replace"))


def _printed(text: str, name: str) -> tuple[dict[tuple[int, int], str], int]:
    """The value text of each (program, index) printing ``name``, and how many lines did not parse
    or repeated an element."""
    values: dict[tuple[int, int], str] = {}
    bad = 0
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m is None or m.group(3) != name:
            bad += bool(line.strip())
            continue
        key = (int(m.group(1)), int(m.group(2)))
        if key[0] >= PROGRAMS or key[1] >= BLOCK or key in values:
            bad += 1
            continue
        values[key] = m.group(4)
    return values, bad


def _by_element(values: dict[tuple[int, int], str], convert) -> np.ndarray:
    return np.array([convert(values[(p, i)]) if (p, i) in values else np.nan
                     for p in range(PROGRAMS) for i in range(BLOCK)])


@cases("device_print-{dtype}", dtype=["int32", "fp32"])
def device_print(dev: Device, dtype: str) -> list[Output]:
    """Each element once, in Triton's format (``%i`` / ``%f``), the kernel's other work done."""
    rng = rng_for(f"device_print-{dtype}")
    if dtype == "int32":
        x = rng.integers(-1000, 1000, PROGRAMS * BLOCK).astype(np.int32)
        want_text = [str(int(v)) for v in x]
    else:
        x = (rng.integers(-4000, 4000, PROGRAMS * BLOCK) / 8).astype(np.float32)  # exact in %f
        want_text = ["%f" % v for v in x]
    buf = dev.to_device(x)
    with captured_stdout() as text:
        dev.launch(print_kernel, (PROGRAMS,), buf, BLOCK=BLOCK)
        out = dev.to_host(buf)
    if isinstance(dev, CompileOnlyDevice):
        return []
    values, bad = _printed(text[0], "x")
    as_printf = [values.get((p, i)) == want_text[p * BLOCK + i] for p in range(PROGRAMS) for i in range(BLOCK)]
    return [Output("printed values", _by_element(values, float), x.astype(np.float64)),
            Output("printed as C's %i / %f", np.array(as_printf), np.ones(PROGRAMS * BLOCK, bool)),
            Output("lines not in Triton's format, or repeated", np.array([bad]), np.array([0])),
            Output("x + 1 stored after printing", out, x.astype(np.float64) + 1)]


@cases("print-builtin")
def builtin_print(dev: Device) -> list[Output]:
    """Python's ``print`` in a kernel is ``tl.device_print``."""
    x = np.arange(PROGRAMS * BLOCK, dtype=np.int32) * 3
    buf = dev.to_device(x)
    with captured_stdout() as text:
        dev.launch(builtin_print_kernel, (PROGRAMS,), buf, BLOCK=BLOCK)
        dev.to_host(buf)
    if isinstance(dev, CompileOnlyDevice):
        return []
    values, bad = _printed(text[0], "y")
    return [Output("printed values", _by_element(values, float), x.astype(np.float64)),
            Output("lines not in Triton's format, or repeated", np.array([bad]), np.array([0]))]


@jit
def assert_kernel(x_ptr, out_ptr, LIMIT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x < LIMIT, "x is below the limit")
    tl.store(out_ptr + offs, x * 2)


@cases("device_assert-{mode}", mode=["holds-debug", "fails-without-debug", "fails-debug"])
def device_assert(dev: Device, mode: str) -> list[Output]:
    """A holding assertion changes nothing; a failing one is ignored without ``debug=True``, and
    with it raises ``DeviceAssertionError`` by the next synchronisation."""
    x = np.arange(PROGRAMS * BLOCK, dtype=np.int32)
    limit = 100 if mode == "holds-debug" else 5
    debug = mode != "fails-without-debug"
    src, out = dev.to_device(x), dev.full(PROGRAMS * BLOCK, -1, np.int32)
    raised = False
    try:
        with captured_stdout():  # what the device prints of a failed assertion
            dev.launch(assert_kernel, (PROGRAMS,), src, out, LIMIT=limit, BLOCK=BLOCK, debug=debug)
            got = dev.to_host(out)
    except DeviceAssertionError:
        raised = True
    if isinstance(dev, CompileOnlyDevice):
        return []
    if mode == "fails-debug":
        return [Output("DeviceAssertionError raised", np.array([raised]), np.array([True]))]
    return [Output("DeviceAssertionError raised", np.array([raised]), np.array([False])),
            Output("out", got, x.astype(np.int64) * 2)]


@jit
def overrun_kernel(x_ptr, out_ptr, SHIFT: tl.constexpr, STORE: tl.constexpr, BLOCK: tl.constexpr):
    """Reads (or, with STORE, writes) SHIFT elements past the end of a BLOCK-element array."""
    offs = tl.arange(0, BLOCK)
    if STORE:
        tl.store(out_ptr + offs + SHIFT, tl.load(x_ptr + offs))
    else:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs + SHIFT))


@cases("debug-bounds-{access}-{mode}", access=["load", "store"], mode=["inside", "outside"])
def debug_bounds(dev: Device, access: str, mode: str) -> list[Output]:
    """In debug mode an access outside every pointer argument's array raises ``OutOfBoundsError``
    naming the argument, before memory is touched; an access inside runs as usual."""
    from tritium.errors import OutOfBoundsError

    x = np.arange(BLOCK, dtype=np.int32)
    shift = 0 if mode == "inside" else 3
    src, dst = dev.to_device(x), dev.full(BLOCK, -1, np.int32)
    message = ""
    try:
        dev.launch(overrun_kernel, (1,), src, dst, SHIFT=shift, STORE=access == "store", BLOCK=BLOCK, debug=True)
        got = dev.to_host(dst)
    except OutOfBoundsError as e:
        message = str(e)
    if isinstance(dev, CompileOnlyDevice):
        return []
    named = ("'out_ptr'" if access == "store" else "'x_ptr'") in message
    if mode == "outside":
        return [Output("OutOfBoundsError naming the argument", np.array([named]), np.array([True]))]
    return [Output("OutOfBoundsError raised", np.array([bool(message)]), np.array([False])),
            Output("out", got, x.astype(np.int64))]
