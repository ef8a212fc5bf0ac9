"""The re-indexing ops on the cpu (``tritium.codegen.block.reshape``): whole SIMD chunks where the last
dimension keeps its meaning, lanes assembled one by one only where it does not, and gathers only
for pointers whose order the re-indexing broke; the numbers against numpy."""

import re

import numpy as np

import tritium
import tritium.language as tl
from tritium_cpu.hooks import host_vector_bits

LANES = min(8, host_vector_bits() // 32)
rng = np.random.default_rng(0)


@tritium.jit
def reindex_kernel(x_ptr, out_ptr, OP: tl.constexpr):
    """A (4, 4, 8) block of x, re-indexed by ``OP``, stored row-major."""
    a, b, c = tl.arange(0, 4)[:, None, None], tl.arange(0, 4)[None, :, None], tl.arange(0, 8)[None, None, :]
    x = tl.load(x_ptr + a * 32 + b * 8 + c)
    if OP == "permute_keeps_last":
        y = tl.permute(x, 1, 0, 2)
    elif OP == "flip_last":
        y = tl.flip(x, 2)
    else:
        y = tl.permute(x, 0, 2, 1)  # (4, 8, 4): the last dimension changes
    p, q, r = tl.arange(0, y.shape[0])[:, None, None], tl.arange(0, y.shape[1])[None, :, None], \
        tl.arange(0, y.shape[2])[None, None, :]
    tl.store(out_ptr + p * (y.shape[1] * y.shape[2]) + q * y.shape[2] + r, y)


@tritium.jit
def transposed_pointers_kernel(x_ptr, out_ptr):
    offs = tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :]
    tl.store(out_ptr + offs, tl.load(tl.trans(x_ptr + offs)))


def compile_cpu(kernel, signature, tmp_path, monkeypatch, **constants):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    return tritium.compile(kernel, signature=signature, constants=constants, target="cpu")


def run(k, x, shape):
    out = np.zeros(shape, x.dtype)
    k[(1,)](x, out)
    return out


def test_permute_keeping_the_last_dimension_moves_whole_chunks(tmp_path, monkeypatch):
    k = compile_cpu(reindex_kernel, "*fp32, *fp32", tmp_path, monkeypatch, OP="permute_keeps_last")
    llir = k.asm["llir"]
    assert "masked.gather" not in llir and "masked.scatter" not in llir
    assert "insertelement <%d x float>" % LANES not in llir  # no lane-by-lane assembly
    x = rng.random((4, 4, 8), dtype=np.float32)
    np.testing.assert_array_equal(run(k, x, (4, 4, 8)), np.transpose(x, (1, 0, 2)))


def test_flip_of_the_last_dimension_reverses_chunks(tmp_path, monkeypatch):
    k = compile_cpu(reindex_kernel, "*fp32, *fp32", tmp_path, monkeypatch, OP="flip_last")
    reverse = ", ".join(f"i32 {i}" for i in range(LANES - 1, -1, -1))
    assert re.search(rf"shufflevector <{LANES} x float> .*<{reverse}>", k.asm["llir"])
    x = rng.random((4, 4, 8), dtype=np.float32)
    np.testing.assert_array_equal(run(k, x, (4, 4, 8)), np.flip(x, 2))


def test_permute_of_the_last_dimension_assembles_lanes(tmp_path, monkeypatch):
    k = compile_cpu(reindex_kernel, "*fp32, *fp32", tmp_path, monkeypatch, OP="permute_last")
    llir = k.asm["llir"]
    assert "masked.gather" not in llir  # the loaded block is kept in memory, read lane by lane
    assert f"insertelement <{min(4, LANES)} x float>" in llir
    x = rng.random((4, 4, 8), dtype=np.float32)
    np.testing.assert_array_equal(run(k, x, (4, 8, 4)), np.transpose(x, (0, 2, 1)))


def test_transposed_pointers_are_gathered(tmp_path, monkeypatch):
    """Their rows are no longer contiguous (core's axis info), so no vector load may read them."""
    k = compile_cpu(transposed_pointers_kernel, "*fp32, *fp32", tmp_path, monkeypatch)
    assert "masked.gather" in k.asm["llir"]
    x = rng.random((8, 8), dtype=np.float32)
    np.testing.assert_array_equal(run(k, x, (8, 8)), x.T)
