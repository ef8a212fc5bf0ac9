"""A kernel applying one ``libdevice`` function (tests/test_libdevice.py)."""

import tritium
import tritium.language as tl
from tritium.language.extra import libdevice


@tritium.jit
def libdevice_kernel(x_ptr, y_ptr, out_ptr, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if FN == "fma":
        r = libdevice.fma(x, y, x)
    elif FN == "copysign":
        r = libdevice.copysign(x, y)
    elif FN == "fmin":
        r = libdevice.fmin(x, y)
    elif FN == "fmax":
        r = libdevice.fmax(x, y)
    elif FN == "isnan":
        r = libdevice.isnan(x).to(x.dtype)
    elif FN == "isinf":
        r = libdevice.isinf(x).to(x.dtype)
    elif FN == "cuda-tanh":
        r = tl.extra.cuda.libdevice.tanh(x)
    else:
        r = getattr(libdevice, FN)(x)
    tl.store(out_ptr + offs, r)
