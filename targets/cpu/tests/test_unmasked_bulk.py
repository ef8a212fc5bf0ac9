"""A chunk whose mask is all on reads and writes memory without masked instructions: AMD's x86
cores microcode ``vmaskmovps`` and run the vector add at a third of memory speed with it. Only a
partly masked chunk (the tail of a bounds mask) takes the masked path, and the results stay right
for every length."""

import platform
import re

import numpy as np
import pytest
from llvmlite import binding as llvm

import tritium
import tritium.language as tl
from tritium.passes.llvm_worker import OPT_LEVEL, optimize
from tritium_conformance.kernels import add_kernel, softmax_kernel

BLOCK = 1024
X86 = platform.machine().lower() in ("x86_64", "amd64")
#: a masked x86 memory access: AVX's maskmov, or AVX-512's opmask on a memory operand
MASKED = re.compile(r"maskmov|\(.*\{%k\d\}|\{%k\d\}.*\(")
rng = np.random.default_rng(0)


@tritium.jit
def fill_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """``out`` (a whole number of blocks) is ``x`` where in bounds, else ``other``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=-7.0) * 2.0)


@tritium.jit
def add_2d_kernel(x_ptr, y_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, x + tl.load(y_ptr + offs, mask=mask), mask=mask)


def compile_add(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    return tritium.compile(add_kernel, signature="*fp32, *fp32, *fp32, i32", constants={"BLOCK": BLOCK},
                           target="cpu")


def blocks(asm: str) -> list[list[str]]:
    """The assembly's basic blocks (split at labels), each a list of instruction lines."""
    out: list[list[str]] = [[]]
    for line in asm.splitlines():
        if re.match(r"^\.?\w[\w.$]*:", line):
            out.append([])
        elif line.startswith("\t") and not line.lstrip().startswith("."):
            out[-1].append(line)
    return out


def assert_unmasked_bulk(asm: str) -> None:
    """Some block adds vectors and stores the sum with no masked memory instruction."""
    adds = [b for b in blocks(asm) if any("vaddps" in i for i in b)]
    assert adds, asm
    bulk = [b for b in adds if not any(MASKED.search(i) for i in b)
            and any(re.search(r"vmov\w*\s+%[xyz]mm\d+, .*\(", i) for i in b)]
    assert bulk, "every block of the vector add uses masked loads or stores:\n" + "\n".join(
        "\n".join(b) for b in adds)


@pytest.mark.skipif(not X86, reason="x86 assembly")
def test_vector_add_bulk_is_unmasked_on_this_host(tmp_path, monkeypatch):
    assert_unmasked_bulk(compile_add(tmp_path, monkeypatch).asm["asm"])


@pytest.mark.skipif(not X86, reason="x86 assembly")
def test_vector_add_bulk_is_unmasked_on_avx2(tmp_path, monkeypatch):
    """The same LLVM IR built for an AVX2-only AMD core (no AVX-512 opmasks): plain ``vmovups``
    in the bulk, ``vmaskmovps`` only in the tail."""
    llir = compile_add(tmp_path, monkeypatch).asm["llir"]
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    tm = llvm.Target.from_triple(llvm.get_process_triple()).create_target_machine(
        cpu="znver2", features="+avx2,+fma,-avx512f", opt=OPT_LEVEL)
    module = llvm.parse_assembly(llir)
    optimize(module, tm, vectorize=True, safe=False)
    asm = tm.emit_assembly(module)
    assert "zmm" not in asm
    assert "vmaskmovps" in asm  # the tail keeps its masks
    assert_unmasked_bulk(asm)


@pytest.mark.parametrize("n", [0, 5, BLOCK, 3 * BLOCK + 7])
def test_vector_add_every_length(n):
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.full(n + 16, -1.0, np.float32)  # past n: must stay untouched
    grid = (max(1, -(-n // BLOCK)),)
    add_kernel[grid](x, y, out, n, BLOCK=BLOCK)
    np.testing.assert_array_equal(out[:n], (x.astype(np.float64) + y).astype(np.float32))
    assert (out[n:] == -1.0).all()


@pytest.mark.parametrize("n", [0, 5, BLOCK, 2 * BLOCK + 9])
def test_other_fills_the_tail(n):
    x = rng.random(n, dtype=np.float32)
    programs = max(1, -(-n // BLOCK))
    out = np.zeros(programs * BLOCK, np.float32)
    fill_kernel[(programs,)](x, out, n, BLOCK=BLOCK)
    expected = np.full(programs * BLOCK, -14.0)
    expected[:n] = x.astype(np.float64) * 2.0
    np.testing.assert_array_equal(out, expected.astype(np.float32))


@pytest.mark.parametrize("m, n", [(32, 64), (33, 70), (5, 3), (0, 8)])
def test_2d_bounds_mask(m, n):
    bm, bn = 16, 32
    x, y = rng.random((m, n), dtype=np.float32), rng.random((m, n), dtype=np.float32)
    out = np.full((m, n), -1.0, np.float32)
    grid = (max(1, -(-m // bm)), max(1, -(-n // bn)))
    add_2d_kernel[grid](x, y, out, m, n, BM=bm, BN=bn)
    np.testing.assert_array_equal(out, (x.astype(np.float64) + y).astype(np.float32))


@tritium.jit
def row_mask_kernel(x_ptr, out_ptr, N, B: tl.constexpr, FLIPPED: tl.constexpr):
    """Rows of ``x`` (B x B) copied under the bounds mask ``cols < N - rows``: a row is inside it or
    not by one test at its start, or, flipped upside down, each row is read under another's."""
    rows = tl.arange(0, B)[:, None]
    cols = tl.arange(0, B)[None, :]
    inside = (cols + rows * 0) < N - rows
    if FLIPPED:
        inside = tl.flip(inside, 0)
    offs = rows * B + cols
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=inside, other=-3.0) * 2.0)


@pytest.mark.parametrize("flipped", [False, True])
@pytest.mark.parametrize("n", [0, 5, 31, 32, 40, 70])
def test_a_row_tested_once_at_its_start_matches_numpy(n, flipped):
    """The loop over a row's chunks comes in two versions, one for a row inside its bounds masks
    (no test a chunk), chosen by one test at the row's start; a mask read at another row than the
    loop's (flipped) is not taken for the loop's row."""
    b = 32
    x = rng.random((b, b), dtype=np.float32)
    out = np.zeros((b, b), np.float32)
    row_mask_kernel[(1,)](x, out, n, B=b, FLIPPED=flipped)
    cols, rows = np.meshgrid(np.arange(b), np.arange(b))
    inside = cols < n - (b - 1 - rows if flipped else rows)
    np.testing.assert_array_equal(out, np.where(inside, x.astype(np.float64) * 2.0, -6.0).astype(np.float32))


def test_a_row_copied_into_a_buffer_stays_in_its_loop(tmp_path, monkeypatch):
    """A softmax copies its row into a buffer in the loop that also takes the row's max. Where that
    loop has no per-chunk test (the row inside its mask), LLVM would make the copy a ``memcpy``
    call, a second pass over the row; the kernels forbid it (``KEEP_LOOPS``)."""
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    k = tritium.compile(softmax_kernel, signature="*fp32, *fp32, i32, i32, i32, i32", constants={"BLOCK": BLOCK},
                        target="cpu")
    assert "memcpy" not in k.asm["asm"] and "memset" not in k.asm["asm"]
