"""The numpy Philox of cases_random.py is Philox 4x32-10: Random123's known answers, and the key
made of the seed's two's complement halves; its conversions follow Triton's formulas."""

import numpy as np
import pytest

from tritium_conformance.cases_random import KNOWN, MASK, philox_reference, uniform_reference


@pytest.mark.parametrize("vector", list(KNOWN))
def test_reference_gives_random123_s_known_answers(vector):
    counter, key, want = KNOWN[vector]
    got = philox_reference(key[0] | key[1] << 32, *counter)
    assert [int(w) for w in got] == list(want)


def test_a_negative_seed_sign_extends_into_the_high_key_word():
    assert [int(w) for w in philox_reference(-1, MASK, MASK, MASK, MASK)] == list(KNOWN["ones"][2])


def test_counters_broadcast_and_only_their_low_32_bits_count():
    lanes = philox_reference(7, np.arange(5) + (1 << 32))[0]
    assert lanes.dtype == np.uint32 and lanes.tolist() == philox_reference(7, np.arange(5))[0].tolist()
    assert [philox_reference(7, i)[0] for i in range(5)] == lanes.tolist()


def test_uniform_folds_the_sign_and_scales_by_just_under_two_to_the_minus_31():
    scale = np.float32(4.6566127342e-10)  # Triton's constant: in fp32 just below 2**-31, so the top is below 1
    words = np.array([0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF], np.uint32)
    got = uniform_reference(words)
    assert got.dtype == np.float32
    top = float(np.float32(2.0**31) * scale)
    assert got.tolist() == [0.0, float(scale), 0.0, top, top]
    assert scale < 2.0**-31 and got.max() < 1.0
