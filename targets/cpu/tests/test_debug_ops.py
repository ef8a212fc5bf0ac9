"""print / tl.device_print / tl.static_print / tl.device_assert on cpu: the same text and the same
errors as the interpreter, and the text Triton's device-side format gives."""

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.errors import DeviceAssertionError


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRITIUM_DEBUG", raising=False)


@tritium.jit
def print_block(x_ptr, BLOCK: tl.constexpr, HEX: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.device_print("x", tl.load(x_ptr + offs), hex=HEX)


@tritium.jit
def print_mixed(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    print("values", pid, x > 2, x * 2)   # builtin print is device_print, as in Triton
    tl.device_print("n is", n)
    tl.device_print("only a prefix")


@tritium.jit
def print_2d(x_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, C)[None, :]
    tl.device_print("", tl.load(x_ptr + rows * C + cols))


@tritium.jit
def print_after_store(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    old = tl.load(y_ptr + offs)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))
    tl.device_print("old", old)
    tl.device_print("new", tl.load(y_ptr + offs))
    for i in range(2):
        tl.device_print("i", i)


def run_both(monkeypatch, capsys, launch):
    """The lines printed by ``launch()`` on cpu and on the interpreter."""
    out = {}
    for target in ("cpu", "interpreter"):
        monkeypatch.setenv("TRITIUM_TARGET", target)
        launch()
        out[target] = capsys.readouterr().out.splitlines()
    return out["cpu"], out["interpreter"]


def expected_lines(prefix, pid, values, fmt):
    return [f"pid ({pid}, 0, 0) idx ({i}){prefix}{fmt(v)}" for i, v in enumerate(values)]


DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float16, np.float32, np.float64, np.bool_]


@pytest.mark.parametrize("np_type", DTYPES, ids=lambda t: np.dtype(t).name)
def test_device_print_of_blocks_matches_the_interpreter(monkeypatch, capsys, np_type):
    rng = np.random.default_rng(0)
    if np_type is np.bool_:
        x = rng.random(16) < 0.5
    elif np.issubdtype(np_type, np.integer):
        info = np.iinfo(np_type)
        x = rng.integers(info.min, info.max, 16, dtype=np_type, endpoint=True)
    else:
        x = (rng.standard_normal(16) * 100).astype(np_type)
    cpu, interp = run_both(monkeypatch, capsys, lambda: print_block[(2,)](x, BLOCK=8, HEX=False))
    fmt = (lambda v: str(int(v))) if not np.issubdtype(np_type, np.floating) else (lambda v: f"{float(v):f}")
    expected = expected_lines(" x: ", 0, x[:8], fmt) + expected_lines(" x: ", 1, x[8:], fmt)
    assert cpu == interp == expected


@pytest.mark.parametrize("np_type, values, text", [
    (np.int8, [-1, 5], ["0xff", "0x05"]),
    (np.int32, [-2, 255], ["0xfffffffe", "0x000000ff"]),
    (np.uint16, [65535, 1], ["0xffff", "0x0001"]),
    (np.int64, [-1, 1], ["0xffffffffffffffff", "0x0000000000000001"]),
    (np.float32, [1.0, -2.0], ["0x3f800000", "0xc0000000"]),
    (np.float16, [1.0, 0.5], ["0x3c00", "0x3800"]),
    (np.float64, [1.0, 0.0], ["0x3ff0000000000000", "0x0000000000000000"]),
])
def test_device_print_hex_shows_every_bit_of_the_type(monkeypatch, capsys, np_type, values, text):
    x = np.array(values, dtype=np_type)
    cpu, interp = run_both(monkeypatch, capsys, lambda: print_block[(1,)](x, BLOCK=2, HEX=True))
    assert cpu == interp == [f"pid (0, 0, 0) idx ({i}) x: {t}" for i, t in enumerate(text)]


def test_print_of_scalars_and_several_values(monkeypatch, capsys):
    x = np.array([1.5, 2.5, 3.5, 4.5], np.float32)
    cpu, interp = run_both(monkeypatch, capsys, lambda: print_mixed[(2,)](x, -7, BLOCK=4))
    program = lambda p: (  # noqa: E731
        [f"pid ({p}, 0, 0) idx () values: (operand 0) {p}"]
        + [f"pid ({p}, 0, 0) idx ({i}) values: (operand 1) {int(v > 2)}" for i, v in enumerate(x)]
        + [f"pid ({p}, 0, 0) idx ({i}) values: (operand 2) {v * 2:f}" for i, v in enumerate(x)]
        + [f"pid ({p}, 0, 0) idx () n is: -7", f"pid ({p}, 0, 0) only a prefix"])
    assert cpu == interp == program(0) + program(1)


def test_print_of_a_2d_block_pads_each_index_to_its_dimension(monkeypatch, capsys):
    x = np.arange(2 * 16, dtype=np.int32)
    cpu, interp = run_both(monkeypatch, capsys, lambda: print_2d[(1,)](x, R=2, C=16))
    assert cpu == interp == [f"pid (0, 0, 0) idx ({r}, {c:2d}): {r * 16 + c}" for r in range(2) for c in range(16)]


def test_print_sees_the_stores_before_it(monkeypatch, capsys):
    x = np.arange(4, dtype=np.int32) + 10

    def launch():
        y = np.zeros(4, np.int32)
        print_after_store[(1,)](x, y, BLOCK=4)

    cpu, interp = run_both(monkeypatch, capsys, launch)
    assert cpu == interp == (expected_lines(" old: ", 0, [0] * 4, str) + expected_lines(" new: ", 0, x, str)
                             + ["pid (0, 0, 0) idx () i: 0", "pid (0, 0, 0) idx () i: 1"])


@tritium.jit
def static_print_kernel(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.static_print("BLOCK =", BLOCK, x)


def test_static_print_prints_when_compiling(monkeypatch, capsys):
    x = np.zeros(8, np.float32)
    cpu, interp = run_both(monkeypatch, capsys, lambda: static_print_kernel[(3,)](x, BLOCK=8))
    assert cpu == interp == ["BLOCK = 8 fp32[constexpr[8]]"]  # Triton's str of a tensor
    monkeypatch.setenv("TRITIUM_TARGET", "cpu")
    static_print_kernel[(3,)](x, BLOCK=8)  # already compiled: nothing to print
    assert capsys.readouterr().out == ""


@tritium.jit
def assert_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x < 100, "x must stay below 100")
    tl.store(y_ptr + offs, x + 1)


@tritium.jit(debug=True)
def assert_statement_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    assert x % 2 == 0, "x is even"
    assert tl.program_id(0) < 1
    tl.store(y_ptr + offs, x)


def both_targets(monkeypatch, launch):
    """``launch()``'s error on cpu and on the interpreter."""
    errors = []
    for target in ("cpu", "interpreter"):
        monkeypatch.setenv("TRITIUM_TARGET", target)
        with pytest.raises(DeviceAssertionError) as e:
            launch()
        errors.append(e.value)
    return errors


def test_device_assert_fails_in_debug_mode_naming_program_and_element(monkeypatch):
    x = np.arange(16, dtype=np.float32)
    x[13] = 500
    y = np.zeros(16, np.float32)
    errors = both_targets(monkeypatch, lambda: assert_kernel[(4,)](x, y, BLOCK=4, debug=True))
    for e in errors:
        assert e.kernel == "assert_kernel" and e.lineno == assert_kernel.first_line + 5
        assert "device assertion failed: x must stay below 100 (pid (3, 0, 0) idx (1))" in str(e)
        assert 'tl.device_assert(x < 100, "x must stay below 100")' in str(e)
    assert str(errors[0]) == str(errors[1])


def test_device_assert_stops_the_failing_program(monkeypatch):
    x = np.arange(16, dtype=np.float32)
    x[5] = 500
    for target in ("cpu", "interpreter"):
        monkeypatch.setenv("TRITIUM_TARGET", target)
        y = np.zeros(16, np.float32)
        with pytest.raises(DeviceAssertionError, match=r"pid \(1, 0, 0\) idx \(1\)"):
            assert_kernel[(4,)](x, y, BLOCK=4, debug=True)
        np.testing.assert_array_equal(y[:4], x[:4] + 1)  # program 0 ran
        np.testing.assert_array_equal(y[4:8], 0)          # program 1 stopped at the assertion
        np.testing.assert_array_equal(y[8:], 0)           # and the launch with it


@pytest.mark.parametrize("how", ["off", "env", "passes"])
def test_device_assert_off_or_passing_changes_nothing(monkeypatch, how):
    x = np.arange(16, dtype=np.float32)
    if how == "off":
        x[13] = 500  # would fail, but debug mode is off: compiled to nothing
    if how == "env":
        monkeypatch.setenv("TRITIUM_DEBUG", "1")
    for target in ("cpu", "interpreter"):
        monkeypatch.setenv("TRITIUM_TARGET", target)
        y = np.zeros(16, np.float32)
        assert_kernel[(4,)](x, y, BLOCK=4)
        np.testing.assert_array_equal(y, x + 1)


def test_tritium_debug_turns_device_assert_on(monkeypatch):
    monkeypatch.setenv("TRITIUM_DEBUG", "1")
    x = np.arange(16, dtype=np.float32)
    x[0] = 100
    errors = both_targets(monkeypatch, lambda: assert_kernel[(4,)](x, np.zeros(16, np.float32), BLOCK=4))
    assert all("pid (0, 0, 0) idx (0)" in str(e) for e in errors)


def test_assert_statement_on_tensors_is_a_device_assert(monkeypatch):
    x = np.array([0, 2, 3, 4], np.int32)
    errors = both_targets(monkeypatch, lambda: assert_statement_kernel[(1,)](x, np.zeros(4, np.int32), BLOCK=4))
    assert all("device assertion failed: x is even (pid (0, 0, 0) idx (2))" in str(e) for e in errors)
    x[2] = 6
    errors = both_targets(monkeypatch, lambda: assert_statement_kernel[(2,)](x, np.zeros(4, np.int32), BLOCK=4))
    assert all("device assertion failed: assertion failed (pid (1, 0, 0) idx ())" in str(e) for e in errors)
    assert str(errors[0]) == str(errors[1])


@tritium.jit
def print_pointers(x_ptr, BLOCK: tl.constexpr):
    tl.device_print("p", x_ptr + tl.arange(0, BLOCK))


def test_print_of_pointers_shows_addresses(monkeypatch, capsys):
    x = np.zeros(4, np.float64)
    cpu, interp = run_both(monkeypatch, capsys, lambda: print_pointers[(1,)](x, BLOCK=4))
    assert cpu == interp == [f"pid (0, 0, 0) idx ({i}) p: 0x{x.ctypes.data + 8 * i:x}" for i in range(4)]


@tritium.jit
def assert_2d(x_ptr, R: tl.constexpr, C: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    tl.device_assert(x != 7, "no sevens")


def test_device_assert_names_the_first_false_element_of_a_2d_block(monkeypatch):
    x = np.zeros(4 * 16, np.int32)
    x[[2 * 16 + 5, 3 * 16 + 1]] = 7
    errors = both_targets(monkeypatch, lambda: assert_2d[(1,)](x, R=4, C=16, debug=True))
    assert all("no sevens (pid (0, 0, 0) idx (2, 5))" in str(e) for e in errors)


ASSERTING = '''
import tritium
import tritium.language as tl


@tritium.jit(debug=True)
def asserting(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_assert(x < 1, "too big")
'''


def test_assertion_location_keeps_a_non_ascii_path(monkeypatch, tmp_path):
    """The file comes from the location object, not its printed text (which escapes 'é')."""
    import importlib.util

    folder = tmp_path / "josé"
    folder.mkdir()
    path = folder / "asserting_kernel.py"
    path.write_text(ASSERTING)
    spec = importlib.util.spec_from_file_location("asserting_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setenv("TRITIUM_TARGET", "cpu")
    with pytest.raises(DeviceAssertionError) as e:
        module.asserting[(1,)](np.ones(4, np.float32), BLOCK=4)
    assert f"{path}:9" in str(e.value) and 'tl.device_assert(x < 1, "too big")' in str(e.value)
