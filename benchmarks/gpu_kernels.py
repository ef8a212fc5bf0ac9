"""The kernels of ``gpu.py``, written once for both compilers (Triton's tutorials 01, 02, 03, 05 and
06's forward).

This file imports nothing: ``gpu.build_kernels`` executes it twice, once with ``triton`` bound to
Triton and once to tritium (``tl`` to the matching ``language``), so both compile the same source
text (both compilers read a kernel's source from its file). ``AUTOTUNE`` (also given) holds the
options both autotuners get: one shared timer and, in quick runs, a pruning of the config lists.
"""

# ``triton``, ``tl`` and ``AUTOTUNE`` are given by gpu.build_kernels
# ruff: noqa: F821


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    row = tl.load(input_ptr + row_idx * input_row_stride + col_offsets, mask=mask, other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    tl.store(output_ptr + row_idx * output_row_stride + col_offsets, numerator / denominator, mask=mask)


@triton.jit
def layer_norm_fwd_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


#: tutorial 03's CUDA configs for fp16 inputs (its list less the ones it marks as for fp8 inputs):
#: (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_stages, num_warps), GROUP_SIZE_M 8 in each
MATMUL_TUNING = [(128, 256, 64, 3, 8), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
                 (64, 128, 32, 4, 4), (128, 32, 32, 4, 4), (64, 32, 32, 5, 2), (32, 64, 32, 5, 2)]


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8},
                                        num_stages=stages, num_warps=warps)
                          for bm, bn, bk, stages, warps in MATMUL_TUNING],
                 key=["M", "N", "K"], **AUTOTUNE)
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


#: tutorial 06's forward, tuned over a few of its configs: (BLOCK_M, BLOCK_N, num_stages, num_warps)
ATTENTION_TUNING = [(128, 64, 3, 4), (128, 64, 3, 8), (128, 64, 4, 4), (128, 64, 4, 8), (64, 64, 3, 4)]


@triton.jit
def attention_blocks(acc, l_i, m_i, q, K, V, stride_n, start_m, qk_scale, offs_m, offs_n, offs_d, N_CTX,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    """The online softmax over one range of key blocks, as tutorial 06's inner loop (``key_range``,
    ``online_softmax``). The tutorial's ``tl.multiple_of`` on the loop variable is left out: the range's step already
    tells both compilers as much."""
    lo, hi = key_range(start_m, N_CTX, BLOCK_M, STAGE)
    kt_ptrs = K + (lo + offs_n)[None, :] * stride_n + offs_d[:, None]  # k transposed: [HEAD_DIM, BLOCK_N]
    v_ptrs = V + (lo + offs_n)[:, None] * stride_n + offs_d[None, :]
    for start_n in range(lo, hi, BLOCK_N):
        p, acc, l_i, m_i = online_softmax(tl.dot(q, tl.load(kt_ptrs)), acc, l_i, m_i, qk_scale, offs_m, offs_n,
                                          start_n, STAGE)
        acc = tl.dot(p, tl.load(v_ptrs), acc)
        kt_ptrs += BLOCK_N * stride_n
        v_ptrs += BLOCK_N * stride_n
    return acc, l_i, m_i


@triton.jit
def key_range(start_m, N_CTX, BLOCK_M: tl.constexpr, STAGE: tl.constexpr):
    """The keys one STAGE of tutorial 06's inner loop covers: 1 the blocks left of the diagonal,
    2 the diagonal's, 3 all (not causal)."""
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N_CTX
    return lo, hi


@triton.jit
def online_softmax(qk, acc, l_i, m_i, qk_scale, offs_m, offs_n, start_n, STAGE: tl.constexpr):
    """One block of scores ``qk`` into the online softmax (masked on the diagonal, STAGE 2): the
    probabilities in fp16 for the second product, the accumulator and row sums rescaled to the new
    row maxima, and those maxima."""
    if STAGE == 2:
        keep = offs_m[:, None] >= (start_n + offs_n[None, :])
        qk = qk * qk_scale + tl.where(keep, 0, -1.0e6)
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        qk -= m_new[:, None]
    else:
        m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_new[:, None]
    p = tl.math.exp2(qk)
    alpha = tl.math.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    return p.to(tl.float16), acc * alpha[:, None], l_i, m_new


@triton.autotune(configs=[triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_stages=stages, num_warps=warps)
                          for bm, bn, stages, warps in ATTENTION_TUNING],
                 key=["N_CTX", "HEAD_DIM"], **AUTOTUNE)
@triton.jit
def attention_fwd_kernel(Q, K, V, sm_scale, M, Out, stride_z, stride_h, stride_n, H, N_CTX,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    """Tutorial 06's forward on contiguous [Z, H, N_CTX, HEAD_DIM] fp16 q, k, v and out (N_CTX a
    multiple of BLOCK_M): STAGE 3 is causal (the blocks left of the diagonal, then the diagonal's),
    STAGE 1 not. M gets each row's log2-sum-exp2, which the backward pass would read."""
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    offset = (off_hz // H).to(tl.int64) * stride_z + (off_hz % H).to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # exp(x) = exp2(x / ln 2)
    q = tl.load(Q + offset + offs_m[:, None] * stride_n + offs_d[None, :])
    if STAGE & 1:
        acc, l_i, m_i = attention_blocks(acc, l_i, m_i, q, K + offset, V + offset, stride_n, start_m, qk_scale,
                                         offs_m, offs_n, offs_d, N_CTX, BLOCK_M, BLOCK_N, 4 - STAGE)
    if STAGE & 2:
        acc, l_i, m_i = attention_blocks(acc, l_i, m_i, q, K + offset, V + offset, stride_n, start_m, qk_scale,
                                         offs_m, offs_n, offs_d, N_CTX, BLOCK_M, BLOCK_N, 2)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    tl.store(Out + offset + offs_m[:, None] * stride_n + offs_d[None, :], acc.to(tl.float16))


def attention_tma_pre_hook(nargs):
    """The descriptors' blocks for the config being run (tutorial 06's ``_tma_pre_hook``)."""
    head, bm, bn = nargs["HEAD_DIM"], nargs["BLOCK_M"], nargs["BLOCK_N"]
    nargs["desc_q"].block_shape = [bm, head]
    nargs["desc_o"].block_shape = [bm, head]
    nargs["desc_k"].block_shape = [bn, head]
    nargs["desc_v"].block_shape = [bn, head]


@triton.jit
def attention_blocks_tma(acc, l_i, m_i, q, desc_k, desc_v, offset_y, start_m, qk_scale, offs_m, offs_n, N_CTX,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    """``attention_blocks`` with k and v read through host tensor descriptors (tutorial 06 on Hopper):
    k's block ``[BLOCK_N, HEAD_DIM]`` transposed for the first product."""
    lo, hi = key_range(start_m, N_CTX, BLOCK_M, STAGE)
    offset_kv = offset_y + lo
    for start_n in range(lo, hi, BLOCK_N):
        p, acc, l_i, m_i = online_softmax(tl.dot(q, desc_k.load([offset_kv, 0]).T), acc, l_i, m_i, qk_scale, offs_m,
                                          offs_n, start_n, STAGE)
        acc = tl.dot(p, desc_v.load([offset_kv, 0]), acc)
        offset_kv += BLOCK_N
    return acc, l_i, m_i


@triton.autotune(configs=[triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_stages=stages, num_warps=warps,
                                        pre_hook=attention_tma_pre_hook)
                          for bm, bn, stages, warps in ATTENTION_TUNING],
                 key=["N_CTX", "HEAD_DIM"], **AUTOTUNE)
@triton.jit
def attention_fwd_tma_kernel(sm_scale, M, desc_q, desc_k, desc_v, desc_o, N_CTX, HEAD_DIM: tl.constexpr,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    """Tutorial 06's forward through host tensor descriptors of q, k, v and out, each viewed as
    ``[batch * heads * N_CTX, HEAD_DIM]`` (rows of one head are ``off_hz * N_CTX`` on)."""
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    offset_y = off_hz * N_CTX
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = desc_q.load([offset_y + start_m * BLOCK_M, 0])
    if STAGE & 1:
        acc, l_i, m_i = attention_blocks_tma(acc, l_i, m_i, q, desc_k, desc_v, offset_y, start_m, qk_scale,
                                             offs_m, offs_n, N_CTX, BLOCK_M, BLOCK_N, 4 - STAGE)
    if STAGE & 2:
        acc, l_i, m_i = attention_blocks_tma(acc, l_i, m_i, q, desc_k, desc_v, offset_y, start_m, qk_scale,
                                             offs_m, offs_n, N_CTX, BLOCK_M, BLOCK_N, 2)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    desc_o.store([offset_y + start_m * BLOCK_M, 0], acc.to(tl.float16))
