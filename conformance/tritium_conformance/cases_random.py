"""Conformance cases of the random numbers: ``tl.philox``, ``tl.randint``, ``tl.randint4x``, ``tl.rand``,
``tl.rand4x``, ``tl.randn``, ``tl.randn4x``, checked bit for bit against Philox 4x32 written here in
numpy from the algorithm (Salmon et al., SC 2011) with Triton's counter layout: the offset is the
first counter word, the seed's low and high 32 bits the key. Random123's known answers pin the
generator itself; the rest follows Triton's conversions (uint32 -> [0, 1), Box-Muller)."""

from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl

from .suite import Device, Output, cases

MASK = 0xFFFFFFFF
_MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
_KEY_STEPS = (0x9E3779B9, 0xBB67AE85)
POISON = 0xDEADBEEF  # unwritten uint32 outputs stay this


def philox_reference(seed: int, c0, c1=0, c2=0, c3=0, rounds: int = 10) -> list[np.ndarray]:
    """Philox 4x32 in numpy: the four uint32 words for counters ``c0..c3`` (arrays or ints of one
    shape) under the key made of ``seed``'s 64-bit two's complement halves."""
    shape = np.broadcast(np.asarray(c0), np.asarray(c1), np.asarray(c2), np.asarray(c3)).shape
    c = [np.broadcast_to(np.asarray(x, dtype=np.int64).astype(np.uint64) & np.uint64(MASK), shape).copy()
         for x in (c0, c1, c2, c3)]
    k0, k1 = np.uint64(seed & MASK), np.uint64((seed >> 32) & MASK)
    a, b = np.uint64(_MULTIPLIERS[0]), np.uint64(_MULTIPLIERS[1])
    for _ in range(rounds):
        p0, p1 = a * c[0], b * c[2]  # 32 x 32 bits: exact in 64
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k0, p1 & np.uint64(MASK), (p0 >> np.uint64(32)) ^ c[3] ^ k1,
             p0 & np.uint64(MASK)]
        k0, k1 = (k0 + np.uint64(_KEY_STEPS[0])) & np.uint64(MASK), (k1 + np.uint64(_KEY_STEPS[1])) & np.uint64(MASK)
    return [w.astype(np.uint32) for w in c]


def uniform_reference(words: np.ndarray) -> np.ndarray:
    """Triton's uint32 -> fp32 in [0, 1): read as int32, negatives folded (-x - 1), times 2**-31."""
    x = words.astype(np.uint32).view(np.int32).astype(np.int64)
    x = np.where(x < 0, -x - 1, x)
    return x.astype(np.float32) * np.float32(4.6566127342e-10)


def normal_reference(u1: np.ndarray, u2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Box-Muller in float64 from fp32 uniforms, as Triton's ``pair_uniform_to_normal``."""
    u1 = np.maximum(np.float32(1.0e-7), u1).astype(np.float64)
    radius, angle = np.sqrt(-2.0 * np.log(u1)), 2.0 * np.pi * u2.astype(np.float64)
    return radius * np.cos(angle), radius * np.sin(angle)


def _signed32(word: int) -> int:
    return word - (1 << 32) if word >> 31 else word


def _signed64(word: int) -> int:
    return word - (1 << 64) if word >> 63 else word


#: fp32 normals go through log, sqrt and cos in fp32 (approximate on GPUs)
NORMAL_TOL = {"rtol": 1e-4, "atol": 2e-4}


# -- kernels -----------------------------------------------------------------------------------------
@triton.jit
def philox_words_kernel(out_ptr, seed, c0, c1, c2, c3, BLOCK: tl.constexpr, ROUNDS: tl.constexpr):
    """The four words of the counters (c0 + i, c1, c2, c3), i < BLOCK, stored as four blocks."""
    i = tl.arange(0, BLOCK)
    zero = i * 0
    r0, r1, r2, r3 = tl.philox(seed, c0 + i, c1 + zero, c2 + zero, c3 + zero, ROUNDS)
    tl.store(out_ptr + i, r0)
    tl.store(out_ptr + BLOCK + i, r1)
    tl.store(out_ptr + 2 * BLOCK + i, r2)
    tl.store(out_ptr + 3 * BLOCK + i, r3)


@triton.jit
def random_kernel(out_ptr, seed, n, KIND: tl.constexpr, BLOCK: tl.constexpr, ROUNDS: tl.constexpr):
    """One random value per offset ``pid * BLOCK + i`` below ``n``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if KIND == "randint":
        r = tl.randint(seed, offs, ROUNDS)
    elif KIND == "randint-uint32-offsets":
        r = tl.randint(seed, offs.to(tl.uint32), ROUNDS)
    elif KIND == "rand":
        r = tl.rand(seed, offs, ROUNDS)
    else:
        r = tl.randn(seed, offs, ROUNDS)
    tl.store(out_ptr + offs, r, mask=offs < n)


@triton.jit
def random4x_kernel(out_ptr, seed, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    """The four values of each offset, stored as four rows of ``n``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if KIND == "randint4x":
        r0, r1, r2, r3 = tl.randint4x(seed, offs)
    elif KIND == "rand4x":
        r0, r1, r2, r3 = tl.rand4x(seed, offs)
    else:
        r0, r1, r2, r3 = tl.randn4x(seed, offs)
    tl.store(out_ptr + offs, r0, mask=mask)
    tl.store(out_ptr + n + offs, r1, mask=mask)
    tl.store(out_ptr + 2 * n + offs, r2, mask=mask)
    tl.store(out_ptr + 3 * n + offs, r3, mask=mask)


@triton.jit
def random2d_kernel(out_ptr, seed, M, N, stride, KIND: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """2-D offsets ``row * stride + col`` on a 2-D grid of tiles."""
    rm = tl.program_id(1) * BM + tl.arange(0, BM)
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    offs = rm[:, None] * stride + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if KIND == "randint":
        r = tl.randint(seed, offs)
    else:
        r = tl.rand(seed, offs)
    tl.store(out_ptr + offs, r, mask=mask)


@triton.jit
def seed_in_memory_kernel(out_ptr, seed_ptr, n, BLOCK: tl.constexpr):
    """The seed loaded by the kernel (a scalar tensor), not passed as an argument."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.randint(tl.load(seed_ptr), offs), mask=offs < n)


@triton.jit
def seeded_dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    """Triton's tutorial 04: keep ``x / (1 - p)`` where ``rand > p``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    keep = tl.rand(seed, offs) > p
    tl.store(out_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=mask)


# -- Philox itself -------------------------------------------------------------------------------------
#: Random123's known answers for philox4x32_10: (counter, key) -> the four output words
KNOWN = {
    "zeros": ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    "ones": ((MASK,) * 4, (MASK, MASK), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    "pi": ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
           (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
}


def _philox_words(dev: Device, counter, key, rounds: int, block: int = 16) -> np.ndarray:
    out = dev.full(4 * block, POISON, np.uint32)
    seed = _signed64(key[0] | key[1] << 32)
    dev.launch(philox_words_kernel, (1,), out, seed, *[_signed32(c) for c in counter], BLOCK=block, ROUNDS=rounds)
    return dev.to_host(out).reshape(4, block)


@cases("random-philox-known-{vector}", vector=list(KNOWN))
def philox_known(dev: Device, vector: str) -> list[Output]:
    """The first lane against Random123's published words, the other lanes (the first counter word
    plus the lane) against the numpy Philox."""
    counter, key, want = KNOWN[vector]
    got = _philox_words(dev, counter, key, 10)
    lanes = (counter[0] + np.arange(16)) & MASK
    ref = np.stack(philox_reference(_signed64(key[0] | key[1] << 32), lanes, *counter[1:]))
    return [Output("random123", got[:, 0], np.array(want, np.uint32)), Output("lanes", got, ref)]


@cases("random-philox-rounds{rounds}", rounds=[1, 7])
def philox_rounds(dev: Device, rounds: int) -> list[Output]:
    counter, key = (5, 6, 7, 8), (0x12345678, 0x9ABCDEF0)
    got = _philox_words(dev, counter, key, rounds)
    ref = philox_reference(_signed64(key[0] | key[1] << 32), counter[0] + np.arange(16), *counter[1:], rounds=rounds)
    return [Output("words", got, np.stack(ref))]


# -- randint, rand, randn over seeds, sizes and grids ---------------------------------------------------
#: seeds as users pass them: small, int32 extremes (negative sign-extends into the high key word), int64
SEEDS = {"0": 0, "1": 1, "12345": 12345, "neg7": -7, "int32max": 2**31 - 1, "int64": 2**33 + 5,
         "int64neg": -(2**40) - 3}


def _random(dev: Device, kind: str, seed: int, n: int, block: int, rounds: int = 10) -> np.ndarray:
    integer = kind.startswith("randint")
    out = dev.full(n, POISON if integer else np.nan, np.uint32 if integer else np.float32)
    dev.launch(random_kernel, (triton.cdiv(n, block),), out, seed, n, KIND=kind, BLOCK=block, ROUNDS=rounds)
    return dev.to_host(out)


@cases("random-randint-seed{seed}", seed=SEEDS)
def randint_seeds(dev: Device, seed: int) -> list[Output]:
    n = 1000
    return [Output("bits", _random(dev, "randint", seed, n, 256), philox_reference(seed, np.arange(n))[0])]


@cases("random-randint-n{n}", n=[1, 17, 4099, (1 << 16) + 3])
def randint_sizes(dev: Device, n: int) -> list[Output]:
    """One element, ragged edges, and a larger grid (257 programs of 256, the last of 3)."""
    block = 1 if n == 1 else 256
    return [Output("bits", _random(dev, "randint", 42, n, block), philox_reference(42, np.arange(n))[0])]


@cases("random-randint-rounds{rounds}", rounds=[3, 10])
def randint_rounds(dev: Device, rounds: int) -> list[Output]:
    n = 300
    got = _random(dev, "randint", 77, n, 128, rounds)
    return [Output("bits", got, philox_reference(77, np.arange(n), rounds=rounds)[0])]


@cases("random-randint-uint32-offsets")
def randint_uint32_offsets(dev: Device) -> list[Output]:
    """Unsigned offsets give the bits of the same signed offsets."""
    n = 500
    return [Output("bits", _random(dev, "randint-uint32-offsets", 9, n, 128), philox_reference(9, np.arange(n))[0])]


@cases("random-rand-seed{seed}", seed={k: SEEDS[k] for k in ("0", "neg7", "int64")})
def rand_seeds(dev: Device, seed: int) -> list[Output]:
    n = 2000
    got = _random(dev, "rand", seed, n, 512)
    want = uniform_reference(philox_reference(seed, np.arange(n))[0])
    return [Output("uniform", got, want.astype(np.float64), rtol=0.0, atol=0.0)]


@cases("random-rand-range")
def rand_range(dev: Device) -> list[Output]:
    """Every value in [0, 1) and the mean of 2**16 of them near 1/2 (5 standard errors)."""
    got = _random(dev, "rand", 2024, 1 << 16, 1024).astype(np.float64)
    inside = ((got >= 0.0) & (got < 1.0)).astype(np.int32)
    return [Output("in [0, 1)", inside, np.ones_like(inside)),
            Output("mean", np.array([got.mean()]), np.array([0.5]), rtol=0.0, atol=5 * 0.2887 / 256)]


@cases("random-randn-seed{seed}", seed={k: SEEDS[k] for k in ("1", "int32max")})
def randn_seeds(dev: Device, seed: int) -> list[Output]:
    n = 1500
    got = _random(dev, "randn", seed, n, 256)
    w = philox_reference(seed, np.arange(n))
    return [Output("normal", got, normal_reference(uniform_reference(w[0]), uniform_reference(w[1]))[0],
                   **NORMAL_TOL)]


@cases("random-randn-moments")
def randn_moments(dev: Device) -> list[Output]:
    """The mean and standard deviation of 2**16 normals near 0 and 1 (5 standard errors)."""
    got = _random(dev, "randn", 31337, 1 << 16, 1024).astype(np.float64)
    return [Output("mean", np.array([got.mean()]), np.array([0.0]), rtol=0.0, atol=5 / 256),
            Output("std", np.array([got.std()]), np.array([1.0]), rtol=0.0, atol=5 * 0.7071 / 256)]


# -- the 4x variants ------------------------------------------------------------------------------------
@cases("random-{kind}", kind=["randint4x", "rand4x", "randn4x"])
def random4x(dev: Device, kind: str) -> list[Output]:
    n, seed = 700, 555
    integer = kind == "randint4x"
    out = dev.full(4 * n, POISON if integer else np.nan, np.uint32 if integer else np.float32)
    dev.launch(random4x_kernel, (triton.cdiv(n, 256),), out, seed, n, KIND=kind, BLOCK=256)
    got = dev.to_host(out).reshape(4, n)
    words = philox_reference(seed, np.arange(n))
    if integer:
        return [Output("bits", got, np.stack(words))]
    uniforms = [uniform_reference(w) for w in words]
    if kind == "rand4x":
        return [Output("uniform", got, np.stack(uniforms).astype(np.float64), rtol=0.0, atol=0.0)]
    normals = normal_reference(uniforms[0], uniforms[1]) + normal_reference(uniforms[2], uniforms[3])
    return [Output("normal", got, np.stack(normals), **NORMAL_TOL)]


# -- offsets of other shapes, seeds from memory, determinism, dropout ----------------------------------------
@cases("random-2d-{kind}-{shape}", kind=["randint", "rand"], shape={"33x70": (33, 70), "64x64": (64, 64)})
def random_2d(dev: Device, kind: str, shape: tuple[int, int]) -> list[Output]:
    """2-D offsets ``row * stride + col`` (tiles of 16 x 32 on a 2-D grid, ragged at the edges)."""
    m, n = shape
    stride = n + 3  # a padded row: the elements between rows stay poisoned
    integer = kind == "randint"
    out = dev.full(m * stride, POISON if integer else np.nan, np.uint32 if integer else np.float32)
    dev.launch(random2d_kernel, (triton.cdiv(n, 32), triton.cdiv(m, 16)), out, 99, m, n, stride, KIND=kind,
               BM=16, BN=32)
    got = dev.to_host(out).reshape(m, stride)
    offs = np.arange(m)[:, None] * stride + np.arange(n)[None, :]
    bits = philox_reference(99, offs)[0]
    want = np.full((m, stride), POISON, np.uint32) if integer else np.full((m, stride), np.nan)
    want[:, :n] = bits if integer else uniform_reference(bits)
    return [Output("values", got, want if integer else want.astype(np.float64), rtol=0.0, atol=0.0)]


@cases("random-seed-in-memory-{dtype}", dtype={"int32": np.int32, "int64": np.int64})
def seed_in_memory(dev: Device, dtype) -> list[Output]:
    n, seed = 400, -123456789 if dtype is np.int32 else 3 * 2**35 + 1
    out = dev.full(n, POISON, np.uint32)
    dev.launch(seed_in_memory_kernel, (triton.cdiv(n, 128),), out, dev.to_device(np.array([seed], dtype)), n,
               BLOCK=128)
    return [Output("bits", dev.to_host(out), philox_reference(seed, np.arange(n))[0])]


@cases("random-repeatable")
def repeatable(dev: Device) -> list[Output]:
    """The same seed gives the same bits on every launch; another seed other bits."""
    n = 4096
    a, b, c = (_random(dev, "randint", s, n, 512) for s in (5, 5, 6))
    return [Output("same seed", b, a), Output("other seed differs", np.array([int((a != c).sum())]),
                                               np.array([n]), rtol=0.0, atol=n // 100)]


@cases("random-dropout-p{p}", p={"0.5": 0.5, "0.25": 0.25})
def seeded_dropout(dev: Device, p: float) -> list[Output]:
    """Tutorial 04's seeded dropout: the mask follows from the seed alone."""
    n, seed = 3001, 1234
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    out = dev.full(n, np.nan, np.float32)
    dev.launch(seeded_dropout_kernel, (triton.cdiv(n, 1024),), dev.to_device(x), out, n, p, seed, BLOCK=1024)
    keep = uniform_reference(philox_reference(seed, np.arange(n))[0]) > np.float32(p)
    want = np.where(keep, x.astype(np.float64) / (1 - np.float32(p)), 0.0)
    return [Output("out", dev.to_host(out), want)]
