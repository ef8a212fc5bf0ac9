"""Kernels that call @jit helpers of every kind: arithmetic, tl.where, memory, constexprs, tuples,
nested helpers and helpers with control flow (defined in a module: @jit reads source files)."""

import tritium
import tritium.language as tl


@tritium.jit
def fma1(a, b):
    return a * b + 1.0


@tritium.jit
def relu(x):
    return tl.where(x > 0, x, 0.0)


@tritium.jit
def load_block(ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    return tl.load(ptr + offs)


@tritium.jit
def store_block(ptr, value, BLOCK: tl.constexpr):
    tl.store(ptr + tl.arange(0, BLOCK), value)


@tritium.jit
def scale_by(x, FACTOR: tl.constexpr):
    return x * FACTOR


@tritium.jit
def sum_and_max(x):
    return tl.sum(x, axis=0), tl.max(x, axis=0)


@tritium.jit
def relu_plus_one(x):
    return fma1(relu(x), 1.0)


@tritium.jit
def clamp_loop(x, n):
    acc = x
    for i in range(n):
        if i % 2 == 0:
            acc = acc + 1.0
        else:
            acc = acc * 2.0
    return tl.minimum(acc, 100.0)


@tritium.jit
def helpers_kernel(x_ptr, y_ptr, out_ptr, stats_ptr, n, BLOCK: tl.constexpr):
    x = load_block(x_ptr, BLOCK)
    y = load_block(y_ptr, BLOCK)
    total, biggest = sum_and_max(x)
    tl.store(stats_ptr, total)
    tl.store(stats_ptr + 1, biggest)
    r = fma1(x, y) + relu(y) + scale_by(x, 3) + relu_plus_one(x)
    for i in range(2):
        r = r + fma1(r, 0.5)
    if n > 3:
        r = clamp_loop(r, n)
    store_block(out_ptr, r, BLOCK)


@tritium.jit
def step(acc, i):
    if i % 3 == 0:
        return acc * 2
    return acc + i


@tritium.jit
def loop_calls_kernel(x_ptr, n_ptr, out_f_ptr, out_i_ptr, n):
    acc_f = tl.load(x_ptr)
    acc_i = tl.load(n_ptr)
    for i in range(n):
        acc_f = step(acc_f, i)
        acc_i = step(acc_i, i)
    tl.store(out_f_ptr, acc_f)
    tl.store(out_i_ptr, acc_i)


@tritium.jit
def hint_second(p, a, b):
    a = tl.multiple_of(a, 16)
    return p + a + b


@tritium.jit
def helper_hint_kernel(x_ptr, n, m):
    tl.store(hint_second(x_ptr, n, m) + tl.arange(0, 8), 1.0)
