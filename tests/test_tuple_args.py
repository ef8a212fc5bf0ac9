"""Tuples as kernel arguments, as Triton passes them (its ``test_tuple.py``): a tuple parameter's
runtime leaves are arguments of their own, its compile-time leaves (None, constexprs, @jit
functions, integers equal to 1) constants of the specialisation; namedtuples keep their fields, and
tuples pass into @jit functions, out of them and through loops. On every host target."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

import tritium
import tritium.language as tl


@pytest.fixture
def device(host_target):
    return host_target


@tritium.jit
def _increment(values):
    return tl.tuple([v + 1 for v in values])


@tritium.jit
def _store_each(ptrs, values):
    for i in tl.static_range(len(values)):
        tl.store(ptrs[i], values[i])


@tritium.jit
def index_kernel(_0, ptrs, _1: tl.constexpr, values, _2):
    _store_each(ptrs, _increment(values))


@pytest.mark.parametrize("size", [0, 1, 3])
def test_tuple_of_arrays_and_numbers(device, size):
    outs = tuple(np.zeros(1, np.float32) for _ in range(size))
    values = tuple(float(i) * 2.5 + 3 for i in range(size))
    index_kernel[(1,)](0, outs, 0, values, 0)
    assert [o[0] for o in outs] == [v + 1 for v in values]


@tritium.jit
def nested_kernel(out, n, tup, c: tl.constexpr, v, tup2):
    tl.static_assert(n is None)
    tl.static_assert(tup[1][1] is None)
    tl.static_assert(tup[1][3] == 4)
    tl.store(out + 0, tl.load(tup[0]))
    tl.store(out + 1, tup[1][0])
    tl.store(out + 2, tl.load(tup[1][2]))
    tl.store(out + 3, c + v)
    tl.store(out + 4, tl.load(tup2[0]))


def test_nested_tuples_with_none_and_constexprs(device):
    x0, x1, y0 = (np.array([k], np.int32) for k in (8, 12, 10))
    out = np.zeros(5, np.int32)
    nested_kernel[(1,)](out, None, (x0, (7, None, x1, tl.constexpr(4))), 20, 1, (y0,))
    np.testing.assert_array_equal(out, [8, 7, 12, 21, 10])


@tritium.jit
def stride_kernel(x, shape: tl.constexpr, strides, m_n):
    tl.static_assert(isinstance(strides[1].type, tl.constexpr_type))  # == 1: a constexpr, as in Triton
    offs = tl.arange(0, shape[0])[:, None] * strides[0] + tl.arange(0, shape[1])[None, :] * strides[1]
    data = tl.load(x + offs)
    for _ in tl.range(0, m_n[1]):
        data = m_n[0] * data
    tl.store(x + offs, data)


def test_integer_leaf_equal_to_one_is_a_constexpr(device):
    x = np.arange(64, dtype=np.int64).reshape(8, 8)
    expected = 8 * x
    stride_kernel[(1,)](x, x.shape, tuple(s // 8 for s in x.strides), (2, 3))
    np.testing.assert_array_equal(x, expected)


def test_leaves_specialise_and_recompile(device):
    """A leaf's value 1 and its other values compile apart; the layout is part of the key."""
    x = np.arange(64, dtype=np.int64).reshape(8, 8)
    stride_kernel[(1,)](x, x.shape, (8, 1), (2, 1))
    np.testing.assert_array_equal(x, 2 * np.arange(64).reshape(8, 8))
    stride_kernel[(1,)](x, x.shape, (8, 1), (3, 2))
    np.testing.assert_array_equal(x, 18 * np.arange(64).reshape(8, 8))


class Closure(NamedTuple):
    fn: tl.constexpr
    captured: tuple


class View(NamedTuple):
    ptr: object
    shape: tuple
    stride: tuple


@tritium.jit
def _make_view(shape, ptr, stride):
    return View(shape=shape, ptr=ptr, stride=stride)


@tritium.jit
def _mask(view, BM: tl.constexpr, BN: tl.constexpr):
    return (tl.arange(0, BM)[:, None] < view.shape[0]) & (tl.arange(0, BN)[None, :] < view.shape[1])


@tritium.jit
def _scale(x, a):
    return x * tl.load(a)


@tritium.jit
def namedtuple_kernel(closure, x_view, y, BM: tl.constexpr, BN: tl.constexpr):
    rows, cols = tl.arange(0, BM)[:, None], tl.arange(0, BN)[None, :]
    x = _make_view(x_view.shape, x_view.ptr, x_view.stride)
    xs = tl.load(x.ptr + rows * x.stride[0] + cols * x.stride[1], mask=_mask(x, BM, BN), other=0)
    ys = closure.fn(xs, *closure.captured)
    tl.store(y.ptr + rows * y.stride[0] + cols * y.stride[1], ys, mask=_mask(y, BM, BN))


def test_namedtuples_keep_their_fields(device):
    x = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)
    y = np.zeros((16, 16), np.float32)
    a = np.array([5.25], np.float32)
    namedtuple_kernel[(1,)](Closure(_scale, (a,)), View(x, x.shape, (32, 1)), View(y, y.shape, (16, 1)), 64, 64)
    np.testing.assert_array_equal(y, x[:16, :16] * a[0])


@tritium.jit
def loop_kernel(out, pair, N):
    acc = (tl.load(pair[0]), tl.load(pair[1]))
    for _ in range(N):
        acc = (acc[0] + acc[1], acc[1])
    tl.store(out, acc[0])


def test_a_tuple_of_tensors_is_carried_through_a_loop(device):
    out = np.zeros(1, np.float32)
    loop_kernel[(1,)](out, (np.array([1.0], np.float32), np.array([0.5], np.float32)), 6)
    assert out[0] == 4.0


def test_a_tuple_assigned_an_element_is_a_compile_error(device):
    @tritium.jit
    def set_item(out):
        t = tl.tuple([5, 6, 7])
        t[0] = 0

    with pytest.raises(tritium.CompilationError, match="only assignments to names"):
        set_item[(1,)](np.zeros(1, np.int32))


def test_a_comprehension_over_a_tensor_is_refused(device):
    @tritium.jit
    def over_tensor(out):
        x = tl.arange(0, 4)
        t = [v for v in x]
        tl.store(out, t[0])

    with pytest.raises(tritium.CompilationError, match="comprehension in a kernel iterates over a tuple"):
        over_tensor[(1,)](np.zeros(1, np.int32))
