"""tile.print / tile.assert in the IR, the shared formatter, and the interpreter's side of
print / tl.device_print / tl.static_print / tl.device_assert (cpu: targets/cpu/tests)."""

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.errors import CompilationError, DeviceAssertionError
from tritium.ir import tile
from tritium.ir.mlir import ir, passmanager
from tritium.runtime import debug_output

from .kernels.frontend_only import FrontendOnly


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITIUM_TARGET", "interpreter")
    monkeypatch.delenv("TRITIUM_DEBUG", raising=False)


@tritium.jit
def debug_kernel(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_print("x", x)
    tl.device_assert(x < 5, "below 5", mask=x != 5)


def test_tile_ops_print_parse_and_verify():
    text = """
    module {
      func.func public @k(%x: i32, %c: i1) {
        "tile.print"(%x) {prefix = " x: ", hex = 1 : i32, is_signed = 1 : i32, operand = 0 : i32, count = 1 : i32,
                          operandSegmentSizes = array<i32: 1>} : (i32) -> ()
        "tile.print"() {prefix = "hello", hex = 0 : i32, is_signed = 0 : i32, operand = 0 : i32, count = 0 : i32,
                        operandSegmentSizes = array<i32: 0>} : () -> ()
        "tile.assert"(%c) {message = "m", file = "f.py", line = 3 : i32} : (i1) -> ()
        return
      }
    }"""
    with tile.context():
        module = ir.Module.parse(text)
        module.operation.verify()
        ops = [op.operation for op in module.body.operations[0].regions[0].blocks[0].operations]
        assert [op.name for op in ops] == ["tile.print", "tile.print", "tile.assert", "func.return"]
        assert ir.StringAttr(ops[0].attributes["prefix"]).value == " x: "
        reparsed = ir.Module.parse(str(module))
        reparsed.operation.verify()
        assert str(reparsed) == str(module)
        # nothing uses them, yet canonicalize / cse / dce keep them: they are side effects
        passmanager.PassManager.parse("builtin.module(canonicalize,cse,symbol-dce,canonicalize)").run(
            module.operation)
        kept = [op.operation.name for op in module.body.operations[0].regions[0].blocks[0].operations]
        assert kept == ["tile.print", "tile.print", "tile.assert", "func.return"]


@pytest.mark.parametrize("debug", [False, True])
def test_frontend_emits_asserts_only_in_debug_mode_and_tile_opt_keeps_them(debug):
    asm = tritium.compile(debug_kernel, signature="*fp32", constants={"BLOCK": 4}, target=FrontendOnly(),
                          debug=debug).asm
    assert asm["tile-opt"].count('"tile.print"') == 1
    assert 'prefix = " x: "' in asm["tile-opt"] and "is_signed = 0 : i32" in asm["tile-opt"]
    assert ('"tile.assert"' in asm["tile-opt"]) is debug
    if debug:
        line = debug_kernel.first_line + 4
        assert f'line = {line} : i32, message = "below 5"' in asm["tile-opt"]


def test_prefix_follows_triton():
    assert debug_output.print_prefix("x", True) == " x: "
    assert debug_output.print_prefix("x: ", True) == " x: "
    assert debug_output.print_prefix("", True) == ": "
    assert debug_output.print_prefix("done", False) == " done"
    assert debug_output.print_prefix("", False) == ""


def test_format_of_values_and_indices():
    lines = debug_output.print_lines(" v: ", (1, 2, 3), [(np.arange(12, dtype=np.int16).reshape(1, 12),
                                                           tl.int16)], False)
    assert lines[0] == "pid (1, 2, 3) idx (0,  0) v: 0"
    assert lines[11] == "pid (1, 2, 3) idx (0, 11) v: 11"
    assert debug_output.format_value(np.float32(-1.25), tl.float32, False) == "-1.250000"
    assert debug_output.format_value(np.float32(np.inf), tl.float32, False) == "inf"
    assert debug_output.format_value(np.uint16(0x3F80), tl.bfloat16, False) == "1.000000"
    assert debug_output.format_value(np.uint16(0x3F80), tl.bfloat16, True) == "0x3f80"
    assert debug_output.format_value(np.int8(-128), tl.int8, True) == "0x80"
    assert debug_output.format_value(np.bool_(True), tl.int1, False) == "1"


def test_interpreter_device_print_and_assert_with_mask(capsys):
    x = np.array([1, 5, 3, 2], np.float32)
    debug_kernel[(1,)](x, BLOCK=4, debug=True)  # x[1] == 5 fails x < 5, but the mask leaves it out
    assert capsys.readouterr().out.splitlines() == [f"pid (0, 0, 0) idx ({i}) x: {v:f}" for i, v in enumerate(x)]
    x[3] = 9
    with pytest.raises(DeviceAssertionError, match=r"below 5 \(pid \(0, 0, 0\) idx \(3\)\)"):
        debug_kernel[(1,)](x, BLOCK=4, debug=True)
    debug_kernel[(1,)](x, BLOCK=4)  # debug off: not checked


@tritium.jit
def static_print_loop(x_ptr, N: tl.constexpr):
    for i in range(N):
        tl.static_print("N", N)
        tl.device_print("i", i)


def test_interpreter_static_print_once_per_launch(capsys):
    static_print_loop[(2,)](np.zeros(1, np.float32), N=3)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "N 3" and out.count("N 3") == 1
    assert out[1:] == [f"pid ({p}, 0, 0) idx () i: {i}" for p in range(2) for i in range(3)]


@tritium.jit
def helper_asserts(x, LIMIT: tl.constexpr):
    assert LIMIT > 0, "LIMIT must be positive"
    assert x < LIMIT, "x under LIMIT"
    return x


@tritium.jit
def calls_helper(x_ptr, LIMIT: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    tl.store(x_ptr + tl.arange(0, 4), helper_asserts(x, LIMIT))


def test_interpreter_assert_statements_in_helpers():
    x = np.array([1, 2, 9, 3], np.int32)
    calls_helper[(1,)](x, LIMIT=5)  # debug off: the tensor assert is not checked
    with pytest.raises(DeviceAssertionError, match=r"x under LIMIT \(pid \(0, 0, 0\) idx \(2\)\)") as e:
        calls_helper[(1,)](x, LIMIT=5, debug=True)
    assert e.value.lineno == helper_asserts.first_line + 3
    with pytest.raises(CompilationError, match="static assertion failed: LIMIT must be positive"):
        calls_helper[(1,)](x, LIMIT=0)


def test_device_print_needs_a_string_prefix():
    with pytest.raises(CompilationError, match="prefix, a string"):
        tritium.compile(bad_prefix, signature="i32", target=FrontendOnly())


@tritium.jit
def bad_prefix(n):
    tl.device_print(n)
