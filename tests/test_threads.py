"""Kernels launched from several Python threads at once, before any of them is compiled."""

import threading

import numpy as np
import pytest

from tritium import plugins

from .kernels.basic import add_kernel


@pytest.mark.parametrize("target", [t for t in ("interpreter", "cpu") if t in plugins.targets()])
def test_concurrent_first_launches(monkeypatch, tmp_path, target):
    monkeypatch.setenv("TRITIUM_TARGET", target)
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    x = np.arange(1000, dtype=np.float32)
    errors, outs = [], {}

    def launch(i: int) -> None:
        try:
            out = np.zeros_like(x)
            add_kernel[(64,)](x, x, out, 1000, BLOCK=16 << (i % 3))
            outs[i] = out
        except Exception as e:  # reported below with the thread that raised it
            errors.append((i, e))

    threads = [threading.Thread(target=launch, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for out in outs.values():
        np.testing.assert_array_equal(out, 2 * x)
