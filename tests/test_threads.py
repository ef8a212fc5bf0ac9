"""Kernels launched from several Python threads at once, before any of them is compiled."""

import threading

import numpy as np

from .kernels.basic import add_kernel


def test_concurrent_first_launches(target):
    dev = target.driver
    x = np.arange(1000, dtype=np.float32)
    dx = dev.to_device(x)
    errors, outs = [], {}

    def launch(i: int) -> None:
        try:
            out = dev.to_device(np.zeros_like(x))
            add_kernel[(64,)](dx, dx, out, 1000, BLOCK=16 << (i % 3))
            outs[i] = out
        except Exception as e:  # reported below with the thread that raised it
            errors.append((i, e))

    threads = [threading.Thread(target=launch, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(outs) == len(threads)
    for out in outs.values():
        np.testing.assert_array_equal(dev.to_host(out), 2 * x)
