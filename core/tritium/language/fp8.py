"""The 8-bit float formats whose values tritium converts, as numbers: how a float rounds to one
(to nearest, ties to even, saturating at the largest finite value, NaN of either sign to the
canonical 0x7f: PTX's ``cvt.rn.satfinite``, which Triton uses on NVIDIA GPUs) and what its bits mean. The interpreter converts with these,
compiled code folds its constants with them, and the code generators emit the same arithmetic
(``codegen/fp8.py``), so every target rounds alike.
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class Format:
    """A sign bit, ``exponent`` bits with ``bias``, ``mantissa`` bits; ``infinities`` says whether the
    top exponent holds infinities (e5m2) or is one more binade with only the all-ones pattern NaN
    (e4m3fn)."""

    name: str
    exponent: int
    mantissa: int
    bias: int
    infinities: bool

    @property
    def max_bits(self) -> int:
        """The bits of the largest finite value (without sign)."""
        top = (1 << self.exponent) - 1
        if self.infinities:
            return ((top - 1) << self.mantissa) | ((1 << self.mantissa) - 1)
        return (top << self.mantissa) | ((1 << self.mantissa) - 2)

    @property
    def nan_bits(self) -> int:
        return 0x7F

    @property
    def min_normal_exponent(self) -> int:
        return 1 - self.bias


#: the formats by tritium dtype name
FORMATS = {"fp8e4nv": Format("e4m3fn", 4, 3, 7, False), "fp8e5": Format("e5m2", 5, 2, 15, True)}


def encode(values, fmt: Format) -> np.ndarray:
    """``values`` (float32 or wider, rounded to float32 first) as the format's bits (uint8)."""
    x = np.asarray(values, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.int64)
    sign = (bits >> 31) << 7
    a = bits & 0x7FFFFFFF
    shift = 23 - fmt.mantissa
    rebiased = a - ((127 - fmt.bias) << 23)
    normal = (rebiased + (1 << (shift - 1)) - 1 + ((rebiased >> shift) & 1)) >> shift
    with np.errstate(over="ignore", invalid="ignore"):
        sub = np.rint(np.abs(x).astype(np.float64) * 2.0 ** (fmt.bias - 1 + fmt.mantissa))
    sub = np.nan_to_num(sub, nan=0, posinf=0).astype(np.int64)
    small = a < ((127 + fmt.min_normal_exponent) << 23)
    r = np.minimum(np.where(small, sub, normal), fmt.max_bits)
    return np.where(a > 0x7F800000, fmt.nan_bits, sign | r).astype(np.uint8)  # NaNs: the canonical one


def decode(bits, fmt: Format) -> np.ndarray:
    """The float32 values of the format's ``bits`` (exact)."""
    b = np.asarray(bits).astype(np.uint8).astype(np.int64)
    sign = np.where(b >> 7, -1.0, 1.0)
    e = (b >> fmt.mantissa) & ((1 << fmt.exponent) - 1)
    m = b & ((1 << fmt.mantissa) - 1)
    value = np.where(e == 0, m * 2.0 ** (fmt.min_normal_exponent - fmt.mantissa),
                     (1 + m / (1 << fmt.mantissa)) * np.exp2((e - fmt.bias).astype(np.float64)))
    top = e == (1 << fmt.exponent) - 1
    if fmt.infinities:
        value = np.where(top, np.where(m == 0, np.inf, np.nan), value)
    else:
        value = np.where(top & (m == (1 << fmt.mantissa) - 1), np.nan, value)
    return (sign * value).astype(np.float32)
