"""The cpu target prefetches the lines a row kernel will store while it computes the row
(``passes.prefetch``): the hint reaches the machine code, and a prefetch of lanes the mask leaves
out, past the end of the data (here into a page that may not be touched), neither faults nor
changes a result."""

import ctypes
import mmap
import platform

import numpy as np
import pytest

import tritium
import tritium.language as tl

X86 = platform.machine().lower() in ("x86_64", "amd64")


@tritium.jit
def softmax_rows(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n + cols, e / tl.sum(e, axis=0), mask=cols < n)


def test_the_cpu_stages_prefetch_the_stored_row_for_writing(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    kernel = tritium.compile(softmax_rows, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                             constants={"BLOCK": 256}, target="cpu")
    assert kernel.asm["tile-layout"].count('"tile.prefetch"') == 1
    if X86:
        assert "prefetchw" in kernel.asm["asm"]


@pytest.mark.skipif(platform.system() != "Linux", reason="mprotect through libc")
def test_prefetching_masked_lanes_past_the_data_is_harmless():
    page = mmap.PAGESIZE
    region = mmap.mmap(-1, 2 * page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.mprotect(ctypes.c_void_p(base + page), ctypes.c_size_t(page), 0) == 0  # PROT_NONE
    n = 100  # a row of 100 in a block of 256: the last row's masked lanes lie in the protected page
    rows = page // (4 * n)
    out = np.frombuffer(region, np.float32, rows * n, offset=page - 4 * rows * n).reshape(rows, n)
    x = np.random.default_rng(0).standard_normal((rows, n), dtype=np.float32)
    softmax_rows[(rows,)](x, out, n, BLOCK=256)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    del out
