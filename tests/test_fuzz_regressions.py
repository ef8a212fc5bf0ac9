"""Kernels the differential tester (``python -m tritium_conformance --fuzz N``) found wrong, reduced
to their core, with the value Triton's rules give (reductions over every axis with keep_dims:
fuzz seeds 10620, 30379, 30770)."""

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import plugins

HOST_TARGETS = [t for t in ("interpreter", "cpu") if t in plugins.targets()]


@pytest.fixture(params=HOST_TARGETS)
def target(request, monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_TARGET", request.param)
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    return request.param


@triton.jit
def sum_all_keep_dims(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    s = tl.sum(tl.load(x_ptr + offs), keep_dims=True)          # Triton: shape [1], not a scalar
    tl.store(out_ptr + offs[None, :], s[None, :] + tl.zeros((1, BLOCK), tl.int32))


@triton.jit
def max_all_keep_dims_2d(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    m = tl.max(tl.load(x_ptr + offs), keep_dims=True)          # Triton: shape [1, 1]
    tl.store(out_ptr + tl.arange(0, 1), tl.sum(m, axis=1))      # [1, 1] -> [1]; a scalar has no axis 1


def test_reduce_all_axes_keeps_dims(target):
    x = np.arange(4, dtype=np.int32)
    out = np.zeros(4, np.int32)
    sum_all_keep_dims[(1,)](x, out, BLOCK=4)
    assert out.tolist() == [6, 6, 6, 6]


def test_reduce_all_axes_keeps_dims_2d(target):
    x2 = np.array([[3, -1], [8, 2]], dtype=np.int32)
    out2 = np.zeros(1, np.int32)
    max_all_keep_dims_2d[(1,)](x2, out2, BM=2, BN=2)
    assert out2.tolist() == [8]
