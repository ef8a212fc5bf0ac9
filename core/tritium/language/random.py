"""Random numbers from the Philox 4x32 counter-based generator, with Triton's counter layout: the
offset is the first counter word, the seed the key, ten rounds. The same seed and offsets give the
same bits on every target (and as Triton). Written in the language, so every target has them.

Philox (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011) updates four 32-bit
counter words per round with two 32x32->64 multiplications and bumps the two key words by the
golden-ratio constants.
"""

from __future__ import annotations

from . import core
from . import dtypes as T
from . import math
from .core import _unwrap

N_ROUNDS_DEFAULT = 10
_MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)  # per round: words 0 and 2 are multiplied by these
_KEY_STEPS = (0x9E3779B9, 0xBB67AE85)  # per round: the key words advance by these (mod 2**32)
_UINT32_TO_UNIT = 4.6566127342e-10  # 2**-31: a non-negative int32 to [0, 1)


def philox(seed, c0, c1, c2, c3, n_rounds=N_ROUNDS_DEFAULT):
    """Four uint32 blocks of random bits for the counters ``c0..c3`` (32-bit integer blocks of one
    shape) under the key ``seed`` (an integer; its low and high 32 bits are the two key words)."""
    seed = core.semantic.to_tensor(_unwrap(seed))
    if not seed.dtype.is_int():
        raise core.semantic.SemanticError(f"the seed of a random number must be an integer, got {seed.dtype}")
    counters = [_uint32(c, "a counter") for c in (c0, c1, c2, c3)]
    seed = seed.to(T.uint64)
    keys = [(seed & 0xFFFFFFFF).to(T.uint32), ((seed >> 32) & 0xFFFFFFFF).to(T.uint32)]
    a, b = _MULTIPLIERS
    for _ in range(_unwrap(n_rounds)):
        x0, x1, x2, x3 = counters
        counters = [math.umulhi(x2, b) ^ x1 ^ keys[0], x2 * b, math.umulhi(x0, a) ^ x3 ^ keys[1], x0 * a]
        keys = [keys[0] + _KEY_STEPS[0], keys[1] + _KEY_STEPS[1]]
    return tuple(counters)


def randint4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """Four blocks of random uint32 for each ``offset`` (the first counter; the others are 0)."""
    offset = _uint32(offset, "the offset")
    zero = offset * 0
    return philox(seed, offset, zero, zero, zero, n_rounds)


def randint(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """A block of random uint32 for each ``offset``: the first block of ``randint4x``."""
    return randint4x(seed, offset, n_rounds)[0]


def uint_to_uniform_float(x):
    """Random 32-bit integers to fp32 in [0, 1): read as int32, negatives folded onto the
    non-negatives (-x - 1), scaled by 2**-31."""
    x = x.to(T.int32, bitcast=True)
    x = core.where(x < 0, -x - 1, x)
    return x.to(T.float32) * _UINT32_TO_UNIT


def rand(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """Uniform fp32 in [0, 1) for each ``offset``."""
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


def rand4x(seed, offsets, n_rounds=N_ROUNDS_DEFAULT):
    """Four blocks of uniform fp32 in [0, 1) for each offset."""
    return tuple(uint_to_uniform_float(x) for x in randint4x(seed, offsets, n_rounds))


def pair_uniform_to_normal(u1, u2):
    """Two independent standard normals from two uniforms (Box-Muller)."""
    u1 = core.maximum(1.0e-7, u1)
    angle = 6.283185307179586 * u2
    radius = core.sqrt(-2.0 * core.log(u1))
    return radius * core.cos(angle), radius * core.sin(angle)


def randn(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """A standard normal fp32 for each ``offset``."""
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    return pair_uniform_to_normal(uint_to_uniform_float(i1), uint_to_uniform_float(i2))[0]


def randn4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """Four blocks of standard normal fp32 for each ``offset``."""
    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)
    return pair_uniform_to_normal(u1, u2) + pair_uniform_to_normal(u3, u4)


def _uint32(x, what: str):
    x = core.semantic.to_tensor(_unwrap(x))
    if not x.dtype.is_int() or x.dtype.primitive_bitwidth != 32:
        if x.dtype.is_int() and x.dtype.primitive_bitwidth == 64:
            from ..errors import NotImplementedYet

            raise NotImplementedYet(f"random numbers from 64-bit offsets (Philox 4x64) are not supported yet; "
                                    f"{what} is {x.dtype}")
        raise core.semantic.SemanticError(f"{what} of a random number must be a 32-bit integer, got {x.dtype}")
    return x.to(T.uint32, bitcast=True)
