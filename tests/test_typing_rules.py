"""Triton's typing rules, exactly: each case here once gave a different answer (found by random
differential testing); checked as numbers on every installed target that runs here."""

import numpy as np
import pytest

import tritium

from tritium.errors import CompilationError

from .kernels.typing_rules import (bf16_plus_int_kernel, binary_kernel, invert_bool_kernel, literal_kernel,
                                   minmax_number_kernel, shift_kernel, sum_dtype_kernel, unary_kernel,
                                   unsigned_offsets_kernel)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.int8, np.int32, np.bool_])
def test_invert_is_xor_with_all_ones_of_the_own_type(target, dtype):
    x = np.array([0, 1, 5, np.iinfo(dtype).max if dtype is not np.bool_ else 1], dtype=dtype)
    dev = target.driver
    out = dev.to_device(np.zeros(4, np.int64))  # wide: an int32 '-1 - x' would show as negative numbers
    unary_kernel[(1,)](dev.to_device(x), out, OP="invert", BLOCK=4)
    np.testing.assert_array_equal(dev.to_host(out), (~x).astype(np.int64))


def test_invert_of_a_bool_block_stays_bool(target):
    x = np.array([0, 1, 2, 1], np.int32)
    dev = target.driver
    once, twice = dev.to_device(np.zeros(4, np.int32)), dev.to_device(np.zeros(4, np.int32))
    invert_bool_kernel[(1,)](dev.to_device(x), once, twice, BLOCK=4)
    np.testing.assert_array_equal(dev.to_host(once), x != 1)
    np.testing.assert_array_equal(dev.to_host(twice), x == 1)  # an int32 '~' would give -2 and -1


def test_negating_zero_gives_positive_zero(target):
    x = np.array([0.0, 1.5, -2.0, 0.0], np.float32)
    dev = target.driver
    out = dev.to_device(np.zeros(4, np.float32))
    unary_kernel[(1,)](dev.to_device(x), out, OP="neg", BLOCK=4)
    out = dev.to_host(out)
    np.testing.assert_array_equal(out, 0.0 - x)
    assert not np.signbit(out[0])


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.float16])
def test_max_and_min_of_narrow_types_widen_to_32_bits(target, dtype):
    x = np.array([3, 9, 4, 7], dtype=dtype)
    dev = target.driver
    out = dev.to_device(np.zeros(1, np.float64))
    unary_kernel[(1,)](dev.to_device(x), out, OP="max_plus", BLOCK=4)
    assert dev.to_host(out)[0] == 9 + 250  # a uint8 max would wrap to 3
    unary_kernel[(1,)](dev.to_device(np.zeros(4, dtype)), out, OP="min_minus", BLOCK=4)
    assert dev.to_host(out)[0] == -1  # an unsigned 16-bit min would give 65535


@pytest.mark.parametrize("dtype,expected", [(np.uint8, 2**32 - 100), (np.uint16, 2**32 - 100), (np.bool_, 2**32 - 496),
                                            (np.int8, -100)])
def test_sum_of_narrow_integers_accumulates_in_32_bits_of_the_same_sign(target, dtype, expected):
    x = np.array([100, 100, 100, 100], dtype) if dtype is not np.bool_ else np.ones(4, np.bool_)
    dev = target.driver
    out = dev.to_device(np.zeros(1, np.int64))  # the sum minus 500 wraps in uint32 for unsigned (and bool) inputs
    unary_kernel[(1,)](dev.to_device(x), out, OP="sum_minus", BLOCK=4)
    assert dev.to_host(out)[0] == expected


@pytest.mark.parametrize("op", ["div", "mod"])
def test_fp16_division_and_remainder_compute_in_fp32(target, op):
    a = np.array([1, 2, 10, 7], np.float16)
    b = np.array([3, 3, 7, 0.3], np.float16)
    dev = target.driver
    out = dev.to_device(np.zeros(4, np.float32))
    binary_kernel[(1,)](dev.to_device(a), dev.to_device(b), out, OP=op, BLOCK=4)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    np.testing.assert_array_equal(dev.to_host(out), a32 / b32 if op == "div" else np.fmod(a32, b32))


def test_integer_division_of_mixed_signedness_is_refused(target):
    dev = target.driver
    a, b, out = (dev.to_device(np.ones(4, t)) for t in (np.uint8, np.int8, np.int32))
    with pytest.raises(CompilationError, match="Cannot use .* because they have different signedness"):
        binary_kernel[(1,)](a, b, out, OP="floordiv", BLOCK=4)


@pytest.mark.parametrize("types,op,named", [((np.float32, np.int32), "and", "tl.float32 and tl.int32"),
                                            ((np.int32, np.int32), "xor_float_literal", "tl.int32 and tl.float32")])
def test_a_float_in_a_bitwise_op_is_refused_in_triton_s_words(target, types, op, named):
    """Triton's tests match "invalid operands of type"; the types are the operands' own, before
    any promotion."""
    dev = target.driver
    a, b = (dev.to_device(np.ones(4, t)) for t in types)
    out = dev.to_device(np.ones(4, np.int32))
    with pytest.raises(CompilationError, match=f"invalid operands of type {named}: bitwise"):
        binary_kernel[(1,)](a, b, out, OP=op, BLOCK=4)


def test_bf16_with_an_integer_tensor_computes_in_fp32(target):
    dev = target.driver
    i = np.array([300, 301, 1000, 3], np.int32)
    out = dev.to_device(np.zeros(4, np.float32))
    bf16_plus_int_kernel[(1,)](dev.to_device(np.ones(4, np.float32)), dev.to_device(i), out, BLOCK=4)
    np.testing.assert_array_equal(dev.to_host(out), i + 1.0)  # bf16 arithmetic would round 301 to 300 or 302


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_python_numbers_take_the_tensor_type(target, dtype):
    x = np.array([0, 1, 100, 126], dtype)
    dev = target.driver
    out = dev.to_device(np.zeros(4, np.int64))
    literal_kernel[(1,)](dev.to_device(x), out, OP="plus_1", BLOCK=4)
    np.testing.assert_array_equal(dev.to_host(out), (x + dtype(1)).astype(np.int64))


@pytest.mark.parametrize("dtype,op,message", [
    (np.int8, "plus_1000", "1000 is out of range for tl.int8"),
    (np.uint32, "plus_minus_1", "unsigned tl.uint32 value with the negative number -1"),
    (np.int32, "plus_3e9", "3000000000 is out of range for tl.int32"),
])
def test_python_numbers_that_do_not_fit_the_tensor_type_are_refused(target, dtype, op, message):
    dev = target.driver
    with pytest.raises(CompilationError, match=message):
        literal_kernel[(1,)](dev.to_device(np.zeros(4, dtype)), dev.to_device(np.zeros(4, np.int64)), OP=op, BLOCK=4)


def test_large_python_ints_are_uint32_then_int64(target):
    dev = target.driver
    x = np.zeros(4, np.int64)
    out = dev.to_device(np.zeros(4, np.int64))
    literal_kernel[(1,)](dev.to_device(x), out, OP="plus_3e9", BLOCK=4)
    np.testing.assert_array_equal(dev.to_host(out), x + 3000000000)


@pytest.mark.parametrize("offset_type", ["tl.uint8", "tl.uint16", "bool"])
def test_unsigned_and_bool_pointer_offsets_are_zero_extended(target, offset_type):
    import tritium.language as tl

    n = 256
    x = np.arange(1000, 1000 + n, dtype=np.int32)
    dev = target.driver
    out = dev.to_device(np.zeros(n, np.int32))
    kind = {"tl.uint8": tl.uint8, "tl.uint16": tl.uint16, "bool": "bool"}[offset_type]
    unsigned_offsets_kernel[(1,)](dev.to_device(x), out, OFFSET_TYPE=kind, BLOCK=n)
    offs = np.arange(n)
    expected = x[(offs >= 4).astype(int)] if offset_type == "bool" else x[offs % 256]
    np.testing.assert_array_equal(dev.to_host(out), expected)


_INTS = {"int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16, "int32": np.int32,
         "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64}


def _common_int_type(a: np.dtype, b: np.dtype) -> np.dtype:
    """C's usual arithmetic conversions, written out: the wider type; at equal width the unsigned."""
    if a.itemsize != b.itemsize:
        return a if a.itemsize > b.itemsize else b
    return a if a.kind == "u" else b


def _triton_shift_right(a: np.ndarray, b: np.ndarray, arithmetic: bool) -> np.ndarray:
    """Triton's ``>>`` on Python ints: both operands in their common type, shifted arithmetically
    when the tensor the operator is called on is signed, whatever the common type's signedness."""
    t = _common_int_type(a.dtype, b.dtype)
    bits = 8 * t.itemsize
    out = []
    for x, s in zip(a.astype(t).tolist(), b.astype(t).tolist()):
        raw = x % 2**bits  # the bits of x in the common type
        if arithmetic and raw >= 2**(bits - 1):
            raw -= 2**bits
        out.append((raw >> s) % 2**bits)
    return np.array(out, dtype=np.uint64).astype(t)


@pytest.mark.parametrize("a_type,b_type", [("int8", "uint16"), ("uint8", "int16"), ("int16", "uint16"),
                                           ("uint16", "int16"), ("int32", "uint32"), ("uint32", "int8"),
                                           ("int64", "uint8"), ("uint64", "int64"), ("int8", "int8"),
                                           ("uint32", "uint8")])
def test_shift_right_is_arithmetic_when_the_left_tensor_is_signed(target, a_type, b_type):
    """int8 -17 >> uint16 14 is 65535 in Triton (the common type is uint16, the shift arithmetic)."""
    a_np, b_np = np.dtype(_INTS[a_type]), np.dtype(_INTS[b_type])
    a = np.array([-17, -128, 100, -1, 5, -2, 64, -100], np.int64).astype(a_np)
    first = 14 if _common_int_type(a_np, b_np).itemsize >= 2 else 6  # within the common type's width
    b = np.array([first, 1, 2, 3, 0, 7, 6, 4], np.int64).astype(b_np)
    dev = target.driver
    # a >> 3: the number takes a's type
    for op, expected in (("tensors", _triton_shift_right(a, b, a_np.kind == "i")),
                         ("number_right", _triton_shift_right(a, np.full(8, 3, a_np), a_np.kind == "i"))):
        out = dev.to_device(np.zeros(8, expected.dtype))
        shift_kernel[(1,)](dev.to_device(a), dev.to_device(b), out, OP=op, BLOCK=8)
        np.testing.assert_array_equal(dev.to_host(out), expected, err_msg=f"{a_type} >> {b_type}: {op}")


@pytest.mark.parametrize("b_type,expected", [("uint8", [200, 100, 50, 25]), ("int16", [200, 100, 50, 25]),
                                             ("int8", None)])
def test_a_number_shifted_by_a_tensor_shifts_as_the_tensor_is_signed(target, b_type, expected):
    """``200 >> x``: Triton's ``__rrshift__`` picks the shift by the tensor's signedness. With a
    uint8 ``x`` the number is uint8 200 (top bit set), shifted logically: 100, not 228."""
    b = np.array([0, 1, 2, 3], _INTS[b_type])
    dev = target.driver
    if expected is None:  # 200 does not fit int8: refused, as every weakly typed number
        with pytest.raises(tritium.CompilationError, match="200"):
            shift_kernel[(1,)](dev.to_device(b), dev.to_device(b), dev.to_device(np.zeros(4, np.int8)),
                               OP="number_left", BLOCK=4)
        return
    out = dev.to_device(np.zeros(4, _INTS[b_type]))
    shift_kernel[(1,)](dev.to_device(b), dev.to_device(b), out, OP="number_left", BLOCK=4)
    np.testing.assert_array_equal(dev.to_host(out), expected)


@pytest.mark.parametrize("dtype,op,expected", [
    (np.uint8, "max_0_minus_1", [-1, 4, 125, 126]),      # int32, not uint8 (which gives 255 for 0)
    (np.int8, "max_5_plus_250", [255, 255, 376, 377]),   # int32: accepted, no wrap (weakly typed: refused)
    (np.uint16, "min_number_left", [0, 5, 126, 300]),    # int32(300) with uint16: int32
    (np.int64, "max_0_minus_1", [-1, 4, 125, 126]),      # int32 with int64: int64
])
def test_minimum_and_maximum_make_numbers_int32_tensors_first(target, dtype, op, expected):
    """Triton's tl.maximum/minimum call to_tensor on a number (an int is int32) before promoting."""
    x = np.array([0, 5, 126, 1000 if op == "min_number_left" else 127], dtype)
    dev = target.driver
    out = dev.to_device(np.zeros(4, np.int64))
    minmax_number_kernel[(1,)](dev.to_device(x), out, OP=op, BLOCK=4)
    np.testing.assert_array_equal(dev.to_host(out), expected)


def test_maximum_with_a_float_number_computes_in_fp32(target):
    """fp16 with 2.5: the number is an fp32 tensor, so the result is fp32 and keeps + 0.0001."""
    x = np.array([1, 3, 2049, 0.5], np.float16)
    dev = target.driver
    out = dev.to_device(np.zeros(4, np.float64))
    minmax_number_kernel[(1,)](dev.to_device(x), out, OP="max_float_plus_tiny", BLOCK=4)
    expected = np.maximum(x.astype(np.float32), np.float32(2.5)) + np.float32(0.0001)
    np.testing.assert_array_equal(dev.to_host(out), expected.astype(np.float64))


def test_maximum_of_bf16_computes_in_fp32(target):
    x = np.array([1, 3, 256, 0.5], np.float32)  # exact in bf16
    dev = target.driver
    out = dev.to_device(np.zeros(4, np.float64))
    minmax_number_kernel[(1,)](dev.to_device(x), out, OP="bf16_self", BLOCK=4)
    np.testing.assert_array_equal(dev.to_host(out), (x + np.float32(0.0001)).astype(np.float64))


@pytest.mark.parametrize("x_type,dtype,op", [("int8", "int8", "sum"), ("int32", "int8", "sum"),
                                             ("uint8", "uint8", "sum_rows"), ("int16", "int16", "sum"),
                                             ("int8", "int8", "cumsum"), ("int8", "int64", "sum")])
def test_sum_with_dtype_converts_first_and_adds_in_dtype(target, x_type, dtype, op):
    """Triton's tl.sum(x, dtype=d) is x.to(d) summed in d, with no widening: int8 ones over 32x32
    wrap to 0 (not 1024); the reference wraps Python integer sums to d's width."""
    import tritium.language as tl

    n = 32
    x = np.full((n, n), 1, np.dtype(x_type)) if op != "sum_rows" else np.full((n, n), 9, np.dtype(x_type))
    x[0, :3] = 100  # 100 + 100 + 100 overflows an int8 once more
    d = np.dtype(dtype)
    dev = target.driver

    def wrap(v: int) -> int:
        return int(np.array(v % 2**(8 * d.itemsize), np.uint64).astype(d))

    vals = x.astype(np.int64).astype(d).astype(np.int64)  # x.to(d) first
    if op == "sum":
        expected = np.array([wrap(int(vals.sum()))])
    elif op == "sum_rows":
        expected = np.array([wrap(int(r)) for r in vals.sum(axis=1)])
    else:
        cols = [wrap(int(c)) for c in vals.sum(axis=0)]
        expected = np.array([wrap(sum(cols[:k + 1])) for k in range(n)])
    out = dev.to_device(np.zeros(expected.size, np.int64))  # wide: the sum's own type shows
    sum_dtype_kernel[(1,)](dev.to_device(x), out, DTYPE=getattr(tl, dtype), OP=op, N=n)
    np.testing.assert_array_equal(dev.to_host(out), expected)

