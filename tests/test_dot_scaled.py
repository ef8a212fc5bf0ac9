"""``tl.dot_scaled``'s refusals, as Triton's: each a clear error naming the kernel and what to change.
(The numbers are checked by the conformance suite's ``dot-scaled-*`` cases on every target.)"""

import numpy as np
import pytest
import tritium
import tritium.language as tl
from tritium.errors import TritiumError


@tritium.jit
def scaled_kernel(a_ptr, s_ptr, c_ptr, FMT: tl.constexpr, PACK: tl.constexpr, SR: tl.constexpr, SC: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :])
    s = tl.load(s_ptr + tl.arange(0, SR)[:, None] * SC + tl.arange(0, SC)[None, :])
    c = tl.dot_scaled(a, s, FMT, a, s, FMT, lhs_k_pack=PACK)
    tl.store(c_ptr + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :], c)


@tritium.jit
def batched_kernel(a_ptr, c_ptr):
    a = tl.load(a_ptr + tl.arange(0, 2)[:, None, None] * 1024 + tl.arange(0, 32)[None, :, None] * 32
                + tl.arange(0, 32)[None, None, :])
    c = tl.dot_scaled(a, None, "e4m3", a, None, "e4m3")
    tl.store(c_ptr + tl.arange(0, 2)[:, None, None] * 1024 + tl.arange(0, 32)[None, :, None] * 32
             + tl.arange(0, 32)[None, None, :], c)


def _run(target, fmt="e4m3", pack=True, scale_shape=(32, 1)):
    dev = target.driver
    a = dev.to_device(np.zeros((32, 32), np.uint8))
    s = dev.to_device(np.full(scale_shape, 127, np.uint8))
    c = dev.to_device(np.zeros((32, 32), np.float32))
    scaled_kernel[(1,)](a, s, c, FMT=fmt, PACK=pack, SR=scale_shape[0], SC=scale_shape[1])


@pytest.mark.parametrize("kwargs,message", [
    ({"fmt": "e3m2"}, r"lhs_format must be one of e2m1, e4m3, e5m2, bf16, fp16, got 'e3m2'"),
    ({"pack": False}, r"only e2m1 \(mxfp4\) operands can be packed along a dimension other than K"),
    ({"scale_shape": (32, 2)}, r"lhs_scale must be a \[M, K // 32\] = \[32, 1\] block of uint8"),
])
def test_refusals_name_the_kernel_and_the_fix(target, kwargs, message):
    with pytest.raises(TritiumError, match=message) as info:
        _run(target, **kwargs)
    assert "scaled_kernel" in str(info.value)


def test_batched_operands_are_not_supported_yet(target):
    dev = target.driver
    a = dev.to_device(np.zeros((2, 32, 32), np.uint8))
    c = dev.to_device(np.zeros((2, 32, 32), np.float32))
    with pytest.raises(TritiumError, match=r"in kernel 'batched_kernel' .*batched \(3-D\) tl.dot_scaled is not "
                                           r"supported yet"):
        batched_kernel[(1,)](a, c)
