"""Kernels that read and write through block pointers (``tl.make_block_ptr``, ``tl.advance``)."""

import tritium
import tritium.language as tl


@tritium.jit
def padded_tile_kernel(x_ptr, y_ptr, M, N, sxm, sxn, off_m, off_n, BM: tl.constexpr, BN: tl.constexpr,
                       ORDER: tl.constexpr, CHECK: tl.constexpr, PAD: tl.constexpr):
    """Program (i, j) loads the [BM, BN] block of x at (off_m + i*BM, off_n + j*BN) with ``CHECK``
    and ``PAD`` and stores it, unchecked, as block (i, j) of the padded y (row-major)."""
    i = tl.program_id(0)
    j = tl.program_id(1)
    src = tl.make_block_ptr(x_ptr, shape=(M, N), strides=(sxm, sxn), offsets=(off_m + i * BM, off_n + j * BN),
                            block_shape=(BM, BN), order=ORDER)
    tile = tl.load(src, boundary_check=CHECK, padding_option=PAD)
    width = tl.num_programs(1) * BN
    dst = tl.make_block_ptr(y_ptr, shape=(tl.num_programs(0) * BM, width), strides=(width, 1),
                            offsets=(i * BM, j * BN), block_shape=(BM, BN), order=(1, 0))
    tl.store(dst, tile)


@tritium.jit
def checked_copy_kernel(x_ptr, y_ptr, M, N, sxm, sxn, sym, syn, BM: tl.constexpr, BN: tl.constexpr,
                        CHECK: tl.constexpr):
    """y[M, N] = x[M, N] + 1, one block per program, both through block pointers checked on ``CHECK``."""
    i = tl.program_id(0)
    j = tl.program_id(1)
    src = tl.make_block_ptr(x_ptr, (M, N), (sxm, sxn), (i * BM, j * BN), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(y_ptr, (M, N), (sym, syn), (i * BM, j * BN), (BM, BN), (1, 0))
    tl.store(dst, tl.load(src, boundary_check=CHECK) + 1, boundary_check=CHECK)


@tritium.jit
def row_sum_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, METHOD: tl.constexpr):
    """out[M] = x[M, N].sum(1): a K loop that advances the block pointer (tl.advance or the method)."""
    i = tl.program_id(0)
    p = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (i * BM, 0), (BM, BN), (1, 0))
    acc = tl.zeros((BM,), dtype=tl.float32)
    for _ in range(0, tl.cdiv(N, BN)):
        acc += tl.sum(tl.load(p, boundary_check=(0, 1), padding_option="zero"), axis=1)
        if METHOD:
            p = p.advance((0, BN))
        else:
            p = tl.advance(p, (0, BN))
    out = tl.make_block_ptr(out_ptr, (M,), (1,), (i * BM,), (BM,), (0,))
    tl.store(out, acc, boundary_check=(0,))


@tritium.jit
def block_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                        stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C = A @ B as Triton's block-pointer matmul tutorial writes it (fp32 accumulator)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_block_ptr = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                                    offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    b_block_ptr = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
                                    offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_block_ptr, boundary_check=(0, 1))
        b = tl.load(b_block_ptr, boundary_check=(0, 1))
        accumulator = tl.dot(a, b, accumulator)
        a_block_ptr = tl.advance(a_block_ptr, (0, BLOCK_K))
        b_block_ptr = tl.advance(b_block_ptr, (BLOCK_K, 0))
    c = accumulator.to(c_ptr.dtype.element_ty)
    c_block_ptr = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                                    offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N), block_shape=(BLOCK_M, BLOCK_N),
                                    order=(1, 0))
    tl.store(c_block_ptr, c, boundary_check=(0, 1))


@tritium.jit
def copy_1d_kernel(x_ptr, y_ptr, n, B: tl.constexpr):
    """y[:n] = 2 * x[:n] through 1-D block pointers."""
    i = tl.program_id(0)
    x = tl.load(tl.make_block_ptr(x_ptr, (n,), (1,), (i * B,), (B,), (0,)), boundary_check=(0,))
    tl.store(tl.make_block_ptr(y_ptr, (n,), (1,), (i * B,), (B,), (0,)), x * 2, boundary_check=0)


@tritium.jit
def copy_3d_kernel(x_ptr, y_ptr, D0, D1, D2, s0, s1, s2, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    """y = x for a [D0, D1, D2] tensor (x with strides s*, y contiguous), one 3-D block per program
    along D0, advancing over D1 and D2."""
    i = tl.program_id(0)
    src = tl.make_block_ptr(x_ptr, (D0, D1, D2), (s0, s1, s2), (i * B0, 0, 0), (B0, B1, B2), (2, 1, 0))
    dst = tl.make_block_ptr(y_ptr, (D0, D1, D2), (D1 * D2, D2, 1), (i * B0, 0, 0), (B0, B1, B2), (2, 1, 0))
    for _ in range(0, tl.cdiv(D1, B1)):
        for _ in range(0, tl.cdiv(D2, B2)):
            tl.store(dst, tl.load(src, boundary_check=(0, 1, 2)), boundary_check=(2, 0, 1))
            src = tl.advance(src, (0, 0, B2))
            dst = tl.advance(dst, (0, 0, B2))
        src = tl.advance(src, (0, B1, -tl.cdiv(D2, B2) * B2))
        dst = tl.advance(dst, (0, B1, -tl.cdiv(D2, B2) * B2))


@tritium.jit
def _load_block(p):
    return tl.load(p, boundary_check=(0,), padding_option="zero")


@tritium.jit
def _block_of(x_ptr, n, i, B: tl.constexpr):
    """A block pointer made in a helper and returned (on one of two paths: an early return)."""
    if n < 0:
        return tl.make_block_ptr(x_ptr, (0,), (1,), (0,), (B,), (0,))
    return tl.make_block_ptr(x_ptr, (n,), (1,), (i * B,), (B,), (0,))


@tritium.jit
def control_kernel(x_ptr, y_ptr, n, B: tl.constexpr):
    """Block pointers returned by a @jit helper, out of an ``if`` on a tensor, through a while loop
    and into a @jit helper: odd programs read the next block; y[i*B:(i+1)*B] = that block (zero
    past n)."""
    i = tl.program_id(0)
    p = _block_of(x_ptr, n, i, B)
    if i % 2 == 1:
        p = tl.advance(p, (B,))
    steps = 0
    while steps < 2:
        p = tl.advance(p, (B * (steps * 2 - 1),))  # -B, then +B: back where it was
        steps += 1
    tl.store(tl.make_block_ptr(y_ptr, (n + 2 * B,), (1,), (i * B,), (B,), (0,)), _load_block(p))


@tritium.jit
def _either(x_ptr, flag):
    if flag > 0:
        return tl.make_block_ptr(x_ptr, (16,), (1,), (0,), (16,), (0,))
    return tl.make_block_ptr(x_ptr, (16,), (1,), (0,), (8,), (0,))


@tritium.jit
def refused_kernel(x_ptr, y_ptr, CASE: tl.constexpr):
    """One misuse of block pointers per ``CASE``, each of which Triton refuses too."""
    p = tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0))
    if CASE == "mask":
        tl.load(p, mask=tl.full((16, 16), 1, tl.int1))
    elif CASE == "other":
        tl.load(p, other=0.0)
    elif CASE == "store_mask":
        tl.store(p, tl.zeros((16, 16), tl.float32), mask=tl.full((16, 16), 1, tl.int1))
    elif CASE == "nan_int":
        q = tl.make_block_ptr(y_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0))
        tl.load(q, boundary_check=(0,), padding_option="nan")
    elif CASE == "bad_padding":
        tl.load(p, boundary_check=(0,), padding_option="one")
    elif CASE == "duplicate":
        tl.load(p, boundary_check=(0, 0))
    elif CASE == "out_of_range":
        tl.load(p, boundary_check=(2,))
    elif CASE == "store_out_of_range":
        tl.store(p, tl.zeros((16, 16), tl.float32), boundary_check=(0, -1))
    elif CASE == "not_pow2":
        tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (16, 12), (1, 0))
    elif CASE == "rank":
        tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0,), (16, 16), (1, 0))
    elif CASE == "order":
        tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (1, 1))
    elif CASE == "advance_rank":
        p = tl.advance(p, (16,))
    elif CASE == "offsets_i64":
        tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, tl.program_id(0).to(tl.int64)), (16, 16), (1, 0))
    elif CASE == "block_base":
        tl.make_block_ptr(x_ptr + tl.arange(0, 16), (16,), (1,), (0,), (16,), (0,))
    elif CASE == "value_shape":
        tl.store(p, tl.zeros((16, 8), tl.float32))
    elif CASE == "value_dtype":
        tl.store(p, tl.zeros((16, 16), tl.float16))
    elif CASE == "tensor_boundary_check":
        tl.load(x_ptr + tl.arange(0, 16), boundary_check=(0,))
    elif CASE == "tensor_padding":
        tl.load(x_ptr + tl.arange(0, 16), padding_option="zero")
    elif CASE == "tensor_store_boundary_check":
        tl.store(x_ptr + tl.arange(0, 16), 1.0, boundary_check=(0,))
    elif CASE == "advance_tensor":
        q = tl.advance(x_ptr, (16,))  # noqa: F841
    elif CASE == "return_types":
        _either(x_ptr, tl.program_id(0))
    elif CASE == "if_types":
        if tl.program_id(0) > 0:
            p = tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (0, 1))
        tl.load(p)
    elif CASE == "loop_type":
        for _ in range(2):
            p = tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (8, 16), (1, 0))
