"""Conformance cases of products chained and carried through loops, as attention and matmul kernels
write them: a FlashAttention-style forward (``q @ k^T``, an online softmax on its rows, the
probabilities in fp16 into ``p @ v``, the accumulator rescaled and carried through the loop), causal
and not, over head sizes, block shapes and warp counts; and a K loop carrying its accumulator
with every ``num_stages`` from 1 to 5.

References are float64. The attention tolerance covers the probabilities' rounding to fp16 (one
rounding of 2**-11 each, relative to the largest ``|v|``) and fp32 accumulation.
"""

from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl

from .cases_dot import EPS
from .suite import Device, Output, cases, rng_for


@triton.jit
def _attention_blocks(acc, l_i, m_i, q, K, V, base, offs_m, offs_n, offs_d, qk_scale, lo, hi,
                      HEAD: tl.constexpr, BN: tl.constexpr, MASK: tl.constexpr):
    """The online softmax over the key blocks ``lo`` to ``hi``, masked causally where ``MASK``."""
    for start_n in range(lo, hi, BN):
        k = tl.load(K + base + (start_n + offs_n)[None, :] * HEAD + offs_d[:, None])
        qk = tl.dot(q, k) * qk_scale
        if MASK:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * HEAD + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def attention_forward_kernel(Q, K, V, O, sm_scale, N_CTX, HEAD: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                             CAUSAL: tl.constexpr, SPLIT: tl.constexpr = False):
    """One loop over the key blocks (masked throughout where ``CAUSAL``), or, where ``SPLIT``, the
    causal loop as tutorial 06 splits it: the blocks left of the diagonal unmasked, then the
    diagonal's masked, ``q`` read by both loops' products."""
    start_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * N_CTX * HEAD
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, HEAD)
    q = tl.load(Q + base + offs_m[:, None] * HEAD + offs_d[None, :])
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, HEAD], tl.float32)
    qk_scale = sm_scale * 1.44269504
    if SPLIT:
        acc, l_i, m_i = _attention_blocks(acc, l_i, m_i, q, K, V, base, offs_m, offs_n, offs_d, qk_scale, 0,
                                          start_m * BM, HEAD, BN, False)
        acc, l_i, m_i = _attention_blocks(acc, l_i, m_i, q, K, V, base, offs_m, offs_n, offs_d, qk_scale,
                                          start_m * BM, (start_m + 1) * BM, HEAD, BN, True)
    else:
        end = (start_m + 1) * BM if CAUSAL else N_CTX
        acc, l_i, m_i = _attention_blocks(acc, l_i, m_i, q, K, V, base, offs_m, offs_n, offs_d, qk_scale, 0, end,
                                          HEAD, BN, CAUSAL)
    tl.store(O + base + offs_m[:, None] * HEAD + offs_d[None, :], acc / l_i[:, None])


#: head size, BM, BN, num_warps, sequence length
ATTENTION = {"d32-64x32-w4": (32, 64, 32, 4, 128), "d64-64x64-w4": (64, 64, 64, 4, 192),
             "d64-128x64-w8": (64, 128, 64, 8, 256), "d128-64x32-w4": (128, 64, 32, 4, 64)}


def _attention(dev: Device, name: str, config: tuple[int, ...], causal: bool, split: bool) -> list[Output]:
    head, bm, bn, warps, seq = config
    heads = 2
    rng = rng_for(name)
    q, k, v = (rng.standard_normal((heads, seq, head)).astype(np.float16) for _ in range(3))
    out = dev.full((heads, seq, head), np.nan, np.float32)
    scale = head ** -0.5
    dev.launch(attention_forward_kernel, (seq // bm, heads), dev.to_device(q), dev.to_device(k), dev.to_device(v), out,
               scale, seq, HEAD=head, BM=bm, BN=bn, CAUSAL=causal, SPLIT=split, num_warps=warps)
    s = np.einsum("hmd,hnd->hmn", q.astype(np.float64), k.astype(np.float64)) * scale
    if causal:
        s = np.where(np.tril(np.ones((seq, seq), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = p @ v.astype(np.float64) / p.sum(-1, keepdims=True)
    tol = 4 * EPS["fp16"] * float(np.abs(v).max())
    return [Output("out", dev.to_host(out), want, rtol=0.0, atol=tol)]


@cases("dot-attention-{config}-{mask}", config=ATTENTION, mask={"full": False, "causal": True})
def attention_forward(dev: Device, config: tuple[int, ...], mask: bool) -> list[Output]:
    return _attention(dev, f"dot-attention-{config}-{mask}", config, mask, False)


@cases("dot-attention-split-{config}", config={"d64-128x64-w8": ATTENTION["d64-128x64-w8"],
                                               "d32-64x32-w4": (32, 64, 32, 4, 192)})
def attention_split(dev: Device, config: tuple[int, ...]) -> list[Output]:
    return _attention(dev, f"dot-attention-split-{config}", config, True, True)


@triton.jit
def staged_matmul_kernel(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                         STAGES: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in tl.range(0, K, BK, num_stages=STAGES):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@cases("dot-loop-stages-{stages}", stages=[1, 2, 3, 4, 5])
def staged_loop(dev: Device, stages: int) -> list[Output]:
    """A K loop of fp16 products carrying an fp32 accumulator, pipelined ``num_stages`` deep where
    the target pipelines: the same answer whatever the depth."""
    bm, bn, bk, k = 64, 64, 32, 160
    rng = rng_for(f"dot-loop-stages-{stages}")
    a, b = rng.standard_normal((bm, k)).astype(np.float16), rng.standard_normal((k, bn)).astype(np.float16)
    c = dev.full((bm, bn), np.nan, np.float32)
    dev.launch(staged_matmul_kernel, (1,), dev.to_device(a), dev.to_device(b), c, k, BM=bm, BN=bn, BK=bk,
               STAGES=stages, num_warps=4)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    bound = float(np.max(np.abs(a64) @ np.abs(b64)))
    return [Output("c", dev.to_host(c), a64 @ b64, rtol=0.0, atol=(k + 1) * EPS["fp32"] * bound)]
