"""The 8-bit float formats, as numbers: what each one's bits mean and how a float rounds to one.
The interpreter converts with these, compiled code folds its constants with them, and the code
generators emit the same arithmetic (``codegen/fp8.py``), so every target rounds alike.

Each format rounds as Triton's conversion on the GPU where it is native:

- ``fp8e4nv`` (e4m3fn) and ``fp8e5`` (e5m2), NVIDIA's: to nearest, ties to even, saturating at the
  largest finite value, NaN of either sign to the canonical 0x7f (PTX's ``cvt.rn.satfinite``);
- ``fp8e4b8`` and ``fp8e5b16`` (e4m3fnuz, e5m2fnuz), AMD CDNA3's: to nearest, ties to even,
  saturating; one zero (a negative one is 0x00), and 0x80 is NaN, what infinities and NaNs become;
- ``fp8e4b15``, Triton's software format for NVIDIA GPUs: e4m3 with bias 15 and no infinities or
  NaN (0x7f is 1.875); ties round away from zero, magnitudes saturate at 1.75 (0x7e), and so do
  infinities and NaNs (an fp32 NaN to +1.75; an fp16 NaN keeps its sign).
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class Format:
    """A sign bit, ``exponent`` bits with ``bias``, ``mantissa`` bits. ``top`` says what the top
    exponent holds: ``"inf"`` infinities and NaNs (e5m2), ``"nan"`` one more binade whose all-ones
    pattern is NaN (e4m3fn), ``"normal"`` one more binade (fnuz, e4b15). ``nan`` is the NaN pattern
    conversions produce (None: NaN saturates, e4b15); ``fnuz``: 0x80 is NaN and zero is unsigned;
    ``ties_away``: ties round away from zero (e4b15); ``max_bits``: where rounding saturates."""

    name: str
    exponent: int
    mantissa: int
    bias: int
    top: str
    nan: int | None
    max_bits: int
    fnuz: bool = False
    ties_away: bool = False

    @property
    def min_normal_exponent(self) -> int:
        return 1 - self.bias


#: the formats by tritium dtype name
FORMATS = {
    "fp8e4nv": Format("e4m3fn", 4, 3, 7, "nan", 0x7F, 0x7E),
    "fp8e5": Format("e5m2", 5, 2, 15, "inf", 0x7F, 0x7B),
    "fp8e4b8": Format("e4m3fnuz", 4, 3, 8, "normal", 0x80, 0x7F, fnuz=True),
    "fp8e5b16": Format("e5m2fnuz", 5, 2, 16, "normal", 0x80, 0x7F, fnuz=True),
    "fp8e4b15": Format("e4m3b15", 4, 3, 15, "normal", None, 0x7E, ties_away=True),
}


def encode(values, fmt: Format, nan_sign: bool = False) -> np.ndarray:
    """``values`` (float32 or wider, rounded to float32 first) as the format's bits (uint8);
    ``nan_sign``: a NaN keeps its sign where the format saturates NaNs (e4b15 from fp16)."""
    x = np.asarray(values, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.int64)
    sign = (bits >> 31) << 7
    a = bits & 0x7FFFFFFF
    shift = 23 - fmt.mantissa
    rebiased = a - ((127 - fmt.bias) << 23)
    tie_up = 1 if fmt.ties_away else (rebiased >> shift) & 1  # a tie goes up: always, or to the even pattern
    normal = (rebiased + (1 << (shift - 1)) - 1 + tie_up) >> shift
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = np.abs(x).astype(np.float64) * 2.0 ** (fmt.bias - 1 + fmt.mantissa)
        sub = np.floor(scaled + 0.5) if fmt.ties_away else np.rint(scaled)
    sub = np.nan_to_num(sub, nan=0, posinf=0).astype(np.int64)
    small = a < ((127 + fmt.min_normal_exponent) << 23)
    r = np.minimum(np.where(small, sub, normal), fmt.max_bits)
    out = sign | r
    if fmt.fnuz:
        out = np.where(r == 0, 0, np.where(a >= 0x7F800000, fmt.nan, out))  # one zero; inf is NaN too
    elif fmt.nan is not None:
        out = np.where(a > 0x7F800000, fmt.nan, out)  # NaNs: the canonical one
    elif not nan_sign:
        out = np.where(a > 0x7F800000, fmt.max_bits, out)  # e4b15: NaN saturates, positive from fp32
    return out.astype(np.uint8)


def decode(bits, fmt: Format) -> np.ndarray:
    """The float32 values of the format's ``bits`` (exact)."""
    b = np.asarray(bits).astype(np.uint8).astype(np.int64)
    sign = np.where(b >> 7, -1.0, 1.0)
    e = (b >> fmt.mantissa) & ((1 << fmt.exponent) - 1)
    m = b & ((1 << fmt.mantissa) - 1)
    value = np.where(e == 0, m * 2.0 ** (fmt.min_normal_exponent - fmt.mantissa),
                     (1 + m / (1 << fmt.mantissa)) * np.exp2((e - fmt.bias).astype(np.float64)))
    top = e == (1 << fmt.exponent) - 1
    value = sign * value
    if fmt.top == "inf":
        value = np.where(top, np.where(m == 0, sign * np.inf, np.nan), value)
    elif fmt.top == "nan":
        value = np.where(top & (m == (1 << fmt.mantissa) - 1), np.nan, value)
    if fmt.fnuz:
        value = np.where(b == 0x80, np.nan, value)
    return value.astype(np.float32)  # (NaNs positive, as Triton decodes them)
