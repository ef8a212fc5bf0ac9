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
def batched_kernel(a_ptr, s_ptr, c_ptr, SCALED: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, 2)[:, None, None] * 1024 + tl.arange(0, 32)[None, :, None] * 32
                + tl.arange(0, 32)[None, None, :])
    if SCALED:  # a [32, 1] scale for [2, 32, 32] operands: it needs the batch dimension
        s = tl.load(s_ptr + tl.arange(0, 32)[:, None] + tl.arange(0, 1)[None, :])
        c = tl.dot_scaled(a, s, "fp16", a, s, "fp16")
    else:
        c = tl.dot_scaled(a, None, "fp16", a, None, "fp16")
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
    ({"scale_shape": (32, 2)}, r"lhs_scale must be a tensor of shape \[32, 1\]. Got \['32', '2'\]"),  # Triton's words
])
def test_refusals_name_the_kernel_and_the_fix(target, kwargs, message):
    with pytest.raises(TritiumError, match=message) as info:
        _run(target, **kwargs)
    assert "scaled_kernel" in str(info.value)


def test_batched_operands_multiply_per_batch_and_need_batched_scales(target):
    """(More batched cases, every format, in the conformance suite's ``dot-scaled-batched-*``.)"""
    dev = target.driver
    a = np.random.default_rng(3).standard_normal((2, 32, 32)).astype(np.float16)
    s, c = dev.to_device(np.full((32, 1), 127, np.uint8)), dev.to_device(np.zeros((2, 32, 32), np.float32))
    batched_kernel[(1,)](dev.to_device(a), s, c, SCALED=False)
    want = a.astype(np.float64) @ a.astype(np.float64)
    np.testing.assert_allclose(dev.to_host(c), want, rtol=1e-5, atol=1e-4)
    with pytest.raises(TritiumError, match=r"in kernel 'batched_kernel' .*lhs_scale must be a tensor of shape "
                                           r"\[2, 32, 1\]. Got \['32', '1'\]"):
        batched_kernel[(1,)](dev.to_device(a), s, c, SCALED=True)
