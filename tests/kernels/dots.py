"""Kernels of the ``tl.dot`` tests: one product of whole blocks, and the tutorial's blocked matmul."""

import tritium
import tritium.language as tl
from tritium_conformance.cases_dot import matmul_kernel  # noqa: F401  (Triton's tutorial 03, one copy)


@tritium.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
               IN: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr, OUT: tl.constexpr, LOOPS: tl.constexpr):
    """``out = a @ b (+ c)`` repeated ``LOOPS`` times into one accumulator; the operands are read as
    stored and converted to ``IN`` (when not None), the accumulator read from ``c``."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    if IN is not None:
        a, b = a.to(IN), b.to(IN)
    c_offs = rm[:, None] * N + rn[None, :]
    if ACC:
        acc = tl.load(c_ptr + c_offs)
        for _ in tl.static_range(LOOPS):
            acc = tl.dot(a, b, acc, input_precision=PREC, out_dtype=OUT)
    else:
        acc = tl.dot(a, b, input_precision=PREC, out_dtype=OUT)
    tl.store(out_ptr + c_offs, acc)


@tritium.jit
def typed_dot_kernel(a_ptr, b_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, CASE: tl.constexpr,
                     EXPECT: tl.constexpr):
    """``tl.dot`` of blocks read through the pointers' types, called as ``CASE`` says; the result's
    dtype must be ``EXPECT`` (checked at compile time)."""
    a = tl.load(a_ptr + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    b = tl.load(b_ptr + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    if CASE == "plain":
        c = tl.dot(a, b)
    elif CASE == "out_fp16":
        c = tl.dot(a, b, out_dtype=tl.float16)
    elif CASE == "out_bf16":
        c = tl.dot(a, b, out_dtype=tl.bfloat16)
    elif CASE == "out_fp64":
        c = tl.dot(a, b, out_dtype=tl.float64)
    elif CASE == "acc_fp32":
        c = tl.dot(a, b, tl.zeros((M, N), tl.float32))
    elif CASE == "acc_fp16":
        c = tl.dot(a, b, tl.zeros((M, N), tl.float16))
    elif CASE == "acc_int32":
        c = tl.dot(a, b, tl.zeros((M, N), tl.int32), out_dtype=tl.int32)
    elif CASE == "acc_shape":
        c = tl.dot(a, b, tl.zeros((M, 2 * N), tl.float32))
    elif CASE == "both_precisions":
        c = tl.dot(a, b, input_precision="ieee", allow_tf32=False)
    elif CASE == "bad_precision":
        c = tl.dot(a, b, input_precision="fp64")
    elif CASE == "allow_tf32":
        c = tl.dot(a, b, allow_tf32=True)
    elif CASE == "no_tf32":
        c = tl.dot(a, b, allow_tf32=False)
    elif CASE == "tf32x3":
        c = tl.dot(a, b, input_precision="TF32x3")
    elif CASE == "scalar":
        c = tl.dot(a, 2.0)
    elif CASE == "vector":
        c = tl.dot(tl.sum(a, axis=0), b)
    elif CASE == "batched":
        c = tl.dot(a[None, :, :], b[None, :, :])
        tl.static_assert(c.shape[0] == 1 and c.shape[1] == M and c.shape[2] == N)
    elif CASE == "batch_mismatch":
        c = tl.dot(a[None, :, :], tl.broadcast_to(b[None, :, :], (2, K, N)))
    elif CASE == "ranks":
        c = tl.dot(a[None, :, :], b)
    elif CASE == "trans":
        c = tl.dot(b, a)
    else:
        c = tl.dot(a, b.to(tl.float64))
    tl.static_assert(c.dtype == EXPECT, "unexpected result dtype")


@tritium.jit
def composed_kernel(a_ptr, b_ptr, out_ptr, sums_ptr, flag, M: tl.constexpr, K: tl.constexpr):
    """``(a @ b) @ b`` (a product of a product), chosen in a branch, then reduced along rows."""
    rm, rk = tl.arange(0, M), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * K + rk[None, :])
    ab = tl.dot(a, b, input_precision="ieee")
    if flag > 0:
        r = tl.dot(ab, b, input_precision="ieee")
    else:
        r = ab * 2.0
    tl.store(out_ptr + rm[:, None] * K + rk[None, :], r)
    tl.store(sums_ptr + rm, tl.sum(r, axis=1))


@tritium.jit
def carried_kernel(a_ptr, b_ptr, out_ptr, sums_ptr, n, M: tl.constexpr, K: tl.constexpr):
    """A loop carrying ``acc = a @ b + acc`` that also reads the old ``acc`` (so it cannot be updated
    in place), and a second loop whose accumulator only the product reads."""
    rm, rk = tl.arange(0, M), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * K + rk[None, :])
    acc = tl.zeros((M, K), tl.float32)
    olds = tl.zeros((M,), tl.float32)
    for _ in range(n):
        new = tl.dot(a, b, acc, input_precision="ieee")
        olds += tl.sum(acc, axis=1)
        acc = new
    other = tl.full((M, K), 1.0, tl.float32)
    for _ in range(n):
        other = tl.dot(a, b, other, input_precision="ieee")
    tl.store(out_ptr + rm[:, None] * K + rk[None, :], acc + other)
    tl.store(sums_ptr + rm, olds)


@tritium.jit
def batched_kernel(a_ptr, b_ptr, c_ptr, out_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr,
                   K: tl.constexpr, ACC: tl.constexpr):
    """``out[i] = a[i] @ b[i] (+ c[i])`` for each of B products, as one 3-D ``tl.dot``."""
    rb = tl.arange(0, B)[:, None, None]
    a = tl.load(a_ptr + rb * M * K + tl.arange(0, M)[None, :, None] * K + tl.arange(0, K)[None, None, :])
    b = tl.load(b_ptr + rb * K * N + tl.arange(0, K)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    c_offs = rb * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :]
    if ACC:
        r = tl.dot(a, b, tl.load(c_ptr + c_offs), input_precision="ieee", out_dtype=out_ptr.dtype.element_ty)
    else:
        r = tl.dot(a, b, input_precision="ieee", out_dtype=out_ptr.dtype.element_ty)
    tl.store(out_ptr + c_offs, r)


@tritium.jit
def attention_block_kernel(q_ptr, k_ptr, v_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, D: tl.constexpr):
    """One block of attention: ``softmax(q @ k^T) @ v``, the row max and sum taken on the product's
    layout and the probabilities fed to the second product."""
    rm, rn, rd = tl.arange(0, M), tl.arange(0, N), tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    k = tl.load(k_ptr + rn[:, None] * D + rd[None, :])
    v = tl.load(v_ptr + rn[:, None] * D + rd[None, :])
    s = tl.dot(q, tl.trans(k))
    p = tl.exp(s - tl.max(s, 1)[:, None])
    acc = tl.dot(p.to(tl.float16), v) / tl.sum(p, 1)[:, None]
    tl.store(out_ptr + rm[:, None] * D + rd[None, :], acc)
