"""The cpu target prefetches the next program's row while a program computes (``passes.prefetch``):
the hint reaches the machine code, and the last program's prefetch, past the end of the data
(here into a page that may not be read), neither faults nor changes a result."""

import ctypes
import mmap
import platform

import numpy as np
import pytest

import tritium
import tritium.language as tl

X86 = platform.machine().lower() in ("x86_64", "amd64")
N = 256  # a row: 1 KiB of fp32


@tritium.jit
def scale_rows(x_ptr, out_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    tl.store(out_ptr + row * N + tl.arange(0, N), x / tl.sum(x))


def test_the_cpu_stages_prefetch_the_next_row(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    kernel = tritium.compile(scale_rows, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, constants={"N": N}, target="cpu")
    assert kernel.asm["tile-layout"].count('"tile.prefetch"') == 1
    if X86:
        assert "prefetcht0" in kernel.asm["asm"]


@pytest.mark.skipif(platform.system() != "Linux", reason="mprotect through libc")
def test_the_last_program_s_prefetch_past_the_data_is_harmless():
    page = mmap.PAGESIZE
    region = mmap.mmap(-1, 2 * page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.mprotect(ctypes.c_void_p(base + page), ctypes.c_size_t(page), 0) == 0  # PROT_NONE
    rows = page // (4 * N)
    x = np.frombuffer(region, np.float32, rows * N).reshape(rows, N)
    x[:] = np.random.default_rng(0).random((rows, N), dtype=np.float32) + 0.5
    out = np.zeros_like(x)
    scale_rows[(rows,)](x, out, N=N)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(out, x64 / x64.sum(axis=1, keepdims=True), rtol=1e-5)
    del x
