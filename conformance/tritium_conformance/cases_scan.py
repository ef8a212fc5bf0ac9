"""Conformance cases of scans (``tl.cumsum``, ``tl.cumprod``, ``tl.associative_scan``, forward and
reverse), ``tl.argmax`` / ``tl.argmin`` (``tl.max`` / ``tl.min`` with ``return_indices``) and
``tl.reduce`` of several tensors, with their kernels. References are numpy: exact integers
(wrapped to the type's width), float64 for floating point."""

from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl

from .cases import NP, wrap
from .suite import Device, Output, cases, rng_for

# -- kernels ---------------------------------------------------------------------------------------


@triton.jit
def scan_tile_kernel(x_ptr, out_ptr, M, N, stride, OP: tl.constexpr, AXIS: tl.constexpr, REVERSE: tl.constexpr,
                     OTHER: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """Scan the M x N matrix (padded to a BM x BN tile with OTHER, the identity) along AXIS."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=mask, other=OTHER)
    if OP == "cumsum":
        y = tl.cumsum(x, AXIS, reverse=REVERSE)
    else:
        y = tl.cumprod(x, AXIS, reverse=REVERSE)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], y, mask=mask)


@triton.jit
def scan_blocks_kernel(x_ptr, out_ptr, n, REVERSE: tl.constexpr, BLOCK: tl.constexpr):
    """Each program scans its block of a ragged vector (the tensor method)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + offs, x.cumsum(0, reverse=REVERSE), mask=offs < n)


@triton.jit
def _affine(a1, b1, a2, b2):
    """x -> a1*x + b1, then x -> a2*x + b2: associative, not commutative."""
    return a1 * a2, b1 * a2 + b2


@triton.jit
def affine_scan_kernel(a_ptr, b_ptr, oa_ptr, ob_ptr, AXIS: tl.constexpr, REVERSE: tl.constexpr,
                       BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    a, b = tl.associative_scan((tl.load(a_ptr + offs), tl.load(b_ptr + offs)), AXIS, _affine, reverse=REVERSE)
    tl.store(oa_ptr + offs, a)
    tl.store(ob_ptr + offs, b)


@triton.jit
def arg_tile_kernel(x_ptr, v_ptr, i_ptr, M, N, stride, KIND: tl.constexpr, AXIS: tl.constexpr,
                    KEEP: tl.constexpr, OTHER: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """The extremum of the M x N matrix (padded with OTHER, which never wins) and its index, along
    AXIS (0, 1 or None: the row-major index in the BM x BN tile)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N),
                other=OTHER)
    if KEEP:
        if KIND == "max":
            v = tl.max(x, AXIS, return_indices=True, keep_dims=True)[0]
            i = tl.argmax(x, AXIS, keep_dims=True)
        else:
            v = tl.min(x, AXIS, return_indices=True, keep_dims=True)[0]
            i = x.argmin(AXIS, keep_dims=True)
        if AXIS == 0:
            tl.store(v_ptr + rn[None, :], v, mask=rn[None, :] < N)
            tl.store(i_ptr + rn[None, :], i, mask=rn[None, :] < N)
        elif AXIS == 1:
            tl.store(v_ptr + rm[:, None], v, mask=rm[:, None] < M)
            tl.store(i_ptr + rm[:, None], i, mask=rm[:, None] < M)
        else:
            tl.store(v_ptr + tl.zeros((1, 1), tl.int32), v)
            tl.store(i_ptr + tl.zeros((1, 1), tl.int32), i)
    else:
        if KIND == "max":
            v, i = tl.max(x, AXIS, return_indices=True)
        else:
            v, i = x.min(AXIS, return_indices=True)
        if AXIS == 0:
            tl.store(v_ptr + rn, v, mask=rn < N)
            tl.store(i_ptr + rn, i, mask=rn < N)
        elif AXIS == 1:
            tl.store(v_ptr + rm, v, mask=rm < M)
            tl.store(i_ptr + rm, i, mask=rm < M)
        else:
            tl.store(v_ptr, v)
            tl.store(i_ptr, i)


@triton.jit
def running_kernel(x_ptr, sum_ptr, arg_ptr, n, BLOCK: tl.constexpr):
    """One program walks a long vector in blocks: a cumsum carried from block to block, and the
    running argmax of the blocks' ``tl.max(..., return_indices=True)``."""
    carry = tl.zeros((1,), tl.float32)
    best = tl.full((1,), -float("inf"), tl.float32)
    best_i = tl.zeros((1,), tl.int32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(sum_ptr + offs, tl.cumsum(x, 0) + tl.sum(carry, 0), mask=offs < n)
        carry = carry + tl.sum(x, 0)
        v, i = tl.max(tl.where(offs < n, x, -float("inf")), 0, return_indices=True)
        better = v > best
        best_i = tl.where(better, i + start, best_i)
        best = tl.where(better, v, best)
    tl.store(arg_ptr + tl.arange(0, 1), best_i)


@triton.jit
def reduce_or_kernel(x_ptr, out_ptr, AXIS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    r = tl.load(x_ptr + rm[:, None] * BN + rn[None, :]).reduce_or(AXIS)
    if AXIS == 0:
        tl.store(out_ptr + rn, r)
    elif AXIS == 1:
        tl.store(out_ptr + rm, r)
    else:
        tl.store(out_ptr, r)


@triton.jit
def _sum_prod_min(a, b, c, d, e, f):
    return a + d, b * e, tl.minimum(c, f)


@triton.jit
def reduce_tuple_kernel(x_ptr, y_ptr, z_ptr, o1_ptr, o2_ptr, o3_ptr, AXIS: tl.constexpr, BM: tl.constexpr,
                        BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    offs = rm[:, None] * BN + rn[None, :]
    s, p, m = tl.reduce((tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(z_ptr + offs)), AXIS, _sum_prod_min)
    if AXIS == 0:
        tl.store(o1_ptr + rn, s)
        tl.store(o2_ptr + rn, p)
        tl.store(o3_ptr + rn, m)
    elif AXIS == 1:
        tl.store(o1_ptr + rm, s)
        tl.store(o2_ptr + rm, p)
        tl.store(o3_ptr + rm, m)
    else:
        tl.store(o1_ptr, s)
        tl.store(o2_ptr, p)
        tl.store(o3_ptr, m)


# -- scans -----------------------------------------------------------------------------------------
SCAN_SHAPES = {"13x6": (13, 6, 16, 8), "5x100": (5, 100, 8, 128)}
SCAN_OUT = {("cumsum", "int8"): "int32", ("cumsum", "uint8"): "uint32"}


def _scan_ref(fn, x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    src = np.flip(x, axis) if reverse else x
    return np.flip(fn(src, axis=axis), axis) if reverse else fn(src, axis=axis)


@cases("scan-{op}-{direction}-axis{axis}-{dtype}-{shape}", op=["cumsum", "cumprod"],
       direction={"fwd": False, "rev": True}, axis=[0, 1], dtype=["fp32", "int32"], shape=SCAN_SHAPES)
def scan_tile(dev: Device, op: str, direction: bool, axis: int, dtype: str, shape: tuple) -> list[Output]:
    """A masked tile scanned along one axis (masked elements load the identity, so they change nothing)."""
    return _scan_tile(dev, op, direction, axis, dtype, shape)


@cases("scan-cumsum-{direction}-axis{axis}-{dtype}-widens", direction={"fwd": False, "rev": True}, axis=[0, 1],
       dtype=["int8", "uint8"])
def scan_widens(dev: Device, direction: bool, axis: int, dtype: str) -> list[Output]:
    """cumsum of 8-bit integers runs (and returns) 32-bit, as Triton's sum: no wrap at 8 bits."""
    return _scan_tile(dev, "cumsum", direction, axis, dtype, (13, 6, 16, 8))


def _scan_tile(dev: Device, op: str, reverse: bool, axis: int, dtype: str, shape: tuple) -> list[Output]:
    M, N, BM, BN = shape
    stride = N + 3
    rng = rng_for(f"scan-{op}-{reverse}-{axis}-{dtype}-{M}x{N}")
    if op == "cumprod":
        x = (1 + 0.05 * rng.standard_normal((M, stride))).astype(NP[dtype]) if dtype == "fp32" else \
            rng.choice([-1, 1, 2, 3], (M, stride)).astype(NP[dtype])
    elif dtype == "fp32":
        x = rng.standard_normal((M, stride)).astype(np.float32)
    else:
        info = np.iinfo(NP.get(dtype, np.int32))
        x = rng.integers(info.min if dtype != "int32" else -10**8, info.max if dtype != "int32" else 10**8,
                         (M, stride), endpoint=True).astype(NP.get(dtype, np.int32))
    out_dtype = SCAN_OUT.get((op, dtype), dtype)
    out = dev.empty((M, N), NP[out_dtype])
    identity = (0 if op == "cumsum" else 1) if dtype != "fp32" else (0.0 if op == "cumsum" else 1.0)
    dev.launch(scan_tile_kernel, (1,), dev.to_device(x), out, M, N, stride, OP=op, AXIS=axis, REVERSE=reverse,
               OTHER=identity, BM=BM, BN=BN)
    fn = np.cumsum if op == "cumsum" else np.cumprod
    if dtype == "fp32":
        want = _scan_ref(fn, x[:, :N].astype(np.float64), axis, reverse)
        return [Output("out", dev.to_host(out), want, rtol=1e-5, atol=1e-5 * (M + N))]
    exact = _scan_ref(fn, x[:, :N].astype(object), axis, reverse)  # Python integers: no overflow
    return [Output("out", dev.to_host(out), wrap(exact, NP[out_dtype]))]


@cases("scan-cumsum-{direction}-blocks-n{n}", direction={"fwd": False, "rev": True}, n=[1, 1000, 4097])
def scan_blocks(dev: Device, direction: bool, n: int) -> list[Output]:
    """Several programs, each scanning its own block of a ragged vector."""
    block = 1024
    x = rng_for(f"scan-blocks-{direction}-{n}").integers(-10**6, 10**6, n).astype(np.int64)
    out = dev.empty(n, np.int64)
    dev.launch(scan_blocks_kernel, (triton.cdiv(n, block),), dev.to_device(x), out, n, REVERSE=direction,
               BLOCK=block)
    want = np.concatenate([_scan_ref(np.cumsum, x[s:s + block], 0, direction) for s in range(0, n, block)])
    return [Output("out", dev.to_host(out), want)]


@cases("scan-associative-tuple-{direction}-axis{axis}", direction={"fwd": False, "rev": True}, axis=[0, 1])
def scan_affine(dev: Device, direction: bool, axis: int) -> list[Output]:
    """A scan of two tensors whose combine function is not commutative: composed affine maps."""
    BM, BN = 8, 16
    rng = rng_for(f"scan-affine-{direction}-{axis}")
    a = rng.integers(-3, 4, (BM, BN)).astype(np.int32)
    b = rng.integers(-5, 6, (BM, BN)).astype(np.int32)
    oa, ob = dev.empty((BM, BN), np.int32), dev.empty((BM, BN), np.int32)
    dev.launch(affine_scan_kernel, (1,), dev.to_device(a), dev.to_device(b), oa, ob, AXIS=axis, REVERSE=direction,
               BM=BM, BN=BN)
    ra, rb = np.moveaxis(a.astype(object), axis, 0), np.moveaxis(b.astype(object), axis, 0)
    order = range(ra.shape[0] - 1, -1, -1) if direction else range(ra.shape[0])
    acc = None
    for k in order:  # the definition: the accumulated map first, then element k's
        acc = (ra[k], rb[k]) if acc is None else (acc[0] * ra[k], acc[1] * ra[k] + rb[k])
        ra[k], rb[k] = acc
    return [Output("a", dev.to_host(oa), wrap(np.moveaxis(ra, 0, axis), np.int32)),
            Output("b", dev.to_host(ob), wrap(np.moveaxis(rb, 0, axis), np.int32))]


# -- argmax / argmin ---------------------------------------------------------------------------------
ARG_PAD = {("max", "fp32"): -float("inf"), ("min", "fp32"): float("inf"), ("max", "fp16"): -float("inf"),
           ("min", "fp16"): float("inf"), ("max", "int32"): -2**31, ("min", "int32"): 2**31 - 1,
           ("max", "uint8"): 0, ("min", "uint8"): 255}


@cases("arg{kind}-axis{axis}-{dtype}-keep{keep}", kind=["max", "min"], axis={"0": 0, "1": 1, "all": None},
       dtype=["fp32", "fp16", "int32", "uint8"], keep={"F": False, "T": True})
def arg_tile(dev: Device, kind: str, axis: int | None, dtype: str, keep: bool) -> list[Output]:
    """The extremum and its index over a masked 13 x 6 tile in a 16 x 8 block, with many ties (the
    lowest index wins)."""
    M, N, BM, BN = 13, 6, 16, 8
    stride = N + 1
    x = rng_for(f"arg-{kind}-{axis}-{dtype}-{keep}").integers(0, 5, (M, stride)).astype(NP[dtype])
    n = {0: N, 1: M, None: 1}[axis]
    v, i = dev.empty(n, np.float64 if dtype[0] == "f" else NP[dtype]), dev.empty(n, np.int32)
    dev.launch(arg_tile_kernel, (1,), dev.to_device(x), v, i, M, N, stride, KIND=kind, AXIS=axis, KEEP=keep,
               OTHER=ARG_PAD[kind, dtype], BM=BM, BN=BN)
    region = x[:, :N]
    pick = np.argmax if kind == "max" else np.argmin
    if axis is None:
        row, col = divmod(int(pick(region)), N)
        want_i = np.array([row * BN + col])  # the row-major index in the BM x BN tile
        want_v = np.array([region[row, col]])
    else:
        want_i = pick(region, axis=axis)
        want_v = (region.max if kind == "max" else region.min)(axis=axis)
    return [Output("value", dev.to_host(v), want_v.astype(np.float64 if dtype[0] == "f" else NP[dtype])),
            Output("index", dev.to_host(i), want_i.astype(np.int32))]


@cases("arg{kind}-nan-last", kind=["max", "min"])
def arg_nan_last(dev: Device, kind: str) -> list[Output]:
    """Triton's combine: a NaN compares false, so a NaN in the last position is the answer."""
    x = rng_for(f"arg-nan-{kind}").standard_normal((1, 128)).astype(np.float32)
    x[0, -1] = np.nan
    v, i = dev.empty(1, np.float64), dev.empty(1, np.int32)
    dev.launch(arg_tile_kernel, (1,), dev.to_device(x), v, i, 1, 128, 128, KIND=kind, AXIS=1, KEEP=False,
               OTHER=0.0, BM=1, BN=128)
    return [Output("value", dev.to_host(v), np.array([np.nan])), Output("index", dev.to_host(i), np.array([127]))]


@cases("reduce-tuple-axis{axis}", axis={"0": 0, "1": 1, "all": None})
def reduce_tuple(dev: Device, axis: int | None) -> list[Output]:
    """``tl.reduce`` of three tensors of different types (fp32, int64, int16) with one combine function."""
    BM, BN = 8, 16
    rng = rng_for(f"reduce-tuple-{axis}")
    x = rng.standard_normal((BM, BN)).astype(np.float32)
    y = rng.choice([-1, 1, 2], (BM, BN)).astype(np.int64)
    z = rng.integers(-1000, 1000, (BM, BN)).astype(np.int16)
    n = {0: BN, 1: BM, None: 1}[axis]
    o1, o2, o3 = dev.empty(n, np.float32), dev.empty(n, np.int64), dev.empty(n, np.int16)
    dev.launch(reduce_tuple_kernel, (1,), dev.to_device(x), dev.to_device(y), dev.to_device(z), o1, o2, o3,
               AXIS=axis, BM=BM, BN=BN)
    prod = np.atleast_1d(np.prod(y.astype(object), axis=axis))
    return [Output("sum", dev.to_host(o1), np.atleast_1d(x.astype(np.float64).sum(axis=axis)), atol=1e-5 * x.size),
            Output("prod", dev.to_host(o2), wrap(prod, np.int64)),
            Output("min", dev.to_host(o3), np.atleast_1d(z.min(axis=axis)))]


@cases("scan-cumsum-and-argmax-in-a-loop-n{n}", n=[1, 1000])
def running(dev: Device, n: int) -> list[Output]:
    """Scans and index reductions inside a loop, with values carried from one block to the next."""
    x = rng_for(f"running-{n}").standard_normal(n).astype(np.float32)
    sums, arg = dev.empty(n, np.float32), dev.empty(1, np.int32)
    dev.launch(running_kernel, (1,), dev.to_device(x), sums, arg, n, BLOCK=128)
    return [Output("cumsum", dev.to_host(sums), np.cumsum(x.astype(np.float64)), rtol=1e-5, atol=1e-4),
            Output("argmax", dev.to_host(arg), np.array([np.argmax(x)]))]


@cases("reduce_or-axis{axis}-{dtype}", axis={"0": 0, "1": 1, "all": None}, dtype=["uint8", "int32", "int64"])
def reduce_or(dev: Device, axis: int | None, dtype: str) -> list[Output]:
    """``tl.reduce_or`` (a tensor method too) of single bits, in the input's type."""
    BM, BN = 8, 16
    bits = rng_for(f"reduce_or-{axis}-{dtype}").integers(0, 8 * np.dtype(NP[dtype]).itemsize - 1, (BM, BN))
    x = np.array([1 << int(b) for b in bits.ravel()], dtype=object).reshape(BM, BN).astype(NP[dtype])
    out = dev.empty({0: BN, 1: BM, None: 1}[axis], NP[dtype])
    dev.launch(reduce_or_kernel, (1,), dev.to_device(x), out, AXIS=axis, BM=BM, BN=BN)
    return [Output("out", dev.to_host(out), np.atleast_1d(np.bitwise_or.reduce(x, axis=axis)))]
