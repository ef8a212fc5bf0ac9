"""Random numbers from the Philox counter-based generator, with Triton's (3.4 and later) counter
layout: ``randint4x`` and everything built on it run Philox 4x32 with ten rounds, the seed's low and
high halves as the two key words, and the offset's low and high 32 bits as the first two counter
words (the others 0), so int32 and int64 offsets of one value give one stream of uint32 bits.
``philox`` itself also runs Philox 4x64 on 64-bit counter words (the seed the first key word, the
second 0). The same seed and offsets give the same bits on every target (and as Triton). Written in
the language, so every target has them.

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
#: per word width: the round multipliers (words 0 and 2 are multiplied by these) and the key steps
#: (the key words advance by these, modulo the width)
_CONSTANTS = {32: ((0xD2511F53, 0xCD9E8D57), (0x9E3779B9, 0xBB67AE85)),
              64: ((0xD2E7470EE14C6C93, 0xCA5A826395121157), (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B))}
_UINT32_TO_UNIT = 4.6566127342e-10  # 2**-31: a non-negative int32 to [0, 1)
_UINT64_TO_UNIT = 1.0842020432385337e-19  # 2**-63: a non-negative int64 to [0, 1)


def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds=N_ROUNDS_DEFAULT):
    """``n_rounds`` rounds of Philox on the counter words ``c0..c3`` under the key words ``k0, k1``:
    uint32 words (Philox 4x32) or uint64 words (4x64). Returns the four counter words."""
    words = [core.semantic.to_tensor(_unwrap(w)) for w in (c0, c1, c2, c3, k0, k1)]
    t = words[0].dtype
    if t not in (T.uint32, T.uint64) or any(w.dtype != t for w in words[:4]):
        raise core.semantic.SemanticError(
            f"philox_impl takes uint32 or uint64 counter words of one type, got {', '.join(str(w.dtype) for w in words[:4])}")
    (a, b), steps = _CONSTANTS[t.primitive_bitwidth]
    counters, keys = words[:4], [k.to(t) for k in words[4:]]
    for _ in range(_unwrap(n_rounds)):
        x0, x1, x2, x3 = counters
        counters = [math.umulhi(x2, b) ^ x1 ^ keys[0], x2 * b, math.umulhi(x0, a) ^ x3 ^ keys[1], x0 * a]
        keys = [keys[0] + steps[0], keys[1] + steps[1]]
    return tuple(counters)


def philox(seed, c0, c1, c2, c3, n_rounds=N_ROUNDS_DEFAULT):
    """Four blocks of random bits for the counters ``c0..c3`` (integer blocks of one shape, all 32-
    or all 64-bit) under the key ``seed`` (an integer): uint32 blocks from 32-bit counters, uint64
    blocks from 64-bit ones."""
    seed = core.semantic.to_tensor(_unwrap(seed))
    if not seed.dtype.is_int():
        raise core.semantic.SemanticError(f"the seed of a random number must be an integer, got {seed.dtype}")
    c0 = core.semantic.to_tensor(_unwrap(c0))
    bits = c0.dtype.primitive_bitwidth if c0.dtype.is_int() else 0
    counters = [_counter(c, bits, "a counter") for c in (c0, c1, c2, c3)]
    seed = seed.to(T.uint64)
    if bits == 32:
        keys = [(seed & 0xFFFFFFFF).to(T.uint32), ((seed >> 32) & 0xFFFFFFFF).to(T.uint32)]
    else:
        keys = [seed, seed * 0]
    return philox_impl(*counters, *keys, n_rounds=n_rounds)


def randint4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """Four blocks of uint32 random bits for each integer ``offset``: Philox 4x32 on the counter
    (the offset's low 32 bits, its high 32 bits or 0, 0, 0), as Triton since 3.4."""
    offset = core.semantic.to_tensor(_unwrap(offset))
    if not offset.dtype.is_int():
        raise core.semantic.SemanticError(f"the offset of a random number must be an integer, got {offset.dtype}")
    lo = offset.to(T.uint32)
    zero = lo * 0
    hi = (offset >> 32).to(T.uint32) if offset.dtype.primitive_bitwidth > 32 else zero
    return philox(seed, lo, hi, zero, zero, n_rounds)


def randint(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """A block of uint32 random bits for each ``offset``: the first block of ``randint4x``."""
    return randint4x(seed, offset, n_rounds)[0]


def uint_to_uniform_float(x):
    """Random 32- or 64-bit integers to fp32 in [0, 1): read as signed, negatives folded onto the
    non-negatives (-x - 1), scaled by 2**-31 (2**-63)."""
    x = core.semantic.to_tensor(_unwrap(x))
    if x.dtype not in (T.uint32, T.int32, T.uint64, T.int64):
        raise core.semantic.SemanticError(f"uint_to_uniform_float takes 32- or 64-bit integers, got {x.dtype}")
    wide = x.dtype.primitive_bitwidth == 64
    x = x.to(T.int64 if wide else T.int32, bitcast=True)
    x = core.where(x < 0, -x - 1, x)
    return x.to(T.float32) * (_UINT64_TO_UNIT if wide else _UINT32_TO_UNIT)


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


def _counter(x, bits: int, what: str):
    """``x`` as an unsigned counter word of ``bits`` (32 or 64) bits."""
    x = core.semantic.to_tensor(_unwrap(x))
    if not x.dtype.is_int() or x.dtype.primitive_bitwidth != bits or bits not in (32, 64):
        raise core.semantic.SemanticError(f"{what} of a random number must be a 32- or 64-bit integer "
                                          f"(all counters of one width), got {x.dtype}")
    return x.to(T.uint32 if bits == 32 else T.uint64, bitcast=True)
