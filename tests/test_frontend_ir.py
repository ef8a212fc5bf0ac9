"""The frontend and the target-neutral passes, checked on the text of the `tile` stages."""

import re

import pytest

import tritium
import tritium.language as tl

from .kernels.basic import add_kernel, binop_kernel, loops_kernel
from .kernels.frontend_only import FrontendOnly


@pytest.fixture(autouse=True)
def no_disk_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))


def compile_ir(fn, signature, constants=None):
    return tritium.compile(fn, signature=signature, constants=constants or {}, target=FrontendOnly()).asm


def test_vector_add_tile_ops():
    asm = compile_ir(add_kernel, "*fp32, *fp32, *fp32, i32", {"BLOCK": 128})
    tile = asm["tile"]
    assert "func.func public @add_kernel(" in tile
    assert '"tile.program_id"() {axis = 0 : i32} : () -> i32' in tile
    assert '"tile.make_range"() {end = 128 : i32, start = 0 : i32} : () -> tensor<128xi32>' in tile
    assert "arith.cmpi slt" in tile
    assert len(re.findall(r'"tile.load"\(%\w+, %\w+\)', tile)) == 2
    assert re.search(r'"tile.store"\(%\w+, %\w+, %\w+\)', tile)
    assert "tensor<128x!tile.ptr<f32, 1 : i32>>" in tile


def test_calls_are_inlined_and_helpers_removed():
    asm = compile_ir(loops_kernel, "*fp32, *fp32, i32", {"BLOCK": 32})
    assert re.search(r"call @twice__\d+", asm["tile"])
    assert "func.func private @twice" in asm["tile"]
    assert "call @" not in asm["tile-opt"] and "@twice" not in asm["tile-opt"]


def test_control_flow_becomes_scf():
    tile = compile_ir(loops_kernel, "*fp32, *fp32, i32", {"BLOCK": 32})["tile"]
    assert re.search(r"scf.for %\w+ = %\w+ to %\w+ step %\w+ iter_args\(%\w+ = %\w+\) -> \(tensor<32xf32>\)", tile)
    assert "scf.while" in tile and "scf.condition" in tile
    assert re.search(r"scf.if %\w+ -> \(f32\)", tile)


@pytest.mark.parametrize("op,types,expect", [
    ("floordiv", "*i32, *i32, *i32, i32", "arith.divsi"),
    ("mod", "*i32, *i32, *i32, i32", "arith.remsi"),
    ("mod", "*fp32, *fp32, *fp32, i32", "arith.remf"),
    ("floordiv", "*u32, *u32, *u32, i32", "arith.divui"),
    ("add", "*i32, *fp32, *fp32, i32", "arith.sitofp"),
    ("add", "*fp16, *fp32, *fp64, i32", "arith.extf"),
    ("truediv", "*i32, *i32, *i32, i32", "arith.fptosi"),
])
def test_typing_rules(op, types, expect):
    tile = compile_ir(binop_kernel, types, {"OP": op, "BLOCK": 16})["tile"]
    assert expect in tile


def test_constexpr_branches_are_resolved_statically():
    tile = compile_ir(binop_kernel, "*fp32, *fp32, *fp32, i32", {"OP": "max", "BLOCK": 16})["tile"]
    assert "arith.maxnumf" in tile and "scf.if" not in tile and "arith.select" not in tile


def test_canonicalize_and_cse_run():
    asm = compile_ir(add_kernel, "*fp32, *fp32, *fp32, i32", {"BLOCK": 64})
    # the frontend emits one splat of `offs < n`'s operand per use; cse leaves one make_range
    assert asm["tile-opt"].count('"tile.make_range"') == 1


def test_dump_writes_every_stage(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_DUMP", "all")
    monkeypatch.setenv("TRITIUM_DUMP_DIR", str(tmp_path / "dump"))
    compile_ir(add_kernel, "*fp32, *fp32, *fp32, i32", {"BLOCK": 64})
    files = sorted(p.name for p in (tmp_path / "dump").iterdir())
    assert files == ["add_kernel.tile-opt.mlir", "add_kernel.tile.mlir"]
    assert "tile.make_range" in (tmp_path / "dump" / "add_kernel.tile.mlir").read_text()


def test_tile_ir_parses_back():
    from tritium.ir import tile
    from tritium.ir.mlir import ir

    text = compile_ir(loops_kernel, "*fp32, *fp32, i32", {"BLOCK": 32})["tile-opt"]
    with tile.context():
        module = ir.Module.parse(text)
        module.operation.verify()
        assert str(module) == text


def test_dump_from_a_cache_hit(monkeypatch, tmp_path):
    compile_ir(add_kernel, "*fp32, *fp32, *fp32, i32", {"BLOCK": 32})
    monkeypatch.setenv("TRITIUM_DUMP", "tile-opt")
    monkeypatch.setenv("TRITIUM_DUMP_DIR", str(tmp_path / "dump"))
    compile_ir(add_kernel, "*fp32, *fp32, *fp32, i32", {"BLOCK": 32})
    assert [p.name for p in (tmp_path / "dump").iterdir()] == ["add_kernel.tile-opt.mlir"]


def test_stored_arguments_are_recorded():
    from .kernels.basic import pointer_walk_kernel

    k = tritium.compile(pointer_walk_kernel, signature="*fp32, *fp32, *fp32, i32, i32",
                        constants={"BLOCK": 16}, target=FrontendOnly())
    assert k.metadata["stored_args"] == [1, 2]  # dst_ptr through the loop, other_ptr through where
    assert k.written_args == ("dst_ptr", "other_ptr")
    k = tritium.compile(add_kernel, signature="*fp32, *fp32, *fp32, i32", constants={"BLOCK": 16},
                        target=FrontendOnly())
    assert k.written_args == ("out_ptr",)


def test_the_bindings_find_the_tile_dialect_module():
    """Ops handed out by the bindings are the dialect's own classes: the bindings know where its
    Python module lives (otherwise they retry a failing import on every tile op, which made
    every pass over tile IR about ten times slower)."""
    import importlib

    from tritium.ir import tile
    from tritium.ir.mlir import PROVIDER, ir

    with tile.context(), ir.Location.unknown():
        m = ir.Module.parse('func.func @f() {\n %0 = "tile.make_range"() {start = 0 : i32, end = 8 : i32} '
                            ': () -> tensor<8xi32>\n return\n}')
        op = m.body.operations[0].regions[0].blocks[0].operations[0]
        assert isinstance(op, tile.MakeRangeOp)
        assert importlib.import_module(f"{PROVIDER}._mlir_libs._mlir").globals._check_dialect_module_loaded("tile")


def test_f_strings_format_compile_time_values_only():
    import tritium.language as tl

    @tritium.jit
    def formatted(x_ptr, OP: tl.constexpr, WIDTH: tl.constexpr):
        tl.static_assert(f"atomic_{OP}:{WIDTH:03d}!r{OP!r}" == "atomic_max:016!r'max'")
        getattr(tl, f"atomic_{OP}")(x_ptr, 1)

    assert '"tile.atomic_rmw"' in compile_ir(formatted, "*i32", {"OP": "max", "WIDTH": 16})["tile"]

    @tritium.jit
    def runtime_value(x_ptr):
        tl.static_print(f"{tl.load(x_ptr)}")

    with pytest.raises(tritium.CompilationError, match="an f-string in a kernel formats compile-time values"):
        compile_ir(runtime_value, "*i32")


@tritium.jit
def int_to_pointer(table_ptr, out_ptr):
    p = tl.load(table_ptr).to(tl.pointer_type(tl.float16))
    tl.store(out_ptr, tl.load(p).to(tl.float32))


def test_an_address_becomes_a_pointer_through_ptr_cast():
    """Triton's int_to_ptr (its grouped GEMM reads operand addresses from a table): an int64
    becomes a pointer, the address unchanged, with one op every target lowers."""
    tile = compile_ir(int_to_pointer, "*i64, *fp32")["tile"]
    assert re.search(r'"tile.ptr_cast"\(%\w+\) : \(i64\) -> !tile.ptr<f16, 1 : i32>', tile), tile
