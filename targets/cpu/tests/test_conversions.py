"""Float conversions on cpu against an exact reference: every pair among fp64/fp32/fp16/bf16 and
ints -> floats, in SIMD chunks and in scalar code, rounded once to nearest even.

The reference enumerates every finite value of the 16-bit type and picks the nearest with exact
rational arithmetic (ties to the even bit pattern; the value past the largest finite one is inf),
so it shares no code with the compiler or numpy's casts.
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest
import tritium
import tritium.language as tl

N = 64
RNG = np.random.default_rng(11)


def _positive_table(kind: str) -> tuple[np.ndarray, list[Fraction]]:
    """(bit patterns, exact values) of the finite non-negative values of ``kind`` and of inf,
    counted as the next power of two (2**16 for fp16, 2**128 for bf16)."""
    if kind == "fp16":
        bits = np.arange(0x7C01, dtype=np.uint16)
        values = [Fraction(float(v)) for v in bits[:-1].view(np.float16)] + [Fraction(2 ** 16)]
    else:
        bits = np.arange(0x7F81, dtype=np.uint16)
        wide = (bits[:-1].astype(np.uint32) << 16).view(np.float32)
        values = [Fraction(float(v)) for v in wide] + [Fraction(2 ** 128)]
    return bits, values


_TABLES = {kind: _positive_table(kind) for kind in ("fp16", "bf16")}


def reference_bits(values, kind: str) -> np.ndarray:
    """Bit patterns (uint16) of ``values`` (floats or ints, exact) rounded to ``kind``."""
    bits, table = _TABLES[kind]
    out = []
    for v in values:
        if isinstance(v, float) and np.isnan(v):
            out.append(None)
            continue
        if isinstance(v, float) and np.isinf(v):
            out.append(int(bits[-1]) | (0x8000 if v < 0 else 0))
            continue
        exact = Fraction(v)
        a = abs(exact)
        lo, hi = 0, len(table) - 1
        if a >= table[-1]:
            pick = hi
        else:
            while hi - lo > 1:  # table[lo] <= a < table[hi]
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if table[mid] <= a else (lo, mid)
            below, above = a - table[lo], table[hi] - a
            pick = lo if below < above or (below == above and bits[lo] % 2 == 0) else hi
        sign = 0x8000 if exact < 0 or (exact == 0 and np.signbit(float(v))) else 0
        out.append(int(bits[pick]) | sign)
    return out


def _assert_bits(got: np.ndarray, values, kind: str) -> None:
    want = reference_bits(values, kind)
    exponent = 0x7C00 if kind == "fp16" else 0x7F80
    for i, (g, w) in enumerate(zip(got.view(np.uint16).tolist(), want)):
        if w is None:
            assert g & exponent == exponent and g & (0x3FF if kind == "fp16" else 0x7F), (i, values[i], hex(g))
        else:
            assert g == w, f"{values[i]!r} -> {hex(g)}, expected {hex(w)}"


def hard_doubles(kind: str) -> np.ndarray:
    """Ties and near-ties of ``kind`` (where rounding through fp32 goes wrong), extremes, specials."""
    bits, table = _TABLES[kind]
    pick = RNG.integers(1, len(table) - 1, 24)
    mids = [float((table[i] + table[i + 1]) / 2) for i in pick]
    near = [np.nextafter(m, np.inf) for m in mids] + [np.nextafter(m, -np.inf) for m in mids]
    top = float(table[-2])
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, -1e300, 1e-300, 5e-324, top,
                float((table[-2] + table[-1]) / 2), float(table[1] / 2), 1 + 2.0 ** -11 + 2.0 ** -40,
                1 + 2.0 ** -8 + 2.0 ** -40, 1 / 3, -2.5, 65519.99, 65520.0]
    values = np.array(mids + near + specials, dtype=np.float64)
    values = np.concatenate([values, -values[: len(mids)], RNG.standard_normal(N) * 10.0 ** RNG.integers(-40, 40, N)])
    return values[: (len(values) // N) * N]


@tritium.jit
def cast_chunks(x_ptr, y_ptr, DST: tl.constexpr, BITS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.load(x_ptr + offs).to(DST)
    if BITS:
        y = y.to(tl.int16, bitcast=True)
    tl.store(y_ptr + offs, y)


@tritium.jit
def cast_scalars(x_ptr, y_ptr, DST: tl.constexpr, BITS: tl.constexpr):
    pid = tl.program_id(0)
    y = tl.load(x_ptr + pid).to(DST)
    if BITS:
        y = y.to(tl.int16, bitcast=True)
    tl.store(y_ptr + pid, y)


def run_cast(x: np.ndarray, kind: str, scalar: bool) -> np.ndarray:
    y = np.zeros(len(x), dtype=np.float16 if kind == "fp16" else np.int16)
    dst = tl.float16 if kind == "fp16" else tl.bfloat16
    if scalar:
        cast_scalars[(len(x),)](x, y, dst, kind == "bf16")
    else:
        cast_chunks[(len(x) // N,)](x, y, dst, kind == "bf16", N)
    return y


@pytest.mark.parametrize("scalar", [False, True], ids=["vector", "scalar"])
@pytest.mark.parametrize("kind", ["fp16", "bf16"])
def test_fp64_to_16_bit_floats_rounds_once(kind, scalar):
    x = hard_doubles(kind)
    _assert_bits(run_cast(x, kind, scalar), x.tolist(), kind)


@pytest.mark.parametrize("scalar", [False, True], ids=["vector", "scalar"])
@pytest.mark.parametrize("kind", ["fp16", "bf16"])
def test_fp32_to_16_bit_floats(kind, scalar):
    with np.errstate(over="ignore"):
        x = hard_doubles(kind).astype(np.float32)
    _assert_bits(run_cast(x, kind, scalar), [float(v) for v in x], kind)


INT_TYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


def hard_ints(dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    specials = [0, 1, -1, 255, 256 + 1, 2048 + 1, 65504, 65519, 65520, 65535, 2 ** 24 + 2 ** 16 + 1,
                2 ** 26, 2 ** 31 - 1, -2 ** 31, 2 ** 53 + 1, 2 ** 62 + 2 ** 54 + 1, 2 ** 63 - 1, -2 ** 63,
                2 ** 64 - 1, 2 ** 40 + 2 ** 32 + 7]
    values = [v for v in specials if info.min <= v <= info.max]
    values += RNG.integers(info.min, info.max, N, dtype=dtype, endpoint=True).tolist()
    values += [info.max - k for k in range(8)] + [info.min + k for k in range(8)]
    values = (values * N)[:N] if len(values) < N else values[: (len(values) // N) * N]
    return np.array(values, dtype=dtype)


@pytest.mark.parametrize("scalar", [False, True], ids=["vector", "scalar"])
@pytest.mark.parametrize("kind", ["fp16", "bf16"])
@pytest.mark.parametrize("dtype", INT_TYPES)
def test_ints_to_16_bit_floats(dtype, kind, scalar):
    x = hard_ints(dtype)
    _assert_bits(run_cast(x, kind, scalar), [int(v) for v in x], kind)


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_int_to_fp16_and_back_keeps_the_overflow(dtype):
    """``x.to(fp16).to(fp32)``: ints beyond fp16's range are inf, not the int as a float."""

    @tritium.jit
    def roundtrip(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.float16).to(tl.float32))

    x = hard_ints(dtype)
    y = np.zeros(N, dtype=np.float32)
    roundtrip[(1,)](x[:N], y, N)
    want = np.array(reference_bits([int(v) for v in x[:N]], "fp16"), dtype=np.uint16).view(np.float16)
    np.testing.assert_array_equal(y, want.astype(np.float32))


def test_int_constant_to_fp16_overflows():
    @tritium.jit
    def constant(y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        big = tl.full((BLOCK,), 2 ** 26, tl.int32) + offs * 0
        tl.store(y_ptr + offs, big.to(tl.float16).to(tl.float32))
        tl.store(y_ptr + BLOCK, (2 ** 26 + tl.program_id(0)).to(tl.float16).to(tl.float32))

    y = np.zeros(17, dtype=np.float32)
    constant[(1,)](y, 16)
    assert np.all(np.isinf(y)), y


def test_int_with_few_significant_bits_to_fp16_overflows():
    """LLVM thinks ``k * 2**26`` converts to fp16 exactly and folds away the fp16 step."""

    @tritium.jit
    def scaled(y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, ((offs - 8) * 2 ** 26).to(tl.float16).to(tl.float32))
        tl.store(y_ptr + BLOCK, ((tl.program_id(0) + 1) * 2 ** 26).to(tl.float16).to(tl.float32))

    y = np.zeros(17, dtype=np.float32)
    scaled[(1,)](y, 16)
    want = np.array([np.copysign(np.inf, k - 8) if k != 8 else 0.0 for k in range(16)] + [np.inf], np.float32)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("src", [np.float64, np.float32, np.float16])
def test_store_converts_to_the_pointer_type(src):
    """A value stored through a pointer of another float type is converted (fp64 -> fp16 crashed)."""

    @tritium.jit
    def copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))

    x = (RNG.standard_normal(N) * 1000).astype(src)
    for dst in (np.float16, np.float32, np.float64):
        y = np.zeros(N, dtype=dst)
        copy[(1,)](x, y, N)
        want = np.array(reference_bits(x.astype(np.float64).tolist(), "fp16"), dtype=np.uint16).view(np.float16) \
            if dst == np.float16 else x.astype(dst)
        np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("pair", ["fp64->fp16", "fp64->bf16", "fp32->bf16", "i64->bf16", "i32->fp16"])
def test_no_runtime_helper_calls(pair):
    """The optimised code calls no compiler-rt conversion helper (a JIT cannot resolve them)."""
    src, dst = pair.split("->")
    bits = dst == "bf16"
    k = tritium.compile(cast_chunks, signature=f"*{src}, *{'i16' if bits else dst}",
                        constants={"DST": getattr(tl, {"fp16": "float16", "bf16": "bfloat16"}[dst]),
                                   "BITS": bits, "BLOCK": N})
    assert not re.findall(r"__(?:trunc|extend|float)\w+", k.asm["asm"])


@tritium.jit
def bf16_arithmetic(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs).to(tl.bfloat16)
    b = tl.load(y_ptr + offs).to(tl.bfloat16)
    tl.store(out_ptr + offs, (a + b).to(tl.int16, bitcast=True))
    tl.store(out_ptr + BLOCK + offs, (a - b).to(tl.int16, bitcast=True))
    tl.store(out_ptr + 2 * BLOCK + offs, (a * b).to(tl.int16, bitcast=True))
    tl.store(out_ptr + 3 * BLOCK + offs, (a / b).to(tl.bfloat16).to(tl.int16, bitcast=True))  # / is fp32


def test_bf16_arithmetic_rounds_each_result_once():
    """bf16 ops compute in fp32 and round back through ``__truncsfbf2``, which the driver defines."""
    def bf16_values(n):
        bits = (RNG.integers(0x3C00, 0x4400, n) | (RNG.integers(0, 2, n) << 15)).astype(np.uint32) << 16
        return bits.view(np.float32)

    x, y = bf16_values(N), bf16_values(N)
    out = np.zeros(4 * N, np.int16)
    bf16_arithmetic[(1,)](x, y, out, N)
    a, b = x.astype(np.float64), y.astype(np.float64)
    quotient = (x / y).astype(np.float64)  # bf16 / bf16 divides in fp32 (Triton), then rounds to bf16
    for k, exact in enumerate((a + b, a - b, a * b, quotient)):
        _assert_bits(out[k * N:(k + 1) * N], exact.tolist(), "bf16")
