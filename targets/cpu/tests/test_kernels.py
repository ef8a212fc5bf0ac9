"""Hand-written tile IR kernels covering what the samples do not: math accuracy, gathers,
control flow, booleans, half precision, big tiles, and clear errors for unsupported ops."""

import re

import numpy as np
import pytest

rng = np.random.default_rng(1)
P = "!tile.ptr<{t}, 1 : i32>"

UNARY = """
module {
  func.func public @unary(%x: !tile.ptr<f32, 1 : i32>, %y: !tile.ptr<f32, 1 : i32>, %n: i32) {
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %c256 = arith.constant 256 : i32
    %start = arith.muli %pid, %c256 : i32
    %r = "tile.make_range"() {start = 0 : i32, end = 256 : i32} : () -> tensor<256xi32>
    %s = "tile.splat"(%start) : (i32) -> tensor<256xi32>
    %offs = arith.addi %s, %r : tensor<256xi32>
    %ns = "tile.splat"(%n) : (i32) -> tensor<256xi32>
    %m = arith.cmpi slt, %offs, %ns : tensor<256xi32>
    %xs = "tile.splat"(%x) : (!tile.ptr<f32, 1 : i32>) -> tensor<256x!tile.ptr<f32, 1 : i32>>
    %xp = "tile.addptr"(%xs, %offs) : (tensor<256x!tile.ptr<f32, 1 : i32>>, tensor<256xi32>) -> tensor<256x!tile.ptr<f32, 1 : i32>>
    %v = "tile.load"(%xp, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<256x!tile.ptr<f32, 1 : i32>>, tensor<256xi1>) -> tensor<256xf32>
    %f = FN %v : tensor<256xf32>
    %ys = "tile.splat"(%y) : (!tile.ptr<f32, 1 : i32>) -> tensor<256x!tile.ptr<f32, 1 : i32>>
    %yp = "tile.addptr"(%ys, %offs) : (tensor<256x!tile.ptr<f32, 1 : i32>>, tensor<256xi32>) -> tensor<256x!tile.ptr<f32, 1 : i32>>
    "tile.store"(%yp, %f, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<256x!tile.ptr<f32, 1 : i32>>, tensor<256xf32>, tensor<256xi1>) -> ()
    return
  }
}
"""
UNARY_SIG = (("x", "y", "n"), ("*fp32", "*fp32", "i32"))


def ulps(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Distance in units of the last place of float32 ``ref`` (computed in float64)."""
    ref32 = ref.astype(np.float32)
    spacing = np.spacing(np.abs(ref32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref) / spacing


SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, 1e-40, 88.7, 89.0, -87.0,
                     -103.0, -104.5, 3.4e38], np.float32)


@pytest.mark.parametrize("fn,ref,domain", [
    ("math.exp", np.exp, (-100.0, 88.0)),
    ("math.exp2", np.exp2, (-140.0, 127.0)),
    ("math.log", np.log, (1e-30, 1e30)),
    ("math.log2", np.log2, (1e-30, 1e30)),
    ("math.sqrt", np.sqrt, (0.0, 1e30)),
    ("math.rsqrt", lambda x: 1 / np.sqrt(x), (1e-30, 1e30)),
])
def test_f32_math_accuracy_and_specials(compile_ir, fn, ref, domain):
    k = compile_ir(UNARY.replace("FN", fn), *UNARY_SIG)
    lo, hi = domain
    if lo > 0:
        x = np.exp(rng.uniform(np.log(lo), np.log(hi), 100_000)).astype(np.float32)
    else:
        x = rng.uniform(lo, hi, 100_000).astype(np.float32)
    x = np.concatenate([x, SPECIALS])
    y = np.zeros_like(x)
    k(((x.size + 255) // 256, 1, 1), x, y, x.size)
    with np.errstate(all="ignore"):
        expect = ref(x.astype(np.float64))
    normal = np.isfinite(expect) & (np.abs(expect) < 3.4e38) & (np.abs(expect) >= 2.0**-126)
    assert ulps(y[normal], expect[normal]).max() <= 2.0
    denormal = np.isfinite(expect) & (np.abs(expect) < 2.0**-126)  # an ulp there is 2**-149
    np.testing.assert_allclose(y[denormal], expect[denormal], rtol=0, atol=2 * 2.0**-149)
    special = ~(normal | denormal)  # inf, nan, overflow
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(y[special], expect[special].astype(np.float32))


@pytest.fixture(params=["one-instruction-scale", "two-step-scale"])
def exp_scaling(request, monkeypatch):
    """``exp`` and ``exp2`` as an AVX-512 host computes them (``vscalefps``), and as any other does
    (a branch between a short path and a full one), whatever this host is."""
    from llvmlite import ir as ll
    from tritium_cpu.hooks import CpuHooks
    if request.param == "one-instruction-scale":
        if CpuHooks().ldexp(ll.VectorType(ll.FloatType(), 16)) is None:
            pytest.skip("this host has no AVX-512")
    else:
        monkeypatch.setattr(CpuHooks, "ldexp", lambda self, ty: None)
    return request.param


@pytest.mark.parametrize("fn,ref,lo,hi", [("math.exp", np.exp, -104.0, 89.0), ("math.exp2", np.exp2, -151.0, 129.0)])
def test_exp_and_exp2_within_one_ulp_to_the_ends_of_their_range(compile_ir, exp_scaling, fn, ref, lo, hi):
    """Every float32 argument was checked once against float64 (worst 0.91 ulp for exp, 0.89 for
    exp2, either way of scaling); this samples the range densely, the denormal and overflow
    ends included."""
    k = compile_ir(UNARY.replace("FN", fn), *UNARY_SIG)
    bottom, top = (-87.4, 88.8) if fn == "math.exp" else (-126.0, 128.0)
    x = np.concatenate([rng.uniform(lo, hi, 200_000), rng.uniform(lo, bottom, 20_000), rng.uniform(top - 1, hi, 20_000),
                        rng.uniform(-1.0, 1.0, 20_000)]).astype(np.float32)
    x = np.concatenate([x, SPECIALS])
    y = np.zeros_like(x)
    k(((x.size + 255) // 256, 1, 1), x, y, x.size)
    with np.errstate(all="ignore"):
        expect = ref(x.astype(np.float64))
        expect32 = expect.astype(np.float32)
    normal = np.isfinite(expect32) & (expect >= 2.0**-126)
    assert ulps(y[normal], expect[normal]).max() <= 1.0, x[normal][np.argmax(ulps(y[normal], expect[normal]))]
    denormal = expect < 2.0**-126
    np.testing.assert_allclose(y[denormal], expect[denormal], rtol=0, atol=2.0**-149)
    special = ~(normal | denormal)  # inf, nan
    np.testing.assert_array_equal(y[special], expect32[special])


@pytest.mark.parametrize("block", [4, 8])
@pytest.mark.parametrize("fn,ref", [("math.exp", np.exp), ("math.exp2", np.exp2)])
def test_exp_of_narrow_blocks_within_one_ulp(compile_ir, exp_scaling, fn, ref, block):
    """A block of 4 or 8 floats is one 128- or 256-bit chunk: the one-instruction scale is then
    AVX512VL's narrower ``vscalefps``."""
    k = compile_ir(UNARY.replace("256", str(block)).replace("FN", fn), *UNARY_SIG)
    assert ("scalef.ps" in k.outputs["llir"]) == (exp_scaling == "one-instruction-scale")
    x = np.concatenate([np.arange(-160.0, 140.0, 0.37), SPECIALS]).astype(np.float32)
    y = np.zeros_like(x)
    k(((x.size + block - 1) // block, 1, 1), x, y, x.size)
    with np.errstate(all="ignore"):
        expect = ref(x.astype(np.float64))
        expect32 = expect.astype(np.float32)
    normal = np.isfinite(expect32) & (expect >= 2.0**-126)
    assert ulps(y[normal], expect[normal]).max() <= 1.0
    denormal = expect < 2.0**-126
    np.testing.assert_allclose(y[denormal], expect[denormal], rtol=0, atol=2.0**-149)
    np.testing.assert_array_equal(y[~(normal | denormal)], expect32[~(normal | denormal)])


def test_exp_scales_in_one_instruction_where_the_host_has_one(compile_ir, exp_scaling):
    k = compile_ir(UNARY.replace("FN", "math.exp"), *UNARY_SIG)
    llir = k.outputs["llir"]
    if exp_scaling == "one-instruction-scale":
        assert "llvm.x86.avx512.mask.scalef.ps" in llir and "llvm.vector.reduce.or" not in llir
    else:
        assert "scalef" not in llir and "llvm.vector.reduce.or" in llir  # the chunk's short-or-full test


TRANSPOSE = """
module {
  func.func public @transpose(%x: !tile.ptr<f32, 1 : i32>, %y: !tile.ptr<f32, 1 : i32>, %n: i32) {
    %r = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32>
    %ri = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<128xi32>) -> tensor<128x1xi32>
    %ci = "tile.expand_dims"(%r) {axis = 0 : i32} : (tensor<128xi32>) -> tensor<1x128xi32>
    %rb = "tile.broadcast"(%ri) : (tensor<128x1xi32>) -> tensor<128x128xi32>
    %cb = "tile.broadcast"(%ci) : (tensor<1x128xi32>) -> tensor<128x128xi32>
    %ns = "tile.splat"(%n) : (i32) -> tensor<128x128xi32>
    %cn = arith.muli %cb, %ns : tensor<128x128xi32>
    %in_off = arith.addi %cn, %rb : tensor<128x128xi32>
    %rn = arith.muli %rb, %ns : tensor<128x128xi32>
    %out_off = arith.addi %rn, %cb : tensor<128x128xi32>
    %mr = arith.cmpi slt, %rb, %ns : tensor<128x128xi32>
    %mc = arith.cmpi slt, %cb, %ns : tensor<128x128xi32>
    %m = arith.andi %mr, %mc : tensor<128x128xi1>
    %xs = "tile.splat"(%x) : (!tile.ptr<f32, 1 : i32>) -> tensor<128x128x!tile.ptr<f32, 1 : i32>>
    %xp = "tile.addptr"(%xs, %in_off) : (tensor<128x128x!tile.ptr<f32, 1 : i32>>, tensor<128x128xi32>) -> tensor<128x128x!tile.ptr<f32, 1 : i32>>
    %v = "tile.load"(%xp, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<128x128x!tile.ptr<f32, 1 : i32>>, tensor<128x128xi1>) -> tensor<128x128xf32>
    %two = arith.constant dense<2.0> : tensor<128x128xf32>
    %v2 = arith.mulf %v, %two : tensor<128x128xf32>
    %ys = "tile.splat"(%y) : (!tile.ptr<f32, 1 : i32>) -> tensor<128x128x!tile.ptr<f32, 1 : i32>>
    %yp = "tile.addptr"(%ys, %out_off) : (tensor<128x128x!tile.ptr<f32, 1 : i32>>, tensor<128x128xi32>) -> tensor<128x128x!tile.ptr<f32, 1 : i32>>
    "tile.store"(%yp, %v2, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<128x128x!tile.ptr<f32, 1 : i32>>, tensor<128x128xf32>, tensor<128x128xi1>) -> ()
    return
  }
}
"""


def test_128x128_tile_is_chunked_and_gathers_strided_loads(compile_ir):
    k = compile_ir(TRANSPOSE, ("x", "y", "n"), ("*fp32", "*fp32", "i32"))
    llir = k.outputs["llir"]
    widths = {int(w) for w in re.findall(r"<(\d+) x ", llir)}
    assert widths and max(widths) <= 16, widths  # SIMD chunks, never a 16384-lane vector
    assert "llvm.masked.gather" in llir          # x is read with stride n along the last dim
    assert "llvm.masked.store" in llir           # y is written contiguously
    for n in (128, 100, 5):
        x = rng.standard_normal((n, n)).astype(np.float32)
        y = np.zeros((n, n), np.float32)
        k((1, 1, 1), x, y, n)
        np.testing.assert_array_equal(y, 2 * x.T)

