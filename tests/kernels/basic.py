"""Kernels shared by the core tests (defined in a module: @jit reads source files)."""

import tritium
import tritium.language as tl


@tritium.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tritium.jit
def twice(x):
    return x * 2


@tritium.jit
def binop_kernel(a_ptr, b_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m)
    b = tl.load(b_ptr + offs, mask=m)
    if OP == "floordiv":
        r = a // b
    elif OP == "mod":
        r = a % b
    elif OP == "add":
        r = a + b
    elif OP == "truediv":
        r = a / b
    elif OP == "max":
        r = tl.maximum(a, b)
    else:
        r = tl.where(a < b, a, b)
    tl.store(out_ptr + offs, r, mask=m)


@tritium.jit
def loops_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Sums x in BLOCK chunks with a for loop (carried tensor), then counts halvings with a while
    loop and branches on a scalar with an if; calls another @jit function."""
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    total = tl.sum(acc, axis=0)
    steps = 0
    v = n
    while v > 1:
        v = v // 2
        steps += 1
    if total > 0:
        total = twice(total)
    else:
        total = -total
    tl.store(out_ptr, total)
    tl.store(out_ptr + 1, steps)


@tritium.jit
def grid3_kernel(out_ptr):
    x = tl.program_id(0)
    y = tl.program_id(1)
    z = tl.program_id(2)
    nx = tl.num_programs(0)
    ny = tl.num_programs(1)
    tl.store(out_ptr + (z * ny + y) * nx + x, x + 10 * y + 100 * z)


@tritium.jit
def reduce2d_kernel(x_ptr, out0_ptr, out1_ptr, M: tl.constexpr, N: tl.constexpr, KIND: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    if KIND == "sum":
        a0 = tl.sum(x, axis=0)
        a1 = tl.sum(x, axis=1)
    elif KIND == "max":
        a0 = tl.max(x, axis=0)
        a1 = tl.max(x, axis=1)
    else:
        a0 = tl.min(x, axis=0)
        a1 = tl.min(x, axis=1)
    tl.store(out0_ptr + cols, a0)
    tl.store(out1_ptr + rows, a1)


@tritium.jit
def range_kernel(out_ptr, lb, ub, step, CONST_STEP: tl.constexpr):
    """Stores each value a loop visits, then the count: runtime and constant steps of either sign."""
    count = 0
    if CONST_STEP == 0:
        for i in range(lb, ub, step):
            tl.store(out_ptr + 1 + count, i)
            count += 1
    else:
        for i in range(lb, ub, CONST_STEP):
            tl.store(out_ptr + 1 + count, i)
            count += 1
    tl.store(out_ptr, count)


@tritium.jit
def pointer_walk_kernel(src_ptr, dst_ptr, other_ptr, n, pick, BLOCK: tl.constexpr):
    """Stores through a loop-carried pointer and through a pointer chosen at run time."""
    offs = tl.arange(0, BLOCK)
    for _ in range(0, n, BLOCK):
        tl.store(dst_ptr + offs, tl.load(src_ptr + offs))
        src_ptr += BLOCK
        dst_ptr += BLOCK
    tl.store(tl.where(pick > 0, other_ptr, dst_ptr), 1.0)


@tritium.jit
def static_kernel(out_ptr, N: tl.constexpr):
    """static_range unrolls with Python ints; static_assert and hints are compile-time only."""
    tl.static_assert(N <= 8, "N too large")
    offs = tl.multiple_of(tl.arange(0, 8), 8)
    acc = tl.zeros((8,), dtype=tl.int32)
    for i in tl.static_range(N):
        acc += tl.where(offs == i, i * i, 0)
    for i in tl.static_range(1, N, step=2):  # Triton's step by name: odd lanes gain 100
        acc += tl.where(offs == i, 100, 0)
    tl.store(out_ptr + offs, acc)


@tritium.jit
def uses_missing_builtin(a_ptr):
    x = tl.load(a_ptr + tl.arange(0, 16))
    tl.store(a_ptr + tl.arange(0, 16), tl.a_builtin_not_there_yet(x))


@tritium.jit
def softmax1d(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """Row ``program_id`` of an ``n``-wide softmax (Triton's tutorial 02, a row in one block)."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * n + offs, mask=offs < n, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + tl.program_id(0) * n + offs, e / tl.sum(e, axis=0), mask=offs < n)
