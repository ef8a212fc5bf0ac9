"""Conformance cases of ``tl.extra.libdevice``: each function on fp32 and fp64 over a range where
it is defined, against float64 numpy (exact for the rounding, sign and classification functions)."""

from __future__ import annotations

import math

import numpy as np

import tritium
import tritium.language as tl
from tritium.language.extra import libdevice

from .suite import Device, Output, cases, rng_for

NP = {"fp32": np.float32, "fp64": np.float64}
#: name: (numpy reference, input range, exact)
FUNCTIONS = {
    "tanh": (np.tanh, (-6, 6), False), "tan": (np.tan, (-1.5, 1.5), False), "log10": (np.log10, (1e-3, 1e3), False),
    "erf": (np.vectorize(math.erf), (-3, 3), False), "trunc": (np.trunc, (-50, 50), True),
    "round": (lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), (-50, 50), True), "rint": (np.rint, (-50, 50), True),
    "fabs": (np.abs, (-5, 5), True), "isnan": (lambda x: np.isnan(x).astype(np.float64), (-5, 5), True),
    "isinf": (lambda x: np.isinf(x).astype(np.float64), (-5, 5), True),
    "acos": (np.arccos, (-1, 1), False), "asin": (np.arcsin, (-1, 1), False), "atan": (np.arctan, (-20, 20), False),
    "acosh": (np.arccosh, (1, 50), False), "asinh": (np.arcsinh, (-20, 20), False),
    "atanh": (np.arctanh, (-0.99, 0.99), False), "sinh": (np.sinh, (-10, 10), False),
    "cosh": (np.cosh, (-10, 10), False), "cbrt": (np.cbrt, (-100, 100), False),
    "erfc": (np.vectorize(math.erfc), (-3, 9), False), "expm1": (np.expm1, (-5, 5), False),
    "log1p": (np.log1p, (-0.9, 100), False),
}
#: two-argument functions: name: (numpy reference, range of the first, range of the second)
BINARY = {"atan2": (np.arctan2, (-5, 5), (-5, 5)), "pow": (np.power, (0.1, 10), (-4, 4)),
          "fmod": (np.fmod, (-50, 50), (0.5, 7))}


@tritium.jit
def libdevice_case_kernel(x_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    if FN == "isnan":
        r = libdevice.isnan(x).to(x.dtype)
    elif FN == "isinf":
        r = libdevice.isinf(x).to(x.dtype)
    else:
        r = getattr(libdevice, FN)(x)
    tl.store(out_ptr + offs, r, mask=mask)


@cases("libdevice-{fn}-{dtype}", fn=list(FUNCTIONS), dtype=["fp32", "fp64"])
def libdevice_fn(dev: Device, fn: str, dtype: str) -> list[Output]:
    ref, (lo, hi), exact = FUNCTIONS[fn]
    n = 1000
    x = rng_for(f"libdevice-{fn}-{dtype}").uniform(lo, hi, n).astype(NP[dtype])
    x[:4] = [lo, hi, 0.5, -0.5]
    if fn in ("isnan", "isinf", "fabs", "trunc", "round", "rint"):
        x[4:8] = [np.nan, np.inf, -np.inf, -0.0]
    out = dev.empty(n, NP[dtype])
    dev.launch(libdevice_case_kernel, (tritium.cdiv(n, 256),), dev.to_device(x), out, n, FN=fn, BLOCK=256)
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    return [Output("out", dev.to_host(out), want, rtol=0 if exact else None, atol=0 if exact else None)]


@tritium.jit
def libdevice_binary_kernel(x_ptr, y_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x, y = tl.load(x_ptr + offs, mask=mask, other=1.0), tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, getattr(libdevice, FN)(x, y), mask=mask)


@cases("libdevice-{fn}-{dtype}", fn=list(BINARY), dtype=["fp32", "fp64"])
def libdevice_binary(dev: Device, fn: str, dtype: str) -> list[Output]:
    ref, (lo, hi), (lo2, hi2) = BINARY[fn]
    n = 1000
    rng = rng_for(f"libdevice-{fn}-{dtype}")
    x, y = rng.uniform(lo, hi, n).astype(NP[dtype]), rng.uniform(lo2, hi2, n).astype(NP[dtype])
    out = dev.empty(n, NP[dtype])
    dev.launch(libdevice_binary_kernel, (tritium.cdiv(n, 256),), dev.to_device(x), dev.to_device(y), out, n, FN=fn,
               BLOCK=256)
    return [Output("out", dev.to_host(out), ref(x.astype(np.float64), y.astype(np.float64)))]
