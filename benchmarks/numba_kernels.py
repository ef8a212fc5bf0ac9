"""numba's parallel kernels for the jobs of ``cpu.py``: the peer a CPU user would pick instead.

Each runs its rows (or its elements) over numba's threads with ``prange``, in float32 as the
tritium kernels do, and writes into preallocated outputs. ``kernels()`` returns None where numba is
not installed (``pip install -e .[bench]`` brings it).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np


def kernels() -> SimpleNamespace | None:
    """The compiled kernels, or None without numba."""
    try:
        import numba
        from numba import njit, prange
    except ImportError:
        return None

    @njit(parallel=True)
    def vector_add(x, y, out):
        for i in prange(x.shape[0]):
            out[i] = x[i] + y[i]

    @njit(parallel=True)
    def softmax(x, out):
        for r in prange(x.shape[0]):
            row, o = x[r], out[r]
            m = row.max()
            total = np.float32(0.0)
            for j in range(row.shape[0]):
                e = np.exp(row[j] - m)
                o[j] = e
                total += e
            for j in range(row.shape[0]):
                o[j] = o[j] / total

    @njit(parallel=True)
    def layernorm(x, w, b, eps, out):
        n = x.shape[1]
        for r in prange(x.shape[0]):
            row, o = x[r], out[r]
            total = np.float32(0.0)
            for j in range(n):
                total += row[j]
            mean = total / n
            var = np.float32(0.0)
            for j in range(n):
                d = row[j] - mean
                var += d * d
            rstd = np.float32(1.0) / np.sqrt(var / n + eps)
            for j in range(n):
                o[j] = (row[j] - mean) * rstd * w[j] + b[j]

    return SimpleNamespace(version=numba.__version__, threads=numba.get_num_threads(), vector_add=vector_add,
                           softmax=softmax, layernorm=layernorm)
