"""What the Target/Driver interface hands a target: the compile metadata at load time (fresh and
from the disk cache) and the dump file suffixes it names for its own stages."""

from __future__ import annotations

import pytest

import tritium
import tritium.language as tl
from tritium.target import Driver, KernelSignature, LaunchOptions, Target


@tritium.jit
def copy_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


class RecordingDriver(Driver):
    def __init__(self) -> None:
        self.loaded: list[tuple[bytes, KernelSignature, dict]] = []

    def load(self, binary, signature, metadata):
        self.loaded.append((binary, signature, dict(metadata)))
        return lambda grid, args: None


def _fake_llir(module, ctx):
    return "; ModuleID = 'fake'\n"


def _fake_asm(llir, ctx):
    return ".fake assembly\n"


def _notes(asm, ctx):
    return "plain text that is no MLIR\n"


def _fake_bin(notes, ctx):
    ctx.metadata["num_warps"] = ctx.options.num_warps
    ctx.metadata["shared_bytes"] = 4096 * ctx.options.num_warps
    ctx.metadata["warp_layout"] = (32, ctx.options.num_warps)  # a tuple: the cache keeps a list
    return b"\x00fake binary"


class RecordingTarget(Target):
    name = "fake-recording"
    binary_stage = "fake-bin"
    stage_suffixes = {"fake-asm": "fasm"}

    def __init__(self) -> None:
        self._driver = RecordingDriver()

    def parse_options(self, options):
        return LaunchOptions.parse(options, self.name)

    def add_stages(self, stages, options):
        stages["llir"] = _fake_llir
        stages["fake-asm"] = _fake_asm
        stages["notes"] = _notes
        stages["fake-bin"] = _fake_bin

    @property
    def driver(self):
        return self._driver


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))


def _compile(target):
    return tritium.compile(copy_kernel, signature="*fp32, *fp32", constants={"BLOCK": 16}, target=target,
                           num_warps=8)


def test_driver_load_gets_the_metadata_stages_recorded_fresh_and_from_the_cache():
    target = RecordingTarget()
    fresh = _compile(target)
    assert not fresh.cache_hit
    fresh.launcher  # noqa: B018  (loads)
    hit = _compile(target)
    assert hit.cache_hit
    hit.launcher  # noqa: B018
    assert len(target.driver.loaded) == 2
    for binary, signature, metadata in target.driver.loaded:
        assert binary == b"\x00fake binary"
        assert signature.name == "copy_kernel" and signature.arg_types == ("*fp32", "*fp32")
        assert metadata["num_warps"] == 8 and metadata["shared_bytes"] == 32768
        assert metadata["warp_layout"] == [32, 8]
        assert metadata["name"] == "copy_kernel"
    assert target.driver.loaded[0][2] == target.driver.loaded[1][2]  # the same, cache or not


def test_dumps_use_the_targets_suffixes_and_cores_defaults(monkeypatch, tmp_path):
    target = RecordingTarget()
    expected = ["copy_kernel.fake-asm.fasm", "copy_kernel.fake-bin.bin", "copy_kernel.llir.ll",
                "copy_kernel.notes.txt", "copy_kernel.tile-opt.mlir", "copy_kernel.tile.mlir"]
    monkeypatch.setenv("TRITIUM_DUMP", "all")
    for run in ("fresh", "hit"):  # a cache hit dumps the kept stages under the same names
        monkeypatch.setenv("TRITIUM_DUMP_DIR", str(tmp_path / run))
        kernel = _compile(target)
        assert kernel.cache_hit is (run == "hit")
        assert sorted(p.name for p in (tmp_path / run).iterdir()) == expected
        assert (tmp_path / run / "copy_kernel.fake-asm.fasm").read_text() == ".fake assembly\n"
        assert (tmp_path / run / "copy_kernel.fake-bin.bin").read_bytes() == b"\x00fake binary"


def test_stage_suffix_defaults():
    target = Target()
    assert target.stage_suffix("tile-layout", '#blocked = #tile.blocked<[4]>\nmodule {\n}\n') == "mlir"
    assert target.stage_suffix("tile", "module attributes {x} {\n}\n") == "mlir"
    assert target.stage_suffix("tile-layout", "// edited by hand\nmodule {\n}\n") == "mlir"
    assert target.stage_suffix("tile", '!p = !tile.ptr<f32, 1 : i32>\n"builtin.module"() ({\n}) : () -> ()\n') == "mlir"
    assert target.stage_suffix("llir", "; ModuleID = 'k'\n") == "ll"
    assert target.stage_suffix("ptx", "//\n.version 8.0\n") == "txt"
    assert target.stage_suffix("cubin", b"\x7fELF") == "bin"
    assert RecordingTarget().stage_suffix("fake-asm", "x") == "fasm"


def test_compiling_uses_the_compiler_half_alone():
    """``tritium.compile`` (and so compile-only conformance runs) asks nothing of the device half:
    every method of ``TargetDevice`` raises here, and the kernel compiles; launching then asks the
    device half."""
    from tritium.target import TargetDevice

    asked = []

    def refuse(name):
        def method(self, *args, **kwargs):
            asked.append(name)
            raise AssertionError(f"compiling asked the device half for {name}")
        return method

    refusing = {name: refuse(name) for name, value in vars(TargetDevice).items()
                if callable(value) and not name.startswith("_")}
    refusing["driver"] = property(refuse("driver"))
    Deviceless = type("Deviceless", (RecordingTarget,), {**refusing, "name": "fake-deviceless"})
    compiled = _compile(Deviceless())
    assert compiled.asm["fake-bin"] == b"\x00fake binary" and not asked
    with pytest.raises(AssertionError, match="device half"):
        compiled.launcher  # noqa: B018
    assert asked


def test_a_target_is_its_compiler_half_and_its_device_half():
    from tritium.target import TargetCompiler, TargetDevice

    assert issubclass(Target, TargetCompiler) and issubclass(Target, TargetDevice)
    public = [{n for n in vars(half) if not n.startswith("_")} for half in (TargetCompiler, TargetDevice)]
    assert {"add_stages", "parse_options", "version"} <= public[0] and {"driver", "bind_arg"} <= public[1]
    assert not public[0] & public[1]  # each method belongs to one half
