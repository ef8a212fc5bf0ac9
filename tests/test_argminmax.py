"""``tl.argmax`` / ``tl.argmin``, ``tl.max`` / ``tl.min`` with ``return_indices`` and ``tl.reduce`` of
several tensors on every installed target, against numpy: ties (the lowest index wins with
``tie_break_left``), NaN as Triton's ``_argmax_combine`` treats it, each axis and None, keep_dims."""

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.errors import TritiumError


@tritium.jit
def arg1d_kernel(x_ptr, i_ptr, v_ptr, n, BLOCK: tl.constexpr, KIND: tl.constexpr, METHOD: tl.constexpr,
                 PAD: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=PAD)  # the padding never wins
    if KIND == "max":
        if METHOD:
            v, i = x.max(0, return_indices=True)
        else:
            v, i = tl.max(x, axis=0, return_indices=True)
        tl.store(i_ptr + 1, tl.argmax(x, 0))
    else:
        if METHOD:
            v, i = x.min(0, return_indices=True)
        else:
            v, i = tl.min(x, axis=0, return_indices=True)
        tl.store(i_ptr + 1, x.argmin(axis=0))
    tl.store(i_ptr, i)
    tl.store(v_ptr, v)


@tritium.jit
def arg2d_kernel(x_ptr, i_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr, KIND: tl.constexpr,
                 KEEP: tl.constexpr, LEFT: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :])
    if KIND == "max":
        i = tl.argmax(x, AXIS, tie_break_left=LEFT, keep_dims=KEEP)
    else:
        i = tl.argmin(x, AXIS, tie_break_left=LEFT, keep_dims=KEEP)
    if AXIS is None:
        if KEEP:
            tl.static_assert(len(i.shape) == 2)
            tl.store(i_ptr + r[:, None] * 0 + c[None, :] * 0, i)
        else:
            tl.store(i_ptr, i)
    elif AXIS == 0:
        if KEEP:
            tl.static_assert(i.shape[0] == 1)
            tl.store(i_ptr + c[None, :], i)
        else:
            tl.store(i_ptr + c, i)
    else:
        if KEEP:
            tl.static_assert(i.shape[1] == 1)
            tl.store(i_ptr + r[:, None], i)
        else:
            tl.store(i_ptr + r, i)


def _put(target, a):
    return target.driver.to_device(np.ascontiguousarray(a))


def _arg1d(target, x, kind, block=128, method=False):
    i = _put(target, np.full(2, -1, np.int32))
    v = _put(target, np.zeros(1, np.float64 if x.dtype == np.float64 else np.float32))
    info = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
    pad = (-float("inf") if kind == "max" else float("inf")) if x.dtype.kind == "f" else \
        int(info.min if kind == "max" else info.max)
    arg1d_kernel[(1,)](_put(target, x), i, v, x.size, BLOCK=block, KIND=kind, METHOD=method, PAD=pad)
    return target.driver.to_host(i), target.driver.to_host(v)[0]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int32, np.uint8])
@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("n", [1, 77, 128])
def test_argmax_argmin_with_ties_take_the_first(target, dtype, kind, n):
    x = np.random.default_rng(n).integers(0, 6, n).astype(dtype)  # few values: many ties
    (first, again), value = _arg1d(target, x, kind, method=n == 77)
    want = int(np.argmax(x) if kind == "max" else np.argmin(x))
    assert first == again == want
    assert value == x[want]


@pytest.mark.parametrize("kind", ["max", "min"])
def test_a_nan_in_the_last_position_is_the_answer(target, kind):
    x = np.arange(128, dtype=np.float32)
    x[-1] = np.nan
    (i, j), v = _arg1d(target, x, kind)
    assert i == j == 127 and np.isnan(v)  # NaN compares false: on the right of a combine it wins


@pytest.mark.parametrize("kind", ["max", "min"])
def test_infinities_are_ordinary_values(target, kind):
    x = np.zeros(64, np.float32)
    x[10], x[20] = np.inf, -np.inf
    (i, _), v = _arg1d(target, x, kind, block=64)
    assert i == (10 if kind == "max" else 20) and v == x[i]


@pytest.mark.parametrize("shape", [(8, 32), (32, 8), (16, 16), (1, 64)])
@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("keep", [False, True])
def test_argmax_argmin_2d(target, shape, axis, kind, keep):
    x = np.random.default_rng(shape[0] + (axis or 3)).integers(-4, 4, size=shape).astype(np.float32)
    n = 1 if axis is None else shape[1 - axis]
    out = _put(target, np.full(n, -1, np.int32))
    arg2d_kernel[(1,)](_put(target, x), out, R=shape[0], C=shape[1], AXIS=axis, KIND=kind, KEEP=keep, LEFT=True)
    fn = np.argmax if kind == "max" else np.argmin
    np.testing.assert_array_equal(target.driver.to_host(out), np.atleast_1d(fn(x, axis=axis)))


def test_tie_break_fast_still_finds_an_extremum(target):
    x = np.random.default_rng(4).integers(0, 3, size=(16, 16)).astype(np.float32)
    out = _put(target, np.full(16, -1, np.int32))
    arg2d_kernel[(1,)](_put(target, x), out, R=16, C=16, AXIS=1, KIND="max", KEEP=False, LEFT=False)
    got = target.driver.to_host(out)
    np.testing.assert_array_equal(x[np.arange(16), got], x.max(axis=1))


@tritium.jit
def _sum_and_max(a, i, b, j):
    return a + b, tl.maximum(i, j)


@tritium.jit
def _three(a, b, c, d, e, f):
    return a + d, b * e, tl.minimum(c, f)


@tritium.jit
def reduce_tuple_kernel(x_ptr, y_ptr, z_ptr, o1_ptr, o2_ptr, o3_ptr, R: tl.constexpr, C: tl.constexpr,
                        AXIS: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    offs = r[:, None] * C + c[None, :]
    x, y, z = tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(z_ptr + offs)
    s, p, m = tl.reduce((x, y, z), AXIS, _three)
    a, b = tl.reduce((x, z), AXIS, _sum_and_max, keep_dims=True)
    if AXIS == 0:
        tl.store(o1_ptr + c, s)
        tl.store(o2_ptr + c, p)
        tl.store(o3_ptr + c, m + tl.sum(a - b.to(tl.float32), 0))
    else:
        tl.store(o1_ptr + r, s)
        tl.store(o2_ptr + r, p)
        tl.store(o3_ptr + r, m + tl.sum(a - b.to(tl.float32), 1))


@pytest.mark.parametrize("shape", [(8, 16), (16, 8)])
@pytest.mark.parametrize("axis", [0, 1])
def test_reduce_of_a_tuple_of_different_types(target, shape, axis):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.choice([-1, 1, 2], size=shape).astype(np.int64)
    z = rng.integers(-100, 100, size=shape).astype(np.int16)
    n = shape[1 - axis]
    o1, o2, o3 = (_put(target, np.zeros(n, t)) for t in (np.float32, np.int64, np.float32))
    reduce_tuple_kernel[(1,)](_put(target, x), _put(target, y), _put(target, z), o1, o2, o3,
                              R=shape[0], C=shape[1], AXIS=axis)
    np.testing.assert_allclose(target.driver.to_host(o1), x.astype(np.float64).sum(axis=axis), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(target.driver.to_host(o2), y.prod(axis=axis))
    extra = x.astype(np.float64).sum(axis=axis) - z.max(axis=axis)  # the keep_dims pair, summed back
    np.testing.assert_allclose(target.driver.to_host(o3), z.min(axis=axis) + extra, rtol=1e-5, atol=1e-4)


@tritium.jit
def _too_many(a, i, b, j):
    return a, b, i


@tritium.jit
def bad_reduce_kernel(x_ptr, CASE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    if CASE == "count":
        a, b = tl.reduce((x, x), 0, _too_many)
    elif CASE == "axis":
        a = tl.argmax(x, 2)
    else:
        a = tl.reduce((), 0, _three)
    tl.store(x_ptr, a)


@pytest.mark.parametrize("case,message", [("count", "returns 3 value"), ("axis", "axis 2 out of range"),
                                          ("empty", "at least one tensor")])
def test_bad_reductions_are_refused_clearly(target, case, message):
    with pytest.raises(TritiumError, match=message):
        bad_reduce_kernel[(1,)](_put(target, np.zeros(16, np.float32)), CASE=case)


@tritium.jit
def _nine(a0, a1, a2, a3, a4, a5, a6, a7, a8, b0, b1, b2, b3, b4, b5, b6, b7, b8):
    return a0 + b0, a1, a2, a3, a4, a5, a6, a7, a8


@tritium.jit
def nine_kernel(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    r = tl.reduce((x, x, x, x, x, x, x, x, x), 0, _nine)
    tl.store(x_ptr, r[0])


def test_more_than_eight_tensors_at_once_are_not_supported_yet_when_compiled(compiling_target):
    with pytest.raises(TritiumError, match="more than 8 tensors at once is not supported yet"):
        nine_kernel[(1,)](_put(compiling_target, np.zeros(16, np.float32)))


@tritium.jit
def bits_kernel(x_ptr, o_ptr, s_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr, SUM_DTYPE: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :])
    o = x.reduce_or(AXIS, keep_dims=True)
    s = tl.sum(x, AXIS, keep_dims=True, dtype=SUM_DTYPE)
    tl.static_assert(o.dtype == x.dtype and s.dtype == SUM_DTYPE)
    if AXIS == 0:
        tl.store(o_ptr + c[None, :], o)
        tl.store(s_ptr + c[None, :], s)
    elif AXIS == 1:
        tl.store(o_ptr + r[:, None], o)
        tl.store(s_ptr + r[:, None], s)
    else:
        tl.store(o_ptr + r[:, None] * 0 + c[None, :] * 0, o)
        tl.store(s_ptr + r[:, None] * 0 + c[None, :] * 0, s)


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.int64])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_reduce_or_and_sum_with_a_dtype(target, dtype, axis):
    """``tl.reduce_or`` keeps the input's type; ``tl.sum(..., dtype=)`` sums in the type asked for."""
    rng = np.random.default_rng(12)
    shifts = rng.integers(0, 8 * np.dtype(dtype).itemsize - 1, size=(8, 16)).astype(np.uint64)
    x = (np.uint64(1) << shifts).astype(dtype)
    n = 1 if axis is None else x.shape[1 - axis]
    o, s = _put(target, np.zeros(n, dtype)), _put(target, np.zeros(n, np.int64))
    bits_kernel[(1,)](_put(target, x), o, s, R=8, C=16, AXIS=axis, SUM_DTYPE=tl.int64)
    np.testing.assert_array_equal(target.driver.to_host(o), np.atleast_1d(np.bitwise_or.reduce(x, axis=axis)))
    want = np.atleast_1d(x.astype(np.int64).sum(axis=axis))
    np.testing.assert_array_equal(target.driver.to_host(s), want)
