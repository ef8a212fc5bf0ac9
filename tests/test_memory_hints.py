"""``tl.load``/``tl.store`` cache hints: checked as Triton checks them, the same results on every
target (a target that has no such controls ignores them)."""

import numpy as np
import pytest
import tritium

from .kernels.hints import hinted_copy, unmasked_hinted_copy


@pytest.mark.parametrize("cache, evict, volatile, store_cache", [
    ("", "", False, ""), (".cg", "", False, ".cs"), (".ca", "evict_last", False, ".wb"), ("", "evict_first", False, ".wt"),
    (".cv", "", True, ".cg"),
])
def test_hinted_loads_and_stores_compute_the_same(target, cache, evict, volatile, store_cache):
    dev = target.driver
    x = np.arange(100, dtype=np.float32)
    out = dev.to_device(np.zeros(100, np.float32))
    hinted_copy[(2,)](dev.to_device(x), out, 100, CACHE=cache, EVICT=evict, VOLATILE=volatile,
                      STORE_CACHE=store_cache, BLOCK=64)
    np.testing.assert_array_equal(dev.to_host(out), 2 * x)


def test_unmasked_hinted_accesses(target):
    dev = target.driver
    x = np.arange(64, dtype=np.float32)
    out = dev.to_device(np.zeros(64, np.float32))
    unmasked_hinted_copy[(1,)](dev.to_device(x), out, BLOCK=64)
    np.testing.assert_array_equal(dev.to_host(out), x + 1)


@pytest.mark.parametrize("kwargs, error", [
    ({"CACHE": ".wb"}, "cache modifier '.wb' is not supported"),
    ({"EVICT": "evict_normal"}, "eviction policy 'evict_normal' is not supported"),
    ({"STORE_CACHE": ".ca"}, "tl.store: cache modifier '.ca' is not supported"),
])
def test_hints_triton_refuses_are_errors(target, kwargs, error):
    dev = target.driver
    x = dev.to_device(np.zeros(64, np.float32))
    args = {"CACHE": "", "EVICT": "", "VOLATILE": False, "STORE_CACHE": "", **kwargs}
    with pytest.raises(tritium.TritiumError, match=error):
        hinted_copy[(1,)](x, x, 64, BLOCK=64, **args)
