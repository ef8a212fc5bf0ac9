"""@jit helpers of every kind run on every host target and agree with numpy."""

import numpy as np
import pytest

from .kernels.helpers import helpers_kernel, loop_calls_kernel


def reference(x, y, n):
    x, y = x.astype(np.float64), y.astype(np.float64)
    relu = lambda v: np.where(v > 0, v, 0.0)
    r = (x * y + 1.0) + relu(y) + x * 3 + (relu(x) * 1.0 + 1.0)
    for _ in range(2):
        r = r + (r * 0.5 + 1.0)
    if n > 3:
        for i in range(n):
            r = r + 1.0 if i % 2 == 0 else r * 2.0
        r = np.minimum(r, 100.0)
    return r, np.array([x.sum(), x.max()])


@pytest.mark.parametrize("n", [2, 5])
def test_every_kind_of_helper(target, n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(16).astype(np.float32)
    y = rng.standard_normal(16).astype(np.float32)
    dev = target.driver
    out, stats = dev.to_device(np.zeros(16, np.float32)), dev.to_device(np.zeros(2, np.float32))
    helpers_kernel[(1,)](dev.to_device(x), dev.to_device(y), out, stats, n, BLOCK=16)
    want, want_stats = reference(x, y, n)
    np.testing.assert_allclose(dev.to_host(out), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dev.to_host(stats), want_stats, rtol=1e-5, atol=1e-5)


def test_helper_with_early_return_in_a_loop_for_two_types(target):
    """One helper, two instantiations (fp32 and int32), each inlined at its call site inside the loop."""
    dev = target.driver
    x, k = dev.to_device(np.array([1.5], np.float32)), dev.to_device(np.array([3], np.int32))
    out_f, out_i = dev.to_device(np.zeros(1, np.float32)), dev.to_device(np.zeros(1, np.int32))
    loop_calls_kernel[(1,)](x, k, out_f, out_i, 7)
    out_f, out_i = dev.to_host(out_f), dev.to_host(out_i)
    want_f, want_i = 1.5, 3
    for i in range(7):
        want_f, want_i = (want_f * 2, want_i * 2) if i % 3 == 0 else (want_f + i, want_i + i)
    assert out_f[0] == want_f and out_i[0] == want_i
