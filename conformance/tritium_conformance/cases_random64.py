"""Conformance cases of Philox's rounds themselves (``tl.philox_impl``, 4x32 and 4x64) and of random
numbers from 64-bit offsets, which Triton (since 3.4) draws from Philox 4x32 with the offset's low
and high 32 bits as the first two counter words, so an int64 offset below 2**32 gives the int32
stream. Checked against Random123's published answers and Philox written here from the algorithm
(Salmon et al., SC 2011)."""

from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl

from .cases_random import KNOWN, NORMAL_TOL, POISON, normal_reference, philox_reference, uniform_reference
from .suite import Device, Output, cases

MASK64 = (1 << 64) - 1
_MULTIPLIERS64 = (0xD2E7470EE14C6C93, 0xCA5A826395121157)
_KEY_STEPS64 = (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B)
POISON64 = 0xDEADBEEFDEADBEEF


def philox64_reference(counter, key, rounds: int = 10) -> list[int]:
    """Philox 4x64 on one counter (four words) and key (two words), Python ints."""
    c, k = [w & MASK64 for w in counter], [w & MASK64 for w in key]
    a, b = _MULTIPLIERS64
    for _ in range(rounds):
        p0, p1 = a * c[0], b * c[2]
        c = [(p1 >> 64) ^ c[1] ^ k[0], p1 & MASK64, (p0 >> 64) ^ c[3] ^ k[1], p0 & MASK64]
        k = [(k[0] + _KEY_STEPS64[0]) & MASK64, (k[1] + _KEY_STEPS64[1]) & MASK64]
    return c


#: Random123's known answers for philox4x64_10: (counter, key) -> the four output words
KNOWN64 = {
    "zeros": ((0, 0, 0, 0), (0, 0), (0x16554D9ECA36314C, 0xDB20FE9D672D0FDC, 0xD7E772CEE186176B, 0x7E68B68AEC7BA23B)),
    "ones": ((MASK64,) * 4, (MASK64, MASK64),
             (0x87B092C3013FE90B, 0x438C3C67BE8D0224, 0x9CC7D7C69CD777B6, 0xA09CAEBF594F0BA0)),
    "pi": ((0x243F6A8885A308D3, 0x13198A2E03707344, 0xA4093822299F31D0, 0x082EFA98EC4E6C89),
           (0x452821E638D01377, 0xBE5466CF34E90C6C),
           (0xA528F45403E61D95, 0x38C72DBD566E9788, 0xA5A1610E72FD18B5, 0x57BD43B5E52B7FE6)),
}


def _signed(word: int, bits: int) -> int:
    return word - (1 << bits) if word >> (bits - 1) else word


# -- kernels -----------------------------------------------------------------------------------------
@triton.jit
def _word64(x):
    return x.to(tl.int64).to(tl.uint64, bitcast=True)


@triton.jit
def philox_impl_kernel(out_ptr, c0, c1, c2, c3, k0, k1, WIDE: tl.constexpr, ROUNDS: tl.constexpr):
    """The four words of ``philox_impl`` on one counter: uint64 words when WIDE, else uint32."""
    if WIDE:
        r0, r1, r2, r3 = tl.philox_impl(_word64(c0), _word64(c1), _word64(c2), _word64(c3), _word64(k0),
                                        _word64(k1), ROUNDS)
    else:
        r0, r1, r2, r3 = tl.philox_impl(c0.to(tl.uint32, bitcast=True), c1.to(tl.uint32, bitcast=True),
                                        c2.to(tl.uint32, bitcast=True), c3.to(tl.uint32, bitcast=True),
                                        k0.to(tl.uint32, bitcast=True), k1.to(tl.uint32, bitcast=True), ROUNDS)
    tl.store(out_ptr, r0)
    tl.store(out_ptr + 1, r1)
    tl.store(out_ptr + 2, r2)
    tl.store(out_ptr + 3, r3)


@triton.jit
def random64_kernel(out_ptr, seed, base, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    """One random value per 64-bit offset ``base + i``, ``i`` below ``n``."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offs = i.to(tl.int64) + base
    if KIND == "randint":
        r = tl.randint(seed, offs)
    elif KIND == "rand":
        r = tl.rand(seed, offs)
    else:
        r = tl.randn(seed, offs)
    tl.store(out_ptr + i, r, mask=i < n)


# -- cases -------------------------------------------------------------------------------------------
def _philox_impl(dev: Device, counter, key, wide: bool, rounds: int = 10) -> np.ndarray:
    bits = 64 if wide else 32
    out = dev.full(4, POISON64 if wide else 0xDEADBEEF, np.uint64 if wide else np.uint32)
    words = [_signed(w, bits) for w in (*counter, *key)]
    dev.launch(philox_impl_kernel, (1,), out, *words, WIDE=wide, ROUNDS=rounds)
    return dev.to_host(out)


@cases("random-philox-impl-4x64-{vector}", vector=list(KNOWN64))
def philox_impl_4x64(dev: Device, vector: str) -> list[Output]:
    counter, key, want = KNOWN64[vector]
    got = _philox_impl(dev, counter, key, wide=True)
    return [Output("random123", got, np.array(want, np.uint64)),
            Output("reference", got, np.array(philox64_reference(counter, key), np.uint64))]


@cases("random-philox-impl-4x32-{vector}", vector=list(KNOWN))
def philox_impl_4x32(dev: Device, vector: str) -> list[Output]:
    counter, key, want = KNOWN[vector]
    return [Output("random123", _philox_impl(dev, counter, key, wide=False), np.array(want, np.uint32))]


@cases("random-philox-impl-4x64-rounds{rounds}", rounds=[1, 6])
def philox_impl_rounds(dev: Device, rounds: int) -> list[Output]:
    counter, key = (5, 1 << 40, 7, MASK64 - 3), (0x123456789ABCDEF0, 42)
    got = _philox_impl(dev, counter, key, wide=True, rounds=rounds)
    return [Output("words", got, np.array(philox64_reference(counter, key, rounds), np.uint64))]


#: (seed, first offset): offsets past 2**32 and near 2**63; seeds negative and wider than 32 bits
OFFSETS64 = {"small": (7, 0), "past32": (12345, (1 << 32) - 5), "high": (-(2**40) - 3, (1 << 62) + 11)}


def _random64(dev: Device, kind: str, seed: int, base: int, n: int = 300, block: int = 128) -> np.ndarray:
    integer = kind == "randint"
    out = dev.full(n, POISON if integer else np.nan, np.uint32 if integer else np.float32)
    dev.launch(random64_kernel, (triton.cdiv(n, block),), out, seed, base, n, KIND=kind, BLOCK=block)
    return dev.to_host(out)


def _words64(seed: int, base: int, n: int) -> list[np.ndarray]:
    """The four Philox 4x32 words of the int64 offsets ``base .. base + n - 1``: each offset's low
    and high 32 bits are the first two counter words."""
    offsets = [(base + i) % (1 << 64) for i in range(n)]
    lo = np.array([o & 0xFFFFFFFF for o in offsets], np.int64)
    hi = np.array([o >> 32 for o in offsets], np.int64)
    return philox_reference(seed, lo, hi)


@cases("random-randint-offsets64-{case}", case=list(OFFSETS64))
def randint64(dev: Device, case: str) -> list[Output]:
    seed, base = OFFSETS64[case]
    return [Output("bits", _random64(dev, "randint", seed, base), _words64(seed, base, 300)[0])]


@cases("random-rand-offsets64-{case}", case=list(OFFSETS64))
def rand64(dev: Device, case: str) -> list[Output]:
    seed, base = OFFSETS64[case]
    return [Output("uniform", _random64(dev, "rand", seed, base), uniform_reference(_words64(seed, base, 300)[0]))]


@cases("random-randn-offsets64-{case}", case=list(OFFSETS64))
def randn64(dev: Device, case: str) -> list[Output]:
    seed, base = OFFSETS64[case]
    words = _words64(seed, base, 300)
    want = normal_reference(uniform_reference(words[0]), uniform_reference(words[1]))[0]
    return [Output("normal", _random64(dev, "randn", seed, base), want, **NORMAL_TOL)]
