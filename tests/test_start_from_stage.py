"""Starting the pipeline from a stage's text: ``tritium.compile(..., source=)`` and ``TRITIUM_OVERRIDE_DIR``.

The kernel doubles its input; the tests edit the dumped ``2.0`` to ``3.0`` in one stage and check
that the compiled kernel computes ``3 * x`` (numpy), so the edit and nothing older ran.
"""

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.errors import ArgumentError, CompilationError

pytestmark = pytest.mark.filterwarnings("ignore:.*overridden from:UserWarning")

SIGNATURE, CONSTANTS, N = "*fp32, *fp32, i32", {"BLOCK": 32}, 100
#: the constant 2.0 in each stage's text, and what the tests change it to
EDITS = {"tile-layout": ("2.000000e+00 : f32", "3.000000e+00 : f32"),
         "llir": ("float 0x4000000000000000", "float 0x4008000000000000")}
FILES = {"tile-layout": "scale_kernel.tile-layout.mlir", "llir": "scale_kernel.llir.ll"}


@tritium.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


@pytest.fixture(autouse=True)
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITIUM_DUMP_DIR", str(tmp_path / "dump"))
    monkeypatch.delenv("TRITIUM_DUMP", raising=False)
    monkeypatch.delenv("TRITIUM_OVERRIDE_DIR", raising=False)


X = np.linspace(-3, 5, N, dtype=np.float32)


def factor(kernel, compiled: bool = True) -> float:
    """Launch (a compiled kernel, or a @jit one with the constants) on ``X``; the factor it applied,
    checked against numpy on every element."""
    y = np.zeros_like(X)
    grid = (-(-N // CONSTANTS["BLOCK"]),)
    kernel[grid](X, y, N) if compiled else kernel[grid](X, y, N, **CONSTANTS)
    f = float(y[-1] / X[-1])
    np.testing.assert_array_equal(y, (X.astype(np.float64) * f).astype(np.float32))
    return f


@pytest.fixture
def dumped(monkeypatch, tmp_path):
    """Every stage of the kernel dumped (for cpu, where the tests launch: they pass numpy arrays);
    the directory of dumps."""
    monkeypatch.setenv("TRITIUM_DUMP", "all")
    monkeypatch.setenv("TRITIUM_TARGET", "cpu")
    tritium.compile(scale_kernel, signature=SIGNATURE, constants=CONSTANTS, target="cpu")
    monkeypatch.delenv("TRITIUM_DUMP")
    return tmp_path / "dump"


def edited(dumped, stage: str) -> str:
    old, new = EDITS[stage]
    text = (dumped / FILES[stage]).read_text()
    assert text.count(old) >= 1, f"the {stage} dump no longer holds {old!r}"  # in llir, once a loop version
    return text.replace(old, new)


@pytest.mark.parametrize("stage", sorted(EDITS))
def test_compile_from_an_edited_stage_text(dumped, stage):
    compiled = tritium.compile(scale_kernel, signature=SIGNATURE, constants=CONSTANTS, target="cpu",
                               source=edited(dumped, stage), stage=stage)
    assert factor(compiled) == 3.0
    stages = ["tile", "tile-opt", "tile-layout", "llir", "asm", "obj"]
    assert list(compiled.asm) == stages[stages.index(stage):]  # the given stage and those that ran
    # stored_args is recomputed from a given tile module; LLVM IR leaves it unknown (every pointer)
    assert compiled.metadata.get("stored_args") == ([1] if stage == "tile-layout" else None)
    assert compiled.written_args == (("y_ptr",) if stage == "tile-layout" else ("x_ptr", "y_ptr"))


def test_compile_from_a_dump_file_reads_the_stage_from_its_name(dumped, tmp_path):
    path = tmp_path / FILES["tile-layout"]
    path.write_text(edited(dumped, "tile-layout"))
    compiled = tritium.compile(scale_kernel, signature=SIGNATURE, constants=CONSTANTS, target="cpu", source=str(path))
    assert factor(compiled) == 3.0 and list(compiled.asm)[0] == "tile-layout"


def test_the_override_directory_replaces_a_stage_at_launch(dumped, monkeypatch, tmp_path):
    overrides = tmp_path / "overrides"
    overrides.mkdir()
    (overrides / FILES["tile-layout"]).write_text(edited(dumped, "tile-layout"))
    assert factor(scale_kernel, compiled=False) == 2.0  # compiled and cached without the override
    monkeypatch.setenv("TRITIUM_OVERRIDE_DIR", str(overrides))
    with pytest.warns(UserWarning, match=r"stage 'tile-layout' overridden from file '.*scale_kernel.tile-layout.mlir'"):
        assert factor(scale_kernel, compiled=False) == 3.0  # the cached binary is not served
    # an edit of the override file is part of the disk-cache key: never served stale (a process
    # compiles a kernel once: a new process reads the edit)
    scale_kernel.kernels.clear()
    (overrides / FILES["tile-layout"]).write_text(edited(dumped, "tile-layout").replace("3.0", "4.0"))
    with pytest.warns(UserWarning, match="overridden from"):
        assert factor(scale_kernel, compiled=False) == 4.0
    scale_kernel.kernels.clear()  # a disk-cache hit of an overridden kernel warns as well
    with pytest.warns(UserWarning, match="stage 'tile-layout' overridden from"):
        assert factor(scale_kernel, compiled=False) == 4.0
    assert all(k.cache_hit for k in scale_kernel.kernels.values())
    monkeypatch.delenv("TRITIUM_OVERRIDE_DIR")  # and the overridden binary never serves a run without it
    assert factor(scale_kernel, compiled=False) == 2.0


def test_the_last_overridden_stage_wins_and_the_warning_says_so(dumped, monkeypatch, tmp_path):
    overrides = tmp_path / "overrides"
    overrides.mkdir()
    (overrides / FILES["tile-layout"]).write_text(edited(dumped, "tile-layout"))
    (overrides / FILES["llir"]).write_text((dumped / FILES["llir"]).read_text())  # unedited
    monkeypatch.setenv("TRITIUM_OVERRIDE_DIR", str(overrides))
    with pytest.warns(UserWarning, match=r"stage 'llir' overridden .* the earlier stages tile-layout have no effect"):
        compiled = tritium.compile(scale_kernel, signature=SIGNATURE, constants=CONSTANTS, target="cpu")
    assert factor(compiled) == 2.0


def test_malformed_mlir_names_the_stage_and_the_parse_error(dumped):
    text = edited(dumped, "tile-layout").replace("arith.mulf", "arith.mulff")
    with pytest.raises(CompilationError, match=r"(?s)scale_kernel.*cannot parse the 'tile-layout' stage's text .*"
                                               r"as MLIR.*arith.mulff"):
        tritium.compile(scale_kernel, signature=SIGNATURE, constants=CONSTANTS, target="cpu",
                        source=text, stage="tile-layout")


def test_malformed_llvm_ir_names_the_stage_that_refused_it(dumped):
    text = edited(dumped, "llir").replace("fmul", "fmull")
    with pytest.raises(CompilationError, match=r"(?s)stage 'asm' failed on the 'llir' stage's text.*fmull"):
        tritium.compile(scale_kernel, signature=SIGNATURE, constants=CONSTANTS, target="cpu",
                        source=text, stage="llir")


def test_a_stage_that_needs_an_earlier_output_says_so(dumped):
    # the cpu target's obj stage compiles the llir stage's output: it cannot start from assembly
    with pytest.raises(CompilationError, match=r"stage 'obj' needs the output of stage 'llir', which did not run"):
        tritium.compile(scale_kernel, signature=SIGNATURE, constants=CONSTANTS, target="cpu",
                        source=(dumped / "scale_kernel.asm.s").read_text(), stage="asm")


def test_unknown_stage_lists_the_stages():
    with pytest.raises(ArgumentError, match=r"no stage 'tile-layouts' to start from; the stages are "
                                            r"tile, tile-opt, tile-layout, llir, asm, obj"):
        tritium.compile(scale_kernel, signature=SIGNATURE, constants=CONSTANTS, target="cpu",
                        source="module {}", stage="tile-layouts")


def test_mlir_without_the_kernel_function_is_refused():
    with pytest.raises(CompilationError, match=r"defines no function 'scale_kernel' \(it defines: none\)"):
        tritium.compile(scale_kernel, signature=SIGNATURE, constants=CONSTANTS, target="cpu",
                        source="module {}", stage="tile-opt")


def test_mlir_whose_parameters_differ_from_the_signature_is_refused(dumped):
    with pytest.raises(CompilationError, match=r"gives 'scale_kernel' the parameters \(!tile.ptr<f32, 1 : i32>, "
                                               r"!tile.ptr<f32, 1 : i32>, i32\), but the signature \(\*fp16, "):
        tritium.compile(scale_kernel, signature="*fp16, *fp16, i32", constants=CONSTANTS, target="cpu",
                        source=edited(dumped, "tile-layout"), stage="tile-layout")


def test_an_override_named_for_one_specialisation_is_ignored_with_a_warning(dumped, monkeypatch, tmp_path):
    overrides = tmp_path / "overrides"
    overrides.mkdir()
    (overrides / "scale_kernel.0123abcd.tile-layout.mlir").write_text(edited(dumped, "tile-layout"))
    monkeypatch.setenv("TRITIUM_OVERRIDE_DIR", str(overrides))
    with pytest.warns(UserWarning, match=r"is ignored: .* name it 'scale_kernel.tile-layout.mlir'"):
        compiled = tritium.compile(scale_kernel, signature=SIGNATURE, constants=CONSTANTS, target="cpu")
    assert factor(compiled) == 2.0 and "tile" in compiled.asm


def test_compile_from_a_dumped_binary_loads_it_as_it_is(dumped):
    compiled = tritium.compile(scale_kernel, signature=SIGNATURE, constants=CONSTANTS, target="cpu",
                               source=dumped / "scale_kernel.obj.o")
    assert list(compiled.asm) == ["obj"] and compiled.binary == (dumped / "scale_kernel.obj.o").read_bytes()
    assert factor(compiled) == 2.0
