"""Scans (``tl.cumsum``, ``tl.cumprod``, ``tl.associative_scan``, forward and reverse, tuples of
tensors, tensor methods) on every installed target against numpy references: exact for integers,
float64 with a stated tolerance for floats; and what Triton refuses."""

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.errors import TritiumError


@tritium.jit
def _mul(a, b):
    return a * b


@tritium.jit
def _affine(a1, b1, a2, b2):
    """Composition of x -> a*x + b maps, first (a1, b1) then (a2, b2): associative, not commutative."""
    return a1 * a2, b1 * a2 + b2


@tritium.jit
def scan1d_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, OP: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    if OP == "cumprod":
        x = tl.load(x_ptr + offs, mask=mask, other=1)
        y = tl.cumprod(x, 0, reverse=REVERSE)
    elif OP == "method":
        x = tl.load(x_ptr + offs, mask=mask, other=0)
        y = x.cumsum(0, reverse=REVERSE)
    elif OP == "scan_mul":
        x = tl.load(x_ptr + offs, mask=mask, other=1)
        y = tl.associative_scan(x, 0, _mul, reverse=REVERSE)
    else:
        x = tl.load(x_ptr + offs, mask=mask, other=0)
        y = tl.cumsum(x, axis=0, reverse=REVERSE)
    tl.store(out_ptr + offs, y, mask=mask)


@tritium.jit
def scan2d_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr, OP: tl.constexpr,
                  REVERSE: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    if OP == "cumprod":
        y = x.cumprod(AXIS, reverse=REVERSE)
    else:
        y = tl.cumsum(x, AXIS, REVERSE)
    tl.store(out_ptr + offs, y)


@tritium.jit
def affine_kernel(a_ptr, b_ptr, oa_ptr, ob_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr,
                  REVERSE: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    a, b = tl.associative_scan((tl.load(a_ptr + offs), tl.load(b_ptr + offs)), AXIS, _affine, reverse=REVERSE)
    tl.store(oa_ptr + offs, a)
    tl.store(ob_ptr + offs, b)


@tritium.jit
def widen_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr, DTYPE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if DTYPE is None:
        y = tl.cumsum(x, 0)
    else:
        y = tl.cumsum(x, 0, dtype=DTYPE)
    tl.static_assert(y.dtype == tl.int32 if DTYPE is None else y.dtype == DTYPE)
    tl.store(out_ptr + offs, y)


def _scanned(fn, x, axis, reverse):
    src = np.flip(x, axis) if reverse else x
    out = fn(src, axis=axis)
    return np.flip(out, axis) if reverse else out


def _put(target, a):
    return target.driver.to_device(np.ascontiguousarray(a))


INT_DTYPES = [np.int32, np.int64, np.uint32]


@pytest.mark.parametrize("n", [1, 100, 128])  # one element, ragged, whole block
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("op", ["cumsum", "method"])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_1d(target, n, dtype, op, reverse):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 10).astype(dtype) if np.dtype(dtype).kind == "f" else \
        rng.integers(-1000, 1000, n).astype(dtype)
    out = _put(target, np.full(n, 7, dtype))
    scan1d_kernel[(1,)](_put(target, x), out, n, BLOCK=128, OP=op, REVERSE=reverse)
    got = target.driver.to_host(out)
    ref = _scanned(np.cumsum, x.astype(np.float64 if x.dtype.kind == "f" else np.int64), 0, reverse)
    if x.dtype.kind == "f":
        np.testing.assert_allclose(got, ref, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-3)
    else:
        np.testing.assert_array_equal(got, ref.astype(dtype))


@pytest.mark.parametrize("op", ["cumprod", "scan_mul"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_cumprod_1d_ragged(target, op, reverse, dtype):
    n = 37
    x = np.random.default_rng(3).choice([-2, -1, 1, 2], n).astype(dtype)  # exact in either type
    out = _put(target, np.full(n, 7, dtype))
    scan1d_kernel[(1,)](_put(target, x), out, n, BLOCK=64, OP=op, REVERSE=reverse)
    np.testing.assert_array_equal(target.driver.to_host(out), _scanned(np.cumprod, x, 0, reverse))


@pytest.mark.parametrize("shape", [(8, 32), (32, 8), (16, 16), (1, 64), (64, 1)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("reverse", [False, True])
def test_scans_2d_along_each_axis(target, shape, axis, op, reverse):
    rng = np.random.default_rng(sum(shape) + axis)
    x = rng.integers(-2, 3, size=shape).astype(np.int32) if op == "cumprod" else \
        rng.integers(-10**6, 10**6, size=shape).astype(np.int32)
    out = _put(target, np.full(shape, 7, np.int32))
    scan2d_kernel[(1,)](_put(target, x), out, R=shape[0], C=shape[1], AXIS=axis, OP=op, REVERSE=reverse)
    fn = np.cumsum if op == "cumsum" else np.cumprod
    ref = _scanned(fn, x.astype(np.int64), axis, reverse)
    np.testing.assert_array_equal(target.driver.to_host(out), ref.astype(np.int32))  # wraps as int32 does


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_float_scans_keep_their_type(target, dtype):
    x = (np.random.default_rng(5).random((16, 16)) + 0.5).astype(dtype)
    out = _put(target, np.zeros((16, 16), dtype))
    scan2d_kernel[(1,)](_put(target, x), out, R=16, C=16, AXIS=1, OP="cumsum", REVERSE=False)
    tol = 4e-3 if dtype == np.float16 else 1e-13
    np.testing.assert_allclose(target.driver.to_host(out), np.cumsum(x.astype(np.float64), axis=1), rtol=tol)


@pytest.mark.parametrize("shape,axis", [((4, 16), 1), ((16, 4), 0), ((8, 8), 0), ((8, 8), 1)])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_of_a_tuple_keeps_the_order(target, shape, axis, reverse):
    rng = np.random.default_rng(9)
    a = rng.integers(-3, 4, size=shape).astype(np.int64)
    b = rng.integers(-5, 6, size=shape).astype(np.int64)
    oa, ob = _put(target, np.zeros(shape, np.int64)), _put(target, np.zeros(shape, np.int64))
    affine_kernel[(1,)](_put(target, a), _put(target, b), oa, ob, R=shape[0], C=shape[1], AXIS=axis, REVERSE=reverse)
    ra, rb = np.moveaxis(a.copy(), axis, 0), np.moveaxis(b.copy(), axis, 0)
    order = range(shape[axis] - 1, -1, -1) if reverse else range(shape[axis])
    acc = None
    for k in order:  # the definition: the accumulated map first, then element k's
        acc = (ra[k].copy(), rb[k].copy()) if acc is None else (acc[0] * ra[k], acc[1] * ra[k] + rb[k])
        ra[k], rb[k] = acc
    np.testing.assert_array_equal(target.driver.to_host(oa), np.moveaxis(ra, 0, axis))
    np.testing.assert_array_equal(target.driver.to_host(ob), np.moveaxis(rb, 0, axis))


@pytest.mark.parametrize("dtype,tl_dtype", [(np.int8, None), (np.int16, None), (np.int8, tl.int64),
                                            (np.int32, tl.float64)])
def test_cumsum_widens_narrow_integers_as_triton(target, dtype, tl_dtype):
    x = np.full(64, 100, dtype)  # the running sum leaves int8 and int16 behind
    out_dtype = {None: np.int32, tl.int64: np.int64, tl.float64: np.float64}[tl_dtype]
    out = _put(target, np.zeros(64, out_dtype))
    widen_kernel[(1,)](_put(target, x), out, BLOCK=64, DTYPE=tl_dtype)
    np.testing.assert_array_equal(target.driver.to_host(out), np.cumsum(x.astype(np.int64)).astype(out_dtype))


@tritium.jit
def _pair(a, b):
    return a + b, a * b


@tritium.jit
def bad_scan_kernel(x_ptr, CASE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    if CASE == "axis":
        x = tl.cumsum(x, axis=1)
    elif CASE == "count":
        x = tl.associative_scan(x, 0, _pair)
    elif CASE == "not_jit":
        x = tl.associative_scan(x, 0, max)
    else:
        x = tl.associative_scan((x, tl.arange(0, 8)), 0, _mul)
    tl.store(x_ptr + tl.arange(0, 16), x)


@pytest.mark.parametrize("case,message", [("axis", "axis 1 out of range"), ("count", "returns 2 value"),
                                          ("not_jit", "must be a @jit function"), ("shapes", "same shape")])
def test_bad_scans_are_refused_clearly(target, case, message):
    with pytest.raises(TritiumError, match=message):
        bad_scan_kernel[(1,)](_put(target, np.zeros(16, np.float32)), CASE=case)
