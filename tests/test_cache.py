"""The disk cache of compiled kernels (tritium.runtime.cache)."""

from __future__ import annotations

import dataclasses
import enum
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import tritium.errors
from tritium.runtime import cache as cache_mod
from tritium.runtime.cache import Cache, CacheWarning, cache_key

CORE = str(Path(cache_mod.__file__).resolve().parents[2])

ASM = {"tile": "module {\n  func.func @k() { return }\n}\n", "llir": "define void @k() {\n  ret void\n}\n",
       "asm": "k:\n\tret\n", "obj": b"\x7fELF\x00binary\xff"}
BINARY = b"\x7fELF\x00binary\xff"
META = {"name": "vector_add", "num_warps": 4, "shared": 0, "arg_types": ["*fp32", "i32"]}


def key_for(**extra) -> str:
    return cache_key({"source": "def k(): pass", "signature": ("*fp32", "i32"), **extra})


@pytest.fixture(autouse=True)
def fresh_warning_state(monkeypatch):
    monkeypatch.setattr(cache_mod, "_warned", False)


@pytest.fixture
def cache(tmp_path):
    return Cache(tmp_path / "cache", disabled=False)


def test_round_trip(cache):
    key = key_for()
    assert cache.get(key) is None
    path = cache.put(key, BINARY, META, ASM)
    assert os.path.exists(path)
    entry = cache.get(key)
    assert entry is not None
    assert entry.binary == BINARY and isinstance(entry.binary, bytes)
    assert entry.metadata == META
    assert entry.asm == ASM and list(entry.asm) == list(ASM)
    assert entry.name == "vector_add"


def test_keys_are_stable_and_sensitive():
    @dataclasses.dataclass(frozen=True)
    class Options:
        num_warps: int = 4
        arch: str = "x"

    class Mode(enum.Enum):
        A = 1

    parts = {"src": "x", "opts": Options(), "mode": Mode.A, "t": (1, 2.5, None, b"\x00"), "s": {3, 1}}
    k = cache_key(parts)
    assert len(k) == 64 and all(c in "0123456789abcdef" for c in k)
    assert cache_key(dict(reversed(list(parts.items())))) == k
    assert cache_key({**parts, "opts": Options(num_warps=8)}) != k
    assert cache_key({**parts, "t": (1, 2.5, None, b"\x01")}) != k
    assert cache_key({"a": 1}) != cache_key({"a": 1.0}) != cache_key({"a": "1"})
    with pytest.raises(TypeError):
        cache_key({"f": object()})


def test_bad_key_is_rejected(cache):
    with pytest.raises(ValueError):
        cache.get("../../etc/passwd")


def test_second_process_reads_what_first_wrote(tmp_path):
    directory = tmp_path / "shared-cache"
    env = {**os.environ, "TRITIUM_CACHE_DIR": str(directory),
           "PYTHONPATH": CORE + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("TRITIUM_CACHE_DISABLE", None)
    writer = (
        "from tritium.runtime.cache import Cache, cache_key\n"
        "k = cache_key({'kernel': 'add', 'n': 3})\n"
        "Cache().put(k, b'\\x00\\x01bin', {'name': 'add'}, {'llir': 'text', 'bin': b'\\x00\\x01bin'})\n"
        "print(k)\n")
    key = subprocess.run([sys.executable, "-c", writer], env=env, check=True, capture_output=True,
                         text=True).stdout.strip()
    reader = (
        "import sys\n"
        "from tritium.runtime.cache import Cache\n"
        f"e = Cache().get({key!r})\n"
        "assert e is not None, 'miss'\n"
        "assert e.binary == b'\\x00\\x01bin' and e.metadata == {'name': 'add'}\n"
        "assert e.asm == {'llir': 'text', 'bin': b'\\x00\\x01bin'}, e.asm\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", reader], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
    assert Cache(directory).get(key) is not None


@pytest.mark.parametrize("module", [cache_mod, tritium.errors], ids=["cache", "errors"])
def test_cache_module_imports_only_the_standard_library(module):
    import ast

    tree = ast.parse(Path(module.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if module is cache_mod and (node.level, node.module) == (2, "errors"):
                continue  # its warning helper, checked as the other case
            assert node.level == 0, f"relative import in {module.__name__}"
            imported.add(node.module.split(".")[0])
    assert imported and imported <= set(sys.stdlib_module_names), imported - set(sys.stdlib_module_names)


@pytest.mark.parametrize("damage", ["truncate", "flip-payload", "flip-header", "empty", "garbage"])
def test_corrupt_entry_is_a_miss_and_removed(cache, damage):
    key = key_for(damage=damage)
    path = Path(cache.put(key, BINARY, META, ASM))
    data = path.read_bytes()
    if damage == "truncate":
        data = data[: len(data) - 5]
    elif damage == "flip-payload":
        data = data[:-3] + bytes([data[-3] ^ 0x01]) + data[-2:]
    elif damage == "flip-header":
        i = data.index(b'"sections"')
        data = data[:i] + b"X" + data[i + 1:]
    elif damage == "empty":
        data = b""
    else:
        data = os.urandom(len(data))
    path.write_bytes(data)
    assert cache.get(key) is None
    assert not path.exists()
    assert cache.get(key) is None  # and stays a plain miss
    cache.put(key, BINARY, META, ASM)
    assert cache.get(key).binary == BINARY


def test_entry_of_another_key_is_not_trusted(cache):
    k1, k2 = key_for(n=1), key_for(n=2)
    p1 = Path(cache.put(k1, b"one", {}, {}))
    p2 = Path(cache.path(k2))
    p2.parent.mkdir(parents=True, exist_ok=True)
    p2.write_bytes(p1.read_bytes())
    assert cache.get(k2) is None
    assert cache.get(k1).binary == b"one"


def test_no_partial_file_under_final_name(cache, monkeypatch):
    key = key_for(atomic=1)
    final = Path(cache.path(key))
    seen = {}
    real_replace = os.replace

    def checking_replace(src, dst):
        seen["final_exists_before_replace"] = final.exists()
        seen["tmp_size"] = os.path.getsize(src)
        seen["tmp_dir"] = Path(src).parent
        return real_replace(src, dst)

    monkeypatch.setattr(cache_mod.os, "replace", checking_replace)
    cache.put(key, BINARY, META, ASM)
    assert seen["final_exists_before_replace"] is False
    assert seen["tmp_dir"] == final.parent and seen["tmp_size"] == final.stat().st_size
    assert sorted(p.name for p in final.parent.iterdir()) == [final.name]


def test_failed_write_leaves_nothing_behind(cache, monkeypatch):
    key = key_for(fail=1)

    def failing_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_mod.os, "fsync", failing_fsync)
    with pytest.warns(CacheWarning, match="No space left"):  # a full disk is not the caller's problem
        assert cache.put(key, BINARY, META, ASM) is None
    folder = Path(cache.path(key)).parent
    assert list(folder.iterdir()) == []
    monkeypatch.undo()
    assert cache.get(key) is None


def test_unusable_directory_warns_once_and_goes_on(tmp_path):
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    c = Cache(blocker / "cache", disabled=False)
    with pytest.warns(CacheWarning) as caught:
        assert c.put(key_for(ro=1), BINARY, META, ASM) is None
        assert c.get(key_for(ro=1)) is None
        assert c.put(key_for(ro=2), BINARY, META, ASM) is None
    assert len(caught) == 1  # once per process, not once per kernel
    msg = str(caught[0].message)
    assert str(blocker / "cache") in msg and "Not a directory" in msg and "TRITIUM_CACHE_DIR" in msg


def test_concurrent_writers_of_one_key(cache):
    key = key_for(concurrent=1)
    errors = []

    def write(i):
        try:
            for _ in range(20):
                cache.put(key, BINARY, META, ASM)
                entry = cache.get(key)
                assert entry is not None and entry.binary == BINARY
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    folder = Path(cache.path(key)).parent
    assert [p.name for p in folder.iterdir()] == [Path(cache.path(key)).name]


def test_concurrent_writer_processes(tmp_path):
    directory = tmp_path / "mp-cache"
    key = key_for(processes=1)
    env = {**os.environ, "PYTHONPATH": CORE + os.pathsep + os.environ.get("PYTHONPATH", "")}
    writer = ("import sys\nfrom tritium.runtime.cache import Cache\n"
              f"c = Cache({str(directory)!r}, disabled=False)\n"
              "for i in range(30):\n"
              f"    assert c.put({key!r}, b'B' * 50000, {{'name': 'k'}}, {{'llir': 'x' * 50000}})\n"
              "    e = c.get(" + repr(key) + ")\n"
              "    assert e is not None and e.binary == b'B' * 50000\n")
    procs = [subprocess.Popen([sys.executable, "-c", writer], env=env, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    entry = Cache(directory, disabled=False).get(key)
    assert entry is not None and entry.asm == {"llir": "x" * 50000}
    assert [p.name for p in Path(Cache(directory).path(key)).parent.iterdir()] == [key + ".tcache"]


def test_entries_and_clear(cache):
    k1, k2 = key_for(a=1), key_for(a=2)
    cache.put(k1, b"x" * 100, {"name": "first"}, {})
    cache.put(k2, b"y", {}, {}, name="second")
    infos = {e.key: e for e in cache.entries()}
    assert set(infos) == {k1, k2}
    assert infos[k1].name == "first" and infos[k1].size > 100 and infos[k1].valid
    assert infos[k2].name == "second"
    Path(cache.path(k2)).write_bytes(b"junk")
    assert {e.key: e.valid for e in cache.entries()} == {k1: True, k2: False}
    assert cache.clear() == 2
    assert cache.entries() == []
    assert cache.get(k1) is None


def test_cache_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "explicit"))
    assert cache_mod.cache_dir() == str(tmp_path / "explicit")
    monkeypatch.delenv("TRITIUM_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_mod.cache_dir() == str(tmp_path / "xdg" / "tritium")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_mod.cache_dir() == str(tmp_path / "home" / ".cache" / "tritium")


def test_disable(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("TRITIUM_CACHE_DISABLE", "1")
    c = Cache()
    key = key_for(disabled=1)
    assert c.put(key, BINARY, META, ASM) is None
    assert c.get(key) is None
    assert not (tmp_path / "c").exists()


def test_compiling_with_an_unusable_cache_warns_and_goes_on(tmp_path, monkeypatch):
    import tritium

    from .kernels.basic import add_kernel
    from .kernels.frontend_only import FrontendOnly

    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(blocker))
    with pytest.warns(CacheWarning, match=f"cannot be used at {blocker}"):
        k = tritium.compile(add_kernel, signature="*fp32, *fp32, *fp32, i32", constants={"BLOCK": 16},
                            target=FrontendOnly())
    assert not k.cache_hit and "tile.make_range" in k.asm["tile-opt"]
    assert blocker.read_text() == "x"
