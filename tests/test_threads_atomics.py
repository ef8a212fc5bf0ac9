"""Atomics in core's per-thread code generator, run by the SIMT emulator (``tritium_simt.emulator``) (one OS thread per GPU
thread) against numpy: each element is updated once however many threads hold it, and every
holder sees the old value."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.layout.scratch import scratch_bytes
from tritium.passes.axis_info import walk
from tritium.passes.shared_memory import allocate_shared

from .test_threads_codegen import tile_opt, with_layouts
from tritium_simt.emulator import run


@tritium.jit
def scalar_add_kernel(counter_ptr, out_ptr, N: tl.constexpr):
    old = tl.atomic_add(counter_ptr, 1)
    offs = tl.arange(0, N)
    tl.store(out_ptr + tl.program_id(0) * N + offs, old + offs * 0)


@tritium.jit
def rows_add_kernel(acc_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    old = tl.atomic_add(acc_ptr + r, r + 1)
    c = tl.arange(0, C)
    tl.store(out_ptr + tl.program_id(0) * R * C + r[:, None] * C + c[None, :], old[:, None] + c[None, :] * 0)


@tritium.jit
def tensor_kernel(x_ptr, v_ptr, out_ptr, n, N: tl.constexpr, OP: tl.constexpr):
    offs = tl.arange(0, N)
    mask = offs < n
    v = tl.load(v_ptr + tl.program_id(0) * N + offs)
    if OP == "max":
        old = tl.atomic_max(x_ptr + offs, v, mask=mask)
    elif OP == "min":
        old = tl.atomic_min(x_ptr + offs, v, mask=mask)
    else:
        old = tl.atomic_xchg(x_ptr + offs, v, mask=mask)
    tl.store(out_ptr + tl.program_id(0) * N + offs, old)


@tritium.jit
def lock_kernel(lock_ptr, count_ptr, x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    # the first holder of the lock sees count 0; the count is read by the exchange itself (reading it
    # with tl.load, as tutorial 05 does, races with thread 0's exchange in the program's other threads)
    if tl.atomic_xchg(count_ptr, 1) == 0:
        tl.store(x_ptr + offs, offs)
    else:
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
    tl.debug_barrier()
    tl.atomic_xchg(lock_ptr, 0)


@pytest.fixture(autouse=True)
def mlir_context():
    with tile.context():
        yield


def laid_out(kernel, signature, constants, num_warps=2, warp_size=8, **layout):
    """The kernel at tile-opt with layouts (``with_layouts``) and shared memory for every scratch user."""
    module = with_layouts(tile_opt(kernel, signature, constants), num_warps, warp_size, **layout)
    allocate_shared(module)
    return module


def test_scalar_atomic_is_done_once_per_program_and_every_thread_gets_the_old_value():
    module = laid_out(scalar_add_kernel, {"counter_ptr": "*i32", "out_ptr": "*i32"}, {"N": 32})
    counter = np.zeros(1, np.int32)
    out = np.full(4 * 32, -1, np.int32)
    run(module, (4,), [counter, out])
    assert counter[0] == 4  # not 4 * 16 threads
    # programs run one after the other in the emulator: program p saw p, in every element
    np.testing.assert_array_equal(out.reshape(4, 32), np.repeat(np.arange(4), 32).reshape(4, 32))


def test_replicated_slice_elements_are_updated_once_and_every_holder_sees_the_old_value():
    # r (length 4) is the slice along dim 1 of the 2-D layout: the threads along dim 1 hold copies
    module = laid_out(rows_add_kernel, {"acc_ptr": "*i32", "out_ptr": "*i32"}, {"R": 4, "C": 8},
                      vector=1, slices={4: 1, 8: 0})
    op = next(op for op in walk(module.operation) if op.name == "tile.atomic_rmw")
    assert scratch_bytes(op) == 4 * 4
    acc = np.zeros(4, np.int32)
    out = np.full(3 * 32, -1, np.int32)
    run(module, (3,), [acc, out])
    np.testing.assert_array_equal(acc, 3 * np.arange(1, 5))
    expected = np.arange(3)[:, None, None] * np.arange(1, 5)[None, :, None] + np.zeros((3, 4, 8), np.int32)
    np.testing.assert_array_equal(out.reshape(3, 4, 8), expected)


def test_blocked_copies_update_once():
    # 16 elements over 2 warps of 8 threads with 4 per thread: the two warps hold the same elements
    module = laid_out(tensor_kernel, {"x_ptr": "*i32", "v_ptr": "*i32", "out_ptr": "*i32", "n": "i32"},
                      {"N": 16, "OP": "xchg"}, vector=4)
    x = np.arange(16, dtype=np.int32)
    v = (100 + np.arange(2 * 16, dtype=np.int32))
    out = np.zeros(2 * 16, np.int32)
    run(module, (2,), [x, v, out, 12])
    np.testing.assert_array_equal(out[:12], np.arange(12))
    np.testing.assert_array_equal(out[16:28], v[:12])
    np.testing.assert_array_equal(out[12:16], 0)  # masked off: 0
    np.testing.assert_array_equal(x, np.concatenate([v[16:28], np.arange(12, 16)]))


@pytest.mark.parametrize("op", ["max", "min"])
def test_float_max_min_follow_tritons_order_of_signed_values(op):
    module = laid_out(tensor_kernel, {"x_ptr": "*fp32", "v_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                      {"N": 8, "OP": op})
    x = np.array([1.0, -1.0, -0.0, 0.0, -5.0, 3.0, -2.0, 7.0], np.float32)
    v = np.array([[2.0, -3.0, 0.0, -0.0, -4.0, -1.0, 5.0, 1.0],
                  [-2.0, 4.0, -1.0, 1.0, -6.0, 2.5, -7.0, 8.0]], np.float32)
    out = np.zeros(16, np.float32)
    expected = x.copy()
    olds = []
    for row in v:
        olds.append(expected.copy())
        expected = np.maximum(expected, row) if op == "max" else np.minimum(expected, row)
    run(module, (2,), [x, v, out, 8])
    np.testing.assert_array_equal(np.signbit(x), np.signbit(expected))
    np.testing.assert_array_equal(x, expected)
    np.testing.assert_array_equal(out.reshape(2, 8), np.stack(olds))


def test_lock_from_cas_and_xchg_serialises_programs():
    module = laid_out(lock_kernel, {"lock_ptr": "*i32", "count_ptr": "*i32", "x_ptr": "*i32"}, {"N": 16})
    lock, count, x = np.zeros(1, np.int32), np.zeros(1, np.int32), np.full(16, -7, np.int32)
    run(module, (5,), [lock, count, x])
    assert lock[0] == 0 and count[0] == 1
    np.testing.assert_array_equal(x, np.arange(16) + 4)


def test_unused_old_values_need_no_shared_memory():
    @tritium.jit
    def count_kernel(p):
        tl.atomic_add(p, 1)

    module = laid_out(count_kernel, {"p": "*i32"}, {})
    op = next(op for op in walk(module.operation) if op.name == "tile.atomic_rmw")
    assert scratch_bytes(op) == 0 and "tile.shared_offset" not in op.attributes
    p = np.zeros(1, np.int32)
    run(module, (3,), [p])
    assert p[0] == 3
    assert isinstance(op.results[0].type, ir.IntegerType)


@tritium.jit
def loop_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.int32)
    for i in range(n):
        acc += tl.atomic_add(x_ptr + offs, offs + i, mask=offs < BLOCK - 4)
        if i % 2 == 0:
            acc += tl.atomic_max(x_ptr + BLOCK, i)
    tl.store(out_ptr + offs, acc)


def test_atomics_in_loops_share_old_values_through_reused_scratch():
    module = laid_out(loop_kernel, {"x_ptr": "*i32", "out_ptr": "*i32", "n": "i32"}, {"BLOCK": 16})
    assert any(op.name == "tile.barrier" for op in walk(module.operation))  # scratch reuse across iterations
    x, out = np.zeros(17, np.int32), np.zeros(16, np.int32)
    run(module, (1,), [x, out, 5])
    j = np.arange(16)
    active = j < 12
    np.testing.assert_array_equal(x, np.append(np.where(active, 5 * j + 10, 0), 4))
    olds = sum(np.where(active, i * j + i * (i - 1) // 2, 0) for i in range(5))
    np.testing.assert_array_equal(out, olds + 0 + 0 + 2)  # atomic_max saw 0 at i = 0 and 2, 2 at i = 4
