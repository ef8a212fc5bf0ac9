"""Conformance cases of tensor descriptors made in the kernel (``tl.make_tensor_descriptor``): copies
through ``desc.load``/``desc.store`` in 1 to 3 dimensions over ragged shapes (blocks hanging off the
tensor read the padding and write nothing), both padding options, ``tl.load_tensor_descriptor`` /
``tl.store_tensor_descriptor`` and ``desc.atomic_add``, over several dtypes. References in numpy."""

from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl

from .suite import Device, Output, cases


@triton.jit
def desc_copy2d_kernel(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr, ATOMIC: tl.constexpr):
    s = tl.make_tensor_descriptor(src, [M, N], [N, 1], [BM, BN])
    d = tl.make_tensor_descriptor(dst, [M, N], [N, 1], [BM, BN])
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    if ATOMIC:
        d.atomic_add([om, on], s.load([om, on]))
    else:
        d.store([om, on], s.load([om, on]))


@triton.jit
def desc_padded_kernel(src, out, M, N, OW, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr):
    """Each block as read (padding included) into a buffer of whole blocks, ``OW`` elements wide."""
    s = tl.make_tensor_descriptor(src, [M, N], [N, 1], [BM, BN], padding_option=PAD)
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    tile = tl.load_tensor_descriptor(s, [tl.program_id(0) * BM, tl.program_id(1) * BN])
    tl.store(out + rows[:, None] * OW + cols[None, :], tile)


@triton.jit
def desc_copy1d_kernel(src, dst, N, B: tl.constexpr):
    s = tl.make_tensor_descriptor(src, [N], [1], [B])
    d = tl.make_tensor_descriptor(dst, [N], [1], [B])
    tl.store_tensor_descriptor(d, [tl.program_id(0) * B], s.load([tl.program_id(0) * B]))


@triton.jit
def desc_copy3d_kernel(src, dst, A, M, N, BA: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    s = tl.make_tensor_descriptor(src, [A, M, N], [M * N, N, 1], [BA, BM, BN])
    d = tl.make_tensor_descriptor(dst, [A, M, N], [M * N, N, 1], [BA, BM, BN])
    at = [tl.program_id(2) * BA, tl.program_id(0) * BM, tl.program_id(1) * BN]
    d.store(at, s.load(at))


def _data(dtype: str, shape: tuple, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0, 100, shape).astype(dtype)


POISON = 77


#: name -> (dtype, M, N, BM, BN): ragged edges on both axes, and a tensor smaller than one block
COPIES2D = {"fp32-50x40": ("float32", 50, 40, 16, 32), "fp16-33x70": ("float16", 33, 70, 8, 64),
            "int32-7x5": ("int32", 7, 5, 8, 8), "uint8-20x50": ("uint8", 20, 50, 4, 16),
            "fp32-64x64": ("float32", 64, 64, 32, 32)}


@cases("tensordesc-copy2d-{name}", name=list(COPIES2D))
def copy2d(dev: Device, name: str) -> list[Output]:
    dtype, m, n, bm, bn = COPIES2D[name]
    src = _data(dtype, (m, n), 1)
    dst = dev.full((m, n), POISON, dtype)
    dev.launch(desc_copy2d_kernel, (triton.cdiv(m, bm), triton.cdiv(n, bn)), dev.to_device(src), dst, m, n,
               BM=bm, BN=bn, ATOMIC=False)
    return [Output("copy", dev.to_host(dst), src)]


@cases("tensordesc-atomic-add-{dtype}", dtype=["float32", "int32"])
def atomic_add(dev: Device, dtype: str) -> list[Output]:
    m, n = 30, 45
    src = _data(dtype, (m, n), 2)
    base = _data(dtype, (m, n), 3)
    dst = dev.to_device(base)
    dev.launch(desc_copy2d_kernel, (triton.cdiv(m, 16), triton.cdiv(n, 16)), dev.to_device(src), dst, m, n,
               BM=16, BN=16, ATOMIC=True)
    return [Output("sum", dev.to_host(dst), base + src)]


@cases("tensordesc-padding-{pad}-{dtype}", pad=["zero", "nan"], dtype=["float32", "float16"])
def padded(dev: Device, pad: str, dtype: str) -> list[Output]:
    m, n, bm, bn = 21, 37, 8, 16
    gm, gn = triton.cdiv(m, bm), triton.cdiv(n, bn)
    src = _data(dtype, (m, n), 4)
    want = np.full((gm * bm, gn * bn), 0 if pad == "zero" else np.nan, dtype)
    want[:m, :n] = src
    out = dev.full(want.shape, POISON, dtype)
    dev.launch(desc_padded_kernel, (gm, gn), dev.to_device(src), out, m, n, gn * bn, BM=bm, BN=bn, PAD=pad)
    return [Output("blocks", dev.to_host(out), want)]


@cases("tensordesc-copy1d-n{n}", n=[1, 100, 256])
def copy1d(dev: Device, n: int) -> list[Output]:
    src = _data("float32", (n,), 5)
    dst = dev.full((n,), POISON, np.float32)
    dev.launch(desc_copy1d_kernel, (triton.cdiv(n, 64),), dev.to_device(src), dst, n, B=64)
    return [Output("copy", dev.to_host(dst), src)]


@cases("tensordesc-copy3d-{dtype}", dtype=["float32", "int32"])
def copy3d(dev: Device, dtype: str) -> list[Output]:
    a, m, n, ba, bm, bn = 3, 10, 20, 2, 8, 16
    src = _data(dtype, (a, m, n), 6)
    dst = dev.full((a, m, n), POISON, dtype)
    dev.launch(desc_copy3d_kernel, (triton.cdiv(m, bm), triton.cdiv(n, bn), triton.cdiv(a, ba)),
               dev.to_device(src), dst, a, m, n, BA=ba, BM=bm, BN=bn)
    return [Output("copy", dev.to_host(dst), src)]


@triton.jit
def _block_sum(desc, om, on):
    return tl.sum(desc.load([om, on]), axis=1)


@triton.jit
def desc_rowsum_kernel(src, out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Row sums over a loop of blocks: the descriptor made once, read in the loop through a @jit call."""
    s = tl.make_tensor_descriptor(src, [M, N], [N, 1], [BM, BN])
    om = tl.program_id(0) * BM
    acc = tl.zeros((BM,), dtype=tl.float32)
    for on in range(0, N, BN):
        acc += _block_sum(s, om, on)
    rows = om + tl.arange(0, BM)
    tl.store(out + rows, acc, mask=rows < M)


@cases("tensordesc-loop-rowsum")
def loop_rowsum(dev: Device) -> list[Output]:
    m, n = 40, 300
    src = _data("float32", (m, n), 7)
    out = dev.full((m,), np.nan, np.float32)
    dev.launch(desc_rowsum_kernel, (triton.cdiv(m, 16),), dev.to_device(src), out, m, n, BM=16, BN=64)
    return [Output("sums", dev.to_host(out), src.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-4)]


@triton.jit
def desc_matmul_wt_kernel(a_ptr, w_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """``a @ w.T`` through descriptors made in the kernel (tutorial 09's style): w's blocks loaded
    ``[BN, BK]`` and transposed for the product; C stored through a descriptor."""
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK])
    w_desc = tl.make_tensor_descriptor(w_ptr, [N, K], [K, 1], [BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BM, BN])
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([om, k]), w_desc.load([on, k]).T, acc)
    c_desc.store([om, on], acc.to(c_desc.dtype))


@cases("tensordesc-matmul-wt-{dtype}", dtype=["float16", "float32"])
def matmul_wt(dev: Device, dtype: str) -> list[Output]:
    """On sizes the blocks do not divide (the padding is zero); rows 16-byte aligned, as Triton
    requires of a descriptor's strides. fp16 within its rounding, fp32 at tf32."""
    m, n, k, bm, bn, bk = 100, 136, 104, 64, 64, 32
    a, w = _data(dtype, (m, k), 8), _data(dtype, (n, k), 9)
    c = dev.full((m, n), POISON, dtype)
    dev.launch(desc_matmul_wt_kernel, (triton.cdiv(m, bm), triton.cdiv(n, bn)), dev.to_device(a), dev.to_device(w),
               c, m, n, k, BM=bm, BN=bn, BK=bk, num_stages=3)
    want = a.astype(np.float64) @ w.T.astype(np.float64)
    bound = float(np.max(np.abs(a.astype(np.float64)) @ np.abs(w.T.astype(np.float64))))
    # the fp32 sums' rounding, tf32's rounding of fp32 operands, fp16's of the result
    atol = ((k + 1) * 2.0**-24 + (2.0**-10 if dtype == "float32" else 0.0)) * bound
    if dtype == "float16":
        atol += 2.0**-10 * float(np.max(np.abs(want)))
    return [Output("c", dev.to_host(c), want, rtol=0.0, atol=atol)]
