"""Debug mode on cpu: out-of-bounds loads and stores are suppressed and reported as
``OutOfBoundsError`` (kernel, line, program id, argument, element offsets) instead of corrupting
memory or crashing."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import tritium
import tritium.language as tl
from tritium.errors import OutOfBoundsError


@tritium.jit
def copy(x_ptr, y_ptr, n, extra, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    vals = tl.load(x_ptr + offs, mask=offs < n + extra)
    tl.store(y_ptr + offs, vals, mask=offs < n)


@tritium.jit
def copy_out(x_ptr, y_ptr, n, extra, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n + extra)


@tritium.jit
def scalar_read(x_ptr, y_ptr, i):
    tl.store(y_ptr + tl.program_id(0), tl.load(x_ptr + i + tl.program_id(0)))


@tritium.jit
def strided(x_ptr, y_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs * stride, mask=offs < n), mask=offs < n)


def _line_of(fn, text: str) -> int:
    lines, start = inspect.getsourcelines(fn.fn if hasattr(fn, "fn") else fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_store_past_the_end_is_reported_and_suppressed():
    backing = np.full(24, -1.0, np.float32)
    x, y = np.arange(24, dtype=np.float32), backing[:10]
    with pytest.raises(OutOfBoundsError) as info:
        copy_out[(1,)](x, y, 10, 3, 16, debug=True)
    message = str(info.value)
    assert "kernel 'copy_out'" in message and "program (0, 0, 0)" in message
    assert "store" in message and "'y_ptr'" in message and "[10, 11, 12]" in message
    assert info.value.lineno == _line_of(copy_out, "tl.store(")
    np.testing.assert_array_equal(backing[:10], x[:10])  # the in-bounds lanes were stored
    np.testing.assert_array_equal(backing[10:], -1.0)  # the others were not


def test_load_past_the_end_names_the_argument_and_program():
    x, y = np.arange(40, dtype=np.float32), np.zeros(40, np.float32)
    with pytest.raises(OutOfBoundsError) as info:
        copy[(3,)](x[:33], y, 33, 2, 16, debug=True)  # only program 2 reads x[33], x[34]
    message = str(info.value)
    assert "load" in message and "'x_ptr'" in message and "program (2, 0, 0)" in message
    assert "[33, 34]" in message
    assert info.value.lineno == _line_of(copy, "tl.load(")


def test_scalar_access_before_the_start():
    x, y = np.arange(8, dtype=np.int64), np.zeros(4, np.int64)
    with pytest.raises(OutOfBoundsError, match=r"'x_ptr' at element offsets \[-1\]"):
        scalar_read[(4,)](x, y, -1, debug=True)
    scalar_read[(4,)](x, y, 4, debug=True)
    np.testing.assert_array_equal(y, x[4:])


def test_strided_views_are_checked_against_their_own_span():
    base = np.arange(32, dtype=np.float32)
    y = np.zeros(8, np.float32)
    strided[(1,)](base[::4], y, 8, 4, 8, debug=True)  # pointer semantics: the kernel applies the stride
    np.testing.assert_array_equal(y, base[::4])
    view = base[8:16]
    with pytest.raises(OutOfBoundsError, match=r"'x_ptr' at element offsets \[8, 10\]"):
        strided[(1,)](view, y, 6, 2, 8, debug=True)


def test_in_bounds_kernels_give_the_same_results_in_debug_mode():
    x, y, z = np.arange(100, dtype=np.float32), np.zeros(100, np.float32), np.zeros(100, np.float32)
    copy[(7,)](x, y, 100, 0, 16)
    copy[(7,)](x, z, 100, 0, 16, debug=True)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(z, x)


def test_tritium_debug_environment_turns_checks_on(monkeypatch):
    x, y = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    monkeypatch.setenv("TRITIUM_DEBUG", "1")
    with pytest.raises(OutOfBoundsError):
        copy[(1,)](x[:12], y, 12, 4, 16)


@tritium.jit
def either(x_ptr, y_ptr, out_ptr, use_x, start, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    if use_x:
        p = x_ptr
    else:
        p = y_ptr
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.load(p + offs))


def test_an_untraced_pointer_is_checked_against_every_argument():
    backing = np.arange(64, dtype=np.float32)  # x and y with a gap between them that no argument owns
    x, y, out = backing[:8], backing[32:40], np.zeros(4, np.float32)
    either[(1,)](x, y, out, False, 4, 4, debug=True)
    np.testing.assert_array_equal(out, y[4:])
    with pytest.raises(OutOfBoundsError, match="outside the memory of every pointer argument"):
        either[(1,)](x, y, out, True, 6, 4, debug=True)
