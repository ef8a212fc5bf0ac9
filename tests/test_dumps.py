"""TRITIUM_DUMP in degraded cases: unknown stage names, several specialisations of one kernel, and a
dump directory that cannot be written."""

import pytest

import tritium

from .kernels.basic import add_kernel
from .kernels.frontend_only import FrontendOnly


@pytest.fixture(autouse=True)
def dump_env(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITIUM_DUMP_DIR", str(tmp_path / "dump"))


def compile_block(block: int):
    return tritium.compile(add_kernel, signature="*fp32, *fp32, *fp32, i32", constants={"BLOCK": block},
                           target=FrontendOnly())


def test_unknown_stage_name_warns_with_the_stage_names(monkeypatch):
    monkeypatch.setenv("TRITIUM_DUMP", "tile-opt,llvm-ir")
    with pytest.warns(UserWarning, match=r"TRITIUM_DUMP names no stage 'llvm-ir'; the stages are tile, tile-opt"):
        compile_block(16)


def test_specialisations_do_not_overwrite_each_other(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_DUMP", "tile-opt")
    k16, k32 = compile_block(16), compile_block(32)
    dump = tmp_path / "dump"
    files = sorted(p.name for p in dump.iterdir())
    assert len(files) == 2 and "add_kernel.tile-opt.mlir" in files  # the first keeps the plain name
    (other,) = [f for f in files if f != "add_kernel.tile-opt.mlir"]
    assert other.startswith("add_kernel.") and other.endswith(".tile-opt.mlir")
    assert (dump / "add_kernel.tile-opt.mlir").read_text() == k16.asm["tile-opt"]
    assert (dump / other).read_text() == k32.asm["tile-opt"] != k16.asm["tile-opt"]
    compile_block(16)  # a cache hit of the first dumps to its own name again
    assert sorted(p.name for p in dump.iterdir()) == files


def test_a_dump_directory_that_cannot_be_written_warns_once_and_the_kernel_runs(compiling_target, monkeypatch,
                                                                                 tmp_path):
    import warnings

    import numpy as np

    from tritium.passes import pipeline

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("TRITIUM_DUMP", "all")
    monkeypatch.setenv("TRITIUM_DUMP_DIR", str(blocker))
    monkeypatch.setattr(pipeline, "_warned_dirs", set())
    x = np.arange(100, dtype=np.float32)
    xd, outd = compiling_target.driver.to_device(x), compiling_target.driver.to_device(np.zeros_like(x))
    add_kernel.kernels.clear()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        for block in (64, 128):  # two compiles, one warning
            add_kernel[(tritium.cdiv(100, block),)](xd, xd, outd, 100, BLOCK=block)
    (w,) = got
    assert f"cannot write dumps to {blocker}" in str(w.message) and w.filename == __file__
    np.testing.assert_array_equal(compiling_target.driver.to_host(outd), 2 * x)
    assert blocker.read_text() == ""
