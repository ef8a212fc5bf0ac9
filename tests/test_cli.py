"""The ``tritium`` command, run as ``python -m tritium`` in a subprocess with fake target packages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

import tritium.plugins

CORE = str(Path(tritium.plugins.__file__).resolve().parents[1])


def make_dist(root: Path, name: str, priority: int, available: bool, reason: str = "",
              version: str = "7.8.9", body: str | None = None) -> str:
    tag = uuid.uuid4().hex[:8]
    module = f"fake_cli_target_{tag}"
    dist = f"tritium-test-cli-{tag}"
    if body is None:
        body = textwrap.dedent(f"""
            from tritium.plugins import hookimpl
            from tritium.target import Target

            class FakeTarget(Target):
                name = {name!r}
                priority = {priority}
                def availability(self):
                    return ({available!r}, {reason!r})

            @hookimpl
            def tritium_targets():
                return [FakeTarget()]
        """)
    (root / f"{module}.py").write_text(body)
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[tritium]\n{tag} = {module}\n")
    return dist


@pytest.fixture
def run(tmp_path):
    site = tmp_path / "site"
    site.mkdir()

    def run(*args: str, **env: str) -> subprocess.CompletedProcess:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("TRITIUM_")}
        full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), CORE, os.environ.get("PYTHONPATH")]))
        full_env["TRITIUM_CACHE_DIR"] = str(tmp_path / "cache")
        full_env.update(env)
        return subprocess.run([sys.executable, "-m", "tritium", *args], env=full_env, capture_output=True,
                              text=True, timeout=120)

    run.site = site
    run.cache = tmp_path / "cache"
    return run


def test_targets_table_lists_fake_targets(run):
    d1 = make_dist(run.site, "fake-cli-fast", 900, True)
    d2 = make_dist(run.site, "fake-cli-gpu", 1000, False, "no fake GPU in this machine")
    out = run("targets")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    fast = next(line for line in lines if line.startswith("fake-cli-fast"))
    gpu = next(line for line in lines if line.startswith("fake-cli-gpu"))
    assert "yes" in fast and d1 in fast and "7.8.9" in fast and "*" in fast
    assert " no " in gpu and "no fake GPU in this machine" in gpu and d2 in gpu and "*" not in gpu
    assert "auto-selection picks: fake-cli-fast" in out.stdout


def test_targets_table_describes_the_device_of_available_targets(run):
    body = textwrap.dedent("""
        from tritium.plugins import hookimpl
        from tritium.target import Target

        class Described(Target):
            name = "fake-cli-described"
            priority = 5
            def device_description(self):
                return "Fake Accelerator 9000 (fx_1)"

        class Broken(Target):
            name = "fake-cli-undescribable"
            priority = 4
            def device_description(self):
                raise RuntimeError("device lost")

        @hookimpl
        def tritium_targets():
            return [Described(), Broken()]
    """)
    make_dist(run.site, "unused", 0, True, body=body)
    out = run("targets")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "Fake Accelerator 9000 (fx_1)" in next(x for x in lines if x.startswith("fake-cli-described"))
    assert "raised RuntimeError: device lost" in next(x for x in lines if x.startswith("fake-cli-undescribable"))


def test_targets_json(run):
    dist = make_dist(run.site, "fake-cli-json", 950, True)
    out = run("targets", "--json", TRITIUM_TARGET="fake-cli-json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    entry = next(t for t in report["targets"] if t["name"] == "fake-cli-json")
    assert entry == {**entry, "available": True, "distribution": dist, "version": "7.8.9", "auto": True,
                     "priority": 950}
    assert report["auto"] == "fake-cli-json" and report["selected"] == "fake-cli-json"


def test_targets_reports_unusable_selection(run):
    make_dist(run.site, "fake-cli-off", 5, False, "switched off")
    out = run("targets", TRITIUM_TARGET="fake-cli-off")
    assert out.returncode == 1
    assert "switched off" in out.stderr
    out = run("targets", TRITIUM_TARGET="no-such-target")
    assert out.returncode == 1
    assert "unknown target 'no-such-target'" in out.stderr and "fake-cli-off" in out.stderr


def test_targets_reports_broken_plugin(run):
    make_dist(run.site, "fake-cli-ok", 960, True)
    broken = make_dist(run.site, "", 0, True, body="raise RuntimeError('vendor library missing')\n")
    out = run("targets")
    assert out.returncode == 1
    assert "fake-cli-ok" in out.stdout  # the rest is still listed
    assert broken in out.stderr and "vendor library missing" in out.stderr


def test_cache_commands(run):
    out = run("cache", "dir")
    assert out.returncode == 0 and out.stdout.strip() == str(run.cache)
    assert "no entries" in run("cache", "list").stdout
    writer = ("from tritium.runtime.cache import Cache, cache_key\n"
              "Cache().put(cache_key({'k': 1}), b'x' * 2048, {'name': 'my_kernel'}, {'llir': 'text'})\n")
    env = {**os.environ, "TRITIUM_CACHE_DIR": str(run.cache),
           "PYTHONPATH": os.pathsep.join(filter(None, [CORE, os.environ.get("PYTHONPATH")]))}
    subprocess.run([sys.executable, "-c", writer], env=env, check=True)
    out = run("cache", "list")
    assert out.returncode == 0 and "my_kernel" in out.stdout and "1 entry" in out.stdout
    listed = json.loads(run("cache", "list", "--json").stdout)
    assert [e["name"] for e in listed["entries"]] == ["my_kernel"] and listed["entries"][0]["size"] > 2048
    out = run("cache", "clear")
    assert out.returncode == 0 and "removed 1 file" in out.stdout
    assert "no entries" in run("cache", "list").stdout


def test_usage_errors_exit_2(run):
    assert run().returncode == 2
    assert run("frobnicate").returncode == 2
    assert run("cache").returncode == 2


def test_pipeline_lists_stages_including_plugin_extensions(run):
    body = textwrap.dedent("""
        from tritium.plugins import hookimpl
        from tritium.target import Target

        def lower(module, ctx):
            '''Pretend lowering, whose first sentence (e.g. this one) goes on
            past the first line. A second sentence is not shown.

            Nor is another paragraph.'''
            return module

        class StagedTarget(Target):
            name = "staged"
            priority = 5
            def parse_options(self, options):
                return ()
            def add_stages(self, stages, options):
                stages["tile-layout"] = lower

        def extra(module, ctx):
            "Added by another plugin."
            return module

        @hookimpl
        def tritium_targets():
            return [StagedTarget()]

        @hookimpl
        def tritium_extend_pipeline(target, stages, options):
            stages["extra"] = extra
    """)
    make_dist(run.site, "staged", 5, True, body=body)
    proc = run("pipeline", "--target", "staged")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "target staged:"
    assert [line.split(":")[0] for line in lines[1:]] == ["1. tile", "2. tile-opt", "3. tile-layout", "4. extra"]
    assert lines[3].endswith(" - Pretend lowering, whose first sentence (e.g. this one) goes on past the first line.")
    assert lines[4].endswith(" - Added by another plugin.")
    assert lines[2].endswith('stores through (``metadata["stored_args"]``).')  # core's stage, whole


def test_cache_commands_on_a_file_say_so(run, tmp_path):
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("precious")
    for action in ("clear", "list"):
        out = run("cache", action, TRITIUM_CACHE_DIR=str(not_a_dir))
        assert out.returncode == 1, out
        assert f"{not_a_dir} is not a directory" in out.stderr and "removed 0" not in out.stdout
    assert not_a_dir.read_text() == "precious"
