"""8-bit floats (``tl.float8e4nv``, ``tl.float8e5``) and downcasts that round toward zero, on every
available target, against a reference written here: every fp8 value from its definition, and
rounding as the nearest of them (ties to the even bit pattern), saturating at the largest finite
value as PTX's ``cvt.rn.satfinite`` does (Triton's conversion on NVIDIA GPUs)."""

import math

import numpy as np
import pytest
import tritium
import tritium.language as tl

from .kernels import fp8 as K

#: (exponent bits, mantissa bits, bias, has infinities)
FORMATS = {"e4m3": (4, 3, 7, False), "e5m2": (5, 2, 15, True)}


def value_of(bits: int, fmt: str) -> float:
    e_bits, m_bits, bias, inf = FORMATS[fmt]
    sign = -1.0 if bits & 0x80 else 1.0
    e, m = (bits >> m_bits) & ((1 << e_bits) - 1), bits & ((1 << m_bits) - 1)
    if e == (1 << e_bits) - 1 and (inf or m == (1 << m_bits) - 1):
        return sign * math.inf if inf and m == 0 else math.nan
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - m_bits)
    return sign * (1 + m / 2 ** m_bits) * 2.0 ** (e - bias)


def nearest_bits(x: float, fmt: str) -> int:
    """Round to nearest, ties to the even pattern; beyond the largest finite value (infinities
    included) saturate; NaN is 0x7f."""
    if math.isnan(x):
        return 0x7F
    finite = [(value_of(b, fmt), b) for b in range(128) if math.isfinite(value_of(b, fmt))]
    top = max(v for v, _ in finite)
    a = min(abs(x), top)
    best = min(finite, key=lambda vb: (abs(vb[0] - a), vb[1] & 1))
    return best[1] | (0x80 if math.copysign(1, x) < 0 else 0)


def _sample() -> np.ndarray:
    rng = np.random.default_rng(8)
    pos = [value_of(b, "e4m3") for b in range(127)] + [value_of(b, "e5m2") for b in range(124)]
    mids = [(a + b) / 2 for a, b in zip(sorted(pos), sorted(pos)[1:])]  # ties, both formats
    x = np.concatenate([rng.standard_normal(300) * s for s in (1e-3, 0.05, 1, 30, 3e4)] +
                       [pos, mids, np.negative(mids), [np.inf, -np.inf, np.nan, 1e9, -1e9, 0.0, -0.0, 464, 61440]])
    return x.astype(np.float32)


def test_float32_rounds_to_the_nearest_fp8_saturating(target):
    x = _sample()
    n = x.size
    dev = target.driver
    e4, e5 = dev.to_device(np.zeros(n, np.uint8)), dev.to_device(np.zeros(n, np.uint8))
    K.to_fp8[(1,)](dev.to_device(x), e4, e5, n, BLOCK=triton_block(n))
    got4, got5 = dev.to_host(e4), dev.to_host(e5)
    want4 = [nearest_bits(float(v), "e4m3") for v in x]
    want5 = [nearest_bits(float(v), "e5m2") for v in x]
    assert got4.tolist() == want4
    assert got5.tolist() == want5


def triton_block(n: int) -> int:
    return tritium.next_power_of_2(n)


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_every_fp8_value_converts_exactly_to_wider_floats(target, fmt):
    dev = target.driver
    bits = np.arange(256, dtype=np.uint8)
    want = np.array([value_of(int(b), fmt) for b in bits])
    f32, f16, f64, other = (dev.to_device(np.zeros(256, t)) for t in (np.float32, np.float16, np.float64, np.uint8))
    K.from_fp8[(1,)](dev.to_device(bits), f32, f16, f64, other, E5=fmt == "e5m2", BLOCK=256)
    for out in (f32, f16, f64):
        np.testing.assert_array_equal(dev.to_host(out).astype(np.float64), want)
    other_fmt = "e4m3" if fmt == "e5m2" else "e5m2"
    assert dev.to_host(other).tolist() == [nearest_bits(v, other_fmt) for v in want]


def test_fp8_pointers_arithmetic_and_constants(target):
    dev = target.driver
    rng = np.random.default_rng(3)
    n = 100
    a = np.array([nearest_bits(v, "e4m3") for v in rng.standard_normal(n) * 4], np.uint8)
    b = np.array([nearest_bits(v, "e4m3") for v in rng.standard_normal(n) * 4], np.uint8)
    out = dev.to_device(np.zeros(n, np.uint8))
    fp8 = [tritium.reinterpret(dev.to_device(v), tl.float8e4nv) for v in (a, b)] + \
        [tritium.reinterpret(out, tl.float8e4nv)]
    K.fp8_pointers[(1,)](*fp8, n, BLOCK=128)
    # a * b is an fp8 value (rounded), then + 1.5 rounds again, as in Triton
    products = [value_of(nearest_bits(value_of(int(x), "e4m3") * value_of(int(y), "e4m3"), "e4m3"), "e4m3")
                for x, y in zip(a, b)]
    want = [nearest_bits(p + 1.5, "e4m3") for p in products]
    assert dev.to_host(out).tolist() == want


def test_reinterpret_back_to_the_array_s_own_type_unwraps():
    x = np.zeros(4, np.uint8)
    w = tritium.reinterpret(x, tl.float8e5)
    assert isinstance(w, tritium.TensorWrapper) and w.dtype == tl.float8e5 and w.shape == (4,)
    assert tritium.reinterpret(w, tl.uint8) is x
    # numpy's and torch's dtypes name the element type too, as Triton's tests pass them
    for foreign in (np.int8, np.dtype("int8"), _TorchInt8()):
        w = tritium.reinterpret(x, foreign)
        assert isinstance(w, tritium.TensorWrapper) and w.dtype == tl.int8
    assert tritium.reinterpret(x, np.dtype("uint8")) is x
    with pytest.raises(TypeError, match="takes a dtype such as tl.float8e5 or torch.int8, not 'int8'"):
        tritium.reinterpret(x, "int8")


class _TorchInt8:
    """Stands in for ``torch.int8`` (no torch here): its class is named dtype, its text torch.int8."""

    def __str__(self) -> str:
        return "torch.int8"


_TorchInt8.__name__ = "dtype"


def test_downcasts_round_toward_zero_when_asked(target):
    dev = target.driver
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(500) * 1e3, [1e6, -1e6, 65520.0, 65519.0, 1e-9, -1e-9, 0.0]])
    n = x.size
    h, hz = dev.to_device(np.zeros(n, np.float16)), dev.to_device(np.zeros(n, np.float16))
    f, fz = dev.to_device(np.zeros(n, np.float32)), dev.to_device(np.zeros(n, np.float32))
    K.toward_zero[(1,)](dev.to_device(x), h, hz, f, fz, n, BLOCK=triton_block(n))
    for nearest, zero, t in ((h, hz, np.float16), (f, fz, np.float32)):
        nearest, zero = dev.to_host(nearest), dev.to_host(zero)
        np.testing.assert_array_equal(nearest, x.astype(t))
        finite = np.finfo(t)
        for v, z in zip(x, zero.astype(np.float64)):  # the representable value next to v toward zero
            assert abs(z) <= abs(v) and (abs(v) - abs(z) < _ulp(z, t) or abs(z) == finite.max), (v, z)


def _ulp(z: float, t) -> float:
    with np.errstate(over="ignore"):
        return float(np.spacing(np.abs(t(z))))


@pytest.mark.parametrize("what,error", [
    ("int", "fp8 converts to and from floats only"),
    ("fp64-e4b15", r"cannot convert tl.float64 to tl.float8e4b15 directly \(Triton refuses it\): go through "
                   r"tl.float32"),
    ("e4b8-fp64", r"cannot convert tl.float8e4b8 to tl.float64 directly"),
    ("rtz-e5b16", r"fp_downcast_rounding='rtz' is not supported for conversions to tl.float8e5b16"),
    ("upcast-rtz", "only to conversions to a narrower float"),
    ("bad-mode", "invalid rounding mode 'up'"),
])
def test_conversions_triton_refuses_are_clear_errors(target, what, error):
    x = target.driver.to_device(np.ones(1, np.float32))
    with pytest.raises(tritium.TritiumError, match=error):
        K.bad_cast[(1,)](x, WHAT=what)


def test_torch_fp8_dtypes_name_the_fp8_types():
    from tritium.language import dtypes

    assert dtypes.from_foreign("torch.float8_e4m3fn") == tl.float8e4nv
    assert dtypes.from_foreign("torch.float8_e5m2") == tl.float8e5
    assert tl.float8e5.primitive_bitwidth == 8 and tl.float8e5.is_fp8() and tl.float8e5.is_floating()
    assert repr(tl.float8e4nv) == "tl.float8e4nv"


def test_dot_of_fp8_operands_accumulates_their_exact_values_in_fp32(target):
    dev = target.driver
    rng = np.random.default_rng(11)
    a = np.array([nearest_bits(v, "e5m2") for v in rng.standard_normal(16 * 32)], np.uint8).reshape(16, 32)
    b = np.array([nearest_bits(v, "e4m3") for v in rng.standard_normal(32 * 16)], np.uint8).reshape(32, 16)
    c = dev.to_device(np.zeros((16, 16), np.float32))
    K.fp8_dot[(1,)](dev.to_device(a), dev.to_device(b), c, M=16, N=16, K=32)
    av = np.vectorize(lambda x: value_of(int(x), "e5m2"))(a)
    bv = np.vectorize(lambda x: value_of(int(x), "e4m3"))(b)
    np.testing.assert_allclose(dev.to_host(c), av @ bv, rtol=1e-5, atol=1e-5)


def test_dot_of_fp8_operands_into_fp16_sums_as_fp16_operands_do(target):
    """``out_dtype=tl.float16`` (Triton's test_matmul stores fp8 products in fp16): the products are
    exact, each K-step of 16 summed in fp32, the accumulator rounded to fp16 once per step."""
    dev = target.driver
    rng = np.random.default_rng(12)
    a = np.array([nearest_bits(v, "e5m2") for v in rng.standard_normal(16 * 64)], np.uint8).reshape(16, 64)
    b = np.array([nearest_bits(v, "e4m3") for v in rng.standard_normal(64 * 16)], np.uint8).reshape(64, 16)
    c = dev.to_device(np.zeros((16, 16), np.float16))
    K.fp8_dot[(1,)](dev.to_device(a), dev.to_device(b), c, M=16, N=16, K=64, OUT=tl.float16)
    av = np.vectorize(lambda x: value_of(int(x), "e5m2"))(a)
    bv = np.vectorize(lambda x: value_of(int(x), "e4m3"))(b)
    bound = np.abs(av) @ np.abs(bv)
    err = np.abs(dev.to_host(c).astype(np.float64) - av @ bv)
    assert np.all(err <= (4 + 1) * 2.0**-11 * bound + 64 * 2.0**-24 * bound)


# -- the other fp8 formats: AMD's fnuz types and Triton's e4b15 -------------------------------------
#: (exponent bits, mantissa bits, bias, NaN pattern or None, largest pattern rounding reaches,
#: ties away from zero)
VARIANTS = {"e4b8": (4, 3, 8, 0x80, 0x7F, False), "e5b16": (5, 2, 16, 0x80, 0x7F, False),
            "e4b15": (4, 3, 15, None, 0x7E, True)}
DTYPES = {"e4b8": tl.float8e4b8, "e5b16": tl.float8e5b16, "e4b15": tl.float8e4b15}


def variant_value(bits: int, fmt: str) -> float:
    """What the pattern means: no infinities; fnuz's 0x80 is NaN, every other pattern a number."""
    e_bits, m_bits, bias, nan, _, _ = VARIANTS[fmt]
    if nan is not None and bits == nan:
        return math.nan
    sign = -1.0 if bits & 0x80 else 1.0
    e, m = (bits >> m_bits) & ((1 << e_bits) - 1), bits & ((1 << m_bits) - 1)
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - m_bits)
    return sign * (1 + m / 2 ** m_bits) * 2.0 ** (e - bias)


def variant_bits(x: float, fmt: str, nan_sign: bool = False) -> int:
    """The nearest pattern up to the largest rounding reaches (saturating), ties to the even pattern
    (fnuz) or away from zero (e4b15). fnuz: NaN and infinities are 0x80, zero has no sign. e4b15:
    NaN saturates like infinities, to +max (or keeping its sign, ``nan_sign``)."""
    _, _, _, nan, top, away = VARIANTS[fmt]
    negative = math.copysign(1, x) < 0
    if math.isnan(x) or math.isinf(x):
        if nan is not None:
            return nan
        return top | (0x80 if negative and (math.isinf(x) or nan_sign) else 0)
    a = min(abs(x), variant_value(top, fmt))
    best = min(range(top + 1), key=lambda b: (abs(variant_value(b, fmt) - a),
                                             -b if away else b & 1))
    if nan is not None and best == 0:
        return 0
    return best | (0x80 if negative else 0)


def _variant_sample() -> np.ndarray:
    rng = np.random.default_rng(15)
    pos = sorted({variant_value(b, f) for f in VARIANTS for b in range(0x80) if not math.isnan(variant_value(b, f))})
    mids = [(a + b) / 2 for a, b in zip(pos, pos[1:])]
    x = np.concatenate([rng.standard_normal(200) * s for s in (1e-5, 1e-3, 0.3, 1, 100, 1e4)] +
                       [pos, mids, np.negative(mids), np.nextafter(np.float32(mids), np.float32(0)),
                        [np.inf, -np.inf, np.nan, -np.nan, 1e9, -1e9, 0.0, -0.0, 1.8, 1.875, 1.9, -1.8, 250, 60000,
                         2.0 ** -20, -(2.0 ** -20)]])
    return x.astype(np.float32)


@pytest.mark.parametrize("fmt", list(VARIANTS))
def test_float32_rounds_to_each_variant_as_triton(target, fmt):
    x = _variant_sample()
    n = x.size
    dev = target.driver
    out = dev.to_device(np.zeros(n, np.uint8))
    K.to_variant[(1,)](dev.to_device(x), out, n, FMT=DTYPES[fmt], BLOCK=triton_block(n))
    got = dev.to_host(out).tolist()
    want = [variant_bits(float(v), fmt) for v in x]
    bad = [(float(v), g, w) for v, g, w in zip(x, got, want) if g != w]
    assert not bad, bad[:10]


def test_float16_rounds_to_e4b15_as_triton(target):
    """Triton's e4b15 conversion from fp16: every NaN and infinity (a NaN keeps its sign there,
    which the GPU's widening to fp32 drops) and every third other pattern (the conformance case
    fp8-encode-fp16-e4b15 takes them all)."""
    bits = np.arange(1 << 16, dtype=np.uint16)
    x = bits[((bits & 0x7C00) == 0x7C00) | (bits % 3 == 0)].view(np.float16)
    dev = target.driver
    out = dev.to_device(np.zeros(x.size, np.uint8))
    K.to_variant[(1,)](dev.to_device(x), out, x.size, FMT=tl.float8e4b15, BLOCK=triton_block(x.size))
    got = dev.to_host(out)
    want = np.array([variant_bits(float(v), "e4b15", nan_sign=True) for v in x], np.uint8)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fmt", list(VARIANTS))
def test_every_variant_value_converts_exactly_to_wider_floats(target, fmt):
    dev = target.driver
    bits = np.arange(256, dtype=np.uint8)
    want = np.array([variant_value(int(b), fmt) for b in bits])
    f32, f16, bf16 = (dev.to_device(np.zeros(256, t)) for t in (np.float32, np.float16, np.float32))
    K.from_variant[(1,)](dev.to_device(bits), f32, f16, bf16, FMT=DTYPES[fmt], BLOCK=256)
    for out in (f32, f16, bf16):
        got = dev.to_host(out).astype(np.float64)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # NaN: the positive one


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_decoded_nans_are_positive_as_triton_s(target, fmt):
    """Triton decodes a negative fp8 NaN to the positive canonical NaN (the GPU's conversion does);
    so does every target here (found on the GPU, where widening drops a NaN's sign)."""
    dev = target.driver
    bits = np.arange(256, dtype=np.uint8)
    f32, f16, f64, other = (dev.to_device(np.zeros(256, t)) for t in (np.float32, np.float16, np.float64, np.uint8))
    K.from_fp8[(1,)](dev.to_device(bits), f32, f16, f64, other, E5=fmt == "e5m2", BLOCK=256)
    for out in (f32, f16, f64):
        got = dev.to_host(out)
        assert np.isnan(got).sum() == (6 if fmt == "e5m2" else 2) and not np.signbit(got[np.isnan(got)]).any()


@pytest.mark.parametrize("a_fmt,b_fmt", [("e4b8", "e5b16"), ("e4b15", "e4b15")])
def test_dot_of_variant_operands_accumulates_their_exact_values(target, a_fmt, b_fmt):
    dev = target.driver
    rng = np.random.default_rng(12)
    a = np.array([variant_bits(v, a_fmt) for v in rng.standard_normal(16 * 32) * 0.5], np.uint8).reshape(16, 32)
    b = np.array([variant_bits(v, b_fmt) for v in rng.standard_normal(32 * 16) * 0.5], np.uint8).reshape(32, 16)
    c = dev.to_device(np.zeros((16, 16), np.float32))
    K.fp8_dot[(1,)](dev.to_device(a), dev.to_device(b), c, M=16, N=16, K=32, A=DTYPES[a_fmt], B=DTYPES[b_fmt])
    av = np.vectorize(lambda x: variant_value(int(x), a_fmt))(a)
    bv = np.vectorize(lambda x: variant_value(int(x), b_fmt))(b)
    np.testing.assert_allclose(dev.to_host(c), av @ bv, rtol=1e-5, atol=1e-5)
