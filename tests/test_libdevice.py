"""``tl.extra.libdevice`` (and ``tl.extra.cuda.libdevice``) on every available target, against
numpy in float64, with the tolerances of ``test_math``'s transcendental functions."""

import math

import numpy as np
import pytest
import tritium
import tritium.language as tl
from tritium.errors import NotImplementedYet

from .kernels.libdevice_fns import libdevice_kernel

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 2.5, -2.5, 0.5, -0.5, 1.5]
REFERENCE = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "log10": np.log10, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh,
    "cuda-tanh": np.tanh, "erf": np.vectorize(math.erf), "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "round": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), "rint": np.rint, "nearbyint": np.rint,
    "fabs": np.abs, "fma": lambda x, y: x * y + x, "copysign": np.copysign, "fmin": np.fmin, "fmax": np.fmax,
    "isnan": lambda x: np.isnan(x).astype(np.float64), "isinf": lambda x: np.isinf(x).astype(np.float64),
}
EXACT = {"floor", "ceil", "trunc", "round", "rint", "nearbyint", "fabs", "copysign", "fmin", "fmax", "isnan", "isinf"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", sorted(REFERENCE))
def test_libdevice_function(target, fn, dtype):
    rng = np.random.default_rng(7)
    n = 128
    x = np.concatenate([rng.uniform(0.1, 4, n - len(SPECIAL)) * rng.choice([-1, 1], n - len(SPECIAL)), SPECIAL])
    y = rng.standard_normal(n)
    if fn in ("log", "log2", "log10", "sqrt", "rsqrt"):
        x = np.abs(x)
    x, y = x.astype(dtype), y.astype(dtype)
    dev = target.driver
    out = dev.to_device(np.zeros(n, dtype))
    libdevice_kernel[(1,)](dev.to_device(x), dev.to_device(y), out, FN=fn, BLOCK=n)
    got = dev.to_host(out).astype(np.float64)
    with np.errstate(all="ignore"):
        want = REFERENCE[fn](*([x.astype(np.float64), y.astype(np.float64)] if fn in ("fma", "copysign", "fmin", "fmax")
                               else [x.astype(np.float64)]))
    if fn in EXACT:
        np.testing.assert_array_equal(got, want)
    else:
        tol = 1e-6 if dtype == np.float32 else 1e-13
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_libdevice_names_are_triton_s():
    from tritium.language.extra import libdevice

    assert tl.extra.libdevice is libdevice is tl.extra.cuda.libdevice
    with pytest.raises(NotImplementedYet, match="libdevice.not_a_libdevice_name is not supported yet"):
        libdevice.not_a_libdevice_name  # noqa: B018


def test_libdevice_refuses_integers(target):
    x = target.driver.to_device(np.zeros(128, np.int32))
    with pytest.raises(tritium.TritiumError, match="libdevice.tanh takes fp32 or fp64"):
        libdevice_kernel[(1,)](x, x, x, FN="tanh", BLOCK=128)


#: every name of Triton 3.6's ``triton.language.extra.libdevice``
TRITON_LIBDEVICE = """
abs acos acosh add_rd add_rn add_ru add_rz asin asinh atan atan2 atanh brev byte_perm cbrt ceil clz copysign cos
cosh cospi cyl_bessel_i0 cyl_bessel_i1 div_rd div_rn div_ru div_rz double2float_rd double2float_rn double2float_ru
double2float_rz double2hiint double2int_rd double2int_rn double2int_ru double2int_rz double2ll_rd double2ll_rn
double2ll_ru double2ll_rz double2loint double2uint_rd double2uint_rn double2uint_ru double2uint_rz double2ull_rd
double2ull_rn double2ull_ru double2ull_rz double_as_longlong erf erfc erfcinv erfcx erfinv exp exp10 exp2 expm1
fast_cosf fast_dividef fast_exp10f fast_expf fast_log10f fast_log2f fast_logf fast_powf fast_sinf fast_tanf
fast_tanhf fdim ffs finitef float2int_rd float2int_rn float2int_ru float2int_rz float2ll_rd float2ll_rn float2ll_ru
float2ll_rz float2uint_rd float2uint_rn float2uint_ru float2uint_rz float2ull_rd float2ull_rn float2ull_ru
float2ull_rz float_as_int float_as_uint floor fma fma_rd fma_rn fma_ru fma_rz fmod hadd hiloint2double hypot ilogb
int2double_rn int2float_rd int2float_rn int2float_ru int2float_rz int_as_float isfinited isinf isnan j0 j1 jn ldexp
lgamma ll2double_rd ll2double_rn ll2double_ru ll2double_rz ll2float_rd ll2float_rn ll2float_ru ll2float_rz llrint
llround log log10 log1p log2 logb longlong_as_double mul24 mul_rd mul_rn mul_ru mul_rz mulhi nearbyint nextafter
norm3d norm4d normcdf normcdfinv popc pow rcbrt rcp64h rcp_rd rcp_rn rcp_ru rcp_rz remainder rhadd rhypot rint
rnorm3d rnorm4d round rsqrt rsqrt_rn sad saturatef scalbn signbit sin sinh sinpi sqrt sqrt_rd sqrt_rn sqrt_ru sqrt_rz
sub_rd sub_rn sub_ru sub_rz tan tanh tgamma trunc uint2double_rn uint2float_rd uint2float_rn uint2float_ru
uint2float_rz uint_as_float ull2double_rd ull2double_rn ull2double_ru ull2double_rz ull2float_rd ull2float_rn
ull2float_ru ull2float_rz y0 y1 yn
""".split()


def test_libdevice_has_every_name_of_triton_s():
    from tritium.language.extra import libdevice

    assert len(TRITON_LIBDEVICE) == len(set(TRITON_LIBDEVICE)) == 198
    missing = [name for name in TRITON_LIBDEVICE if not callable(getattr(libdevice, name, None))]
    assert missing == []


@tritium.jit
def _apply1(x_ptr, out_ptr, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, getattr(tl.extra.libdevice, FN)(tl.load(x_ptr + offs)))


@tritium.jit
def _apply2(x_ptr, y_ptr, out_ptr, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, getattr(tl.extra.libdevice, FN)(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


def _run(target, fn, out_dtype, *arrays):
    dev = target.driver
    out = dev.to_device(np.zeros(arrays[0].size, out_dtype))
    kernel = _apply1 if len(arrays) == 1 else _apply2
    kernel[(1,)](*[dev.to_device(a) for a in arrays], out, FN=fn, BLOCK=arrays[0].size)
    return dev.to_host(out)


FAST = {"fast_sinf": np.sin, "fast_cosf": np.cos, "fast_tanf": np.tan, "fast_log2f": np.log2, "fast_logf": np.log,
        "fast_log10f": np.log10, "fast_expf": np.exp, "fast_exp10f": lambda x: 10.0 ** x, "fast_tanhf": np.tanh}


@pytest.mark.parametrize("fn", sorted(FAST))
def test_libdevice_fast_functions(target, fn):
    x = np.random.default_rng(3).uniform(0.05, 3, 64).astype(np.float32)
    got = _run(target, fn, np.float32, x)
    np.testing.assert_allclose(got, FAST[fn](x.astype(np.float64)), rtol=2e-6, atol=1e-7)


def test_libdevice_fast_dividef_powf_and_powi(target):
    rng = np.random.default_rng(4)
    x, y = rng.uniform(0.1, 4, 64).astype(np.float32), rng.uniform(-3, 3, 64).astype(np.float32)
    np.testing.assert_allclose(_run(target, "fast_dividef", np.float32, x, y), x / y.astype(np.float64), rtol=3e-7)
    np.testing.assert_allclose(_run(target, "fast_powf", np.float32, x, y), np.power(x.astype(np.float64), y),
                               rtol=2e-6)
    for dt in (np.float32, np.float64):  # libdevice's powi: an int32 exponent
        k = rng.integers(-5, 6, 64).astype(np.int32)
        np.testing.assert_allclose(_run(target, "pow", dt, x.astype(dt), k), np.power(x.astype(np.float64), k),
                                   rtol=1e-6 if dt == np.float32 else 1e-14)


def test_libdevice_rsqrt_rn_is_correctly_rounded(target):
    from fractions import Fraction

    rng = np.random.default_rng(5)
    x = np.concatenate([np.ldexp(rng.uniform(1, 4, 60), rng.integers(-140, 120, 60)),
                        [1e-45, 3.4e38, 4.0, 0.25]]).astype(np.float32)
    got = _run(target, "rsqrt_rn", np.float32, x)
    for v, g in zip(x, got):  # g is nearest: the exact 1/sqrt(v) lies between the midpoints around g
        lo = (Fraction(float(np.nextafter(g, np.float32(0)))) + Fraction(float(g))) / 2
        hi = (Fraction(float(np.nextafter(g, np.float32(np.inf)))) + Fraction(float(g))) / 2
        assert lo * lo * Fraction(float(v)) <= 1 <= hi * hi * Fraction(float(v)), (v, g)


def test_libdevice_rcp64h(target):
    x = np.random.default_rng(6).uniform(-1e5, 1e5, 64)
    np.testing.assert_allclose(_run(target, "rcp64h", np.float64, x), 1 / x, rtol=2.0 ** -19)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_libdevice_bessel_as_triton_tests_them(target, dtype):
    """Triton's own test: 128 standard-normal inputs against torch.special, with assert_close's default
    tolerances (here against the integral representations of the conformance suite; Y on |x|)."""
    from tritium_conformance.cases_libdevice import bessel_ref

    x = np.random.default_rng(7).standard_normal(128).astype(dtype)
    rtol, atol = (1.3e-6, 1e-5) if dtype == np.float32 else (1e-7, 1e-7)
    for fn, kind, order, arg in (("j0", "j", 0, x), ("j1", "j", 1, x), ("y0", "y", 0, np.abs(x)),
                                 ("y1", "y", 1, np.abs(x)), ("cyl_bessel_i0", "i", 0, x),
                                 ("cyl_bessel_i1", "i", 1, x)):
        got = _run(target, fn, dtype, arg).astype(np.float64)
        np.testing.assert_allclose(got, bessel_ref(kind, order, arg.astype(np.float64)), rtol=rtol, atol=atol,
                                   err_msg=fn)


def test_libdevice_bessel_special_values(target):
    x = np.array([0.0, -0.0, np.inf, -1.0, np.nan, 2.0, -2.0, 1e-300], np.float64)
    with np.errstate(all="ignore"):
        j0, y0 = _run(target, "j0", np.float64, x), _run(target, "y0", np.float64, x)
        j1 = _run(target, "j1", np.float64, x)
    np.testing.assert_array_equal(j0[:3], [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(y0[:4], [-np.inf, -np.inf, 0.0, np.nan])
    assert np.isnan(j0[4]) and np.isnan(y0[4])
    assert j1[5] == -j1[6] and j1[0] == 0.0


@tritium.jit
def _orders(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.extra.libdevice.jn(-3, x))
    tl.store(out_ptr + BLOCK + offs, tl.extra.libdevice.yn(-3, tl.abs(x) + 0.5))
    tl.store(out_ptr + 2 * BLOCK + offs, tl.extra.libdevice.jn(40, x))
    tl.store(out_ptr + 3 * BLOCK + offs, tl.extra.libdevice.jn(0, x))


def test_libdevice_jn_yn_orders(target):
    """Negative orders (J_-n = (-1)^n J_n), negative arguments, a large compile-time order."""
    from tritium_conformance.cases_libdevice import bessel_ref

    dev = target.driver
    x = np.random.default_rng(8).uniform(-30, 30, 64)
    out = dev.to_device(np.zeros(4 * 64))
    _orders[(1,)](dev.to_device(x), out, BLOCK=64)
    got = dev.to_host(out).reshape(4, 64)
    np.testing.assert_allclose(got[0], -bessel_ref("j", 3, x), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(got[1], -bessel_ref("y", 3, np.abs(x) + 0.5), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(got[2], bessel_ref("j", 40, x), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got[3], bessel_ref("j", 0, x), rtol=1e-9, atol=1e-11)


def test_libdevice_dispatch(target):
    """Triton's table decides the dtypes: integers refuse float functions and the other way round;
    a Python number promotes as Triton promotes it."""
    x = target.driver.to_device(np.zeros(128, np.float32))
    with pytest.raises(tritium.TritiumError, match="libdevice.clz takes"):
        _apply1[(1,)](x, target.driver.to_device(np.zeros(128, np.int32)), FN="clz", BLOCK=128)
    with pytest.raises(tritium.TritiumError, match="libdevice.float2int_rn takes"):
        _apply1[(1,)](target.driver.to_device(np.zeros(128, np.float64)), x, FN="float2int_rn", BLOCK=128)
    with pytest.raises(tritium.TritiumError, match="libdevice.uint2float_rn takes"):
        _apply1[(1,)](target.driver.to_device(np.zeros(128, np.int32)), x, FN="uint2float_rn", BLOCK=128)


@tritium.jit
def _with_number(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.extra.libdevice.add_ru(x, 1.0) + tl.extra.libdevice.ldexp(x, 3))


def test_libdevice_python_numbers_promote(target):
    dev = target.driver
    x = np.array([1e-17, 2.0, -3.0, 0.5], np.float64)
    out = dev.to_device(np.zeros(4))
    _with_number[(1,)](dev.to_device(x), out, BLOCK=4)
    want = np.array([np.nextafter(1.0, 2.0), 3.0, -2.0, 1.5]) + x * 8
    np.testing.assert_array_equal(dev.to_host(out), want)
