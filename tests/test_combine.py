"""Core's combines of ``tile`` IR (``passes.combine``), at ``tile-opt`` and in numbers."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl

from .test_threads_codegen import tile_opt


@tritium.jit
def summed_products(a_ptr, b_ptr, c_ptr, K, M: tl.constexpr, N: tl.constexpr, BK: tl.constexpr,
                    ACC: tl.constexpr, FIRST: tl.constexpr, REUSE: tl.constexpr):
    """``acc += tl.dot(a, b)`` over K (``acc`` first or last in the sum); ``REUSE`` also stores the
    last product, so it has a second use and stays a product of its own."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, BK)
    acc = tl.zeros((M, N), ACC)
    product = tl.zeros((M, N), ACC)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :])
        product = tl.dot(a, b, out_dtype=ACC)
        acc = acc + product if FIRST else product + acc
    if REUSE:
        acc += product
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def _opt(dtype: str, acc, first: bool = True, reuse: bool = False) -> str:
    out = "i32" if dtype == "i8" else "fp32"
    return tile_opt(summed_products, {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{out}", "K": "i32"},
                    {"M": 16, "N": 16, "BK": 32, "ACC": acc, "FIRST": first, "REUSE": reuse})


@pytest.mark.parametrize("dtype,acc", [("fp16", tl.float32), ("i8", tl.int32)])
@pytest.mark.parametrize("first", [True, False])
def test_an_accumulated_product_takes_the_accumulator(dtype, acc, first):
    text = _opt(dtype, acc, first)
    loop = text[text.index("scf.for"):text.index("scf.yield")]
    after = loop.split('"tile.dot"')[1]  # the product is the last op that sums
    assert loop.count('"tile.dot"') == 1 and "arith.addf" not in after and "arith.addi" not in after
    dot = next(line for line in loop.splitlines() if '"tile.dot"' in line)
    assert dot.split('"tile.dot"(')[1].split(")")[0].split(", ")[2].startswith("%arg")  # the carried sum


def test_a_product_used_twice_keeps_its_own_sum():
    text = _opt("fp16", tl.float32, reuse=True)
    loop = text[text.index("scf.for"):text.index("scf.yield")]
    assert "arith.addf" in loop


@pytest.mark.parametrize("dtype,acc", [("fp16", tl.float32), ("i8", tl.int32)])
def test_accumulated_products_compute_the_sum(target, dtype, acc):
    m = n = 16
    k = 96
    rng = np.random.default_rng(7)
    if dtype == "i8":
        a, b = rng.integers(-128, 128, (m, k)).astype(np.int8), rng.integers(-128, 128, (k, n)).astype(np.int8)
        c = np.zeros((m, n), np.int32)
    else:
        a, b = rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)
        c = np.zeros((m, n), np.float32)
    dev = target.driver
    out = dev.to_device(c)
    summed_products[(1,)](dev.to_device(a), dev.to_device(b), out, k, M=m, N=n, BK=32, ACC=acc, FIRST=False,
                          REUSE=False)
    c = dev.to_host(out)
    want = a.astype(np.float64) @ b.astype(np.float64)
    if dtype == "i8":
        np.testing.assert_array_equal(c, want.astype(np.int64))
    else:
        bound = float(np.max(np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))))
        np.testing.assert_allclose(c, want, rtol=0, atol=(k + 1) * 2.0**-24 * bound)


@tritium.jit
def reshaped_range(in_ptr, out_ptr, START: tl.constexpr, D0: tl.constexpr, D1: tl.constexpr, D2: tl.constexpr):
    """Triton's test_chained_reductions' idiom: offsets as a range reshaped, a permutation, sums."""
    idx = tl.arange(START, START + D0 * D1 * D2).reshape(D0, D1, D2)
    vals = tl.permute(tl.load(in_ptr + idx), [2, 0, 1])
    tl.store(out_ptr + tl.arange(0, D2), tl.sum(tl.sum(vals, 2), 1))


def test_a_reshaped_range_is_a_sum_of_ranges_per_dimension():
    text = tile_opt(reshaped_range, {"in_ptr": "*i32", "out_ptr": "*i32"}, {"START": 8, "D0": 4, "D1": 8, "D2": 2})
    assert '"tile.reshape"' not in text
    for extent in (4, 8, 2):
        assert f"end = {extent} : i32" in text


def test_a_reshaped_range_gives_the_same_offsets(target):
    rng = np.random.default_rng(3)
    data = rng.integers(-1000, 1000, 8 + 4 * 8 * 2).astype(np.int32)
    out = target.driver.to_device(np.zeros(2, np.int32))
    reshaped_range[(1,)](target.driver.to_device(data), out, START=8, D0=4, D1=8, D2=2)
    want = data[8:].astype(np.int64).reshape(4, 8, 2).sum(axis=(0, 1))
    np.testing.assert_array_equal(target.driver.to_host(out), want)


def test_pointers_from_a_reshaped_range_are_not_converted_through_shared_memory():
    """Triton's test_chained_reductions[in_shape0]: 32,768 pointers converted between layouts asked
    for 256 KiB of shared memory, more than an H100 has; rebuilt in place, only the sums use it."""
    pytest.importorskip("tritium_nvptx", reason="tritium-nvptx is not installed")
    from tritium.compiler import ASTSource, compile
    from tritium.target import GPUTarget

    names = {"START": 0, "D0": 128, "D1": 32, "D2": 8}
    source = ASTSource(reshaped_range, {"in_ptr": "*i32", "out_ptr": "*i32", **{n: "constexpr" for n in names}}, names,
                       {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]})
    assert compile(source, target=GPUTarget("cuda", 90, 32)).metadata["shared"] <= 16384
