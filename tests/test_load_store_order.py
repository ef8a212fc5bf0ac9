"""Loads precede later stores in program order, even where a kernel reads memory it then writes.

Compiled targets run a block in pieces (the cpu: a loop over chunks); an element a piece reads again
after an earlier piece stored over it must still have its value from before the store. The cases
read one row (or column, or element) of the output and add it everywhere: a dot epilogue as in
Triton's ``test_dot`` (``add-rows``, ``add-cols``), the same without a dot, and a load whose pointers
repeat across the block instead of a broadcast of loaded values.
"""

import numpy as np
import pytest

import tritium
import tritium.language as tl

N = 16


@tritium.jit
def dot_epilogue(X, Y, Z, ROWS: tl.constexpr, N: tl.constexpr):
    m = tl.arange(0, N)
    n = tl.arange(0, N)
    acc = tl.dot(tl.load(X + m[:, None] * N + n[None, :]), tl.load(Y + m[:, None] * N + n[None, :]), input_precision="ieee")
    if ROWS:
        acc += tl.load(Z + m * N)[:, None]  # column 0 of Z, written by each row's first chunk
    else:
        acc += tl.load(Z + n)[None, :]  # row 0 of Z, written by the first row
    tl.store(Z + m[:, None] * N + n[None, :], acc)


@tritium.jit
def add_row0(Z, N: tl.constexpr, REPEAT_POINTERS: tl.constexpr):
    m = tl.arange(0, N)
    n = tl.arange(0, N)
    if REPEAT_POINTERS:
        row0 = tl.load(tl.broadcast_to(Z + n[None, :], (N, N)))  # the same N addresses in every row
    else:
        row0 = tl.load(Z + n)[None, :]
    z = Z + m[:, None] * N + n[None, :]
    tl.store(z, tl.load(z) + row0)


@tritium.jit
def add_first(Z, N: tl.constexpr):
    n = tl.arange(0, N)
    first = tl.load(Z + tl.zeros([N], tl.int32))  # element 0, read by every chunk; the first writes it
    tl.store(Z + n, tl.load(Z + n) + first)


@pytest.mark.parametrize("rows", [False, True], ids=["add-cols", "add-rows"])
def test_dot_epilogue_reads_output_before_storing(target, rows):
    rng = np.random.default_rng(0)
    x, y, z = (rng.standard_normal((N, N)).astype(np.float32) for _ in range(3))
    ref = x.astype(np.float64) @ y + (z[:, :1] if rows else z[:1, :])
    dev = target.driver
    out = dev.to_device(z)
    dot_epilogue[(1,)](dev.to_device(x), dev.to_device(y), out, ROWS=rows, N=N)
    np.testing.assert_allclose(dev.to_host(out), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("repeat_pointers", [False, True], ids=["broadcast-values", "repeated-pointers"])
def test_row_read_again_after_store_has_its_old_value(target, repeat_pointers):
    z = np.arange(N * N, dtype=np.float32).reshape(N, N)
    dev = target.driver
    out = dev.to_device(z)
    add_row0[(1,)](out, N=N, REPEAT_POINTERS=repeat_pointers)
    np.testing.assert_array_equal(dev.to_host(out), z + z[0])


def test_element_read_by_every_chunk_has_its_old_value(target):
    z = np.arange(1, 65, dtype=np.float32)
    dev = target.driver
    out = dev.to_device(z)
    add_first[(1,)](out, N=64)
    np.testing.assert_array_equal(dev.to_host(out), z + z[0])


@tritium.jit
def shift_in_place(X, N: tl.constexpr, BY: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(X + offs)
    tl.store(X + offs + BY, x, mask=(offs + BY >= 0) & (offs + BY < N))


@pytest.mark.parametrize("by", [1, -1, 9])
def test_a_shift_in_place_reads_everything_before_it_writes(target, by):
    """A program loads the block, then stores it shifted into the same array: every element must be
    read before any is overwritten (a later chunk must not read what an earlier one stored)."""
    z = np.arange(64, dtype=np.float32)
    want = z.copy()
    if by > 0:
        want[by:] = z[:-by]
    else:
        want[:by] = z[-by:]
    dev = target.driver
    out = dev.to_device(z)
    shift_in_place[(1,)](out, N=64, BY=by)
    np.testing.assert_array_equal(dev.to_host(out), want)


@tritium.jit
def add_row0_by_zero_product(Z, N: tl.constexpr):
    m = tl.arange(0, N)
    n = tl.arange(0, N)
    row0 = tl.load(Z + n[None, :] + 0 * m[:, None])  # row 0 in every row, spelled as a product with 0
    z = Z + m[:, None] * N + n[None, :]
    tl.store(z, tl.load(z) + row0)


def test_a_row_repeated_by_a_product_with_zero_has_its_old_value(target):
    z = np.arange(N * N, dtype=np.float32).reshape(N, N)
    dev = target.driver
    out = dev.to_device(z)
    add_row0_by_zero_product[(1,)](out, N=N)
    np.testing.assert_array_equal(dev.to_host(out), z + z[0])
