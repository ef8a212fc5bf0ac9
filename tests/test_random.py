"""``tl.philox``, ``tl.randint``, ``tl.rand`` and ``tl.randn`` on every available target, against
Random123's known answers for Philox 4x32-10 and a reference written here from the algorithm."""

import numpy as np
import pytest

from .kernels.randomness import philox_kernel, random_kernel

MASK = 0xFFFFFFFF


def philox_reference(c, k, rounds=10):
    """Philox 4x32: four 32-bit counter words, two key words (Python ints, exact)."""
    c, k = list(c), list(k)
    for _ in range(rounds):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k[0]) & MASK, p1 & MASK, ((p0 >> 32) ^ c[3] ^ k[1]) & MASK, p0 & MASK]
        k = [(k[0] + 0x9E3779B9) & MASK, (k[1] + 0xBB67AE85) & MASK]
    return c


# Random123's known-answer vectors for philox4x32_10: (counter, key) -> output
KNOWN = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((MASK,) * 4, (MASK, MASK), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def _signed(word: int, bits: int = 32) -> int:
    return word - (1 << bits) if word >> (bits - 1) else word


@pytest.mark.parametrize("counter,key,want", KNOWN)
def test_philox_gives_random123_s_known_answers(target, counter, key, want):
    dev = target.driver
    out = dev.to_device(np.zeros(4 * 16, np.uint32))
    seed = _signed(key[0] | key[1] << 32, 64)  # the key words are the seed's low and high halves
    philox_kernel[(1,)](out, seed, *[_signed(c) for c in counter], BLOCK=16)
    got = dev.to_host(out).reshape(4, 16)
    assert [int(x) for x in got[:, 0]] == list(want)
    for i in range(1, 16):  # the other lanes: the first counter word plus i
        c = ((counter[0] + i) & MASK, *counter[1:])
        assert [int(x) for x in got[:, i]] == philox_reference(c, key)


@pytest.mark.parametrize("seed", [0, 1234, -5, 2**40 + 7])
def test_randint_rand_and_randn_follow_from_the_first_blocks(target, seed):
    dev = target.driver
    n = 300
    outs = {}
    for kind, dtype in (("randint", np.uint32), ("rand", np.float32), ("randn", np.float32)):
        out = dev.to_device(np.zeros(n, dtype))
        random_kernel[(3,)](out, seed, n, KIND=kind, BLOCK=128)
        outs[kind] = dev.to_host(out)
    key = (seed & MASK, (seed >> 32) & MASK)
    blocks = np.array([philox_reference((i, 0, 0, 0), key) for i in range(n)], dtype=np.uint64)
    np.testing.assert_array_equal(outs["randint"], blocks[:, 0].astype(np.uint32))

    def uniform(words):
        x = words.astype(np.uint32).view(np.int32).astype(np.int64)
        x = np.where(x < 0, -x - 1, x)
        return x.astype(np.float32) * np.float32(4.6566127342e-10)

    u = uniform(blocks[:, 0])
    np.testing.assert_array_equal(outs["rand"], u)
    assert (outs["rand"] >= 0).all() and (outs["rand"] < 1).all()  # Triton's rand is in [0, 1)
    u1, u2 = np.maximum(1e-7, uniform(blocks[:, 0]).astype(np.float64)), uniform(blocks[:, 1]).astype(np.float64)
    normal = np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2)
    np.testing.assert_allclose(outs["randn"], normal, rtol=1e-4, atol=1e-5)


def _randint4x(target, seed: int, base: int, wide: bool, n: int = 8) -> np.ndarray:
    from .kernels.randomness import randint4x_kernel

    dev = target.driver
    out = dev.to_device(np.zeros(4 * n, np.uint32))
    randint4x_kernel[(1,)](out, seed, base, WIDE=wide, BLOCK=n)
    return dev.to_host(out).reshape(4, n)


@pytest.mark.parametrize("seed,base", [(5, 0), (-7, 2**31 - 4), (2**40 + 3, 1000)])
def test_int32_and_int64_offsets_of_one_value_give_one_stream(target, seed, base):
    """Triton 3.4+: randint4x always runs Philox 4x32, the offset's high word the second counter."""
    narrow, wide = _randint4x(target, seed, base, False), _randint4x(target, seed, base, True)
    np.testing.assert_array_equal(wide, narrow)
    key = (seed % 2**64 & MASK, seed % 2**64 >> 32)
    want = np.array([philox_reference(((base + i) % 2**32, 0, 0, 0), key) for i in range(8)], np.uint32).T
    np.testing.assert_array_equal(wide, want)


@pytest.mark.parametrize("seed,base", [(12345, 2**32 - 5), (-(2**40) - 3, 2**62 + 11), (9, -4)])
def test_int64_offsets_split_into_low_and_high_counter_words(target, seed, base):
    """Offsets past 2**32 (and negative ones, whose high word is all ones) against Philox 4x32 on
    the counter (low 32 bits, high 32 bits, 0, 0), written with Python integers."""
    got = _randint4x(target, seed, base, True)
    key = (seed % 2**64 & MASK, seed % 2**64 >> 32)
    words = [((base + i) % 2**64 & MASK, (base + i) % 2**64 >> 32) for i in range(8)]
    want = np.array([philox_reference((lo, hi, 0, 0), key) for lo, hi in words], np.uint32).T
    np.testing.assert_array_equal(got, want)


def test_philox_impl_refuses_counters_of_mixed_widths(target):
    import tritium

    from .kernels.randomness import mixed_philox_kernel

    out = target.driver.to_device(np.zeros(4, np.uint32))
    with pytest.raises(tritium.errors.TritiumError, match="philox_impl takes uint32 or uint64 counter words of one type"):
        mixed_philox_kernel[(1,)](out, 3)
