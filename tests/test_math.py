"""Triton's math functions (``tl.math``, ``erf``, ``fma``, ``sqrt_rn``, ``div_rn``, ``fdiv``, ``umulhi``,
``clamp``, ``sigmoid``, ``softmax``): values against float64 references on every installed target,
result types as Triton's, and what Triton refuses."""

import math

import numpy as np
import pytest

import tritium
import tritium.language as tl

from .kernels.frontend_only import FrontendOnly
from .kernels.mathfns import math_kernel, softmax_kernel, softmax_row_kernel, typed_kernel

N = 300  # not a multiple of the block: the last program is ragged
BLOCK = 128
_ERF = np.vectorize(math.erf, otypes=[np.float64])


def run(target, fn, x, y=None, z=None, out_dtype=None):
    dev = target.driver
    y = x if y is None else y
    z = x if z is None else z
    out = dev.to_device(np.full(x.shape, 7, out_dtype or x.dtype))
    math_kernel[(tritium.cdiv(x.size, BLOCK),)](dev.to_device(x), dev.to_device(y), dev.to_device(z), out, x.size,
                                                FN=fn, BLOCK=BLOCK)
    return dev.to_host(out)


def normal(dtype, seed=0, n=N):
    return (np.random.default_rng(seed).standard_normal(n) * 2).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", ["erf", "math.erf"])
def test_erf(target, fn, dtype):
    x = np.concatenate([normal(dtype), np.array([0.0, -0.0, 6.0, -6.0, np.inf, -np.inf], dtype)])
    got = run(target, fn, x)
    tol = 2e-7 if dtype == np.float32 else 1e-15
    np.testing.assert_allclose(got, _ERF(x.astype(np.float64)), rtol=tol, atol=tol)
    assert np.isnan(run(target, fn, np.array([np.nan], dtype)))[0]


def test_sqrt_rn_and_div_rn_round_exactly(target):
    x, y = np.abs(normal(np.float32, 1)) * 1e3, normal(np.float32, 2)
    np.testing.assert_array_equal(run(target, "sqrt_rn", x), np.sqrt(x))  # numpy's f32 sqrt is correctly rounded
    np.testing.assert_array_equal(run(target, "div_rn", x, y), x / y)
    np.testing.assert_array_equal(run(target, "fdiv_ieee", x, y), x / y)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_fdiv(target, dtype):
    x, y = normal(dtype, 3), normal(dtype, 4)
    got = run(target, "fdiv", x, y, out_dtype=np.float64)
    ref = x.astype(np.float64) / y  # fp16 divides in fp32 (as '/'), so only fp32 rounding is in the result
    np.testing.assert_allclose(got, ref, rtol=1e-15 if dtype == np.float64 else 3e-7)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_fma_rounds_once(target, dtype):
    x, y, z = normal(dtype, 5), normal(dtype, 6), normal(dtype, 7)
    got = run(target, "fma", x, y, z)
    ref = x.astype(np.float64) * y + z
    if dtype == np.float64:
        np.testing.assert_allclose(got, ref, rtol=1e-15, atol=1e-15)
    else:  # the product of halves/singles is exact in float64: one rounding to the type is the answer
        np.testing.assert_array_equal(got, ref.astype(dtype))
    # a case where an unfused multiply-add loses everything: (1 + e)(1 - e) - 1 = -e*e
    e = np.float32(2.0**-13)
    one = np.array([1 + e], np.float32)
    got = run(target, "fma", one, np.array([1 - e], np.float32), np.array([-1], np.float32))
    assert got[0] == -(e * e)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_umulhi(target, dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(8)
    edges = np.array([info.min, info.max, 0, 1, info.max, -1 if info.min else 3], dtype=dtype)
    x = np.concatenate([rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True), edges])
    y = np.concatenate([rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True), edges[::-1]])
    bits = info.bits
    mask = (1 << bits) - 1
    ref = [((int(a) & mask) * (int(b) & mask)) >> bits for a, b in zip(x, y)]
    ref = np.array(ref, dtype=np.uint64 if bits == 64 else np.uint32).view(dtype)
    np.testing.assert_array_equal(run(target, "umulhi", x, y), ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid(target, dtype):
    x = normal(dtype, 9)
    got = run(target, "sigmoid", x, out_dtype=np.float64)
    ref = 1 / (1 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(got, ref, rtol={np.float32: 2e-6, np.float64: 1e-14}[dtype])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_clamp_and_nan_propagation(target, dtype):
    x = np.concatenate([normal(dtype, 10), np.array([np.nan, 5, -5], dtype)])
    lo = np.full(x.shape, -0.5, dtype)
    hi = np.full(x.shape, 1.25, dtype)
    got = run(target, "clamp", x, lo, hi)
    ref = np.minimum(np.maximum(x, lo), hi)
    ref[np.isnan(x)] = -0.5  # PropagateNan.NONE: a NaN x gives the other operand
    np.testing.assert_array_equal(got, ref)
    got = run(target, "clamp_nan", x, lo, hi)
    np.testing.assert_array_equal(got, np.minimum(np.maximum(x, lo), hi))  # numpy propagates NaN
    y = normal(dtype, 11)[: x.size]
    y = np.concatenate([y, np.array([1, np.nan, np.nan], dtype)])[: x.size]
    np.testing.assert_array_equal(run(target, "maximum_nan", x, y), np.maximum(x, y))
    np.testing.assert_array_equal(run(target, "minimum_nan", x, y), np.minimum(x, y))


def _softmax(x, axis):
    z = np.exp(x - x.max(axis=axis, keepdims=True))
    return z / z.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dim,ieee", [(0, False), (1, True), (1, False)])
def test_softmax_2d(target, dim, ieee):
    x = np.random.default_rng(12).standard_normal((8, 16)).astype(np.float32) * 4
    dev = target.driver
    out = dev.to_device(np.zeros_like(x))
    softmax_kernel[(1,)](dev.to_device(x), out, M=8, N=16, DIM=dim, KEEP=True, IEEE=ieee)
    np.testing.assert_allclose(dev.to_host(out), _softmax(x.astype(np.float64), dim), rtol=2e-6, atol=1e-7)


def test_softmax_default_dim_without_keep_dims(target):
    dev = target.driver
    x = np.random.default_rng(13).standard_normal((16, 16)).astype(np.float32)
    out = dev.to_device(np.zeros_like(x))
    softmax_kernel[(1,)](dev.to_device(x), out, M=16, N=16, DIM=-1, KEEP=False, IEEE=False)
    # Triton's softmax without keep_dims subtracts a (N,)-shaped max: along dim 0 it broadcasts over rows
    np.testing.assert_allclose(dev.to_host(out), _softmax(x.astype(np.float64), 0), rtol=2e-6, atol=1e-7)
    row = np.random.default_rng(14).standard_normal(64).astype(np.float32)
    out = dev.to_device(np.zeros_like(row))
    softmax_row_kernel[(1,)](dev.to_device(row), out, N=64)
    np.testing.assert_allclose(dev.to_host(out), _softmax(row.astype(np.float64), 0), rtol=2e-6, atol=1e-8)


def result_type(fn, x, y="fp32", expect=None):
    return tritium.compile(typed_kernel, signature=f"*{x},*{y}", constants={"FN": fn, "EXPECT": expect},
                           target=FrontendOnly())


@pytest.mark.parametrize("fn,x,y,expect", [
    ("erf", "fp32", "fp32", tl.float32), ("erf", "fp64", "fp32", tl.float64),
    ("sqrt_rn", "fp32", "fp32", tl.float32), ("div_rn", "fp32", "fp32", tl.float32),
    ("fdiv", "fp16", "fp16", tl.float32), ("fdiv", "bf16", "bf16", tl.float32), ("fdiv", "fp32", "fp64", tl.float64),
    ("fma", "fp16", "fp16", tl.float16), ("fma", "bf16", "bf16", tl.bfloat16), ("fma", "fp16", "fp32", tl.float32),
    ("fma", "fp64", "fp32", tl.float64),
    ("umulhi", "i32", "i32", tl.int32), ("umulhi", "u32", "u32", tl.uint32), ("umulhi", "i64", "i64", tl.int64),
    ("umulhi", "u64", "u64", tl.uint64), ("umulhi", "i32", "u32", tl.uint32),
    ("sigmoid", "fp32", "fp32", tl.float32), ("sigmoid", "fp64", "fp32", tl.float64),
    ("clamp", "fp16", "fp16", tl.float16), ("clamp", "bf16", "bf16", tl.float32), ("clamp", "fp16", "fp32", tl.float32),
    ("clamp", "fp64", "fp64", tl.float64),
    ("softmax", "fp32", "fp32", tl.float32), ("softmax", "fp64", "fp32", tl.float64),
])
def test_result_types_are_tritons(fn, x, y, expect):
    result_type(fn, x, y, expect)  # the kernel's tl.static_assert checks the type


@pytest.mark.parametrize("fn,x,y,message", [
    ("erf", "fp16", "fp32", "tl.erf: Expected dtype ['fp32', 'fp64'] but got fp16"),
    ("erf", "i32", "fp32", "tl.erf: Expected dtype ['fp32', 'fp64'] but got int32"),
    ("sqrt_rn", "fp64", "fp32", "tl.sqrt_rn: Expected dtype ['fp32'] but got fp64"),
    ("div_rn", "fp32", "fp64", "tl.div_rn: Expected dtype ['fp32'] but got fp64"),
    ("div_rn", "fp16", "fp32", "tl.div_rn: Expected dtype ['fp32'] but got fp16"),
    ("umulhi", "fp32", "fp32", "tl.umulhi: Expected dtype ['int32', 'int64', 'uint32', 'uint64'] but got fp32"),
    ("umulhi", "i16", "i16", "tl.umulhi: Expected dtype ['int32', 'int64', 'uint32', 'uint64'] but got int16"),
    ("sigmoid", "fp16", "fp32", "tl.exp: Expected dtype ['fp32', 'fp64'] but got fp16"),  # Triton's is exp(-x)
    ("sigmoid", "i32", "fp32", "tl.exp: Expected dtype ['fp32', 'fp64'] but got int32"),
    ("fdiv", "i32", "fp32", "both operands of tl.fdiv must be floating point"),
    ("fma", "i32", "i32", "tl.fma needs floating-point operands"),
    ("clamp", "i32", "i32", "tl.clamp supports floating-point values only"),
    ("clamp_bad_nan", "fp32", "fp32", "propagate_nan must be tl.PropagateNan.NONE or tl.PropagateNan.ALL"),
])
def test_what_triton_refuses(fn, x, y, message):
    with pytest.raises(tritium.CompilationError) as info:
        result_type(fn, x, y, tl.float32)
    assert message in str(info.value) and "mathfns.py:" in str(info.value)


_FP32_FP64_ONLY = ["exp", "exp2", "log", "log2", "sin", "cos", "sqrt", "rsqrt", "floor", "ceil"]


@pytest.mark.parametrize("fn", _FP32_FP64_ONLY)
@pytest.mark.parametrize("x,name", [("fp16", "fp16"), ("bf16", "bf16"), ("i32", "int32"), ("u8", "uint8")])
def test_math_functions_refuse_what_triton_refuses(fn, x, name):
    """Triton 3.6 declares these for fp32 and fp64 only (``_check_dtype``): a kernel that runs on
    tritium must run on Triton too, so fp16, bf16 and integers are refused in Triton's words."""
    with pytest.raises(tritium.CompilationError) as info:
        result_type(fn, x, "fp32", tl.float32)
    assert f"tl.{fn}: Expected dtype ['fp32', 'fp64'] but got {name}" in str(info.value)
    assert "mathfns.py:" in str(info.value) and ".to(tl.float32)" in str(info.value)


@pytest.mark.parametrize("fn", _FP32_FP64_ONLY)
@pytest.mark.parametrize("x,expect", [("fp32", tl.float32), ("fp64", tl.float64)])
def test_math_functions_keep_fp32_and_fp64(fn, x, expect):
    result_type(fn, x, "fp32", expect)


def test_math_namespace_is_tritons():
    triton_math = {"umulhi", "exp", "exp2", "log", "log2", "cos", "sin", "sqrt", "sqrt_rn", "rsqrt", "abs", "fdiv",
                   "div_rn", "erf", "floor", "ceil", "fma"}
    assert triton_math <= set(dir(tl.math)) and set(tl.math.__all__) == triton_math
    for name in ("exp", "sqrt", "abs", "floor", "erf", "fma", "umulhi", "sqrt_rn", "div_rn", "fdiv"):
        assert getattr(tl.math, name) is getattr(tl, name)
    assert tl.PropagateNan.NONE == 0 and tl.PropagateNan.ALL == 0xFFFF
    for name in ("isnan", "isinf"):  # Triton 3.6's tl and tl.math do not have them either
        assert not hasattr(tl, name) and not hasattr(tl.math, name)


def test_softmax_along_dim_1_without_keep_dims_is_right_on_square_tiles(target):
    """Triton broadcasts the row maxima and sums along the wrong dimension here (a silently wrong
    answer on square tiles, a shape error on others); tritium keeps the reduced dimension."""
    dev = target.driver
    x = np.random.default_rng(15).standard_normal((16, 16)).astype(np.float32)
    out = dev.to_device(np.zeros_like(x))
    softmax_kernel[(1,)](dev.to_device(x), out, M=16, N=16, DIM=1, KEEP=False, IEEE=False)
    np.testing.assert_allclose(dev.to_host(out), _softmax(x.astype(np.float64), 1), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64])
def test_xor_sum(target, axis, dtype):
    from .kernels.mathfns import xor_sum_kernel

    dev = target.driver
    M, N = 8, 16
    info = np.iinfo(dtype)
    x = np.random.default_rng(16).integers(info.min, info.max, (M, N), dtype=dtype, endpoint=True)
    want = np.bitwise_xor.reduce(x, axis=None if axis == -1 else axis)
    out = dev.to_device(np.zeros(np.shape(want) or (1,), dtype))
    xor_sum_kernel[(1,)](dev.to_device(x), out, M=M, N=N, AXIS=axis)
    np.testing.assert_array_equal(dev.to_host(out).reshape(np.shape(want)), want)  # the dtype is kept


def test_xor_sum_refuses_floats(target):
    from .kernels.mathfns import xor_sum_kernel

    dev = target.driver
    x = dev.to_device(np.ones((8, 16), np.float32))
    with pytest.raises(tritium.errors.TritiumError, match="xor_sum reduces integers only"):
        xor_sum_kernel[(1,)](x, dev.to_device(np.zeros(16, np.float32)), M=8, N=16, AXIS=0)


def test_debug_barrier_orders_a_program_s_stores_before_its_loads(target):
    from .kernels.mathfns import barrier_kernel

    dev = target.driver
    x = np.arange(128, dtype=np.float32)
    out = dev.to_device(np.zeros(256, np.float32))
    barrier_kernel[(1,)](dev.to_device(x), out, BLOCK=128)
    got = dev.to_host(out)
    np.testing.assert_array_equal(got[:128], 2 * x)
    np.testing.assert_array_equal(got[128:], (2 * x)[::-1])


@pytest.mark.parametrize("size_i,size_j,size_g", [(4, 4, 2), (8, 4, 3), (8, 8, 8), (4, 8, 1)])
def test_swizzle2d_walks_each_band_of_rows_column_by_column(target, size_i, size_j, size_g):
    from .kernels.mathfns import swizzle_kernel

    dev = target.driver
    out_i = dev.to_device(np.zeros((size_i, size_j), np.int32))
    out_j = dev.to_device(np.zeros((size_i, size_j), np.int32))
    swizzle_kernel[(1,)](out_i, out_j, SIZE_I=size_i, SIZE_J=size_j, SIZE_G=size_g)
    got = np.zeros((size_i, size_j), np.int64)
    got[dev.to_host(out_i), dev.to_host(out_j)] = np.arange(size_i * size_j).reshape(size_i, size_j)
    want = np.zeros_like(got)  # the k-th element in row-major order, placed band by band, column-major
    k = 0
    for first in range(0, size_i, size_g):
        rows = min(size_g, size_i - first)
        for col in range(size_j):
            for row in range(first, first + rows):
                want[row, col] = k
                k += 1
    np.testing.assert_array_equal(got, want)
    if (size_i, size_j, size_g) == (4, 4, 2):  # Triton's documented example
        assert got.tolist() == [[0, 2, 4, 6], [1, 3, 5, 7], [8, 10, 12, 14], [9, 11, 13, 15]]


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("fn", ["product", "magnitude"])
def test_reduce_with_a_user_combine_function(target, axis, fn):
    from .kernels.mathfns import user_reduce_kernel

    dev = target.driver
    M, N = 4, 8
    x = np.random.default_rng(17).uniform(-1.5, 1.5, (M, N)).astype(np.float32)
    ax = None if axis == -1 else axis
    if fn == "product":
        want = np.prod(x.astype(np.float64), axis=ax)
    else:
        flat = np.moveaxis(x, ax, -1) if ax is not None else x.reshape(1, -1)
        want = np.take_along_axis(flat, np.abs(flat).argmax(-1)[..., None], -1)[..., 0]
    out = dev.to_device(np.zeros(np.shape(want) or (1,), np.float32))
    user_reduce_kernel[(1,)](dev.to_device(x), out, M=M, N=N, AXIS=axis, FN=fn)
    np.testing.assert_allclose(dev.to_host(out).reshape(np.shape(want)), want, rtol=1e-5)


@pytest.mark.parametrize("case,message", [("builtin", "combine_fn must be a @jit function"),
                                          ("tuple", r"combine_fn _product takes 2 argument\(s\); combining 2 tensor\(s\) "
                                                    r"calls it with 4")])
def test_reduce_refuses_what_it_cannot_do_naming_the_line(target, case, message):
    from .kernels.mathfns import bad_reduce_kernel

    dev = target.driver
    x = dev.to_device(np.ones(16, np.float32))
    with pytest.raises(tritium.errors.TritiumError, match=message) as info:
        bad_reduce_kernel[(1,)](x, dev.to_device(np.zeros(1, np.float32)), BLOCK=16, CASE=case)
    assert "bad_reduce_kernel" in str(info.value) and "tl.reduce(" in str(info.value)


def test_builtins_are_tensor_methods_too(target):
    from .kernels.mathfns import member_kernel

    dev = target.driver
    x = np.random.default_rng(18).standard_normal((4, 16)).astype(np.float32)
    out = dev.to_device(np.zeros(8, np.float32))
    member_kernel[(1,)](dev.to_device(x), out, M=4, N=16)
    got = dev.to_host(out)
    x64 = x.astype(np.float64)
    want = (x64.sum(1) + 2 * x64.max(1) + np.exp(x64).min(1) + np.sqrt(np.abs(x64)).sum(1)
            + (1 / (1 + np.exp(-x64))).sum(1))
    np.testing.assert_allclose(got[:4], want, rtol=1e-5)
    np.testing.assert_array_equal(got[:4], got[4:])  # the same computation either way
