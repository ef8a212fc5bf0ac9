"""Kernels for Triton's typing rules (defined in a module: @jit reads source files)."""

import tritium
import tritium.language as tl


@tritium.jit
def unary_kernel(x_ptr, out_ptr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if OP == "invert":
        tl.store(out_ptr + offs, ~x)
    elif OP == "neg":
        tl.store(out_ptr + offs, -x)
    elif OP == "max_plus":
        tl.store(out_ptr, tl.max(x, axis=0) + 250)
    elif OP == "min_minus":
        tl.store(out_ptr, tl.min(x, axis=0) - 1)
    else:
        tl.store(out_ptr, tl.sum(x, axis=0) - 500)


@tritium.jit
def binary_kernel(a_ptr, b_ptr, out_ptr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    if OP == "div":
        r = a / b
    elif OP == "mod":
        r = a % b
    elif OP == "floordiv":
        r = a // b
    elif OP == "and":
        r = a & b
    elif OP == "xor_float_literal":
        r = a ^ 1.5
    else:
        r = a + b
    tl.store(out_ptr + offs, r)


@tritium.jit
def bf16_plus_int_kernel(x_ptr, i_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs).to(tl.bfloat16)
    tl.store(out_ptr + offs, x + tl.load(i_ptr + offs))


@tritium.jit
def literal_kernel(x_ptr, out_ptr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if OP == "plus_1000":
        r = x + 1000
    elif OP == "plus_minus_1":
        r = x + -1
    elif OP == "plus_3e9":
        r = x + 3000000000
    else:
        r = x + 1
    tl.store(out_ptr + offs, r)


@tritium.jit
def unsigned_offsets_kernel(x_ptr, out_ptr, OFFSET_TYPE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if OFFSET_TYPE == "bool":
        src = x_ptr + (offs >= 4)
    else:
        src = x_ptr + offs.to(OFFSET_TYPE)
    tl.store(out_ptr + offs, tl.load(src))


@tritium.jit
def invert_bool_kernel(x_ptr, once_ptr, twice_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    c = tl.load(x_ptr + offs) == 1
    tl.static_assert((~c).dtype == tl.int1)
    tl.store(once_ptr + offs, (~c).to(tl.int32))
    tl.store(twice_ptr + offs, (~~c).to(tl.int32))


@tritium.jit
def shift_kernel(a_ptr, b_ptr, out_ptr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    if OP == "tensors":
        r = a >> b
    elif OP == "number_left":
        r = 200 >> b
    else:
        r = a >> 3
    tl.store(out_ptr + offs, r)



@tritium.jit
def minmax_number_kernel(x_ptr, out_ptr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if OP == "max_0_minus_1":
        r = tl.maximum(x, 0) - 1
    elif OP == "max_5_plus_250":
        r = tl.maximum(x, 5) + 250
    elif OP == "min_number_left":
        r = tl.minimum(300, x)
    elif OP == "max_float_plus_tiny":
        r = tl.maximum(x, 2.5) + 0.0001
    else:  # of bf16 values, in fp32
        y = x.to(tl.bfloat16)
        r = tl.maximum(y, y) + 0.0001
    tl.store(out_ptr + offs, r)


@tritium.jit
def sum_dtype_kernel(x_ptr, out_ptr, DTYPE: tl.constexpr, OP: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, N)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    if OP == "sum":
        tl.store(out_ptr, tl.sum(x, dtype=DTYPE))
    elif OP == "sum_rows":
        tl.store(out_ptr + tl.arange(0, N), tl.sum(x, axis=1, dtype=DTYPE))
    else:  # cumsum of the flattened block's first row
        tl.store(out_ptr + tl.arange(0, N), tl.cumsum(tl.sum(x, axis=0, dtype=DTYPE), axis=0, dtype=DTYPE))
