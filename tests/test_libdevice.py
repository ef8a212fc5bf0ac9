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
    with pytest.raises(NotImplementedYet, match="libdevice.lgamma is not supported yet"):
        libdevice.lgamma  # noqa: B018


def test_libdevice_refuses_integers(target):
    x = target.driver.to_device(np.zeros(128, np.int32))
    with pytest.raises(tritium.TritiumError, match="libdevice.tanh takes fp32 or fp64"):
        libdevice_kernel[(1,)](x, x, x, FN="tanh", BLOCK=128)
