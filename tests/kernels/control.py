"""Kernels whose control flow the interpreter runs as Python and the compiler must treat alike:
early returns, names typed differently by two branches, loop variables that change type."""

import tritium
import tritium.language as tl


@tritium.jit
def piecewise(x, lim):
    if lim < 0:
        return x * 0.0
    if lim > 10:
        return x * 0.0 - 1.0
    return x + 1.0


@tritium.jit
def split(x, lim):
    if lim < 0:
        return x, x * 2.0
    return x * 3.0, x * 4.0


@tritium.jit
def early_return_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr, SKIP: tl.constexpr):
    pid = tl.program_id(0)
    if SKIP:
        return
    if pid >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if pid == 0:
        if n > 2:
            tl.store(y_ptr + offs, x * 10.0)
            return
        x = x - 100.0
    tl.store(y_ptr + offs, piecewise(x, n - 3))
    a, b = split(x, pid - 1)
    tl.store(z_ptr + offs, a + b)


@tritium.jit
def scalar_or_tensor_same_type(x_ptr, out_ptr, n):
    v = tl.load(x_ptr)
    if n > 0:
        v = 0.5
    else:
        v = v * 2.0
    tl.store(out_ptr, v)


@tritium.jit
def scalar_or_block(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if n > 0:
        v = 0.0
    else:
        v = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, v)


@tritium.jit
def int_or_float(x_ptr, out_ptr, n):
    if n > 0:
        v = 1
    else:
        v = tl.load(x_ptr)
    tl.store(out_ptr, v)


@tritium.jit
def return_in_for(x_ptr, n):
    for i in range(n):
        tl.store(x_ptr + i, 1.0)
        return


@tritium.jit
def return_in_while(x_ptr, n):
    i = 0
    while i < n:
        if i == 2:
            return
        i += 1
    tl.store(x_ptr, 1.0)


@tritium.jit
def int_or_none(x, n):
    if n > 0:
        return x
    return 1


@tritium.jit
def mismatched_returns(x_ptr, n):
    tl.store(x_ptr, int_or_none(tl.load(x_ptr), n))


@tritium.jit
def loop_changes_type(x_ptr, n):
    acc = 0
    for i in range(n):
        acc = acc + 0.5
    tl.store(x_ptr, acc)


@tritium.jit
def loop_assigns_int_literal(x_ptr, n):
    acc = 0.0
    for i in range(n):
        acc = 1
    tl.store(x_ptr, acc)
