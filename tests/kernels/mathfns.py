"""Kernels of the math tests: Triton's math functions selected by a constexpr name."""

import tritium
import tritium.language as tl


@tritium.jit
def math_fn(x, y, z, FN: tl.constexpr):
    """The math function named ``FN`` of up to three operands."""
    if FN == "erf":
        r = tl.erf(x)
    elif FN == "math.erf":
        r = tl.math.erf(x)
    elif FN == "sqrt_rn":
        r = tl.sqrt_rn(x)
    elif FN == "div_rn":
        r = tl.div_rn(x, y)
    elif FN == "fdiv":
        r = tl.fdiv(x, y)
    elif FN == "fdiv_ieee":
        r = tl.math.fdiv(x, y, ieee_rounding=True)
    elif FN == "fma":
        r = tl.fma(x, y, z)
    elif FN == "umulhi":
        r = tl.umulhi(x, y)
    elif FN == "sigmoid":
        r = tl.sigmoid(x)
    elif FN == "clamp":
        r = tl.clamp(x, y, z)
    elif FN == "clamp_nan":
        r = tl.clamp(x, y, z, propagate_nan=tl.PropagateNan.ALL)
    elif FN == "maximum_nan":
        r = tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)
    elif FN == "minimum_nan":
        r = tl.minimum(x, y, tl.PropagateNan.ALL)
    elif FN == "clamp_bad_nan":
        r = tl.clamp(x, y, z, propagate_nan=3)
    elif FN == "softmax":
        r = tl.softmax(x)
    elif FN == "exp":
        r = tl.exp(x)
    elif FN == "exp2":
        r = tl.exp2(x)
    elif FN == "log":
        r = tl.log(x)
    elif FN == "log2":
        r = tl.log2(x)
    elif FN == "sin":
        r = tl.sin(x)
    elif FN == "cos":
        r = tl.cos(x)
    elif FN == "sqrt":
        r = tl.sqrt(x)
    elif FN == "rsqrt":
        r = tl.math.rsqrt(x)
    elif FN == "floor":
        r = x.floor()
    elif FN == "ceil":
        r = tl.ceil(x)
    else:
        tl.static_assert(False, "unknown FN")
    return r


@tritium.jit
def math_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1)
    y = tl.load(y_ptr + offs, mask=m, other=1)
    z = tl.load(z_ptr + offs, mask=m, other=1)
    r = math_fn(x, y, z, FN)
    tl.store(out_ptr + offs, r, mask=m)


@tritium.jit
def softmax_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr, KEEP: tl.constexpr,
                   IEEE: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    if DIM == -1:
        r = tl.softmax(x, ieee_rounding=IEEE)
    else:
        r = tl.softmax(x, DIM, keep_dims=KEEP, ieee_rounding=IEEE)
    tl.store(out_ptr + offs, r)


@tritium.jit
def softmax_row_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.softmax(tl.load(x_ptr + offs)))


@tritium.jit
def typed_kernel(x_ptr, y_ptr, FN: tl.constexpr, EXPECT: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    y = tl.load(y_ptr + tl.arange(0, 4))
    r = math_fn(x, y, y, FN)
    tl.static_assert(r.dtype == EXPECT)


@tritium.jit
def xor_sum_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr):
    """``tl.xor_sum`` of an MxN tile along AXIS (-1: every axis), and zeros_like beside it."""
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    if AXIS == 0:
        tl.store(out_ptr + tl.arange(0, N), tl.xor_sum(x, axis=0) + tl.zeros_like(tl.xor_sum(x, axis=0)))
    elif AXIS == 1:
        tl.store(out_ptr + tl.arange(0, M), tl.xor_sum(x, axis=1))
    else:
        tl.store(out_ptr, tl.xor_sum(x))


@tritium.jit
def barrier_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    """Stores, a barrier, then reads back what the program stored (reversed): ordered by the barrier."""
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)
    tl.debug_barrier()
    tl.store(out_ptr + BLOCK + offs, tl.load(out_ptr + (BLOCK - 1 - offs)))


@tritium.jit
def swizzle_kernel(out_i_ptr, out_j_ptr, SIZE_I: tl.constexpr, SIZE_J: tl.constexpr, SIZE_G: tl.constexpr):
    """``tl.swizzle2d`` of every (i, j) of the grid (tensors), and of program ids (scalars)."""
    i = tl.arange(0, SIZE_I)[:, None] + tl.zeros([SIZE_I, SIZE_J], tl.int32)
    j = tl.arange(0, SIZE_J)[None, :] + tl.zeros([SIZE_I, SIZE_J], tl.int32)
    new_i, new_j = tl.swizzle2d(i, j, SIZE_I, SIZE_J, SIZE_G)
    offs = tl.arange(0, SIZE_I)[:, None] * SIZE_J + tl.arange(0, SIZE_J)[None, :]
    tl.store(out_i_ptr + offs, new_i)
    tl.store(out_j_ptr + offs, new_j)


@tritium.jit
def _product(a, b):
    return a * b


@tritium.jit
def _larger_magnitude(a, b):
    return tl.where(tl.abs(a) > tl.abs(b), a, b)


@tritium.jit
def user_reduce_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, FN: tl.constexpr):
    """``tl.reduce`` with a user's @jit combine function along AXIS (-1: every axis)."""
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    combine = _product if FN == "product" else _larger_magnitude
    if AXIS == 0:
        tl.store(out_ptr + tl.arange(0, N), tl.reduce(x, 0, combine))
    elif AXIS == 1:
        tl.store(out_ptr + tl.arange(0, M), tl.reduce(x, 1, combine))
    else:
        tl.store(out_ptr, tl.reduce(x, None, combine))


@tritium.jit
def bad_reduce_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr, CASE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    if CASE == "builtin":
        r = tl.reduce(x, 0, tl.maximum)
    else:
        r, s = tl.reduce((x, x), 0, _product)
    tl.store(out_ptr, r)


@tritium.jit
def member_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    """Builtins called as tensor methods, beside the same builtins called as functions."""
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    a = x.sum(axis=1) + x.max(axis=1) * 2 + x.exp().min(1) + x.abs().sqrt().sum(1) + x.sigmoid().sum(1)
    b = tl.sum(x, axis=1) + tl.max(x, axis=1) * 2 + tl.min(tl.exp(x), 1) + tl.sum(tl.sqrt(tl.abs(x)), 1) \
        + tl.sum(tl.sigmoid(x), 1)
    tl.store(out_ptr + tl.arange(0, M), a)
    tl.store(out_ptr + M + tl.arange(0, M), b)
