"""The conformance cases. Each returns its outputs beside an independent reference: float64
numpy for floating point, exact Python integers (wrapped to the type's width) for integers."""

from __future__ import annotations

import math

import numpy as np

import tritium as triton
import tritium.language as tl

from . import kernels as K
from .suite import Device, Output, cases, rng_for

NP = {"int8": np.int8, "int32": np.int32, "int64": np.int64, "uint8": np.uint8, "uint32": np.uint32,
      "fp16": np.float16, "fp32": np.float32, "fp64": np.float64}
TL = {"int1": tl.int1, "int8": tl.int8, "int32": tl.int32, "int64": tl.int64, "uint8": tl.uint8,
      "uint32": tl.uint32, "fp16": tl.float16, "fp32": tl.float32, "fp64": tl.float64}


def wrap(values, dtype) -> np.ndarray:
    """Python integers reduced to ``dtype``'s width (two's complement for signed types)."""
    info = np.iinfo(dtype)
    span = int(info.max) - int(info.min) + 1
    return np.array([(int(v) - int(info.min)) % span + int(info.min) for v in np.ravel(values)],
                    dtype=dtype).reshape(np.shape(values))


def elementwise(fn, *arrays, dtype) -> np.ndarray:
    """``fn`` applied to Python scalars element by element (exact for integers)."""
    lists = [np.asarray(a).ravel().tolist() for a in arrays]
    out = [fn(*vals) for vals in zip(*lists)]
    return wrap(out, dtype) if np.issubdtype(dtype, np.integer) else np.array(out, dtype=np.float64)


def trunc_div(a: int, b: int) -> int:
    """C's integer division: the quotient rounded toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def blocks(n: int, block: int) -> tuple[int]:
    return (triton.cdiv(n, block),)


# -- vector add, scalar arguments, grids -----------------------------------------------------------
@cases("vector_add-n{n}-block{block}", n=[1, 17, 1000, 4096, 4097], block=[32, 1024])
def vector_add(dev: Device, n: int, block: int) -> list[Output]:
    rng = rng_for(f"vector_add-{n}-{block}")
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    out = dev.full(n, np.nan, np.float32)
    dev.launch(K.add_kernel, blocks(n, block), dev.to_device(x), dev.to_device(y), out, n, BLOCK=block)
    return [Output("out", dev.to_host(out), x.astype(np.float64) + y)]


@cases("axpy-{dtype}", dtype=["fp32", "fp64"])
def axpy(dev: Device, dtype: str) -> list[Output]:
    """A float scalar argument: a Python float is fp32, a numpy float64 is fp64."""
    n, t = 777, NP[dtype]
    rng = rng_for("axpy-" + dtype)
    x, y = rng.standard_normal(n).astype(t), rng.standard_normal(n).astype(t)
    alpha = 0.7 if dtype == "fp32" else np.float64(0.7)
    out = dev.empty(n, t)
    dev.launch(K.axpy_kernel, blocks(n, 128), dev.to_device(x), dev.to_device(y), out, alpha, n, BLOCK=128)
    return [Output("out", dev.to_host(out), float(t(0.7)) * x.astype(np.float64) + y)]


@cases("grid-{dims}d-ids", dims={"1": (7,), "2": (5, 3), "3": (4, 3, 2)})
def grid_ids(dev: Device, dims: tuple[int, ...]) -> list[Output]:
    """program_id and num_programs on every axis; unwritten elements stay -1."""
    full = tuple(dims) + (1,) * (3 - len(dims))
    total = math.prod(full)
    ids, nprogs = dev.full(total, -1, np.int32), dev.full(total, -1, np.int32)
    dev.launch(K.program_ids_kernel, dims, ids, nprogs)
    p2, p1, p0 = np.meshgrid(*(np.arange(d) for d in reversed(full)), indexing="ij")
    want_ids = (p0 + 10 * p1 + 100 * p2).ravel()
    want_np = np.full(total, full[0] + 10 * full[1] + 100 * full[2])
    return [Output("ids", dev.to_host(ids), want_ids), Output("num_programs", dev.to_host(nprogs), want_np)]


@cases("grid-2d-tiles")
def grid_2d_tiles(dev: Device) -> list[Output]:
    """Ragged 2-D tiles over a strided input; each tile adds its (row, col) tile index."""
    M, N, BM, BN, stride = 37, 45, 16, 8, 50
    rng = rng_for("grid-2d-tiles")
    x = rng.standard_normal((M, stride), dtype=np.float32)
    out = dev.full((M, N), np.nan, np.float32)
    dev.launch(K.tile2d_kernel, (triton.cdiv(N, BN), triton.cdiv(M, BM)), dev.to_device(x), out, M, N, stride, N,
               BM=BM, BN=BN)
    rows, cols = np.arange(M)[:, None] // BM, np.arange(N)[None, :] // BN
    return [Output("out", dev.to_host(out), 2.0 * x[:, :N] + 1000 * rows + cols)]


# -- softmax and layer norm -----------------------------------------------------------------------
SOFTMAX_SHAPES = {"1x1": (1, 1), "5x17": (5, 17), "33x128": (33, 128), "7x1000": (7, 1000), "2x4097": (2, 4097)}


@cases("softmax-{shape}-{grid}", shape=SOFTMAX_SHAPES, grid={"program_per_row": None, "3_programs": 3})
def softmax(dev: Device, shape: tuple[int, int], grid: int | None) -> list[Output]:
    """Row softmax of a strided input (rows padded by 3 elements); one or several rows per program."""
    M, N = shape
    rng = rng_for(f"softmax-{M}x{N}")
    x = (rng.standard_normal((M, N + 3)) * 4).astype(np.float32)
    out = dev.full((M, N), np.nan, np.float32)
    dev.launch(K.softmax_kernel, (grid or M,), out, dev.to_device(x), N + 3, N, M, N,
               BLOCK=triton.next_power_of_2(N))
    x64 = x[:, :N].astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    return [Output("out", dev.to_host(out), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)]


LAYERNORM_SHAPES = {"1x8": (1, 8, 8), "4x100": (4, 100, 128), "16x1000-block256": (16, 1000, 256),
                    "3x4097-block1024": (3, 4097, 1024)}


@cases("layernorm-{shape}", shape=LAYERNORM_SHAPES)
def layernorm(dev: Device, shape: tuple[int, int, int]) -> list[Output]:
    M, N, BLOCK = shape
    eps = 1e-5
    rng = rng_for(f"layernorm-{M}x{N}")
    x = (rng.standard_normal((M, N)) * 3 + 1).astype(np.float32)
    w = (rng.random(N) + 0.5).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    y = dev.full((M, N + 1), np.nan, np.float32)  # a wider output: its row stride differs from x's
    mean, rstd = dev.empty(M, np.float32), dev.empty(M, np.float32)
    dev.launch(K.layernorm_kernel, (M,), dev.to_device(x), y, dev.to_device(w), dev.to_device(b), mean, rstd,
               N, N + 1, N, eps, BLOCK=BLOCK)
    x64 = x.astype(np.float64)
    want_mean = x64.mean(axis=1)
    want_rstd = 1 / np.sqrt(((x64 - want_mean[:, None]) ** 2).mean(axis=1) + eps)
    want_y = (x64 - want_mean[:, None]) * want_rstd[:, None] * w + b
    return [Output("y", dev.to_host(y)[:, :N], want_y, rtol=1e-5, atol=1e-5),
            Output("mean", dev.to_host(mean), want_mean, rtol=1e-5, atol=1e-6),
            Output("rstd", dev.to_host(rstd), want_rstd, rtol=1e-5, atol=0.0)]


# -- elementwise arithmetic -----------------------------------------------------------------------
INT_OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "floordiv": trunc_div, "mod": lambda a, b: a - b * trunc_div(a, b),
    "maximum": max, "minimum": min, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b, "shl": lambda a, b: a << b, "shr": lambda a, b: a >> b,
    "lt": lambda a, b: int(a < b), "ne": lambda a, b: int(a != b),
    "where": lambda a, b: a - b if a > b else b * 2,
}
FLOAT_OPS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide, "mod": np.fmod,
    "maximum": np.maximum, "minimum": np.minimum, "lt": lambda a, b: (a < b).astype(np.int32),
    "ne": lambda a, b: (a != b).astype(np.int32), "where": lambda a, b: np.where(a > b, a - b, b * 2),
}
BINARY = {
    "int32": ["add", "sub", "mul", "floordiv", "mod", "maximum", "minimum", "and", "or", "xor", "shl", "shr",
              "lt", "ne", "where"],
    "int64": ["add", "mul", "floordiv", "mod", "shr", "lt"],
    "int8": ["add", "mul", "floordiv", "mod"],
    "uint32": ["add", "floordiv", "mod", "shr", "maximum", "lt"],
    "fp32": ["add", "sub", "mul", "truediv", "mod", "maximum", "minimum", "lt", "ne", "where"],
    "fp64": ["add", "sub", "mul", "truediv", "mod", "maximum", "minimum", "lt", "where"],
}


def _binary_inputs(rng, dtype: str, op: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    t = NP[dtype]
    if dtype.startswith("fp"):
        x = rng.standard_normal(n) * 10
        y = rng.standard_normal(n) * 10
        if op in ("truediv", "mod"):
            y = rng.choice([-1.0, 1.0], n) * rng.uniform(0.5, 5.0, n)
        y[::7] = x[::7]  # ties for the comparisons
        return x.astype(t), y.astype(t)
    info = np.iinfo(t)
    big = op in ("add", "sub", "mul", "and", "or", "xor", "maximum", "minimum", "lt", "ne")
    # the small range leaves out MIN // -1, which overflows (undefined in C, a trap on x86)
    lo, hi = (int(info.min), int(info.max)) if big else (max(int(info.min) + 1, -1000), min(int(info.max), 1000))
    x = rng.integers(lo, hi, n, dtype=t, endpoint=True)
    y = rng.integers(lo, hi, n, dtype=t, endpoint=True)
    y[::7] = x[::7]  # ties for the comparisons
    if op in ("floordiv", "mod"):
        y[y == 0] = 3
        if dtype.startswith("int"):  # every sign combination, exact multiples included
            x[:8] = [7, -7, 7, -7, 6, -6, -1, 0]
            y[:8] = [2, 2, -2, -2, 3, 3, 5, -4]
    if op in ("shl", "shr"):
        y = rng.integers(0, info.bits - 1, n, dtype=t, endpoint=True)
    return x, y


def binary(dev: Device, dtype: str, op: str) -> list[Output]:
    n = 1000
    x, y = _binary_inputs(rng_for(f"binary-{dtype}-{op}"), dtype, op, n)
    out_t = np.int32 if op in ("lt", "ne") else NP[dtype]
    out = dev.empty(n, out_t)
    dev.launch(K.binary_kernel, blocks(n, 256), dev.to_device(x), dev.to_device(y), out, n, OP=op, BLOCK=256)
    if dtype.startswith("fp"):
        want = FLOAT_OPS[op](x.astype(np.float64), y.astype(np.float64))
    else:
        want = elementwise(INT_OPS[op], x, y, dtype=out_t)
    return [Output("out", dev.to_host(out), want)]


for _dtype, _ops in BINARY.items():
    cases("binary-{dtype}-{op}", dtype=[_dtype], op=_ops)(binary)


PROMOTIONS = {  # id: (x dtype, y dtype, dtype the sum is computed in, out dtype)
    "int32+fp32": ("int32", "fp32", np.float32, np.float64),
    "int32+fp64": ("int32", "fp64", np.float64, np.float64),
    "fp32+fp64": ("fp32", "fp64", np.float64, np.float64),
    "int32+int64": ("int32", "int64", np.int64, np.int64),
    "int8+int32": ("int8", "int32", np.int32, np.int64),
    "int32+uint32": ("int32", "uint32", np.uint32, np.int64),
}


@cases("promote-{kind}", kind=PROMOTIONS)
def promote(dev: Device, kind: tuple) -> list[Output]:
    """``x + y`` of mixed types, stored into a wider buffer: the result shows the type the sum was
    computed in (fp32 rounding, integer wrap-around), which must follow Triton's rules."""
    xd, yd, compute, out_t = kind
    n = 500
    rng = rng_for(f"promote-{xd}+{yd}")

    def values(d):
        if d.startswith("fp"):
            return (rng.standard_normal(n) * 1e3).astype(NP[d])
        info = np.iinfo(NP[d])
        return rng.integers(info.min, info.max, n, dtype=NP[d], endpoint=True)

    x, y = values(xd), values(yd)
    if xd == "int32" and yd == "fp32":
        x[:4] = [2**24 + 1, -(2**24 + 1), 2**30 + 3, 123456789]  # not representable in fp32
        y[:4] = 0.0
    out = dev.empty(n, out_t)
    dev.launch(K.binary_kernel, blocks(n, 128), dev.to_device(x), dev.to_device(y), out, n, OP="add", BLOCK=128)
    if np.issubdtype(compute, np.integer):
        want = wrap([int(a) + int(b) for a, b in zip(x.tolist(), y.tolist())], compute)
    else:  # one correctly rounded addition in the compute type
        want = (x.astype(compute) + y.astype(compute)).astype(np.float64)
    return [Output("out", dev.to_host(out), want, rtol=0.0, atol=0.0)]


MATH = {  # op: (reference, input range)
    "exp": (np.exp, (-20, 20)), "log": (np.log, (1e-3, 1e3)), "sqrt": (np.sqrt, (0, 1e4)),
    "abs": (np.abs, (-100, 100)), "neg": (np.negative, (-100, 100)), "exp2": (np.exp2, (-30, 30)),
    "log2": (np.log2, (1e-3, 1e3)), "rsqrt": (lambda v: 1 / np.sqrt(v), (1e-3, 1e3)),
    "sin": (np.sin, (-10, 10)), "cos": (np.cos, (-10, 10)), "floor": (np.floor, (-100, 100)),
    "ceil": (np.ceil, (-100, 100)),
}


@cases("math-{dtype}-{op}", dtype=["fp32", "fp64"], op=list(MATH))
def math_unary(dev: Device, dtype: str, op: str) -> list[Output]:
    ref, (lo, hi) = MATH[op]
    n = 700
    x = rng_for(f"math-{dtype}-{op}").uniform(lo, hi, n).astype(NP[dtype])
    x[:3] = [lo, hi, (lo + hi) / 2]
    out = dev.empty(n, NP[dtype])
    dev.launch(K.unary_kernel, blocks(n, 256), dev.to_device(x), out, n, OP=op, BLOCK=256)
    return [Output("out", dev.to_host(out), ref(x.astype(np.float64)))]


UNARY_TYPED = {  # id: (op, input dtype, output dtype, exact reference of the input array)
    "int32-abs": ("abs", "int32", np.int32, lambda x: elementwise(abs, x, dtype=np.int32)),
    "int32-neg": ("neg", "int32", np.int32, lambda x: elementwise(lambda v: -v, x, dtype=np.int32)),
    # tl.exp takes fp32/fp64 only (as Triton's): an integer converts explicitly first
    "int32-exp_of_fp32": ("exp_of_fp32", "int32", np.float32, lambda x: np.exp(x.astype(np.float64))),
    "int8-add_int_literal": ("add_int_literal", "int8", np.int32,  # int8 + 3 stays int8: it wraps
                             lambda x: elementwise(lambda v: v + 3, x, dtype=np.int8)),
    "int32-div_float_literal": ("div_float_literal", "int32", np.float64,  # computed in fp32: the
                                lambda x: x.astype(np.float32) / np.float32(4.0)),  # int32 rounds
    "fp32-mul_float_literal": ("mul_float_literal", "fp32", np.float64,  # computed in fp32
                               lambda x: x * np.float32(1.1)),
}


@cases("unary-{kind}", kind=UNARY_TYPED)
def unary_typed(dev: Device, kind: tuple) -> list[Output]:
    """Integer operands of unary operations, and literals whose type must not widen the result
    (``x_fp32 * 1.1`` is computed in fp32, ``x_int8 + 3`` in int8). Results that are fp32 values
    are stored into fp64 buffers, so computing them in fp64 would show."""
    op, in_d, out_t, ref = kind
    n = 300
    rng = rng_for(f"unary-{in_d}-{op}")
    if in_d == "fp32":
        x = (rng.standard_normal(n) * 100).astype(np.float32)
    else:
        lo, hi = (-10, 10) if op == "exp_of_fp32" else (int(np.iinfo(NP[in_d]).min) + 1, int(np.iinfo(NP[in_d]).max))
        x = rng.integers(lo, hi, n, dtype=NP[in_d], endpoint=True)
    out = dev.empty(n, out_t)
    dev.launch(K.unary_kernel, blocks(n, 128), dev.to_device(x), out, n, OP=op, BLOCK=128)
    return [Output("out", dev.to_host(out), np.asarray(ref(x)))]


CASTS = {  # id: (source, intermediate, destination, bitcast)
    "fp32-to-int32": ("fp32", "int32", "int32", False),
    "fp64-to-int64": ("fp64", "int64", "int64", False),
    "int32-to-fp32": ("int32", "fp32", "fp32", False),
    "int64-to-fp64": ("int64", "fp64", "fp64", False),
    "int32-to-fp64": ("int32", "fp64", "fp64", False),
    "fp64-to-fp32": ("fp64", "fp32", "fp32", False),
    "fp32-to-fp64": ("fp32", "fp64", "fp64", False),
    "fp32-to-fp16": ("fp32", "fp16", "fp16", False),
    "fp16-to-fp32": ("fp16", "fp32", "fp32", False),
    "int32-to-int8": ("int32", "int8", "int8", False),
    "int64-to-int32": ("int64", "int32", "int32", False),
    "int8-to-int32": ("int8", "int32", "int32", False),
    "uint8-to-int32": ("uint8", "int32", "int32", False),
    "int32-to-uint32-to-int64": ("int32", "uint32", "int64", False),
    "int32-to-int1-to-int32": ("int32", "int1", "int32", False),
    "fp32-to-int1-to-int32": ("fp32", "int1", "int32", False),
    "fp32-bitcast-int32": ("fp32", "int32", "int32", True),
}


def _cast_reference(x: np.ndarray, mid: str, bitcast: bool) -> np.ndarray:
    """The value of ``x.to(mid, bitcast=...)``, which the wider destination type holds unchanged."""
    if bitcast:
        return np.frombuffer(x.tobytes(), dtype=NP[mid])
    vals = x.tolist()
    if mid == "int1":
        return np.array([int(v != 0) for v in vals])
    if mid.startswith(("int", "uint")):
        return wrap([int(v) for v in vals], NP[mid])  # int() of a float truncates toward zero
    # one correctly rounded conversion of the exact value (float() of an int rounds to nearest even)
    return np.array([float(v) for v in vals]).astype(NP[mid])


@cases("cast-{kind}", kind=CASTS)
def cast(dev: Device, kind: tuple) -> list[Output]:
    src, mid, dst, bitcast = kind
    n = 400
    rng = rng_for(f"cast-{src}-{mid}-{dst}-{bitcast}")
    if src.startswith("fp"):
        scale = {"int32": 1e6, "int64": 1e15, "int1": 1.0}.get(mid, 1e3)
        x = (rng.standard_normal(n) * scale).astype(NP[src])
        x[:4] = [0.0, -0.0, 0.5, -0.75]
    else:
        info = np.iinfo(NP[src])
        x = rng.integers(info.min, info.max, n, dtype=NP[src], endpoint=True)
        x[:3] = [0, 1, info.max]
        if src == "int32" and mid == "fp32":
            x[3:5] = [2**24 + 1, -(2**24 + 3)]  # round to nearest even
    out = dev.empty(n, NP[dst])
    dev.launch(K.cast_kernel, blocks(n, 128), dev.to_device(x), out, n, MID=TL[mid], OUT=TL[dst], BITCAST=bitcast,
               BLOCK=128)
    return [Output("out", dev.to_host(out), _cast_reference(x, mid, bitcast), rtol=0.0, atol=0.0)]


# -- reductions -----------------------------------------------------------------------------------
IDENTITY = {("sum", "fp32"): 0.0, ("max", "fp32"): -float("inf"), ("min", "fp32"): float("inf"),
            ("sum", "int32"): 0, ("max", "int32"): -2**31, ("min", "int32"): 2**31 - 1}
REDUCE_SHAPES = {"13x6": (13, 6, 16, 8), "3x1000": (3, 1000, 4, 1024)}


@cases("reduce-{op}-axis{axis}-{dtype}-{shape}", op=["sum", "max", "min"], axis={"0": 0, "1": 1, "all": None},
       dtype=["fp32", "int32"], shape=REDUCE_SHAPES)
def reduce(dev: Device, op: str, axis: int | None, dtype: str, shape: tuple) -> list[Output]:
    """A masked tile reduced along one axis or entirely; masked elements load the identity."""
    M, N, BM, BN = shape
    stride = N + 2
    rng = rng_for(f"reduce-{op}-{axis}-{dtype}-{M}x{N}")
    if dtype == "fp32":
        x = rng.standard_normal((M, stride)).astype(np.float32)
    else:
        x = rng.integers(-1000, 1000, (M, stride), dtype=np.int32, endpoint=True)
    out_n = {0: N, 1: M, None: 1}[axis]
    out = dev.empty(out_n, NP[dtype])
    dev.launch(K.reduce_kernel, (1,), dev.to_device(x), out, M, N, stride, OP=op, AXIS=axis,
               OTHER=IDENTITY[op, dtype], BM=BM, BN=BN)
    ref = {"sum": np.sum, "max": np.max, "min": np.min}[op]
    want = np.atleast_1d(ref(x[:, :N].astype(np.float64 if dtype == "fp32" else np.int64), axis=axis))
    atol = 1e-6 * x[:, :N].size if op == "sum" else None  # float sums round in any order
    return [Output("out", dev.to_host(out), want, atol=atol)]


# -- control flow and calls -----------------------------------------------------------------------
@cases("loop-for-carried-n{n}", n=[0, 1, 1000])
def loop_for_carried(dev: Device, n: int) -> list[Output]:
    """Row sums over BLOCK-wide steps: a runtime trip count (zero included) and carried values."""
    M, BLOCK, stride = 5, 128, n + 1
    x = rng_for(f"loop-for-{n}").standard_normal((M, stride)).astype(np.float32)
    sums, steps = dev.full(M, np.nan, np.float32), dev.full(M, -1, np.int32)
    dev.launch(K.row_sum_loop_kernel, (M,), dev.to_device(x), sums, steps, n, stride, BLOCK=BLOCK)
    return [Output("sums", dev.to_host(sums), x[:, :n].astype(np.float64).sum(axis=1), atol=1e-5),
            Output("steps", dev.to_host(steps), np.full(M, triton.cdiv(n, BLOCK)))]


@cases("loop-nested")
def loop_nested(dev: Device) -> list[Output]:
    n, K_, step = 100, 6, 2
    x = rng_for("loop-nested").standard_normal(n).astype(np.float32)
    out = dev.empty(n, np.float32)
    dev.launch(K.nested_loop_kernel, blocks(n, 64), dev.to_device(x), out, n, K_, BLOCK=64, INNER_STEP=step)
    x64 = x.astype(np.float64)
    want = sum(x64 * i - j for i in range(K_) for j in range(i, K_, step))
    return [Output("out", dev.to_host(out), want, rtol=1e-5, atol=1e-5)]


def _collatz(v: int) -> tuple[int, int]:
    steps, peak = 0, v
    while v != 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        peak, steps = max(peak, v), steps + 1
    return steps, peak


@cases("loop-while")
def loop_while(dev: Device) -> list[Output]:
    x = np.array([1, 2, 3, 6, 7, 9, 27, 97, 871, 1000], dtype=np.int32)
    steps, peak = dev.empty(len(x), np.int32), dev.empty(len(x), np.int32)
    dev.launch(K.collatz_kernel, (len(x),), dev.to_device(x), steps, peak)
    want = np.array([_collatz(int(v)) for v in x])
    return [Output("steps", dev.to_host(steps), want[:, 0]), Output("peak", dev.to_host(peak), want[:, 1])]


@cases("if-scalar")
def if_scalar(dev: Device) -> list[Output]:
    v = np.array([3, -2, 0, 5, -7, 0, 1], dtype=np.int32)
    BLOCK = 16
    out = dev.empty((len(v), BLOCK), np.int32)
    dev.launch(K.scalar_if_kernel, (len(v),), dev.to_device(v), out, BLOCK=BLOCK)
    offs = np.arange(BLOCK)
    want = np.array([(offs * s if s > 0 else offs - s if s < 0 else np.full(BLOCK, -1)) + 1000 * (p % 2)
                     for p, s in enumerate(v.tolist())])
    return [Output("out", dev.to_host(out), want)]


@cases("jit-call")
def jit_call(dev: Device) -> list[Output]:
    n = 300
    rng = rng_for("jit-call")
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    hyp, lo, hi = (dev.empty(n, np.float32) for _ in range(3))
    dev.launch(K.jit_call_kernel, blocks(n, 128), dev.to_device(x), dev.to_device(y), hyp, lo, hi, n, BLOCK=128)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    return [Output("hypot", dev.to_host(hyp), np.hypot(x64, y64)),
            Output("min", dev.to_host(lo), np.minimum(x64, y64)),
            Output("max", dev.to_host(hi), np.maximum(x64, y64))]


# -- Triton's math functions (tl.math, tl.clamp, tl.sigmoid, tl.softmax) --------------------------
_ERF = np.vectorize(math.erf, otypes=[np.float64])
_MATH_NP = {**NP, "uint64": np.uint64}


def _fma_reference(x, y, z):
    """One rounding of x*y+z: exact in float64 for fp16/fp32 products, float64 itself otherwise."""
    ref = x.astype(np.float64) * y + z
    return ref if x.dtype == np.float64 else ref.astype(x.dtype).astype(np.float64)


def _umulhi_reference(x, y):
    bits = np.iinfo(x.dtype).bits
    mask = (1 << bits) - 1
    hi = [((int(a) & mask) * (int(b) & mask)) >> bits for a, b in zip(x.tolist(), y.tolist())]
    return np.array(hi, dtype=np.uint64 if bits == 64 else np.uint32).view(x.dtype)  # the bits, in x's type


def _clamp_none(x, lo, hi):
    r = np.minimum(np.maximum(x.astype(np.float64), lo), hi)
    return np.where(np.isnan(x), lo.astype(np.float64), r)  # PropagateNan.NONE: NaN gives the bound


MATH_FNS = {  # id: (FN, dtype, operand ranges, reference, output dtype or None, (rtol, atol) or None)
    "erf-fp32": ("erf", "fp32", [(-4, 4)], lambda x: _ERF(x.astype(np.float64)), None, None),
    "erf-fp64": ("erf", "fp64", [(-6, 6)], lambda x: _ERF(x.astype(np.float64)), None, (1e-15, 1e-16)),
    "sqrt_rn-fp32": ("sqrt_rn", "fp32", [(0, 1e6)], lambda x: np.sqrt(x), None, (0.0, 0.0)),
    "sigmoid-fp32": ("sigmoid", "fp32", [(-30, 30)], lambda x: 1 / (1 + np.exp(-x.astype(np.float64))), None,
                     (1e-5, 0.0)),  # relative everywhere; exp may be an approximation (NVIDIA's ex2)
    "sigmoid-fp64": ("sigmoid", "fp64", [(-30, 30)], lambda x: 1 / (1 + np.exp(-x.astype(np.float64))), None, None),
    "div_rn-fp32": ("div_rn", "fp32", [(-1e3, 1e3), (0.5, 8)], lambda x, y: x / y, None, (0.0, 0.0)),
    "fdiv_ieee-fp32": ("fdiv_ieee", "fp32", [(-1e3, 1e3), (-8, -0.5)], lambda x, y: x / y, None, (0.0, 0.0)),
    "fdiv-fp16": ("fdiv", "fp16", [(-100, 100), (0.5, 8)], lambda x, y: x.astype(np.float64) / y, np.float32,
                  (4e-7, 0.0)),  # computed in fp32, as '/' of halves is (NVIDIA's div.full: 2 ulp)
    "fdiv-fp32": ("fdiv", "fp32", [(-1e3, 1e3), (0.5, 8)], lambda x, y: x.astype(np.float64) / y, None, None),
    "fdiv-fp64": ("fdiv", "fp64", [(-1e3, 1e3), (0.5, 8)], lambda x, y: x.astype(np.float64) / y, None, None),
    "fma-fp16": ("fma", "fp16", [(-10, 10)] * 3, _fma_reference, None, (0.0, 0.0)),
    "fma-fp32": ("fma", "fp32", [(-1e3, 1e3)] * 3, _fma_reference, None, (0.0, 0.0)),
    "fma-fp64": ("fma", "fp64", [(-1e3, 1e3)] * 3, _fma_reference, None, None),
    "clamp-fp16": ("clamp", "fp16", [(-4, 4), (-2, -1), (1, 2)], _clamp_none, None, (0.0, 0.0)),
    "clamp-fp32": ("clamp", "fp32", [(-4, 4), (-2, -1), (1, 2)], _clamp_none, None, (0.0, 0.0)),
    "clamp-fp64": ("clamp", "fp64", [(-4, 4), (-2, -1), (1, 2)], _clamp_none, None, (0.0, 0.0)),
    "clamp_nan-fp32": ("clamp_nan", "fp32", [(-4, 4), (-2, -1), (1, 2)],
                       lambda x, lo, hi: np.minimum(np.maximum(x.astype(np.float64), lo), hi), None, (0.0, 0.0)),
    "maximum_nan-fp32": ("maximum_nan", "fp32", [(-4, 4)] * 2, lambda x, y: np.maximum(x.astype(np.float64), y),
                         None, (0.0, 0.0)),
    "minimum_nan-fp64": ("minimum_nan", "fp64", [(-4, 4)] * 2, lambda x, y: np.minimum(x, y), None, (0.0, 0.0)),
    **{f"umulhi-{d}": ("umulhi", d, [None] * 2, _umulhi_reference, None, None)
       for d in ("int32", "uint32", "int64", "uint64")},
}


@cases("mathfn-{kind}-n{n}", kind=MATH_FNS, n=[1, 1000])
def math_fn(dev: Device, kind: tuple, n: int) -> list[Output]:
    """Triton's math functions against float64 (or exact integer) references; NaNs in the first
    operand check NaN propagation where the function has a rule for it."""
    fn, dtype, ranges, ref, out_t, tol = kind
    t = _MATH_NP[dtype]
    rng = rng_for(f"mathfn-{fn}-{dtype}-{n}")
    args = []
    for r in ranges:
        if r is None:
            info = np.iinfo(t)
            args.append(rng.integers(info.min, info.max, n, dtype=t, endpoint=True))
        else:
            args.append(rng.uniform(r[0], r[1], n).astype(t))
    if fn in ("clamp", "clamp_nan", "maximum_nan", "minimum_nan", "erf", "sigmoid") and n > 4:
        args[0][:2] = np.nan
    args += [args[0]] * (3 - len(args))
    out = dev.empty(n, out_t or t)
    dev.launch(K.math_fn_kernel, blocks(n, 256), *(dev.to_device(a) for a in args), out, n, FN=fn, BLOCK=256)
    want = ref(*args[:len(ranges)])
    rtol, atol = tol if tol is not None else (None, None)
    return [Output("out", dev.to_host(out), np.asarray(want), rtol=rtol, atol=atol)]


@cases("math-or-clear-error-{kind}", kind={k: MATH_FNS[k] for k in ("erf-fp64", "sigmoid-fp64")})
def math_or_clear_error(dev: Device, kind: tuple) -> list[Output]:
    """Math a target may not have (fp64 ``erf`` and ``exp``): the right numbers, or a
    ``CompilationError`` at the kernel's line that names the function; never an LLVM abort, an
    undefined symbol or wrong numbers. No target needs to declare this case as a gap."""
    from tritium.errors import CompilationError

    try:
        return math_fn(dev, kind, 1000)
    except CompilationError as e:
        said = str(e)
        named = "math_fn_kernel" in said and f"'{'exp' if kind[0] == 'sigmoid' else kind[0]}'" in said
        return [Output("CompilationError at the kernel naming the function", np.array([named]), np.array([True]))]


@cases("softmax-fn-{dtype}-dim{dim}{ieee}", dtype=["fp32", "fp64"], dim=[-1, 0, 1], ieee={"": False, "-ieee": True})
def softmax_fn(dev: Device, dtype: str, dim: int, ieee: bool) -> list[Output]:
    """``tl.softmax`` along each dimension with keep_dims, and with its defaults on a row."""
    M, N = 8, 32
    x = (rng_for(f"softmax-fn-{dtype}-{dim}").standard_normal((M, N)) * 5).astype(NP[dtype])
    out = dev.full((M, N), np.nan, NP[dtype])
    dev.launch(K.softmax_fn_kernel, (1,), dev.to_device(x), out, M=M, N=N, DIM=dim, IEEE=ieee)
    x64 = x.astype(np.float64)
    got = dev.to_host(out)
    if dim == -1:
        x64, got = x64[0], got[0]
    e = np.exp(x64 - x64.max(axis=max(dim, 0), keepdims=True))
    return [Output("out", got, e / e.sum(axis=max(dim, 0), keepdims=True), rtol=1e-5 if dtype == "fp32" else None,
                   atol=1e-7 if dtype == "fp32" else None)]  # fp32 exp and division may approximate (NVIDIA)


@cases("reduce-xor_sum-axis{axis}-{dtype}-{shape}", axis={"0": 0, "1": 1, "all": None},
       dtype=["int32", "uint8", "int64"], shape=REDUCE_SHAPES)
def reduce_xor_sum(dev: Device, axis: int | None, dtype: str, shape: tuple) -> list[Output]:
    """``tl.xor_sum`` of a masked tile (masked elements load 0, xor's identity), in the input's dtype."""
    M, N, BM, BN = shape
    stride = N + 2
    info = np.iinfo(NP[dtype])
    x = rng_for(f"reduce-xor_sum-{axis}-{dtype}-{M}x{N}").integers(info.min, info.max, (M, stride),
                                                                     dtype=NP[dtype], endpoint=True)
    out = dev.empty({0: N, 1: M, None: 1}[axis], NP[dtype])
    dev.launch(K.reduce_kernel, (1,), dev.to_device(x), out, M, N, stride, OP="xor_sum", AXIS=axis, OTHER=0,
               BM=BM, BN=BN)
    return [Output("out", dev.to_host(out), np.atleast_1d(np.bitwise_xor.reduce(x[:, :N], axis=axis)))]


@cases("number-shifted-by-{dtype}-block{block}", dtype=["uint8", "uint16", "int16"], block=[4, 64])
def number_shifted(dev: Device, dtype: str, block: int) -> list[Output]:
    """A number shifted by a tensor takes the tensor's type: 200 (uint8: top bit set) shifts
    logically right; narrow vectors with a constant left operand (some back ends unroll them)."""
    t = np.dtype(dtype)
    number = 200 if t.itemsize == 1 else 40000 if t.kind == "u" else 20000
    x = (np.arange(block) % (8 * t.itemsize)).astype(t)
    out = dev.full(2 * block, 0, t)
    dev.launch(K.number_shifted_kernel, (1,), dev.to_device(x), out, NUMBER=number, BLOCK=block)
    wide = np.array(number, t).astype(np.int64)
    mask = (1 << (8 * t.itemsize)) - 1
    right = wide >> x.astype(np.int64)
    left = ((wide << x.astype(np.int64)) & mask).astype(np.uint64).astype(t)
    return [Output("out", dev.to_host(out), np.concatenate([right.astype(t), left]))]


# -- pointers as integers and as other pointer types ----------------------------------------------
@triton.jit
def pointer_cast_kernel(x_ptr, table_ptr, out_ptr, N: tl.constexpr):
    """Writes the address of x[N - 1 - i] at table[i] as int64 and reads through the table (Triton's
    grouped GEMM keeps its operands' addresses in such a table; one launch, as some targets place
    arrays anew for each), reads x's bytes through an int8 pointer, and writes offsets and non-null
    flags computed from addresses."""
    i = tl.arange(0, N)
    tl.store(table_ptr + i, (x_ptr + (N - 1 - i)).to(tl.int64))
    tl.debug_barrier()
    through = tl.load(tl.load(table_ptr + i).to(tl.pointer_type(tl.int32)))
    tl.store(out_ptr + i, through.to(tl.int64))
    low_bytes = tl.load(x_ptr.to(tl.pointer_type(tl.uint8)) + 4 * i)  # little-endian: the low byte
    tl.store(out_ptr + N + i, low_bytes.to(tl.int64))
    tl.store(out_ptr + 2 * N + i, (x_ptr + i).to(tl.int64) - x_ptr.to(tl.int64))
    tl.store(out_ptr + 3 * N + i, (x_ptr + i).to(tl.int1).to(tl.int64))
    back = (x_ptr.to(tl.int64) + 4 * i).to(tl.pointer_type(tl.int32))
    tl.store(out_ptr + 4 * N + i, tl.load(back).to(tl.int64))


@cases("pointer-casts")
def pointer_casts(dev: Device) -> list[Output]:
    n = 16
    x = (np.arange(n, dtype=np.int32) * 1000 + 7)
    table, out = dev.full(n, 0, np.int64), dev.full(5 * n, -1, np.int64)
    dev.launch(pointer_cast_kernel, (1,), dev.to_device(x), table, out, N=n)
    want = np.concatenate([x[::-1], x & 0xFF, 4 * np.arange(n), np.ones(n), x]).astype(np.int64)
    return [Output("out", dev.to_host(out), want)]
