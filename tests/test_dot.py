"""``tl.dot`` on every installed target against float64 numpy references: dtypes (fp32, fp16, bf16,
fp64, int8 -> int32), accumulators, ``out_dtype``, input precisions, shapes down to one row or
column, the tutorial's blocked matmul on ragged sizes; and Triton's typing rules and refusals.

Tolerances are bounds on the accumulated rounding, relative to ``|A| @ |B| + |C|`` (the size of the
terms summed): ``K`` roundings of the accumulation type (fp16 when ``out_dtype`` is fp16), plus one
of the output type. ``tf32`` is allowed tf32's input rounding (2**-11 per operand): nvptx multiplies
fp32 at that precision on tensor cores; the host targets compute exact fp32 products for every
precision.
int8 is exact.
"""

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.language.dtypes import bf16_bits

from .kernels.dots import batched_kernel, carried_kernel, composed_kernel, dot_kernel, matmul_kernel, typed_dot_kernel
from .kernels.frontend_only import FrontendOnly

EPS = {"fp16": 2.0**-11, "fp32": 2.0**-24, "fp64": 2.0**-53}


def bf16_round(x: np.ndarray) -> np.ndarray:
    """``x`` (fp32) rounded to the nearest bfloat16, as fp32."""
    bits = np.vectorize(bf16_bits, otypes=[np.uint32])(x).astype(np.uint32) << 16
    return bits.view(np.float32)


def operands(m, n, k, kind: str, seed: int = 0):
    """A [m, k] and B [k, n] as stored, and as the kernel sees them (float64 or int64)."""
    rng = np.random.default_rng(seed)
    if kind == "int8":
        a, b = (rng.integers(-128, 128, size=s, dtype=np.int8) for s in ((m, k), (k, n)))
        return a, b, a.astype(np.int64), b.astype(np.int64)
    dtype = {"fp64": np.float64, "fp16": np.float16}.get(kind, np.float32)
    a, b = (rng.standard_normal(s).astype(dtype) for s in ((m, k), (k, n)))
    if kind == "bf16":
        return a, b, bf16_round(a).astype(np.float64), bf16_round(b).astype(np.float64)
    return a, b, a.astype(np.float64), b.astype(np.float64)


def run_dot(target, a, b, c, out_dtype, *, in_dtype=None, acc=False, prec=None, out=tl.float32, loops=1):
    dev = target.driver
    m, k = a.shape
    n = b.shape[1]
    result = dev.to_device(np.full((m, n), 7, out_dtype))
    dot_kernel[(1,)](dev.to_device(a), dev.to_device(b), dev.to_device(c), result, M=m, N=n, K=k, IN=in_dtype,
                     ACC=acc, PREC=prec, OUT=out, LOOPS=loops)
    return dev.to_host(result)


def check(got, want, bound, tol):
    err = np.abs(got.astype(np.float64) - want)
    assert np.all(err <= tol * bound + 1e-30), f"max error {err.max():.3g}, allowed {(tol * bound).max():.3g}"


SHAPES = [(16, 16, 16), (32, 64, 32), (64, 32, 16), (1, 16, 16), (16, 1, 32), (2, 4, 16), (8, 128, 16)]


@pytest.mark.parametrize("m,n,k", SHAPES, ids=[f"{m}x{n}x{k}" for m, n, k in SHAPES])
def test_fp32(target, m, n, k):
    a, b, a64, b64 = operands(m, n, k, "fp32")
    got = run_dot(target, a, b, np.zeros((m, n), np.float32), np.float32, prec="ieee")
    check(got, a64 @ b64, np.abs(a64) @ np.abs(b64), k * EPS["fp32"] + EPS["fp32"])


@pytest.mark.parametrize("prec", [None, "tf32", "tf32x3", "ieee"])
def test_input_precisions(target, prec):
    m, n, k = 32, 32, 64
    a, b, a64, b64 = operands(m, n, k, "fp32", seed=1)
    c = np.random.default_rng(2).standard_normal((m, n)).astype(np.float32)
    got = run_dot(target, a, b, c, np.float32, acc=True, prec=prec)
    tol = k * EPS["fp32"] + (2 * 2.0**-11 if prec in (None, "tf32") else 2 * EPS["fp32"])
    check(got, a64 @ b64 + c, np.abs(a64) @ np.abs(b64) + np.abs(c), tol)


def test_accumulates_over_a_loop(target):
    m, n, k = 16, 32, 32
    a, b, a64, b64 = operands(m, n, k, "fp32", seed=3)
    c = np.full((m, n), 0.5, np.float32)
    got = run_dot(target, a, b, c, np.float32, acc=True, prec="ieee", loops=3)
    check(got, 3 * (a64 @ b64) + 0.5, 3 * (np.abs(a64) @ np.abs(b64)) + 0.5, 3 * k * EPS["fp32"])


@pytest.mark.parametrize("out", ["fp32", "fp16"])
@pytest.mark.parametrize("m,n,k", [(16, 16, 16), (32, 64, 32), (4, 8, 16)])
def test_fp16_operands(target, m, n, k, out):
    a, b, a64, b64 = operands(m, n, k, "fp16", seed=4)
    out_np = np.float16 if out == "fp16" else np.float32
    c = np.random.default_rng(5).standard_normal((m, n)).astype(out_np)
    got = run_dot(target, a, b, c, out_np, acc=True, prec="ieee", out=tl.float16 if out == "fp16" else tl.float32)
    assert got.dtype == out_np
    tol = (k + 1) * EPS[out]
    check(got, a64 @ b64 + c, np.abs(a64) @ np.abs(b64) + np.abs(c.astype(np.float64)), tol)


def test_bf16_operands(compiling_target):
    m, n, k = 32, 16, 32
    a, b, a64, b64 = operands(m, n, k, "bf16", seed=6)
    got = run_dot(compiling_target, a, b, np.zeros((m, n), np.float32), np.float32, in_dtype=tl.bfloat16)
    check(got, a64 @ b64, np.abs(a64) @ np.abs(b64), (k + 1) * EPS["fp32"])


def test_fp64(target):
    m, n, k = 16, 32, 32
    a, b, a64, b64 = operands(m, n, k, "fp64", seed=7)
    c = np.random.default_rng(8).standard_normal((m, n))
    got = run_dot(target, a, b, c, np.float64, acc=True, out=tl.float64)
    check(got, a64 @ b64 + c, np.abs(a64) @ np.abs(b64) + np.abs(c), (k + 1) * EPS["fp64"])


@pytest.mark.parametrize("m,n,k", [(16, 16, 32), (32, 64, 64), (1, 8, 32)])
def test_int8_is_exact(target, m, n, k):
    a, b, a64, b64 = operands(m, n, k, "int8", seed=9)
    c = np.random.default_rng(10).integers(-1000, 1000, size=(m, n)).astype(np.int32)
    got = run_dot(target, a, b, c, np.int32, acc=True, out=tl.int32)
    np.testing.assert_array_equal(got, a64 @ b64 + c)
    got = run_dot(target, a, b, c, np.int32)
    np.testing.assert_array_equal(got, a64 @ b64)


def test_int8_wraps_in_int32(target):
    """Products summed past 2**31 wrap, as int32 arithmetic does."""
    a = np.full((16, 32), -128, np.int8)
    b = np.full((32, 16), -128, np.int8)
    c = np.full((16, 16), 2**31 - 2**19, np.int32)  # + 32 * 2**14 = 2**19: one past int32's largest
    got = run_dot(target, a, b, c, np.int32, acc=True, out=tl.int32)
    np.testing.assert_array_equal(got, np.full((16, 16), -2**31, np.int32))


@pytest.mark.parametrize("flag", [1, 0])
def test_products_of_products_in_branches_then_reduced(target, flag):
    m, k = 16, 32
    a, b, a64, b64 = operands(m, k, k, "fp32", seed=12)
    dev = target.driver
    out, sums = dev.to_device(np.full((m, k), np.nan, np.float32)), dev.to_device(np.full(m, np.nan, np.float32))
    composed_kernel[(1,)](dev.to_device(a), dev.to_device(b), out, sums, flag, M=m, K=k)
    ab = a64 @ b64
    if flag:
        want, bound = ab @ b64, np.abs(a64) @ np.abs(b64) @ np.abs(b64)
    else:
        want, bound = 2 * ab, 2 * np.abs(a64) @ np.abs(b64)
    check(dev.to_host(out), want, bound, 2 * (k + 1) * EPS["fp32"])
    check(dev.to_host(sums), want.sum(axis=1), bound.sum(axis=1), 3 * (k + 1) * EPS["fp32"])


def test_loops_carry_accumulators_read_elsewhere_or_not(target):
    m, k, n = 16, 16, 3
    a, b, a64, b64 = operands(m, k, k, "fp32", seed=13)
    dev = target.driver
    out, sums = dev.to_device(np.full((m, k), np.nan, np.float32)), dev.to_device(np.full(m, np.nan, np.float32))
    carried_kernel[(1,)](dev.to_device(a), dev.to_device(b), out, sums, n, M=m, K=k)
    ab, bound = a64 @ b64, np.abs(a64) @ np.abs(b64)
    check(dev.to_host(out), 2 * n * ab + 1, 2 * n * bound + 1, n * (k + 1) * EPS["fp32"])
    olds = sum(i * ab for i in range(n)).sum(axis=1)  # the accumulator before each product
    check(dev.to_host(sums), olds, n * n * bound.sum(axis=1), n * (k + 1) * EPS["fp32"])


MATMULS = [((100, 72, 50), (32, 32, 16), "fp32"), ((64, 64, 64), (64, 32, 32), "fp32"),
           ((33, 130, 70), (16, 64, 32), "fp16"), ((1, 5, 17), (16, 16, 16), "fp32")]


@pytest.mark.parametrize("sizes,blocks,kind", MATMULS, ids=[f"{s}-{b}-{k}" for s, b, k in MATMULS])
def test_tutorial_matmul_on_ragged_sizes(target, sizes, blocks, kind):
    (M, N, K), (BM, BN, BK) = sizes, blocks
    a, b, a64, b64 = operands(M, N, K, kind, seed=11)
    dev = target.driver
    c = dev.to_device(np.full((M, N), np.nan, np.float32))
    grid = (tritium.cdiv(M, BM) * tritium.cdiv(N, BN),)
    matmul_kernel[grid](dev.to_device(a), dev.to_device(b), c, M, N, K, K, 1, N, 1, N, 1,
                        BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, GROUP_SIZE_M=2)
    tf32 = 2 * 2.0**-11 if kind == "fp32" else 0.0  # Triton's default precision: tf32 on tensor cores
    check(dev.to_host(c), a64 @ b64, np.abs(a64) @ np.abs(b64), (K + 1) * EPS["fp32"] + tf32)


# -- Triton's typing rules and refusals ----------------------------------------------------------


def compile_typed(a: str, b: str, case: str, expect=tl.float32, m=16, n=16, k=16):
    return tritium.compile(typed_dot_kernel, signature=f"*{a},*{b}",
                           constants={"M": m, "N": n, "K": k, "CASE": case, "EXPECT": expect}, target=FrontendOnly())


@pytest.mark.parametrize("a,case,expect", [
    ("fp32", "plain", tl.float32), ("fp32", "out_fp16", tl.float32), ("fp32", "acc_fp32", tl.float32),
    ("bf16", "plain", tl.float32), ("fp16", "plain", tl.float32), ("fp16", "out_fp16", tl.float16),
    ("fp64", "out_fp64", tl.float64), ("i8", "plain", tl.int32),
    ("i8", "acc_int32", tl.int32), ("fp32", "allow_tf32", tl.float32), ("fp32", "tf32x3", tl.float32),
])
def test_result_types_are_tritons(a, case, expect):
    k = 32 if a == "i8" else 16
    compiled = compile_typed(a, a, case, expect, k=k)
    assert "tile.dot" in compiled.asm["tile"]


def test_input_precision_is_recorded():
    assert 'input_precision = "tf32"' in compile_typed("fp32", "fp32", "plain").asm["tile"]
    assert 'input_precision = "ieee"' in compile_typed("fp32", "fp32", "no_tf32").asm["tile"]
    assert 'input_precision = "tf32x3"' in compile_typed("fp32", "fp32", "tf32x3").asm["tile"]


@pytest.mark.parametrize("a,b,case,k,message", [
    ("fp32", "fp16", "plain", 16, "both operands must have the same dtype"),
    ("fp32", "fp32", "other", 16, "both operands must have the same dtype"),
    ("u8", "u8", "plain", 32, "integer operands must be int8"),
    ("i16", "i16", "plain", 16, "unsupported operand dtype"),
    ("fp32", "fp32", "plain", 8, "Input shapes should have M >= 1, N >= 1 and K >= 16 for 32-bit operands; K (the shared dimension) is 8"),
    ("i8", "i8", "acc_int32", 16, "K >= 32 for 8-bit operands"),
    ("fp16", "fp16", "out_bf16", 16, "out_dtype=bfloat16 is unsupported"),
    ("fp16", "fp16", "out_fp64", 16, "float16 operands give float16 or float32"),
    ("fp32", "fp32", "acc_fp16", 16, "the accumulator must be a [16, 16] block of tl.float32"),
    ("fp16", "fp16", "acc_fp16", 16, "out_dtype must say so"),
    ("i8", "i8", "acc_fp32", 32, "block of tl.int32"),
    ("fp32", "fp32", "acc_shape", 16, "the accumulator must be a [16, 16] block"),
    ("fp32", "fp32", "both_precisions", 16, "only one of input_precision and allow_tf32"),
    ("fp32", "fp32", "bad_precision", 16, "input_precision must be one of"),
    ("fp32", "fp32", "scalar", 16, "both operands must be blocks"),
    ("fp32", "fp32", "vector", 16, "both operands must be 2-D"),
])
def test_what_triton_refuses(a, b, case, k, message):
    with pytest.raises(tritium.CompilationError) as info:
        compile_typed(a, b, case, k=k)
    assert message in str(info.value) and "dots.py:" in str(info.value) and "typed_dot_kernel" in str(info.value)


def test_mismatched_shapes_are_refused():
    with pytest.raises(tritium.CompilationError, match="do not fit a matrix product"):
        compile_typed("fp32", "fp32", "trans", m=32, n=16, k=16)


def test_batched_operands_must_agree():
    compile_typed("fp32", "fp32", "batched")  # [1, M, K] x [1, K, N]: its static_assert checks the shape
    with pytest.raises(tritium.CompilationError, match="batches must agree"):
        compile_typed("fp32", "fp32", "batch_mismatch")
    with pytest.raises(tritium.CompilationError, match="both batched with the same rank"):
        compile_typed("fp32", "fp32", "ranks")


@pytest.mark.parametrize("kind,acc", [("fp32", True), ("fp32", False), ("int8", True), ("fp16", False)])
def test_batched(target, kind, acc):
    bs, m, n, k = 4, 16, 32, 32
    rng = np.random.default_rng(14)
    pairs = [operands(m, n, k, kind, seed=15 + i) for i in range(bs)]
    a, b = np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])
    a64, b64 = np.stack([p[2] for p in pairs]), np.stack([p[3] for p in pairs])
    out_np = np.int32 if kind == "int8" else np.float32
    c = (rng.integers(-99, 99, size=(bs, m, n)) if kind == "int8" else rng.standard_normal((bs, m, n))).astype(out_np)
    dev = target.driver
    out = dev.to_device(np.full((bs, m, n), 7, out_np))
    batched_kernel[(1,)](dev.to_device(a), dev.to_device(b), dev.to_device(c), out, B=bs, M=m, N=n, K=k, ACC=acc)
    want = a64 @ b64 + (c if acc else 0)
    if kind == "int8":
        np.testing.assert_array_equal(dev.to_host(out), want)
    else:
        check(dev.to_host(out), want, np.abs(a64) @ np.abs(b64) + np.abs(c), (k + 1) * EPS["fp32"])


def test_dot_is_tritons_builtin_not_a_tensor_method():
    assert "dot" in tl.__all__ and callable(tl.dot)
    assert not hasattr(tl.tensor, "dot")  # Triton 3.6 has no tensor.dot either


@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (16, 32, 128)])
def test_fp16_accumulator_rounds_once_per_k_step(target, m, n, k):
    """``out_dtype=tl.float16`` sums each K-step of 16 products in fp32 and rounds the accumulator to
    fp16 once per step, as the tensor-core instruction (mma m16n8k16, f16 accumulator) does; an FMA
    path that rounded after every product once lost 0.045 on 64x64x64. Triton's ``test_dot`` allows
    rtol 0.01 and atol 0.01 for fp16 results."""
    a, b, a64, b64 = operands(m, n, k, "fp16", seed=6)
    got = run_dot(target, a, b, np.zeros((m, n), np.float16), np.float16, prec="ieee", out=tl.float16)
    want = a64 @ b64
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=0.01, atol=0.01)
    steps = -(-k // 16)
    check(got, want, np.abs(a64) @ np.abs(b64), (steps + 1) * EPS["fp16"] + k * EPS["fp32"])


@tritium.jit
def batched_dot_kernel(x_ptr, y_ptr, c_ptr, z_ptr, RANK: tl.constexpr, ACC: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 512 << RANK)).reshape([2] * (RANK - 2) + [32, 64])
    y = tl.load(y_ptr + tl.arange(0, 256 << RANK)).reshape([2] * (RANK - 2) + [64, 16])
    acc = tl.load(c_ptr + tl.arange(0, 128 << RANK)).reshape([2] * (RANK - 2) + [32, 16]) if ACC else None
    tl.store(z_ptr + tl.arange(0, 128 << RANK), tl.dot(x, y, acc).reshape([128 << RANK]))


@pytest.mark.parametrize("rank, acc", [(4, False), (5, True)])
def test_dot_of_more_than_one_batch_dimension(target, rank, acc):
    """Triton's test_dot_multidim: operands [..., M, K] and [..., K, N] with the same leading dimensions."""
    dev = target.driver
    rng = np.random.default_rng(rank)
    batch = (2,) * (rank - 2)
    x = rng.integers(-4, 5, batch + (32, 64)).astype(np.float32)
    y = rng.integers(-4, 5, batch + (64, 16)).astype(np.float32)
    c = rng.integers(-4, 5, batch + (32, 16)).astype(np.float32)
    z = dev.to_device(np.zeros(batch + (32, 16), np.float32))
    batched_dot_kernel[(1,)](dev.to_device(x), dev.to_device(y), dev.to_device(c), z, RANK=rank, ACC=acc)
    want = x.astype(np.float64) @ y + (c if acc else 0)
    np.testing.assert_array_equal(dev.to_host(z), want)
