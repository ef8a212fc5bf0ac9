"""A kernel through the whole cpu pipeline as users drive it: every stage named, dumped and kept."""

import re

import numpy as np
import pytest

import tritium
import tritium.language as tl


@tritium.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)


STAGES = ["tile", "tile-opt", "tile-layout", "llir", "asm", "obj"]


def test_every_stage_is_dumped_and_kept(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITIUM_DUMP", "all")
    monkeypatch.setenv("TRITIUM_DUMP_DIR", str(tmp_path / "dump"))
    k = tritium.compile(scale_kernel, signature="*fp32, *fp32, i32, fp32", constants={"BLOCK": 256},
                        target="cpu")
    assert list(k.asm) == STAGES
    assert "#tile.blocked<" in k.asm["tile-layout"] and "#tile.blocked<" not in k.asm["tile-opt"]
    assert re.search(r"define .*@\"?scale_kernel_grid\"?\(", k.asm["llir"])
    assert "scale_kernel_grid" in k.asm["asm"]
    assert k.asm["obj"][:4] == b"\x7fELF"
    dumped = sorted(p.name for p in (tmp_path / "dump").iterdir())
    assert dumped == sorted(["scale_kernel.tile.mlir", "scale_kernel.tile-opt.mlir",
                             "scale_kernel.tile-layout.mlir", "scale_kernel.llir.ll", "scale_kernel.asm.s",
                             "scale_kernel.obj.o"])

    x = np.linspace(-1, 1, 1000, dtype=np.float32)
    out = np.zeros_like(x)
    k[(4,)](x, out, 1000, 0.5)
    np.testing.assert_array_equal(out, x * np.float32(0.5))


def test_compiled_kernel_checks_its_arguments(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    k = tritium.compile(scale_kernel, signature="*fp32, *fp32, i32, fp32", constants={"BLOCK": 64},
                        target="cpu")
    with pytest.raises(tritium.ArgumentError, match="takes 4 runtime arguments"):
        k[(1,)](np.zeros(4, np.float32))
    with pytest.raises(tritium.ArgumentError, match="kernel 'scale_kernel'.*'x_ptr'"):
        k[(1,)]([1.0], np.zeros(4, np.float32), 4, 1.0)
