"""The cpu decides vector loads and stores from core's axis-info analysis, as GPUs do: hints, the
integer specialisation and what the analysis derives (loop-carried pointers, ``%``, ``//``) make an
access one vector (or one scalar) instead of a gather, and the numbers stay right."""

import re

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.errors import OutOfBoundsError
from tritium_cpu.hooks import host_vector_bits

BLOCK = 64
#: elements of one SIMD chunk of a float32 tensor of BLOCK elements on this host
LANES = min(BLOCK, host_vector_bits() // 32)
VECTOR_LOAD = re.compile(rf"load <{LANES} x float>, ptr %[\w.\"]+, align (\d+)")
rng = np.random.default_rng(0)


def compile_cpu(kernel, signature: str, tmp_path, monkeypatch, **constants):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    return tritium.compile(kernel, signature=signature, constants={"BLOCK": BLOCK, **constants}, target="cpu")


@tritium.jit
def hinted_gather(x_ptr, idx_ptr, out_ptr, RUN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    idx = tl.load(idx_ptr + offs)
    idx = tl.max_contiguous(tl.multiple_of(idx, RUN), RUN)  # the caller promises runs of RUN
    tl.store(out_ptr + offs, tl.load(x_ptr + idx))


def run_indices(n: int, run: int) -> np.ndarray:
    """Indices in aligned runs of ``run`` consecutive values, the runs shuffled."""
    starts = rng.permutation(n // run) * run
    return (starts[:, None] + np.arange(run)).reshape(-1).astype(np.int32)


def test_hint_makes_loaded_offsets_one_vector_load(tmp_path, monkeypatch):
    k = compile_cpu(hinted_gather, "*fp32, *i32, *fp32", tmp_path, monkeypatch, RUN=BLOCK)
    llir = k.asm["llir"]
    assert "masked.gather" not in llir
    assert len(VECTOR_LOAD.findall(llir)) == 1, llir  # x at the hinted indices
    n = 4 * BLOCK
    x, idx, out = rng.random(n, dtype=np.float32), run_indices(n, BLOCK), np.zeros(n, np.float32)
    k[(n // BLOCK,)](x, idx, out)
    np.testing.assert_array_equal(out, x[idx])


def test_runs_shorter_than_a_chunk_still_gather(tmp_path, monkeypatch):
    """A hint of runs of 2 says nothing about a chunk of LANES > 2 elements: it stays a gather."""
    k = compile_cpu(hinted_gather, "*fp32, *i32, *fp32", tmp_path, monkeypatch, RUN=2)
    assert "masked.gather" in k.asm["llir"]
    n = 2 * BLOCK
    x, idx, out = rng.random(n, dtype=np.float32), run_indices(n, 2), np.zeros(n, np.float32)
    k[(n // BLOCK,)](x, idx, out)
    np.testing.assert_array_equal(out, x[idx])


@tritium.jit
def hinted_arange(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.max_contiguous(tl.arange(0, BLOCK), 2)  # replaces what the analysis derives, as in Triton
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def test_contiguity_hint_replaces_the_analysis(tmp_path, monkeypatch):
    k = compile_cpu(hinted_arange, "*fp32, *fp32", tmp_path, monkeypatch)
    llir = k.asm["llir"]
    assert "masked.gather" in llir and "masked.scatter" in llir
    x, out = rng.random(BLOCK, dtype=np.float32), np.zeros(BLOCK, np.float32)
    k[(1,)](x, out)
    np.testing.assert_array_equal(out, x)


@tritium.jit
def carried_pointers(x_ptr, out_ptr, n_blocks, BLOCK: tl.constexpr):
    """Sums n_blocks consecutive blocks by stepping a pointer tensor carried through the loop."""
    ptrs = x_ptr + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for _ in range(n_blocks):
        acc += tl.load(ptrs)
        ptrs += BLOCK
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)


def test_loop_carried_pointers_load_vectors(tmp_path, monkeypatch):
    k = compile_cpu(carried_pointers, "*fp32, *fp32, i32", tmp_path, monkeypatch)
    llir = k.asm["llir"]
    assert "masked.gather" not in llir
    assert VECTOR_LOAD.search(llir), llir
    blocks = 5
    x, out = rng.random(blocks * BLOCK, dtype=np.float32), np.zeros(BLOCK, np.float32)
    k[(1,)](x, out, blocks)
    want = x.astype(np.float64).reshape(blocks, BLOCK).sum(axis=0)
    np.testing.assert_allclose(out, want, rtol=1e-6)


@tritium.jit
def wrapped_and_repeated(x_ptr, out_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs % 128))  # runs of BLOCK wrap at 128
    tl.store(y_ptr + offs, tl.load(x_ptr + offs // BLOCK))  # one element per block


def test_remainder_is_contiguous_and_quotient_uniform(tmp_path, monkeypatch):
    k = compile_cpu(wrapped_and_repeated, "*fp32, *fp32, *fp32", tmp_path, monkeypatch)
    llir = k.asm["llir"]
    assert "masked.gather" not in llir and "masked.scatter" not in llir
    assert VECTOR_LOAD.search(llir), llir
    assert re.search(r"load float, ptr", llir), llir  # x[offs // BLOCK]: one scalar load per chunk
    n = 4 * BLOCK
    x, out, y = rng.random(128, dtype=np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32)
    k[(n // BLOCK,)](x, out, y)
    offs = np.arange(n)
    np.testing.assert_array_equal(out, x[offs % 128])
    np.testing.assert_array_equal(y, x[offs // BLOCK])


@tritium.jit
def copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def aligned(n: int, misalign: int) -> np.ndarray:
    """``n`` random floats starting ``misalign`` elements after a 16-byte boundary."""
    buf = np.zeros(n + 8, np.float32)
    start = (-buf.ctypes.data % 16) // 4 + misalign
    view = buf[start:start + n]
    view[:] = rng.random(n, dtype=np.float32)
    return view


@pytest.mark.parametrize("misalign,align", [(1, 4), (0, 16)])
def test_alignment_comes_from_the_specialisation(tmp_path, monkeypatch, misalign, align):
    """Pointers divisible by 16 (the launch's specialisation) give 16-byte aligned vector accesses."""
    monkeypatch.setenv("TRITIUM_TARGET", "cpu")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITIUM_DUMP", "llir")
    monkeypatch.setenv("TRITIUM_DUMP_DIR", str(tmp_path / "dump"))
    x, out = aligned(BLOCK, misalign), aligned(BLOCK, misalign)
    copy[(1,)](x, out, BLOCK=BLOCK)
    np.testing.assert_array_equal(out, x)
    (dumped,) = (tmp_path / "dump").iterdir()
    assert [int(a) for a in VECTOR_LOAD.findall(dumped.read_text())] == [align]


def test_addresses_of_arithmetic_offsets_are_scalar_code(tmp_path, monkeypatch):
    """A vector access's address is its first lane: computed as scalars when the offsets take only
    arithmetic, and extracted from the vector when they were loaded."""
    assert "extractelement" not in compile_cpu(copy, "*fp32, *fp32", tmp_path, monkeypatch).asm["llir"]
    hinted = compile_cpu(hinted_gather, "*fp32, *i32, *fp32", tmp_path, monkeypatch, RUN=BLOCK).asm["llir"]
    assert re.search(r"extractelement <\d+ x ptr>", hinted), hinted


def test_debug_mode_checks_the_addresses_a_hinted_vector_touches(tmp_path, monkeypatch):
    """A contiguity hint that does not hold reads the run from each chunk's first lane; debug mode
    checks that run, not the addresses the lanes claim, so it reports instead of reading past x."""
    monkeypatch.setenv("TRITIUM_TARGET", "cpu")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    x, out = np.arange(BLOCK, dtype=np.float32), np.zeros(BLOCK, np.float32)
    idx = np.full(BLOCK, BLOCK - 2, np.int32)  # every lane in bounds, but not contiguous
    with pytest.raises(OutOfBoundsError) as info:
        hinted_gather[(1,)](x, idx, out, RUN=BLOCK, BLOCK=BLOCK, debug=True)
    message = str(info.value)
    assert "load" in message and "'x_ptr'" in message and f"[{BLOCK}, {BLOCK + 1}" in message, message
