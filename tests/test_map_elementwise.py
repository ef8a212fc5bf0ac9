"""``tl.map_elementwise`` on every installed target against numpy: per-element branches and loops,
several results, ``pack``, broadcasting, and what it refuses."""

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.errors import LocatedError


@tritium.jit
def selu_scalar(x, alpha):
    if x > 0:
        return x
    else:
        return alpha * (tl.exp(x) - 1)


@tritium.jit
def collatz_steps(n):
    """Steps of the Collatz sequence from n to 1: a loop whose trip count differs per element."""
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@tritium.jit
def divmod_scalar(a, b):
    return a // b, a % b


@tritium.jit
def swap_pairs(x0, x1, y0, y1):
    return x1 + y0, x0 + y1


@tritium.jit
def selu_kernel(x_ptr, y_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.map_elementwise(selu_scalar, x, alpha), mask=mask)


@tritium.jit
def collatz_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.map_elementwise(collatz_steps, tl.load(x_ptr + offs)))


@tritium.jit
def divmod_kernel(a_ptr, b_ptr, q_ptr, r_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    a = tl.load(a_ptr + r * C + c)
    b = tl.load(b_ptr + c)  # a row, broadcast down the columns
    q, m = tl.map_elementwise(divmod_scalar, a, b)
    tl.store(q_ptr + r * C + c, q)
    tl.store(r_ptr + r * C + c, m)


@tritium.jit
def pack_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    out = tl.map_elementwise(swap_pairs, tl.load(x_ptr + offs), tl.load(y_ptr + offs), pack=2)
    tl.store(out_ptr + offs, out)


def _run(target, kernel, grid, inputs, outputs, *scalars, **meta):
    drv = target.driver
    args = [drv.to_device(a) for a in inputs] + [drv.to_device(o) for o in outputs]
    kernel[grid](*args, *scalars, **meta)
    return [drv.to_host(a) for a in args[len(inputs):]]


@pytest.mark.parametrize("n", [1, 200, 1000])
def test_selu_branches_per_element(target, n):
    x = np.random.default_rng(n).normal(0, 2, n).astype(np.float32)
    (y,) = _run(target, selu_kernel, (tritium.cdiv(n, 256),), [x], [np.full(n, 77, np.float32)], 1.5, n,
                BLOCK=256)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(y, np.where(x64 > 0, x64, 1.5 * np.expm1(x64)), rtol=2e-6, atol=2e-6)


def test_a_loop_with_a_trip_count_per_element(target):
    x = np.arange(1, 129, dtype=np.int32)
    (y,) = _run(target, collatz_kernel, (1,), [x], [np.full(128, -1, np.int32)], BLOCK=128)

    def steps(v: int) -> int:
        s = 0
        while v != 1:
            v, s = (v // 2 if v % 2 == 0 else 3 * v + 1), s + 1
        return s
    np.testing.assert_array_equal(y, [steps(int(v)) for v in x])


def test_two_results_of_broadcast_arguments(target):
    R, C = 8, 32
    rng = np.random.default_rng(3)
    a = rng.integers(-1000, 1000, (R, C)).astype(np.int32)
    b = rng.integers(1, 20, C).astype(np.int32)
    q, m = _run(target, divmod_kernel, (1,), [a, b], [np.zeros((R, C), np.int32), np.zeros((R, C), np.int32)],
                R=R, C=C)
    # Triton's integer // and % truncate toward zero
    want_q = np.trunc(a / b[None, :]).astype(np.int32)
    np.testing.assert_array_equal(q, want_q)
    np.testing.assert_array_equal(m, a - want_q * b[None, :])


def test_pack_2_passes_consecutive_elements(target):
    x = np.arange(256, dtype=np.float32)
    y = 1000 * np.arange(256, dtype=np.float32)
    (out,) = _run(target, pack_kernel, (1,), [x, y], [np.zeros(256, np.float32)], BLOCK=256)
    # each call gets (x[2i], x[2i+1], y[2i], y[2i+1]) and returns (x[2i+1] + y[2i], x[2i] + y[2i+1])
    want = np.empty(256, np.float32)
    want[0::2] = x[1::2] + y[0::2]
    want[1::2] = x[0::2] + y[1::2]
    np.testing.assert_array_equal(out, want)


def test_a_pack_that_does_not_divide_the_last_dimension_is_refused(target):
    @tritium.jit
    def bad(x_ptr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        tl.store(x_ptr + tl.arange(0, BLOCK), tl.map_elementwise(swap_pairs, x, x, pack=4))

    with pytest.raises(LocatedError, match="pack=4 must divide the last dimension"):
        _run(target, bad, (1,), [], [np.zeros(2, np.float32)], BLOCK=2)


def test_scalar_fn_must_be_jit(target):
    @tritium.jit
    def bad(x_ptr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        tl.store(x_ptr + tl.arange(0, BLOCK), tl.map_elementwise(abs, x))

    with pytest.raises(LocatedError, match="scalar_fn must be a @jit function"):
        _run(target, bad, (1,), [], [np.zeros(16, np.float32)], BLOCK=16)


@tritium.jit
def _stores(x, p):
    tl.store(p, x)
    return x


@tritium.jit
def _adds(x, p):
    tl.atomic_add(p, x)
    return x


@pytest.mark.parametrize("fn", [_stores, _adds])
def test_the_function_may_not_write_memory(target, fn):
    @tritium.jit
    def bad(x_ptr, FN: tl.constexpr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        tl.store(x_ptr + tl.arange(0, BLOCK), tl.map_elementwise(FN, x, x_ptr))

    with pytest.raises(LocatedError, match="inside tl.map_elementwise's function: it may compute values only"):
        _run(target, bad, (1,), [], [np.zeros(16, np.float32)], fn, BLOCK=16)
