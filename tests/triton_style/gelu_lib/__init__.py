"""A library written for Triton, as Liger-Kernel's and unsloth's are: it imports ``triton``, takes
its Triton 3 path by checking the version, and uses ``libdevice``. tritium runs it unchanged
through ``tritium run`` (see ``tests/test_as_triton.py``)."""

import importlib.metadata

import triton
import triton.language as tl

TRITON_3 = int(triton.__version__.split(".")[0]) >= 3
if TRITON_3:
    from triton.language.extra import libdevice
else:  # Triton 2 spelled it differently; tritium must never land here
    from triton.language.math import erf as _erf  # noqa: F401

#: what the installed distribution's metadata says, as some libraries ask it
INSTALLED = importlib.metadata.version("triton")


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, 0.5 * x * (1 + libdevice.erf(x * 0.7071067811865476)), mask=mask)


def gelu(x, out, block: int = 128) -> None:
    n = x.shape[0]
    gelu_kernel[(triton.cdiv(n, block),)](x, out, n, BLOCK=block)
