"""Language semantics (Triton's) checked as numbers against numpy, on every installed target."""

import numpy as np
import pytest

import tritium
import tritium.language as tl

from .kernels.basic import add_kernel, binop_kernel, grid3_kernel, loops_kernel, range_kernel, reduce2d_kernel


def c_div(a, b):
    return (np.trunc(a.astype(np.float64) / b)).astype(a.dtype)


@pytest.mark.parametrize("n", [1, 17, 1000, 1024])
def test_vector_add(target, n):
    rng = np.random.default_rng(n)
    dev = target.driver
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = dev.to_device(np.full(n, -1, np.float32))
    add_kernel[lambda meta: (tritium.cdiv(n, meta["BLOCK"]),)](dev.to_device(x), dev.to_device(y), out, n, BLOCK=256)
    np.testing.assert_array_equal(dev.to_host(out), x + y)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_c_style_integer_division(target, dtype):
    a = np.array([7, -7, 7, -7, 0, 5, -9, 100], dtype=dtype)
    b = np.array([2, 2, -2, -2, 3, -5, 4, 7], dtype=dtype)
    dev = target.driver
    da, db, out = dev.to_device(a), dev.to_device(b), dev.to_device(np.zeros_like(a))
    binop_kernel[(1,)](da, db, out, 8, OP="floordiv", BLOCK=8)
    np.testing.assert_array_equal(dev.to_host(out), c_div(a, b))
    binop_kernel[(1,)](da, db, out, 8, OP="mod", BLOCK=8)
    np.testing.assert_array_equal(dev.to_host(out), a - b * c_div(a, b))


def test_promotion_and_implicit_store_cast(target):
    a = np.array([1, -2, 3, 4], dtype=np.int32)
    b = np.array([0.5, 0.25, -1.5, 2.0], dtype=np.float32)
    dev = target.driver
    out = dev.to_device(np.zeros(4, dtype=np.float64))  # int32 + fp32 -> fp32, stored into fp64
    binop_kernel[(1,)](dev.to_device(a), dev.to_device(b), out, 4, OP="add", BLOCK=4)
    np.testing.assert_array_equal(dev.to_host(out), a.astype(np.float64) + b)
    out_i = dev.to_device(np.zeros(4, dtype=np.int32))  # int / int -> fp32, truncated by the store into int32
    binop_kernel[(1,)](dev.to_device(a), dev.to_device(np.array([2, 2, 2, 3], np.int32)), out_i, 4, OP="truediv",
                       BLOCK=4)
    np.testing.assert_array_equal(dev.to_host(out_i), np.trunc(a / np.array([2, 2, 2, 3])).astype(np.int32))


def test_where_and_maximum(target):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(64), rng.standard_normal(64)
    dev = target.driver
    da, db, out = dev.to_device(a), dev.to_device(b), dev.to_device(np.zeros(64))
    binop_kernel[(1,)](da, db, out, 64, OP="where", BLOCK=64)
    np.testing.assert_array_equal(dev.to_host(out), np.minimum(a, b))
    binop_kernel[(1,)](da, db, out, 50, OP="max", BLOCK=64)
    np.testing.assert_array_equal(dev.to_host(out)[:50], np.maximum(a, b)[:50])


@pytest.mark.parametrize("n", [1, 100, 256, 1000])
def test_loops_if_and_calls(target, n):
    x = np.random.default_rng(n).random(n, dtype=np.float32)
    dev = target.driver
    out = dev.to_device(np.zeros(2, np.float32))
    loops_kernel[(1,)](dev.to_device(x), out, n, BLOCK=64)
    out = dev.to_host(out)
    np.testing.assert_allclose(out[0], 2 * x.astype(np.float64).sum(), rtol=1e-5)
    assert out[1] == int(np.floor(np.log2(n)))


def test_grid_3d(target):
    out = target.driver.to_device(np.zeros((2, 3, 4), np.int32))
    grid3_kernel[(4, 3, 2)](out)
    z, y, x = np.indices((2, 3, 4))
    np.testing.assert_array_equal(target.driver.to_host(out), x + 10 * y + 100 * z)


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_reductions_2d(target, kind):
    x = np.random.default_rng(1).standard_normal((8, 32)).astype(np.float32)
    dev = target.driver
    o0, o1 = dev.to_device(np.zeros(32, np.float32)), dev.to_device(np.zeros(8, np.float32))
    reduce2d_kernel[(1,)](dev.to_device(x), o0, o1, M=8, N=32, KIND=kind)
    o0, o1 = dev.to_host(o0), dev.to_host(o1)
    ref = getattr(np, kind)
    np.testing.assert_allclose(o0, ref(x.astype(np.float64), axis=0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(o1, ref(x.astype(np.float64), axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("lb,ub,step", [(0, 10, 3), (10, 0, -1), (10, 0, -3), (0, 10, -1), (5, 5, 2),
                                        (-7, 7, 4), (7, -7, -4), (3, 4, 100)])
@pytest.mark.parametrize("constant", [False, True])
def test_range_with_steps_of_either_sign(target, lb, ub, step, constant):
    dev = target.driver
    out = dev.to_device(np.full(32, -99, np.int32))
    range_kernel[(1,)](out, lb, ub, step, CONST_STEP=step if constant else 0)
    out = dev.to_host(out)
    want = list(range(lb, ub, step))
    assert out[0] == len(want)
    assert out[1:1 + len(want)].tolist() == want


def test_static_range_assert_and_hints(target):
    from .kernels.basic import static_kernel

    out = target.driver.to_device(np.full(8, -1, np.int32))
    static_kernel[(1,)](out, N=5)
    np.testing.assert_array_equal(target.driver.to_host(out), [0, 101, 4, 109, 16, 0, 0, 0])


@tritium.jit
def launch_shape_kernel(out_ptr):
    n: tl.constexpr = tl.extra.cuda.num_threads()
    offs = tl.arange(0, n)
    tl.store(out_ptr + offs, tl.extra.cuda.num_warps() + tl.zeros_like(offs))


@pytest.mark.parametrize("warps", [1, 8])
def test_num_warps_and_num_threads_are_the_launch_s(target, warps):
    """Triton's ``tl.extra.cuda.num_warps()``/``num_threads()`` (its test_num_threads): constants
    of the specialisation, on every target."""
    out = target.driver.to_device(np.full(256, -1, np.int32))
    launch_shape_kernel[(1,)](out, num_warps=warps)
    got = target.driver.to_host(out)
    assert (got[:32 * warps] == warps).all() and (got[32 * warps:] == -1).all()


@tritium.jit
def number_attributes_kernel(out_ptr, N: tl.constexpr):
    value = 1
    big = 1e50
    tl.static_assert(value.dtype == tl.int32 and big.dtype == tl.float64)
    tl.store(out_ptr + tl.arange(0, N), tl.full([N], value, dtype=value.dtype) + big.to(tl.int8, bitcast=False) * 0)


def test_a_number_in_a_name_has_a_scalar_tensor_s_dtype(target):
    """``value = 1; value.dtype`` is int32 and ``1e50`` fp64, as in Triton (its test_store_constant),
    in the interpreter too, where the kernel runs as Python."""
    out = target.driver.to_device(np.zeros(16, np.int32))
    number_attributes_kernel[(1,)](out, N=16)
    assert (target.driver.to_host(out) == 1).all()


@tritium.jit
def dtype_compare_kernel(x_ptr):
    dtype_x: tl.constexpr = x_ptr.dtype.element_ty
    tl.static_assert(dtype_x == tl.constexpr(tl.int32) and not (dtype_x != tl.constexpr(tl.int32)))
    tl.static_assert(x_ptr.dtype == tl.constexpr(tl.pointer_type(tl.int32)))
    tl.store(x_ptr, 7)


def test_a_dtype_equals_a_constexpr_of_it(target):
    """``dtype == tl.constexpr(dtype)`` holds, as Triton's ``dtype.__eq__`` unwraps a constexpr (its
    test_dtype), in the interpreter too, where the comparison is Python's."""
    x = target.driver.to_device(np.zeros(1, np.int32))
    dtype_compare_kernel[(1,)](x)
    assert target.driver.to_host(x)[0] == 7


@tritium.jit
def smid_kernel(out_ptr):
    tl.store(out_ptr, tl.extra.cuda.smid())


def test_nvidia_s_special_registers_are_refused_where_ptx_is_not_the_assembly(target):
    """``tl.extra.cuda.smid()`` (and ``globaltimer()``) are inline PTX, as in Triton: a target of
    another instruction set says so, at the call."""
    if target.inline_asm == "ptx":
        pytest.skip("the target takes PTX")
    with pytest.raises(tritium.CompilationError, match=r"tl.inline_asm_elementwise[\s\S]*tl.extra.cuda.smid\(\)"):
        smid_kernel[(1,)](target.driver.to_device(np.zeros(1, np.int32)))


@tritium.jit
def ternary_kernel(x_ptr, out_ptr, n, WHICH: tl.constexpr):
    pid = tl.program_id(0)
    i = tl.arange(0, 4)
    if WHICH == "void":  # stores on both sides: only the side taken stores
        tl.store(out_ptr + pid, 1.0) if pid % 2 == 0 else tl.store(out_ptr + pid, 2.0)
    elif WHICH == "guarded":  # the side not taken does not read (out of bounds for pid >= n)
        tl.store(out_ptr + pid, tl.load(x_ptr + pid * 1000) if pid < n else -1.0)
    else:  # a block and a number: the block's type, the block's shape
        tl.store(out_ptr + pid * 4 + i, tl.load(x_ptr + i) if pid == 0 else 0)


@pytest.mark.parametrize("which, want", [("void", [1, 2, 1, 0, 0, 0, 0, 0]), ("guarded", [5, -1, -1, 0, 0, 0, 0, 0]),
                                         ("typed", [5, 6, 7, 8, 0, 0, 0, 0])])
def test_a_ternary_on_a_scalar_runs_one_side(target, which, want):
    """``a if c else b`` on a scalar tensor ``c`` is Triton's ``scf.if``: one side runs (stores on
    both sides, a load its condition guards; checked in debug mode), typed as both sides would be."""
    dev = target.driver
    out = dev.to_device(np.zeros(8, np.float32))
    grid = (2,) if which == "typed" else (3,)
    ternary_kernel[grid](dev.to_device(np.arange(4, dtype=np.float32) + 5), out, 1, WHICH=which, debug=True)
    np.testing.assert_array_equal(dev.to_host(out), want)
