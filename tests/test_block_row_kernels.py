"""What makes row kernels (softmax, layer norm) fast in whole blocks, and stay right: a reduction
along the last axis runs in the loop that computes its source, in four independent chains; ``exp``
takes a short path for chunks whose results are all normal; a bounds mask's chunk is tested with
scalar code. The IR checks run core's block generator with a small test target; the numbers run on
every target."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tritium
import tritium.language as tl

from .kernels.basic import softmax1d
from .test_block_generator import OneProgramHooks, _llir

rng = np.random.default_rng(0)


@pytest.fixture
def device(target):
    return target.driver


@tritium.jit
def sum_argmax_kernel(x_ptr, sum_ptr, idx_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(sum_ptr, tl.sum(x, axis=0))
    tl.store(idx_ptr, tl.argmax(x, axis=0))


@tritium.jit
def exp_kernel(x_ptr, exp_ptr, exp2_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(exp_ptr + offs, tl.exp(x))
    tl.store(exp2_ptr + offs, tl.exp2(x))


@tritium.jit
def compare_kernel(out_ptr, start, bound, UNSIGNED: tl.constexpr, BLOCK: tl.constexpr):
    """Ones stored under four bounds masks of ``start + arange`` (i32, which may wrap), a row each."""
    lanes = tl.arange(0, BLOCK)
    r = start + lanes
    if UNSIGNED:
        r = r.to(tl.uint32, bitcast=True)
        bound = bound.to(tl.uint32, bitcast=True)
    one = tl.full([BLOCK], 1, tl.int32)
    tl.store(out_ptr + lanes, one, mask=r < bound)
    tl.store(out_ptr + BLOCK + lanes, one, mask=bound > r)
    tl.store(out_ptr + 2 * BLOCK + lanes, one, mask=r >= bound)
    tl.store(out_ptr + 3 * BLOCK + lanes, one, mask=bound >= r)


def chunk_loops(text: str) -> list[str]:
    return re.findall(r"^(chunk(?:\.\d+)?):", text, re.M)


def test_a_last_axis_reduction_runs_in_the_loop_that_computes_its_source():
    """softmax: the load and the max in one loop, exp and the sum in a second, the quotient and
    the store in a third (five loops when each reduction ran alone). The first and the third test
    the bounds mask, so each comes twice: for a row inside it, and for one that is not."""
    text = _llir(softmax1d, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}, {"BLOCK": 256},
                 OneProgramHooks(1))
    assert chunk_loops(text) == ["chunk"] + [f"chunk.{k}" for k in range(1, 5)], text
    assert len(re.findall(r"^row\.bulk(?:\.\d+)?:", text, re.M)) == 2, text


def loop_bodies(text: str) -> dict[str, str]:
    """Each chunk loop's text, from its header to its end block (``chunk.end``, ``chunk.end.1``, ...)."""
    def end(name: str) -> str:
        return "chunk.end" + name[len("chunk"):]
    return {name: re.search(rf"^{re.escape(name)}:\n(.*?)^{re.escape(end(name))}:", text, re.M | re.S).group(1)
            for name in chunk_loops(text)}


def test_a_row_inside_its_bounds_mask_runs_loops_without_a_test_a_chunk():
    """The bounds masks of a row's loop are tested once at the row's start (a contiguous range
    against one bound: both ends); where they hold, a second version of the loop runs with plain
    loads and stores and no per-chunk test, else the general one (a masked tail)."""
    text = _llir(softmax1d, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}, {"BLOCK": 256},
                 OneProgramHooks(1))
    bodies = loop_bodies(text)
    general, bulk = [bodies[name] for name in ("chunk", "chunk.3")], [bodies[name] for name in ("chunk.1", "chunk.4")]
    assert "llvm.masked.load" in general[0] and "llvm.masked.store" in general[1], text
    for body in bulk:
        assert "llvm.masked" not in body and "icmp slt" not in body, body


def test_a_reduction_accumulates_in_four_chains():
    text = _llir(sum_argmax_kernel, {"x_ptr": "*fp32", "sum_ptr": "*fp32", "idx_ptr": "*i32"}, {"BLOCK": 256},
                 OneProgramHooks(1))
    accumulators = re.findall(r"= alloca <4 x float>", text)
    assert len(accumulators) == 4 + 4, text  # the sum's four chains, and the argmax's values' four
    assert text.count("icmp ult i32 %\"chunk.i\", 4") >= 1, text  # each chain starts with its first chunk


@pytest.mark.parametrize("block", [16, 64, 1024])
def test_sums_and_argmax_in_chains_match_numpy(block, device):
    x = rng.standard_normal(block).astype(np.float32)
    x[[3, block // 2, block - 1]] = 9.0  # ties: argmax is the first
    s, i = device.empty((1,), np.float32), device.empty((1,), np.int32)
    sum_argmax_kernel[(1,)](device.to_device(x), s, i, BLOCK=block)
    np.testing.assert_allclose(device.to_host(s)[0], x.astype(np.float64).sum(), rtol=1e-5)
    assert device.to_host(i)[0] == 3


def test_exp_of_every_range_matches_float64(device):
    """Chunks all inside the short path, chunks with one lane past its limits (overflow, denormal
    results, NaN, infinities) and the limits themselves."""
    block = 64
    special = np.array([np.nan, np.inf, -np.inf, 88.72, 88.73, -87.3, -87.31, -103.97, -104.0, 126.0, 126.01,
                        -126.0, -126.01, -149.0, -150.0, 127.99, 0.0, -0.0], np.float32)
    inside = rng.uniform(-87.0, 87.0, 40 * block).astype(np.float32)
    mixed = rng.uniform(-20.0, 20.0, 20 * block).astype(np.float32)
    mixed[rng.choice(mixed.size, special.size, replace=False)] = special
    edges = np.concatenate([np.linspace(-87.4, -87.2, 4 * block), np.linspace(87.2, 88.8, 4 * block),
                            np.linspace(-127.0, -125.0, 4 * block), np.linspace(125.0, 128.5, 4 * block)])
    x = np.concatenate([inside, mixed, edges.astype(np.float32)])
    e, e2 = device.empty(x.shape, np.float32), device.empty(x.shape, np.float32)
    exp_kernel[(x.size // block,)](device.to_device(x), e, e2, BLOCK=block)
    for got, want in ((device.to_host(e), np.exp(x.astype(np.float64))), (device.to_host(e2), np.exp2(x.astype(np.float64)))):
        with np.errstate(over="ignore"):
            want32 = want.astype(np.float32)
        finite = np.isfinite(want32)  # denormal and zero results included: their ulp is the smallest step
        ulps = np.abs(got[finite] - want[finite]) / np.spacing(np.abs(want32[finite])).astype(np.float64)
        assert ulps.max() <= 3.0, x[finite][np.argmax(ulps)]  # numpy's own float32 exp: 2.2
        np.testing.assert_array_equal(got[~np.isfinite(want32)], want32[~np.isfinite(want32)])


def test_a_bounds_mask_is_tested_with_scalar_code():
    """The vector add's bulk branch: one test of the chunk's last offset, no reduction of the
    mask's lanes (which stays for the masked tail alone)."""
    from .kernels.basic import add_kernel

    text = _llir(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                 {"BLOCK": 256}, OneProgramHooks(4))
    assert "llvm.vector.reduce.and" not in text, text
    assert "llvm.masked.load" in text  # the tail's


@pytest.mark.parametrize("unsigned", [False, True])
@pytest.mark.parametrize("start,bound", [(0, 40), (-20, 5), (100, 7), (2**31 - 40, 2**31 - 1),
                                         (2**31 - 20, -2**31 + 5), (-5, 2**31 - 1), (5, 5)])
def test_bounds_masks_where_the_range_wraps_or_crosses(start, bound, unsigned, device):
    """``start + arange`` wraps past 2**31 in some cases: a chunk's two end lanes alone do not
    decide its mask there."""
    block = 64
    out = device.to_device(np.zeros(4 * block, np.int32))
    compare_kernel[(1,)](out, start, bound, UNSIGNED=unsigned, BLOCK=block)
    r = (np.int64(start) + np.arange(block)).astype(np.int64)
    r = (r + 2**31) % 2**32 - 2**31  # i32 wrap
    b = np.int64(bound)
    if unsigned:
        r, b = r % 2**32, b % 2**32
    want = np.concatenate([r < b, b > r, r >= b, b >= r]).astype(np.int32)
    np.testing.assert_array_equal(device.to_host(out), want)


@tritium.jit
def loop_sums_kernel(x_ptr, out_ptr, N, INIT: tl.constexpr, USE_ACC: tl.constexpr, BLOCK: tl.constexpr):
    """out[0] = sum(x) through a zero accumulator summed after the loop (Triton's layer-norm
    tutorial); INIT, a non-zero start; USE_ACC, the accumulator also read after the loop; out[1]:
    the integer count of elements, the same way."""
    acc = tl.full([BLOCK], INIT, tl.float32)
    count = tl.zeros([BLOCK], dtype=tl.int32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + cols, mask=cols < N, other=0.0)
        count += (cols < N).to(tl.int32)
    total = tl.sum(acc, axis=0)
    if USE_ACC:
        total += tl.max(acc, axis=0)
    tl.store(out_ptr, total)
    tl.store(out_ptr + 1, tl.sum(count, axis=0).to(tl.float32))


def test_a_summed_loop_accumulator_is_carried_as_its_sum():
    """The loop keeps one number per accumulator: no block-sized buffer for it, no copy per
    iteration; an accumulator also read another way keeps its buffer."""
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "N": "i32"}
    summed = _llir(loop_sums_kernel, signature, {"INIT": 0.0, "USE_ACC": False, "BLOCK": 256}, OneProgramHooks(1))
    assert not re.search(r"alloca \[256 x (float|i32)\]", summed), summed
    kept = _llir(loop_sums_kernel, signature, {"INIT": 0.0, "USE_ACC": True, "BLOCK": 256}, OneProgramHooks(1))
    assert re.search(r"alloca \[256 x float\]", kept), kept


@pytest.mark.parametrize("n", [0, 1, 255, 256, 3000])
@pytest.mark.parametrize("init,use_acc", [(0.0, False), (1.5, False), (0.0, True)])
def test_loop_sums_match_numpy(n, init, use_acc, device):
    block = 256
    x = rng.standard_normal(max(n, 1)).astype(np.float32)
    out = device.empty((2,), np.float32)
    loop_sums_kernel[(1,)](device.to_device(x), out, n, INIT=init, USE_ACC=use_acc, BLOCK=block)
    acc = np.full(block, init, np.float64)
    for off in range(0, n, block):
        chunk = x[off:off + block].astype(np.float64)
        acc[:chunk.size] += chunk
    want = acc.sum() + (acc.max() if use_acc else 0.0)
    got = device.to_host(out)
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-4)
    assert got[1] == n
