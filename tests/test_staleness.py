"""Never a stale binary: what a kernel reads from its globals, the compiler's own sources and the
pipeline as it will run are all in the cache key, and a global reassigned after compiling is caught."""

import importlib.util
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest

import tritium
from tritium import plugins
from tritium.errors import CompilationError, TritiumError

from .kernels.frontend_only import FrontendOnly

needs_cpu = pytest.mark.skipif("cpu" not in plugins.targets(), reason="needs the cpu target")

SCALED = """
import tritium
import tritium.language as tl

SCALE = {scale}


@tritium.jit
def scaled(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * SCALE)
"""


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))


def load_module(tmp_path: Path, source: str):
    """Import ``source`` as a fresh module from a file (@jit reads kernel sources from files)."""
    name = f"kmod_{uuid.uuid4().hex[:8]}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_non_constexpr_global_is_a_located_error(tmp_path):
    mod = load_module(tmp_path, SCALED.format(scale="2"))
    with pytest.raises(CompilationError) as e:
        tritium.compile(mod.scaled, signature="*fp32, *fp32", constants={"BLOCK": 16}, target=FrontendOnly())
    msg = str(e.value)
    assert "scaled" in msg and "SCALE" in msg
    assert f"{mod.__file__}:11" in msg  # the line that reads it, with a caret under the name
    assert "tl.load(x_ptr + offs) * SCALE" in msg and "^" in msg
    assert "SCALE = tl.constexpr(2)" in msg and "tl.constexpr parameter" in msg


def test_constexpr_global_is_allowed_and_keyed(tmp_path):
    a = load_module(tmp_path, SCALED.format(scale="tl.constexpr(2)"))
    b = load_module(tmp_path, SCALED.format(scale="tl.constexpr(3)"))
    ka = tritium.compile(a.scaled, signature="*fp32, *fp32", constants={"BLOCK": 16}, target=FrontendOnly())
    kb = tritium.compile(b.scaled, signature="*fp32, *fp32", constants={"BLOCK": 16}, target=FrontendOnly())
    assert not kb.cache_hit  # same source text, other constant: another entry
    assert "2.0" in ka.asm["tile-opt"] or "constant 2" in ka.asm["tile-opt"]
    assert ka.asm["tile-opt"] != kb.asm["tile-opt"]


def test_reassigned_global_is_detected_at_launch(tmp_path, target):
    """On every target, the interpreter included (it checks the frontend once per specialisation)."""
    mod = load_module(tmp_path, SCALED.format(scale="tl.constexpr(2)"))
    dev = target.driver
    x = dev.to_device(np.arange(16, dtype=np.float32))
    out = dev.to_device(np.zeros(16, np.float32))
    mod.scaled[(1,)](x, out, BLOCK=16)
    np.testing.assert_array_equal(dev.to_host(out), 2 * dev.to_host(x))
    mod.SCALE = tritium.language.constexpr(2)  # an equal constant (a module reloaded) is fine
    mod.scaled[(1,)](x, out, BLOCK=16)
    mod.SCALE = tritium.language.constexpr(3)
    with pytest.raises(TritiumError, match=r"kernel 'scaled': global variable 'SCALE' has changed since the "
                                           r"kernel was compiled, from 2 to 3.*tl.constexpr parameter"):
        mod.scaled[(1,)](x, out, BLOCK=16)


def _make_converting(dt):
    """A kernel that converts its input through ``dt``, read from the closure."""
    @tritium.jit
    def convert(x_ptr, out_ptr, BLOCK: tritium.language.constexpr):
        offs = tritium.language.arange(0, BLOCK)
        tl = tritium.language
        tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(dt).to(tl.float32))

    return convert


def test_closures_capturing_other_dtypes_compile_apart(target):
    """Two kernels of one source that capture other dtypes, with one cache directory: each runs
    its own conversion (the captured dtype is in the key), the int32 one truncating 1.75."""
    tl = tritium.language
    dev = target.driver
    x = dev.to_device(np.full(8, 1.75, np.float32))
    for dt, want in ((tl.int32, 1.0), (tl.float32, 1.75), (tl.float16, 1.75), (tl.int32, 1.0)):
        out = dev.to_device(np.zeros(8, np.float32))
        _make_converting(dt)[(1,)](x, out, BLOCK=8)
        np.testing.assert_array_equal(dev.to_host(out), np.full(8, want, np.float32), err_msg=str(dt))


def test_rebound_closure_cell_is_detected_at_launch(target):
    """A captured variable rebound after compiling (``nonlocal``) is refused as a global is."""
    tl = tritium.language
    dt = tl.int32

    @tritium.jit
    def convert(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(dt).to(tl.float32))

    dev = target.driver
    x = dev.to_device(np.full(8, 1.75, np.float32))
    out = dev.to_device(np.zeros(8, np.float32))
    convert[(1,)](x, out, BLOCK=8)
    dt = tl.float32  # noqa: F841 (read by the kernel through its closure cell)
    with pytest.raises(TritiumError, match=r"kernel 'convert': captured variable 'dt' has changed since the "
                                           r"kernel was compiled, from tl.int32 to tl.float32"):
        convert[(1,)](x, out, BLOCK=8)


CONVERTED = """
import tritium
import tritium.language as tl

DT = {dt}


@tritium.jit
def converted(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(DT).to(tl.float32))
"""


def test_a_global_dtype_is_keyed_and_checked(tmp_path, target):
    """A dtype read from a global follows the rule of captured ones: another module with another
    DT compiles its own kernel, and rebinding DT after compiling is refused."""
    dev = target.driver
    x = dev.to_device(np.full(8, 1.75, np.float32))
    for dt, want in (("tl.int32", 1.0), ("tl.float32", 1.75)):
        mod = load_module(tmp_path, CONVERTED.format(dt=dt))
        out = dev.to_device(np.zeros(8, np.float32))
        mod.converted[(1,)](x, out, BLOCK=8)
        np.testing.assert_array_equal(dev.to_host(out), np.full(8, want, np.float32))
    mod.DT = tritium.language.float16
    with pytest.raises(TritiumError, match="global variable 'DT' has changed since the kernel was compiled, "
                                           "from tl.float32 to tl.float16"):
        mod.converted[(1,)](x, out, BLOCK=8)


def test_captured_number_is_refused_naming_the_capture():
    n = 3

    @tritium.jit
    def scaled(out_ptr):
        tritium.language.store(out_ptr, n)

    with pytest.raises(CompilationError, match=r"in kernel 'scaled'.*Cannot access variable captured from an "
                                               r"enclosing function 'n' \(= 3\).*n = tl.constexpr\(3\)"):
        tritium.compile(scaled, signature="*i32", target=FrontendOnly())


SHADOWED = """
import tritium
import tritium.language as tl

BLOCK = tl.constexpr(16)
scale = tl.constexpr(2)


@tritium.jit
def shadowed(x_ptr, BLOCK: tl.constexpr):
    scale = 3
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * scale)
"""


def test_globals_shadowed_by_parameters_and_locals_are_not_read(tmp_path, target):
    """A kernel whose parameter or local has a global's name never reads that global: rebinding the
    global must neither refuse the next launch nor change the key."""
    mod = load_module(tmp_path, SHADOWED)
    dev = target.driver
    x = dev.to_device(np.ones(8, np.float32))
    mod.shadowed[(1,)](x, BLOCK=8)
    mod.BLOCK, mod.scale = tritium.language.constexpr(32), tritium.language.constexpr(5)
    mod.shadowed[(1,)](x, BLOCK=8)
    np.testing.assert_array_equal(dev.to_host(x), np.full(8, 9.0, np.float32))


CHILD = """
import sys, numpy as np
sys.path.insert(0, {dir!r})
import {mod} as m
x = np.arange(16, dtype=np.float32)
out = np.zeros_like(x)
k = m.scaled[(1,)](x, out, BLOCK=16)
print(int(out[1]), "HIT" if k.cache_hit else "MISS")
"""


def test_new_process_with_another_constexpr_global_recompiles(tmp_path, compiling_target, host_target):
    """The issue's scenario: same cache dir, SCALE changed between processes (the child passes numpy)."""
    env = dict(os.environ, TRITIUM_CACHE_DIR=str(tmp_path / "cache"), TRITIUM_TARGET=compiling_target.name)
    src = tmp_path / "kmod_scale.py"

    def run(scale: str) -> str:
        src.write_text(SCALED.format(scale=scale))
        code = CHILD.format(dir=str(tmp_path), mod="kmod_scale")
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              check=True).stdout.strip()

    assert run("tl.constexpr(2)") == "2 MISS"
    assert run("tl.constexpr(3)") == "3 MISS"
    assert run("tl.constexpr(2)") == "2 HIT"


def compile_add():
    from .kernels.basic import add_kernel

    return tritium.compile(add_kernel, signature="*fp32, *fp32, *fp32, i32", constants={"BLOCK": 64},
                           target=FrontendOnly())


def test_source_hash_follows_every_source_file(tmp_path, monkeypatch):
    from tritium.runtime.cache import source_hash

    pkg = tmp_path / "fake_compiler_pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "codegen.py").write_text("def emit(): return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = source_hash("fake_compiler_pkg")
    (pkg / "sub" / "codegen.py").write_text("def emit(): return 2\n")  # an edit, no version bump
    source_hash.cache_clear()
    after = source_hash("fake_compiler_pkg")
    (pkg / "sub" / "codegen.py").write_text("def emit(): return 1\n")
    source_hash.cache_clear()
    assert before != after and source_hash("fake_compiler_pkg") == before
    assert len(source_hash("tritium")) == 64


def test_an_edited_compiler_never_loads_an_old_binary(monkeypatch):
    from tritium.runtime import cache, compiler

    assert not compile_add().cache_hit and compile_add().cache_hit
    real = cache.source_hash
    monkeypatch.setattr(cache, "source_hash", lambda package: real(package)[::-1])  # core's sources changed
    compiler._versions.cache_clear()
    try:
        assert not compile_add().cache_hit
    finally:
        monkeypatch.setattr(cache, "source_hash", real)
        compiler._versions.cache_clear()
    assert compile_add().cache_hit


@needs_cpu
def test_cpu_target_version_is_its_source_hash():
    from tritium.runtime.cache import source_hash

    assert source_hash("tritium_cpu") in plugins.get_target("cpu").version()


def test_a_plugin_stage_changes_the_key():
    from types import SimpleNamespace

    ran = []

    def extra(value, ctx):
        ran.append(ctx.signature.name)
        return value

    def extend(target, stages):
        if target.name == "frontend-only":
            stages["extra"] = extra

    assert not compile_add().cache_hit and compile_add().cache_hit
    plugin = SimpleNamespace(tritium_extend_pipeline=plugins.hookimpl(extend))
    plugins.register(plugin, name="extra-stage")
    try:
        k = compile_add()  # compiled before the plugin was installed: must not come from the cache
        assert not k.cache_hit and ran == ["add_kernel"] and "extra" in k.asm
        assert compile_add().cache_hit
    finally:
        plugins.plugin_manager().unregister(plugin)
    assert compile_add().cache_hit and ran == ["add_kernel"]


HELPER = """
import tritium


@tritium.jit
def scale(x):
    return x * {factor}
"""

CALLER = """
import tritium
import tritium.language as tl
import helper_mod_for_staleness as helpers


@tritium.jit
def calls_module_helper(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, helpers.scale(tl.load(x_ptr + offs)))
"""

COMPILE_CALLER = """
import sys
sys.path[:0] = [{tmp!r}, {root!r}]
import tritium
from tests.kernels.frontend_only import FrontendOnly
import caller_mod_for_staleness as m
k = tritium.compile(m.calls_module_helper, signature="*fp32", constants={{"BLOCK": 16}}, target=FrontendOnly())
print("HIT" if k.cache_hit else "MISS")
"""


def test_a_helper_reached_through_a_module_attribute_is_in_the_key(tmp_path):
    (tmp_path / "caller_mod_for_staleness.py").write_text(CALLER)
    env = dict(os.environ, TRITIUM_CACHE_DIR=str(tmp_path / "cache"))
    root = str(Path(__file__).resolve().parents[1])

    def run(factor: int) -> str:
        (tmp_path / "helper_mod_for_staleness.py").write_text(HELPER.format(factor=factor))
        code = COMPILE_CALLER.format(tmp=str(tmp_path), root=root)
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              check=True).stdout.strip()

    assert run(2) == "MISS"
    assert run(2) == "HIT"
    assert run(3) == "MISS"  # only the helper changed
