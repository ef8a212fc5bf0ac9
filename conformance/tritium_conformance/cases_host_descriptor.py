"""Conformance cases of tensor descriptors made on the host (``tritium.tools.tensor_descriptor``):
copies through ``desc.load``/``desc.store`` of pitched tensors (rows padded to 16-byte strides, the
padding poisoned, so a write past the descriptor's shape fails) in 1 to 3 dimensions, NaN padding,
the descriptor's shape and strides read in the kernel, a descriptor carried through a loop and a
``@jit`` call, a matmul over descriptors with ``tl.dot``, atomics, and the row gathers and scatters
of ``desc.gather``/``desc.scatter`` with rows and columns outside the tensor. References in numpy."""

from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor

from .cases_dot import TF32
from .suite import Device, Output, cases

POISON = 77


def _data(dtype: str, shape: tuple, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0, 100, shape).astype(dtype)


def _pitched(dev: Device, data: np.ndarray, fill=POISON):
    """``data`` on the device in rows padded to a multiple of 16 bytes (the padding ``fill``), and
    the whole pitched host array: (device buffer, its strides in elements, host copy)."""
    item = data.dtype.itemsize
    pitch = -(-data.shape[-1] * item // 16) * 16 // item
    host = np.full(data.shape[:-1] + (pitch,), fill, data.dtype)
    host[..., :data.shape[-1]] = data
    strides = [s // item for s in host.strides]
    return dev.to_device(host), strides, host


@triton.jit
def host_copy_kernel(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    dst.store([om, on], src.load([om, on]))


#: name -> (dtype, M, N, BM, BN): ragged edges on both axes, and a tensor smaller than one block
COPIES = {"fp32-50x37": ("float32", 50, 37, 16, 32), "fp16-33x70": ("float16", 33, 70, 8, 64),
          "int32-7x5": ("int32", 7, 5, 8, 8), "uint8-20x50": ("uint8", 20, 50, 4, 16),
          "int16-19x24": ("int16", 19, 24, 16, 8)}


@cases("host-desc-copy2d-{name}", name=list(COPIES))
def copy2d(dev: Device, name: str) -> list[Output]:
    dtype, m, n, bm, bn = COPIES[name]
    src = _data(dtype, (m, n), 1)
    s, s_strides, _ = _pitched(dev, src)
    d, d_strides, want = _pitched(dev, np.full((m, n), POISON, dtype))
    want[:, :n] = src
    dev.launch(host_copy_kernel, (triton.cdiv(m, bm), triton.cdiv(n, bn)),
               TensorDescriptor(s, [m, n], s_strides, [bm, bn]), TensorDescriptor(d, [m, n], d_strides, [bm, bn]),
               BM=bm, BN=bn)
    return [Output("copy", dev.to_host(d), want)]


@triton.jit
def host_copy1d_kernel(src, dst, B: tl.constexpr):
    dst.store([tl.program_id(0) * B], src.load([tl.program_id(0) * B]) * 3)


@cases("host-desc-copy1d-n{n}", n=[1, 100, 256])
def copy1d(dev: Device, n: int) -> list[Output]:
    src = _data("float32", (n,), 2)
    want = np.full(-(-n // 64) * 64, POISON, np.float32)
    want[:n] = src * 3
    dst = dev.full(want.shape, POISON, np.float32)
    s = dev.to_device(src)
    dev.launch(host_copy1d_kernel, (triton.cdiv(n, 64),), TensorDescriptor(s, [n], [1], [64]),
               TensorDescriptor(dst, [n], [1], [64]), B=64)
    return [Output("copy", dev.to_host(dst), want)]


@triton.jit
def host_copy3d_kernel(src, dst, BA: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    at = [tl.program_id(2) * BA, tl.program_id(0) * BM, tl.program_id(1) * BN]
    dst.store(at, src.load(at))


@cases("host-desc-copy3d-{dtype}", dtype=["float32", "int8"])
def copy3d(dev: Device, dtype: str) -> list[Output]:
    a, m, n, ba, bm, bn = 3, 10, 20, 2, 8, 16
    src = _data(dtype, (a, m, n), 3)
    s, ss, _ = _pitched(dev, src)
    d, ds, want = _pitched(dev, np.full((a, m, n), POISON, dtype))
    want[..., :n] = src
    dev.launch(host_copy3d_kernel, (triton.cdiv(m, bm), triton.cdiv(n, bn), triton.cdiv(a, ba)),
               TensorDescriptor(s, [a, m, n], ss, [ba, bm, bn]), TensorDescriptor(d, [a, m, n], ds, [ba, bm, bn]),
               BA=ba, BM=bm, BN=bn)
    return [Output("copy", dev.to_host(d), want)]


@triton.jit
def host_padded_kernel(src, out, OW, BM: tl.constexpr, BN: tl.constexpr):
    """Each block as read (padding included) into a buffer of whole blocks, ``OW`` elements wide."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    tl.store(out + rows[:, None] * OW + cols[None, :], src.load([tl.program_id(0) * BM, tl.program_id(1) * BN]))


@cases("host-desc-padding-{pad}-{dtype}", pad=["zero", "nan"], dtype=["float32", "float16"])
def padded(dev: Device, pad: str, dtype: str) -> list[Output]:
    m, n, bm, bn = 21, 37, 8, 16
    gm, gn = triton.cdiv(m, bm), triton.cdiv(n, bn)
    src = _data(dtype, (m, n), 4)
    s, strides, _ = _pitched(dev, src, fill=1234)  # the pitch padding must never be read
    want = np.full((gm * bm, gn * bn), 0 if pad == "zero" else np.nan, dtype)
    want[:m, :n] = src
    out = dev.full(want.shape, POISON, dtype)
    dev.launch(host_padded_kernel, (gm, gn), TensorDescriptor(s, [m, n], strides, [bm, bn], padding=pad), out,
               gn * bn, BM=bm, BN=bn)
    return [Output("blocks", dev.to_host(out), want)]


@triton.jit
def host_geometry_kernel(desc, out):
    """The descriptor's shape and strides as the kernel sees them, and its block shape."""
    tl.store(out + 0, desc.shape[0])
    tl.store(out + 1, desc.shape[1])
    tl.store(out + 2, desc.strides[0])
    tl.store(out + 3, desc.strides[1])
    tl.store(out + 4, desc.block_shape[0] * 1000 + desc.block_shape[1])


@cases("host-desc-geometry")
def geometry(dev: Device) -> list[Output]:
    src = dev.full((40, 48), 0, np.float32)
    out = dev.full((5,), -1, np.int64)
    dev.launch(host_geometry_kernel, (1,), TensorDescriptor(src, [33, 45], [48, 1], [8, 32]), out)
    return [Output("geometry", dev.to_host(out), np.array([33, 45, 48, 1, 8032], np.int64))]


@triton.jit
def _block_sum(desc, om, on):
    return tl.sum(desc.load([om, on]).to(tl.float32), axis=1)


@triton.jit
def host_rowsum_kernel(src, out, BM: tl.constexpr, BN: tl.constexpr):
    """Row sums over a loop of blocks, the descriptor read through a @jit call in the loop."""
    om = tl.program_id(0) * BM
    acc = tl.zeros((BM,), dtype=tl.float32)
    for on in range(0, src.shape[1], BN):
        acc += _block_sum(src, om, on)
    rows = om + tl.arange(0, BM)
    tl.store(out + rows, acc, mask=rows < src.shape[0])


@cases("host-desc-loop-rowsum-{dtype}", dtype=["float32", "float16"])
def loop_rowsum(dev: Device, dtype: str) -> list[Output]:
    m, n = 40, 300
    src = _data(dtype, (m, n), 5)
    s, strides, _ = _pitched(dev, src)
    out = dev.full((m,), np.nan, np.float32)
    dev.launch(host_rowsum_kernel, (triton.cdiv(m, 16),), TensorDescriptor(s, [m, n], strides, [16, 64]), out,
               BM=16, BN=64)
    return [Output("sums", dev.to_host(out), src.astype(np.float64).sum(axis=1), rtol=1e-4, atol=1e-3)]


@triton.jit
def host_matmul_kernel(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Triton's descriptor matmul: C = A @ B over K in BK steps (tutorial 09's shape)."""
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([om, k]), b_desc.load([k, on]), acc)
    c_desc.store([om, on], acc.to(c_desc.dtype))


#: name -> (dtype, M, N, K, BM, BN, BK): small blocks, and blocks whose rows span several 128-byte
#: column blocks (on sm_90 each is one TMA box), on sizes no block divides (the copies zero-fill)
MATMULS = {"float16": ("float16", 70, 56, 100, 32, 32, 32), "float32": ("float32", 70, 56, 100, 32, 32, 32),
           "float16-wide": ("float16", 200, 300, 130, 64, 128, 64), "float32-wide": ("float32", 150, 90, 70, 64, 64, 64)}


def _matmul(dev: Device, kernel, a: np.ndarray, b: np.ndarray, b_is_w: bool, blocks: tuple[int, int, int],
            dtype: str) -> list[Output]:
    """``kernel`` over descriptors of ``a`` and ``b`` (``w`` of ``a @ w.T`` where ``b_is_w``), pitched,
    checked against float64; fp16 within its rounding, fp32 at tf32 (Triton's default precision)."""
    (m, k), n = a.shape, b.shape[0] if b_is_w else b.shape[1]
    bm, bn, bk = blocks
    ad, a_strides, _ = _pitched(dev, a)
    bd, b_strides, _ = _pitched(dev, b)
    cd, c_strides, _ = _pitched(dev, np.full((m, n), POISON, dtype))
    dev.launch(kernel, (triton.cdiv(m, bm), triton.cdiv(n, bn)), TensorDescriptor(ad, [m, k], a_strides, [bm, bk]),
               TensorDescriptor(bd, list(b.shape), b_strides, [bn, bk] if b_is_w else [bk, bn]),
               TensorDescriptor(cd, [m, n], c_strides, [bm, bn]), k, BM=bm, BN=bn, BK=bk)
    got = dev.to_host(cd)[:, :n]
    b64 = (b.T if b_is_w else b).astype(np.float64)
    want = a.astype(np.float64) @ b64
    if dtype == "float16":
        return [Output("c", got, want, rtol=1e-2, atol=5e-2)]
    bound = float(np.max(np.abs(a.astype(np.float64)) @ np.abs(b64)))
    return [Output("c", got, want, rtol=0.0, atol=((k + 1) * 2.0**-24 + TF32) * bound)]


@cases("host-desc-matmul-{name}", name=list(MATMULS))
def matmul(dev: Device, name: str) -> list[Output]:
    dtype, m, n, k, bm, bn, bk = MATMULS[name]
    return _matmul(dev, host_matmul_kernel, _data(dtype, (m, k), 6), _data(dtype, (k, n), 7), False, (bm, bn, bk),
                   dtype)


@triton.jit
def host_matmul_bt_kernel(a_desc, w_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ W^T with W stored [N, K]: its blocks, transposed, are the product's B."""
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([om, k]), w_desc.load([on, k]).T, acc)
    c_desc.store([om, on], acc.to(c_desc.dtype))


@cases("host-desc-matmul-wt-{dtype}", dtype=["float16", "float32"])
def matmul_wt(dev: Device, dtype: str) -> list[Output]:
    """``a @ w.T`` as linear layers store w, on sizes no block divides."""
    return _matmul(dev, host_matmul_bt_kernel, _data(dtype, (130, 90), 8), _data(dtype, (100, 90), 9), True,
                   (64, 64, 32), dtype)


@triton.jit
def host_atomic_kernel(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    dst.atomic_add([om, on], src.load([om, on]))
    dst.atomic_max([om, on], src.load([om, on]) * 2)


@cases("host-desc-atomics-int32")
def atomics(dev: Device) -> list[Output]:
    m, n = 30, 45
    src = _data("int32", (m, n), 8)
    base = _data("int32", (m, n), 9)
    s, ss, _ = _pitched(dev, src)
    d, ds, want = _pitched(dev, base)
    want[:, :n] = np.maximum(base + src, 2 * src)
    dev.launch(host_atomic_kernel, (triton.cdiv(m, 16), triton.cdiv(n, 16)), TensorDescriptor(s, [m, n], ss, [16, 16]),
               TensorDescriptor(d, [m, n], ds, [16, 16]), BM=16, BN=16)
    return [Output("result", dev.to_host(d), want)]


@triton.jit
def host_minmax_kernel(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    dst.atomic_max([om, on], src.load([om, on]))
    dst.atomic_min([om, on], src.load([om, on]) * 0.5)


def _float_order(x: np.ndarray) -> np.ndarray:
    """Triton's order of floats in atomic max/min: the bits as integers, negative values reversed."""
    bits = x.view(np.uint16).astype(np.int64)
    return np.where(bits & 0x8000, 0x7FFF - (bits & 0x7FFF), bits | 0x8000)


@cases("host-desc-atomics-minmax-float16")
def atomics_minmax(dev: Device) -> list[Output]:
    """A descriptor's max and min of 16-bit floats (a compare-and-swap loop on every target), with
    -0.0 against +0.0: the order of Triton's float atomics."""
    m, n = 30, 45
    src = _data("float16", (m, n), 10)
    base = _data("float16", (m, n), 11)
    src[0, :4], base[0, :4] = [0.0, -0.0, -0.0, 0.0], [-0.0, 0.0, -0.0, 0.0]
    s, ss, _ = _pitched(dev, src)
    d, ds, want = _pitched(dev, base)
    up = np.where(_float_order(src) > _float_order(base), src, base)
    half = (src * np.float16(0.5)).astype(np.float16)
    want[:, :n] = np.where(_float_order(half) < _float_order(up), half, up)
    dev.launch(host_minmax_kernel, (triton.cdiv(m, 16), triton.cdiv(n, 16)), TensorDescriptor(s, [m, n], ss, [16, 16]),
               TensorDescriptor(d, [m, n], ds, [16, 16]), BM=16, BN=16)
    got = dev.to_host(d)
    return [Output("result", got, want), Output("result bits", got.view(np.uint16), want.view(np.uint16))]


@triton.jit
def host_gather_kernel(src, dst, rows_ptr, out, col, R: tl.constexpr, C: tl.constexpr):
    """Gather rows ``rows`` of ``src`` from column ``col`` into ``out`` and scatter them, plus one,
    to the same places of ``dst``."""
    rows = tl.load(rows_ptr + tl.arange(0, R))
    v = src.gather(rows, col)
    tl.store(out + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :], v)
    dst.scatter(v + 1, rows, col)


#: name -> (dtype, columns per row C); rows outside the tensor (negative and past the end) read the
#: padding and write nothing, and the column window runs past the last column
GATHERS = {"fp32": ("float32", 16), "fp16": ("float16", 32), "int8": ("int8", 64)}


@cases("host-desc-gather-scatter-{name}", name=list(GATHERS))
def gather_scatter(dev: Device, name: str) -> list[Output]:
    dtype, c = GATHERS[name]
    m, n, col = 20, c + 20, 28
    rows = np.array([0, 3, 19, 25, -1, 7, 11, 2, 18, 5, 40, 9, 1, 13, 6, 4], np.int32)
    src = _data(dtype, (m, n), 10)
    s, ss, _ = _pitched(dev, src)
    d, ds, dst = _pitched(dev, np.zeros((m, n), dtype))
    out = dev.full((len(rows), c), POISON, dtype)
    gathered = np.zeros((len(rows), c), dtype)
    for i, r in enumerate(rows):
        cols = np.arange(col, col + c)
        inside = (cols < n) & (0 <= r < m)
        gathered[i, inside] = src[r, cols[inside]] if 0 <= r < m else 0
        if 0 <= r < m:
            dst[r, cols[inside]] = gathered[i, inside] + 1
    dev.launch(host_gather_kernel, (1,), TensorDescriptor(s, [m, n], ss, [1, c]),
               TensorDescriptor(d, [m, n], ds, [1, c]), dev.to_device(rows), out, col, R=len(rows), C=c)
    return [Output("gathered", dev.to_host(out), gathered), Output("scattered", dev.to_host(d), dst)]
