"""End to end on the sample programs: tile IR -> cpu stages -> JIT -> launch on numpy arrays."""

import numpy as np
import pytest

rng = np.random.default_rng(0)
ADD = (("x", "y", "out", "n"), ("*fp32", "*fp32", "*fp32", "i32"))
SOFTMAX = (("out", "inp", "stride", "n_rows", "n_cols"), ("*fp32", "*fp32", "i32", "i32", "i32"))
COLSUM = (("x", "out", "n"), ("*fp64", "*fp64", "i32"))


@pytest.fixture(scope="module")
def add(compile_ir):
    return compile_ir("vector_add.mlir", *ADD)


@pytest.mark.parametrize("n", [1, 17, 1000, 1024, 5000, (1 << 16) + 3])
def test_vector_add_ragged(add, n):
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.full(n + 64, -1.0, np.float32)  # the tail past n must stay untouched
    add(((n + 1023) // 1024, 1, 1), x, y, out, n)
    np.testing.assert_array_equal(out[:n], x + y)
    assert (out[n:] == -1.0).all()


def test_vector_add_uses_contiguous_masked_vectors(add):
    llir = add.outputs["llir"]
    assert "llvm.masked.load.v16f32" in llir or "llvm.masked.load.v8f32" in llir or "llvm.masked.load.v4f32" in llir
    assert "gather" not in llir and "scatter" not in llir
    assert "add_kernel_grid" in add.outputs["asm"]
    assert add.outputs["obj"][:4] == b"\x7fELF"


@pytest.fixture(scope="module")
def softmax(compile_ir):
    return compile_ir("softmax_rows.mlir", *SOFTMAX)


@pytest.mark.parametrize("rows,cols,programs", [(37, 200, 4), (4, 256, 1), (1, 1, 1), (130, 129, 7)])
def test_softmax_rows(softmax, rows, cols, programs):
    x = rng.standard_normal((rows, 256)).astype(np.float32) * 4
    out = np.zeros_like(x)
    softmax((programs, 1, 1), out, x, 256, rows, cols)
    ref = x[:, :cols].astype(np.float64)
    ref = np.exp(ref - ref.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out[:, :cols], ref, rtol=2e-6, atol=1e-9)
    assert (out[:, cols:] == 0).all()


def test_softmax_exp_is_vectorised_not_libm(softmax):
    asm = softmax.outputs["asm"]
    assert "expf" not in asm and "exp@" not in asm


@pytest.fixture(scope="module")
def colsum(compile_ir):
    return compile_ir("sum_loop.mlir", *COLSUM)


@pytest.mark.parametrize("n", [0, 1, 8, 29, 300])
def test_column_sum_f64(colsum, n):
    x = rng.standard_normal((n, 128))
    out = np.full(128, np.nan)
    colsum((1, 1, 1), x, out, n)
    np.testing.assert_allclose(out, x.sum(axis=0), rtol=1e-12, atol=1e-12)


def test_back_to_back_and_concurrent_launches(add):
    """The pool survives many launches of every size, also from several Python threads at once."""
    import threading

    sizes = rng.integers(1, 40_000, 200)
    failures = []

    def launch_all(offset):
        local = np.random.default_rng(offset)  # generators are not thread-safe
        for n in sizes[offset::2]:
            n = int(n)
            x, y = local.random(n, dtype=np.float32), local.random(n, dtype=np.float32)
            out = np.zeros(n, np.float32)
            add(((n + 1023) // 1024, 1, 1), x, y, out, n)
            if not np.array_equal(out, x + y):
                failures.append(n)

    threads = [threading.Thread(target=launch_all, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
