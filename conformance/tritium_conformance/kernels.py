"""The kernels of the conformance suite, written as Triton kernels are (shared by every target)."""

import tritium as triton
import tritium.language as tl


# -- memory, grids, programs ---------------------------------------------------------------------
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    """``out = alpha * x + y`` with a scalar runtime argument."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


@triton.jit
def program_ids_kernel(ids_ptr, nprogs_ptr):
    """Each program writes its ids and the grid extents at its linear index."""
    p0, p1, p2 = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    n0, n1, n2 = tl.num_programs(0), tl.num_programs(1), tl.num_programs(2)
    lin = p0 + n0 * (p1 + n1 * p2)
    tl.store(ids_ptr + lin, p0 + 10 * p1 + 100 * p2)
    tl.store(nprogs_ptr + lin, n0 + 10 * n1 + 100 * n2)


@triton.jit
def tile2d_kernel(x_ptr, out_ptr, M, N, stride_x, stride_out, BM: tl.constexpr, BN: tl.constexpr):
    """2-D tiles on a 2-D grid: ``out[i, j] = 2 * x[i, j] + 1000 * tile_row + tile_col``."""
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_x + rn[None, :], mask=mask)
    tl.store(out_ptr + rm[:, None] * stride_out + rn[None, :], 2 * x + (1000 * pid_m + pid_n), mask=mask)


# -- the tutorials' kernels, with strides and several rows per program ----------------------------
@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols, BLOCK: tl.constexpr):
    """Row softmax; programs stride over the rows, so any grid size covers them all."""
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
        num = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def layernorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, x_stride, y_stride, N, eps,
                     BLOCK: tl.constexpr):
    """Layer norm of one row per program, in BLOCK-wide steps; stores mean and 1/std too."""
    row = tl.program_id(0)
    x_ptr += row * x_stride
    y_ptr += row * y_stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        d = tl.where(cols < N, x - mean, 0.0)
        acc += d * d
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        tl.store(y_ptr + cols, (x - mean) * rstd * w + b, mask=mask)


# -- elementwise ---------------------------------------------------------------------------------
@triton.jit
def binary_kernel(x_ptr, y_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    """``out = x OP y``; the result's type follows the language's promotion rules, the store
    converts it to ``out``'s element type."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1)
    y = tl.load(y_ptr + offs, mask=mask, other=1)  # masked lanes never divide by zero
    if OP == "add":
        z = x + y
    elif OP == "sub":
        z = x - y
    elif OP == "mul":
        z = x * y
    elif OP == "truediv":
        z = x / y
    elif OP == "floordiv":
        z = x // y
    elif OP == "mod":
        z = x % y
    elif OP == "maximum":
        z = tl.maximum(x, y)
    elif OP == "minimum":
        z = tl.minimum(x, y)
    elif OP == "and":
        z = x & y
    elif OP == "or":
        z = x | y
    elif OP == "xor":
        z = x ^ y
    elif OP == "shl":
        z = x << y
    elif OP == "shr":
        z = x >> y
    elif OP == "lt":
        z = x < y
    elif OP == "ne":
        z = x != y
    elif OP == "where":
        z = tl.where(x > y, x - y, y * 2)
    else:
        assert False, "unknown OP"
    tl.store(out_ptr + offs, z, mask=mask)


@triton.jit
def unary_kernel(x_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    """``out = OP(x)`` for math functions and operators with a literal operand."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1)
    if OP == "exp":
        z = tl.exp(x)
    elif OP == "exp_of_fp32":
        z = tl.exp(x.to(tl.float32))
    elif OP == "log":
        z = tl.log(x)
    elif OP == "sqrt":
        z = tl.sqrt(x)
    elif OP == "abs":
        z = tl.abs(x)
    elif OP == "neg":
        z = -x
    elif OP == "exp2":
        z = tl.exp2(x)
    elif OP == "log2":
        z = tl.log2(x)
    elif OP == "rsqrt":
        z = tl.rsqrt(x)
    elif OP == "sin":
        z = tl.sin(x)
    elif OP == "cos":
        z = tl.cos(x)
    elif OP == "floor":
        z = tl.floor(x)
    elif OP == "ceil":
        z = tl.ceil(x)
    elif OP == "mul_float_literal":
        z = x * 1.1
    elif OP == "add_int_literal":
        z = x + 3
    elif OP == "div_float_literal":
        z = x / 4.0  # exact in fp32 however division is done (GPUs divide to 2 ulp, as Triton does)
    else:
        assert False, "unknown OP"
    tl.store(out_ptr + offs, z, mask=mask)


@triton.jit
def cast_kernel(x_ptr, out_ptr, n, MID: tl.constexpr, OUT: tl.constexpr, BITCAST: tl.constexpr,
                BLOCK: tl.constexpr):
    """``out = x.to(MID, bitcast=BITCAST).to(OUT)``, OUT being ``out``'s element type."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x.to(MID, bitcast=BITCAST).to(OUT), mask=mask)


# -- reductions ----------------------------------------------------------------------------------
@triton.jit
def reduce_kernel(x_ptr, out_ptr, M, N, stride, OP: tl.constexpr, AXIS: tl.constexpr, OTHER: tl.constexpr,
                  BM: tl.constexpr, BN: tl.constexpr):
    """Reduce the M x N matrix (padded to a BM x BN tile with OTHER) along AXIS (0, 1, or None)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=mask, other=OTHER)
    if OP == "sum":
        r = tl.sum(x, axis=AXIS)
    elif OP == "max":
        r = tl.max(x, axis=AXIS)
    elif OP == "xor_sum":
        r = tl.xor_sum(x, axis=AXIS)
    else:
        r = tl.min(x, axis=AXIS)
    if AXIS == 0:
        tl.store(out_ptr + rn, r, mask=rn < N)
    elif AXIS == 1:
        tl.store(out_ptr + rm, r, mask=rm < M)
    else:
        tl.store(out_ptr, r)


# -- control flow and calls ----------------------------------------------------------------------
@triton.jit
def row_sum_loop_kernel(x_ptr, sums_ptr, steps_ptr, N, stride, BLOCK: tl.constexpr):
    """A for loop with runtime bounds carrying a block accumulator and a scalar counter."""
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    steps = 0
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0)
        steps += 1
    tl.store(sums_ptr + row, tl.sum(acc, axis=0))
    tl.store(steps_ptr + row, steps)


@triton.jit
def nested_loop_kernel(x_ptr, out_ptr, n, K, BLOCK: tl.constexpr, INNER_STEP: tl.constexpr):
    """Nested loops, the inner one starting at the outer index: ``sum_i sum_{j>=i} (x*i - j)``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(K):
        for j in range(i, K, INNER_STEP):
            acc += x * i - j
    tl.store(out_ptr + offs, acc, mask=mask)


@triton.jit
def collatz_kernel(x_ptr, steps_ptr, peak_ptr):
    """A while loop on a scalar condition, with an if/else on a scalar tensor inside."""
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid)
    steps = 0
    peak = x
    while x != 1:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        peak = tl.maximum(peak, x)
        steps += 1
    tl.store(steps_ptr + pid, steps)
    tl.store(peak_ptr + pid, peak)


@triton.jit
def scalar_if_kernel(v_ptr, out_ptr, BLOCK: tl.constexpr):
    """if/elif/else on a loaded scalar, producing blocks; then an if without else."""
    pid = tl.program_id(0)
    v = tl.load(v_ptr + pid)
    offs = tl.arange(0, BLOCK)
    if v > 0:
        r = offs * v
    elif v < 0:
        r = offs - v
    else:
        r = tl.full([BLOCK], -1, tl.int32)
    if pid % 2 == 1:
        r = r + 1000
    tl.store(out_ptr + pid * BLOCK + offs, r)


@triton.jit
def _square(x):
    return x * x


@triton.jit
def _hypot(x, y):
    return tl.sqrt(_square(x) + _square(y))


@triton.jit
def _min_max(a, b):
    return tl.minimum(a, b), tl.maximum(a, b)


@triton.jit
def jit_call_kernel(x_ptr, y_ptr, hyp_ptr, lo_ptr, hi_ptr, n, BLOCK: tl.constexpr):
    """Calls @jit helpers: nested (``_hypot`` calls ``_square``) and one returning a tuple."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    lo, hi = _min_max(x, y)
    tl.store(hyp_ptr + offs, _hypot(x, y), mask=mask)
    tl.store(lo_ptr + offs, lo, mask=mask)
    tl.store(hi_ptr + offs, hi, mask=mask)


# -- Triton's math functions (tl.math, standard.py) -----------------------------------------------
@triton.jit
def math_fn_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    """One of Triton's math functions, chosen by ``FN``, of up to three operands."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    z = tl.load(z_ptr + offs, mask=mask)
    if FN == "erf":
        r = tl.math.erf(x)
    elif FN == "sqrt_rn":
        r = tl.math.sqrt_rn(x)
    elif FN == "sigmoid":
        r = tl.sigmoid(x)
    elif FN == "div_rn":
        r = tl.math.div_rn(x, y)
    elif FN == "fdiv":
        r = tl.math.fdiv(x, y)
    elif FN == "fdiv_ieee":
        r = tl.math.fdiv(x, y, ieee_rounding=True)
    elif FN == "umulhi":
        r = tl.math.umulhi(x, y)
    elif FN == "fma":
        r = tl.math.fma(x, y, z)
    elif FN == "clamp":
        r = tl.clamp(x, y, z)
    elif FN == "clamp_nan":
        r = tl.clamp(x, y, z, propagate_nan=tl.PropagateNan.ALL)
    elif FN == "maximum_nan":
        r = tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)
    else:
        r = tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr + offs, r, mask=mask)


@triton.jit
def softmax_fn_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr, IEEE: tl.constexpr):
    """``tl.softmax`` of an M x N tile along ``DIM`` (keep_dims), or of row 0 with the defaults (DIM -1)."""
    if DIM == -1:
        offs = tl.arange(0, N)
        tl.store(out_ptr + offs, tl.softmax(tl.load(x_ptr + offs)))
    else:
        offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
        tl.store(out_ptr + offs, tl.softmax(tl.load(x_ptr + offs), DIM, keep_dims=True, ieee_rounding=IEEE))


# -- block-wide operations on a B x B block (their compile cost: benchmarks/compile.py and the
# -- IR-size tests of the GPU lowering) -----------------------------------------------------------
@triton.jit
def blockwide_kernel(x_ptr, i_ptr, o_ptr, B: tl.constexpr, OP: tl.constexpr):
    """One block-wide operation ``OP`` on a B x B block: gather along rows by indices, a histogram
    of the indices, a row sort or top 4, a reverse cumsum, a transpose, an interleave, a ravel."""
    offs = tl.arange(0, B)[:, None] * B + tl.arange(0, B)[None, :]
    x = tl.load(x_ptr + offs)
    if OP == "gather":
        tl.store(o_ptr + offs, tl.gather(x, tl.load(i_ptr + offs), 1))
    elif OP == "histogram":
        tl.store(i_ptr + tl.arange(0, 2), tl.histogram(tl.ravel(tl.load(i_ptr + offs)), 2))
    elif OP == "sort":
        tl.store(o_ptr + tl.arange(0, B), tl.min(tl.sort(x, 1), 1))
    elif OP == "topk":
        tl.store(o_ptr + tl.arange(0, B)[:, None] * 4 + tl.arange(0, 4)[None, :], tl.topk(x, 4))
    elif OP == "cumsum":
        tl.store(o_ptr + offs, tl.cumsum(x, 0, reverse=True))
    elif OP == "trans":
        tl.store(o_ptr + offs, tl.trans(x))
    elif OP == "interleave":
        tl.store(o_ptr + tl.arange(0, B)[:, None] * (2 * B) + tl.arange(0, 2 * B)[None, :], tl.interleave(x, x))
    elif OP == "ravel":
        tl.store(o_ptr + tl.arange(0, B * B), tl.ravel(tl.trans(x)))


@triton.jit
def number_shifted_kernel(x_ptr, out_ptr, NUMBER: tl.constexpr, BLOCK: tl.constexpr):
    """``NUMBER >> x`` and ``NUMBER << x``: the number takes the tensor's type (Triton's
    ``__rrshift__``), so an unsigned tensor shifts it logically."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, NUMBER >> x)
    tl.store(out_ptr + BLOCK + offs, NUMBER << x)
