"""Kernels the differential tester (``python -m tritium_conformance --fuzz N``) found wrong, reduced
to their core, with the value Triton's rules give (reductions over every axis with keep_dims:
fuzz seeds 10620, 30379, 30770)."""

import numpy as np

import tritium as triton
import tritium.language as tl


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
    dev = target.driver
    out = dev.to_device(np.zeros(4, np.int32))
    sum_all_keep_dims[(1,)](dev.to_device(np.arange(4, dtype=np.int32)), out, BLOCK=4)
    assert dev.to_host(out).tolist() == [6, 6, 6, 6]


def test_reduce_all_axes_keeps_dims_2d(target):
    dev = target.driver
    out2 = dev.to_device(np.zeros(1, np.int32))
    max_all_keep_dims_2d[(1,)](dev.to_device(np.array([[3, -1], [8, 2]], dtype=np.int32)), out2, BM=2, BN=2)
    assert dev.to_host(out2).tolist() == [8]


@triton.jit
def select_in_if_2d(x, out, s, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BN)
    a = tl.load(x + r[:, None] * BN + c[None, :])
    y = a > 0
    if s < 0:  # a 2-D value merged from the branches: a select on a scalar condition
        y = tl.zeros((BM, BN), dtype=tl.uint64).to(tl.int1)
    tl.store(out + r[:, None] * BN + c[None, :], (y.to(tl.int32) == 0).to(tl.int64))


def test_a_2d_value_merged_from_an_if(target):
    """Once an internal IndexError in the axis analysis on every compiled target."""
    dev = target.driver
    x = np.array([[-1.0, 2.0, 0.0, 3.0], [4.0, -5.0, 6.0, 0.5]], np.float32)
    for s in (1, -1):
        out = dev.to_device(np.full((2, 4), 7, np.int64))
        select_in_if_2d[(1,)](dev.to_device(x), out, s, BM=2, BN=4)
        expected = np.ones((2, 4), np.int64) if s < 0 else (x <= 0).astype(np.int64)
        np.testing.assert_array_equal(dev.to_host(out), expected)


@triton.jit
def bf16_self_compare(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x_ptr + (n - 1 - offs), mask=mask, other=-1)
    b = offs.to(tl.bfloat16)
    tl.store(out_ptr + offs, (b == b) + a, mask=mask)


def test_a_bf16_block_compared_with_itself_compiles(target):
    """Seed 31072: LLVM's x86 back end could not select the [16] bf16 ``x == x`` (an ORD compare)
    on AVX2; the cpu compares bf16 as fp32."""
    dev = target.driver
    x = np.arange(34, dtype=np.int16)
    out = dev.to_device(np.zeros(34, np.int64))
    bf16_self_compare[(3,)](dev.to_device(x), out, 34, BLOCK=16)
    assert dev.to_host(out).tolist() == (x[::-1] + 1).tolist()


@triton.jit
def flags_below_a_range(out_ptr, s, BN: tl.constexpr):
    rn = tl.arange(0, BN)
    flags = s != (5 & rn)                                      # booleans, different by lane
    tl.store(out_ptr + rn, (flags < rn).to(tl.int32))           # a bound that is no scalar, left of a range


def test_a_range_compared_with_a_block_that_is_not_uniform(target):
    """Seed 1016: the whole-block generator took ``block < range`` for a bounds mask and built its
    scalar test from a bound every lane shares, which this block is not (the compiler crashed)."""
    dev = target.driver
    out = dev.to_device(np.full(8, -1, np.int32))
    flags_below_a_range[(1,)](out, 3, BN=8)
    rn = np.arange(8)
    np.testing.assert_array_equal(dev.to_host(out), ((3 != (5 & rn)).astype(int) < rn).astype(np.int32))
