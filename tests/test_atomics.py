"""Atomics (``tl.atomic_add`` ... ``tl.atomic_xchg``, ``tl.atomic_cas``) on every installed target
against exact references: contention, masks, old values, a lock, and what Triton refuses."""

import numpy as np
import pytest

import tritium
import tritium.language as tl

from .kernels.frontend_only import FrontendOnly


@tritium.jit
def add_kernel(x_ptr, v_ptr, old_ptr, n, BLOCK: tl.constexpr, SHARED: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    row = tl.program_id(0) * n + offs
    old = tl.atomic_add(x_ptr + (offs if SHARED else row), tl.load(v_ptr + row, mask=mask), mask=mask)
    tl.store(old_ptr + row, old, mask=mask)


@tritium.jit
def op_kernel(x_ptr, v_ptr, old_ptr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    p, v = x_ptr + offs, tl.load(v_ptr + offs)
    if OP == "max":
        old = tl.atomic_max(p, v)
    elif OP == "min":
        old = tl.atomic_min(p, v)
    elif OP == "and":
        old = tl.atomic_and(p, v)
    elif OP == "or":
        old = tl.atomic_or(p, v)
    elif OP == "xor":
        old = tl.atomic_xor(p, v)
    elif OP == "xchg":
        old = tl.atomic_xchg(p, v)
    else:
        old = tl.atomic_cas(p, v, v + 1)
    tl.store(old_ptr + offs, old)


@tritium.jit
def counter_kernel(counter_ptr, old_ptr):
    tl.store(old_ptr + tl.program_id(0), tl.atomic_add(counter_ptr, 1, sem="relaxed", scope="gpu"))


@tritium.jit
def lock_kernel(partial_ptr, sums_ptr, locks_ptr, N: tl.constexpr, GROUP: tl.constexpr):
    """Tutorial 05's spin lock around a read-modify-write of a whole row."""
    pid = tl.program_id(0)
    offs = tl.arange(0, N)
    row = tl.load(partial_ptr + pid * N + offs)
    lock = locks_ptr + pid % GROUP
    count = lock + GROUP
    out = sums_ptr + (pid % GROUP) * N + offs
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    if tl.load(count) == 0:
        tl.atomic_xchg(count, 1)
    else:
        row += tl.load(out)
    tl.store(out, row)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


def _dev(target, *arrays):
    return [target.driver.to_device(a) for a in arrays]


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_many_programs_adding_into_the_same_elements_sum_exactly(target, dtype):
    programs, n = 50, 100
    rng = np.random.default_rng(1)
    info = np.iinfo(dtype)
    x0 = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    v = rng.integers(info.min, info.max, (programs, n), dtype=dtype, endpoint=True)
    x, vd, old = _dev(target, x0, v, np.zeros((programs, n), dtype))
    add_kernel[(programs,)](x, vd, old, n, BLOCK=128, SHARED=True)
    span = 1 << (8 * np.dtype(dtype).itemsize)
    want = [(int(a) + sum(int(b) for b in col)) % span for a, col in zip(x0, v.T)]
    want = np.array([w - span if w > info.max else w for w in want], dtype=dtype)
    np.testing.assert_array_equal(target.driver.to_host(x), want)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_sums_under_contention_are_within_rounding(target, dtype):
    programs, n = 40, 64
    v = (np.random.default_rng(2).standard_normal((programs, n))).astype(dtype)
    x, vd, old = _dev(target, np.zeros(n, dtype), v, np.zeros((programs, n), dtype))
    add_kernel[(programs,)](x, vd, old, n, BLOCK=64, SHARED=True)
    want = v.astype(np.float64).sum(axis=0)
    bound = np.abs(v).astype(np.float64).sum(axis=0) * float(np.finfo(dtype).eps) * programs
    assert np.all(np.abs(target.driver.to_host(x) - want) <= bound)


def test_distinct_elements_return_the_old_values_and_masked_lanes_touch_nothing(target):
    programs, n = 3, 45
    x0 = np.arange(programs * n + 19, dtype=np.int32) * 3  # 19 elements past the last row stay
    v = np.arange(programs * n, dtype=np.int32) + 100
    x, vd, old = _dev(target, x0, v, np.full(programs * n, -1, np.int32))
    add_kernel[(programs,)](x, vd, old, n, BLOCK=64, SHARED=False)
    np.testing.assert_array_equal(target.driver.to_host(old), x0[:programs * n])
    np.testing.assert_array_equal(target.driver.to_host(x), np.concatenate([x0[:programs * n] + v, x0[programs * n:]]))


@pytest.mark.parametrize("op,dtype", [("max", np.int32), ("max", np.uint32), ("min", np.int64), ("and", np.int32),
                                      ("or", np.uint64), ("xor", np.int32), ("xchg", np.float64), ("cas", np.int32),
                                      ("max", np.float32), ("min", np.float64)])
def test_each_op_returns_the_old_values_and_stores_its_result(target, op, dtype):
    n = 64
    rng = np.random.default_rng(3)
    if np.dtype(dtype).kind == "f":
        x0 = rng.integers(-8, 8, n).astype(dtype)
        v = rng.integers(-8, 8, n).astype(dtype)
        x0[:4], v[:4] = [0.0, -0.0, -1.0, 2.0], [-0.0, 0.0, -2.0, -3.0]
    else:
        info = np.iinfo(dtype)
        x0 = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        v = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    if op == "cas":
        v[::2] = x0[::2]  # every other element matches cmp and takes cmp + 1
        v[1] = x0[1] - 1 if x0[1] != np.iinfo(dtype).min else x0[1] + 1  # cas(x0[1], x0[1]-1, ...) fails
    x, vd, old = _dev(target, x0, v, np.zeros(n, dtype))
    op_kernel[(2,)](x, vd, old, OP=op, BLOCK=n // 2)
    with np.errstate(over="ignore"):
        want = {"max": np.maximum, "min": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or,
                "xor": np.bitwise_xor, "xchg": lambda a, b: b,
                "cas": lambda a, b: np.where(a == b, b + 1, a)}[op](x0, v)
    got = target.driver.to_host(x)
    np.testing.assert_array_equal(target.driver.to_host(old), x0)
    np.testing.assert_array_equal(got, want)
    if op in ("max", "min") and np.dtype(dtype).kind == "f":  # Triton's order: -0.0 < +0.0
        np.testing.assert_array_equal(np.signbit(got[:2]), [op == "min", op == "min"])


def test_a_scalar_counter_gives_each_program_a_distinct_old_value(target):
    counter, old = _dev(target, np.zeros(1, np.int32), np.full(200, -1, np.int32))
    counter_kernel[(200,)](counter, old)
    assert target.driver.to_host(counter)[0] == 200
    np.testing.assert_array_equal(np.sort(target.driver.to_host(old)), np.arange(200))


@pytest.mark.parametrize("programs,group", [(1, 1), (64, 4), (257, 8)])
def test_tutorial_05_lock_serialises_the_read_modify_write(target, programs, group):
    N = 64
    partial = np.random.default_rng(4).integers(-100, 100, (programs, N)).astype(np.float32)
    p, sums, locks = _dev(target, partial, np.full((group, N), np.nan, np.float32), np.zeros(2 * group, np.int32))
    lock_kernel[(programs,)](p, sums, locks, N=N, GROUP=group)
    want = np.stack([partial[g::group].astype(np.float64).sum(axis=0) for g in range(group)])
    np.testing.assert_array_equal(target.driver.to_host(sums), want)
    np.testing.assert_array_equal(target.driver.to_host(locks), [0] * group + [1] * group)


@tritium.jit
def bad_kernel(x_ptr, CASE: tl.constexpr):
    if CASE == "fp16_max":
        tl.atomic_max(x_ptr, 1.0)
    elif CASE == "int16_add":
        tl.atomic_add(x_ptr, 1)
    elif CASE == "float_and":
        tl.atomic_and(x_ptr, 1.0)
    elif CASE == "sem":
        tl.atomic_add(x_ptr, 1, sem="seq_cst")
    elif CASE == "scope":
        tl.atomic_add(x_ptr, 1, scope="device")
    elif CASE == "cas_int8":
        tl.atomic_cas(x_ptr, 0, 1)
    elif CASE == "cas_type":
        tl.atomic_cas(x_ptr, 0.5, 1)
    else:
        tl.atomic_add(3, 1)


@pytest.mark.parametrize("case,dtype,message", [
    ("fp16_max", "*fp16", "tl.atomic_max does not support tl.float16"),
    ("fp16_max", "*bf16", "tl.atomic_max does not support tl.bfloat16"),
    ("int16_add", "*i16", "tl.atomic_add does not support tl.int16"),
    ("int16_add", "*u8", "tl.atomic_add does not support tl.uint8"),
    ("int16_add", "*fp8e4nv", "tl.atomic_add does not support tl.float8e4nv"),  # was a crash in the code generator
    ("float_and", "*fp32", "tl.atomic_and needs integer elements"),
    ("sem", "*i32", "sem must be one of \"acquire\", \"release\", \"acq_rel\", \"relaxed\""),
    ("scope", "*i32", "scope must be one of \"gpu\", \"cta\", \"sys\""),
    ("cas_int8", "*i8", "tl.atomic_cas supports 16-, 32- and 64-bit elements only"),
    ("cas_type", "*i32", "cmp is tl.float32 but the pointer points to tl.int32"),
    ("not_pointer", "*i32", "tl.atomic_add expects a pointer"),
])
def test_what_triton_refuses_is_a_located_error(case, dtype, message):
    with pytest.raises(tritium.CompilationError) as info:
        tritium.compile(bad_kernel, signature={"x_ptr": dtype}, constants={"CASE": case}, target=FrontendOnly())
    text = str(info.value)
    assert message in text and "bad_kernel" in text and "test_atomics.py:" in text


def test_atomics_are_tensor_methods_and_store_through_their_pointer():
    @tritium.jit
    def method_kernel(x_ptr, y_ptr):
        (x_ptr + tl.arange(0, 16)).atomic_or(tl.load(y_ptr + tl.arange(0, 16)))

    k = tritium.compile(method_kernel, signature={"x_ptr": "*i32", "y_ptr": "*i32"}, target=FrontendOnly())
    assert "tile.atomic_rmw" in k.asm["tile-opt"]
    assert k.metadata["stored_args"] == [0]  # the atomic writes x: a read-only x is refused
    assert all(hasattr(tl.tensor, f"atomic_{op}") for op in ("add", "max", "min", "and", "or", "xor", "xchg", "cas"))


@tritium.jit
def load_then_atomic_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    before = tl.load(x_ptr + offs)
    tl.atomic_add(x_ptr + offs, 10)
    tl.store(out_ptr + offs, before * 2)


def test_a_load_before_an_atomic_reads_the_value_before_it(target):
    x, out = _dev(target, np.arange(32, dtype=np.int32), np.zeros(32, np.int32))
    load_then_atomic_kernel[(1,)](x, out, BLOCK=32)
    np.testing.assert_array_equal(target.driver.to_host(out), np.arange(32) * 2)
    np.testing.assert_array_equal(target.driver.to_host(x), np.arange(32) + 10)


@tritium.jit
def shifted_atomic_kernel(x_ptr, shift, BLOCK: tl.constexpr):
    tl.atomic_add(x_ptr + tl.arange(0, BLOCK) + shift, 1)


def test_an_atomic_out_of_bounds_is_reported_in_debug_mode(host_target):
    x = np.zeros(16, np.int32)
    view = x[:8]
    with pytest.raises(tritium.errors.OutOfBoundsError, match="x_ptr") as info:
        shifted_atomic_kernel[(1,)](view, 4, BLOCK=8, debug=True)
    assert "shifted_atomic_kernel" in str(info.value)
    assert not x[8:].any() and not x[:4].any()  # the lanes past the view were never written


@tritium.jit
def twice_kernel(x_ptr):
    tl.atomic_add(x_ptr, 1)  # unused results: not dead code
    tl.atomic_add(x_ptr, 1)  # the same op again: not merged with the first
    a = tl.atomic_xchg(x_ptr + 1, 5)
    b = tl.atomic_xchg(x_ptr + 1, 5)
    tl.store(x_ptr + 2, a * 10 + b)


def test_identical_atomics_all_happen(target):
    (x,) = _dev(target, np.zeros(3, np.int32))
    twice_kernel[(1,)](x)
    np.testing.assert_array_equal(target.driver.to_host(x), [2, 5, 5])


@tritium.jit
def long_critical_section_kernel(x_ptr, lock_ptr, reps, N: tl.constexpr):
    """Every program increments all of x ``reps`` times, non-atomically, under one lock: any two
    programs inside at once (on a target that runs programs in parallel) lose increments."""
    offs = tl.arange(0, N)
    while tl.atomic_cas(lock_ptr, 0, 1, sem="acquire") == 1:
        pass
    for _ in range(reps):
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
    tl.debug_barrier()
    tl.atomic_xchg(lock_ptr, 0, sem="release")


def test_a_lock_excludes_programs_running_in_parallel(target):
    programs, reps = 64, 40
    x, lock = _dev(target, np.zeros(1024, np.int32), np.zeros(1, np.int32))
    long_critical_section_kernel[(programs,)](x, lock, reps, N=1024)
    np.testing.assert_array_equal(target.driver.to_host(x), programs * reps)
    assert target.driver.to_host(lock)[0] == 0
