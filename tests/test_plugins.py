"""Target discovery through real entry points, selection and error reporting (tritium.plugins).

Each test builds small fake target distributions (a ``.dist-info`` folder with ``entry_points.txt``
and a plugin module) in a temporary directory put on ``sys.path``, so discovery goes through
``importlib.metadata`` exactly as it does for an installed package.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from tritium import plugins
from tritium.errors import TargetError

FAKE_PREFIX = "tritium-test-fake"


def make_dist(root: Path, targets: list[tuple[str, int, bool, str]] | None = None, *,
              body: str | None = None, version: str = "1.2.3", dist: str | None = None,
              hooks: str = "") -> tuple[str, str]:
    """Write a fake distribution providing ``targets`` = [(name, priority, available, reason)].

    Returns (distribution name, module name). ``body`` replaces the generated module text.
    """
    tag = uuid.uuid4().hex[:8]
    module = f"fake_tritium_target_{tag}"
    dist = dist or f"{FAKE_PREFIX}-{tag}"
    if body is None:
        classes = []
        for name, priority, ok, reason in targets or []:
            classes.append(textwrap.dedent(f"""
                class T_{name.replace('-', '_')}(Target):
                    name = {name!r}
                    priority = {priority}
                    binary_stage = "bin"
                    def availability(self):
                        return ({ok!r}, {reason!r})
            """))
        ctor = ", ".join(f"T_{n.replace('-', '_')}()" for n, *_ in targets or [])
        body = ("from tritium.plugins import hookimpl\nfrom tritium.target import Target\n"
                + "".join(classes)
                + f"\n@hookimpl\ndef tritium_targets():\n    return [{ctor}]\n" + textwrap.dedent(hooks))
    (root / f"{module}.py").write_text(body)
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[tritium]\n{module.split('_')[-1]} = {module}\n")
    importlib.invalidate_caches()
    return dist, module


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A directory on sys.path for fake distributions; plugin state is reset around the test."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("TRITIUM_TARGET", raising=False)
    before = set(sys.modules)
    plugins.reset()
    yield tmp_path
    plugins.reset()
    for name in set(sys.modules) - before:
        if name.startswith("fake_tritium_target_"):
            del sys.modules[name]


@pytest.fixture
def isolated(site, monkeypatch):
    """Like ``site`` but discovery sees only the fake distributions (no built-in plugins, no
    installed targets), so selection rules can be checked exactly."""
    real = plugins._iter_entry_points
    monkeypatch.setattr(plugins, "BUILTIN_PLUGINS", ())
    monkeypatch.setattr(plugins, "_iter_entry_points",
                        lambda: [ep for ep in real() if ep.dist.name.startswith(FAKE_PREFIX)])
    return site


def test_fake_distribution_is_discovered_through_its_entry_point(site):
    dist, _ = make_dist(site, [("fake-alpha", 3, True, "")], version="4.5.6")
    found = plugins.targets()
    assert "fake-alpha" in found
    info = next(i for i in plugins.target_infos() if i.name == "fake-alpha")
    assert (info.distribution, info.version) == (dist, "4.5.6")
    assert plugins.get_target("fake-alpha") is found["fake-alpha"]


def test_tritium_target_env_selects(isolated, monkeypatch):
    make_dist(isolated, [("fake-low", 1, True, ""), ("fake-high", 9, True, "")])
    monkeypatch.setenv("TRITIUM_TARGET", "fake-low")
    assert plugins.get_target().name == "fake-low"
    monkeypatch.setenv("TRITIUM_TARGET", " fake-high ")
    assert plugins.get_target().name == "fake-high"
    monkeypatch.setenv("TRITIUM_TARGET", "auto")
    assert plugins.get_target().name == "fake-high"
    assert plugins.get_target("fake-low").name == "fake-low"  # explicit argument wins over env


def test_auto_selection_uses_priority_and_availability(isolated, monkeypatch):
    make_dist(isolated, [("fake-gpu", 10, False, "no device found"), ("fake-host", 0, True, ""),
                         ("fake-debug", -10, True, "")])
    make_dist(isolated, [("fake-mid", 5, True, "")])
    for env in (None, "", "auto"):
        if env is None:
            monkeypatch.delenv("TRITIUM_TARGET", raising=False)
        else:
            monkeypatch.setenv("TRITIUM_TARGET", env)
        assert plugins.get_target().name == "fake-mid"
    assert plugins.auto_target_info().name == "fake-mid"


def test_negative_priority_is_never_chosen_automatically(isolated):
    make_dist(isolated, [("fake-debug", -1, True, ""), ("fake-gpu", 3, False, "driver missing")])
    with pytest.raises(TargetError) as err:
        plugins.get_target()
    text = str(err.value)
    assert "driver missing" in text and "fake-debug" in text
    assert plugins.get_target("fake-debug").name == "fake-debug"


def test_unknown_target_lists_installed_ones(isolated):
    make_dist(isolated, [("fake-one", 0, True, ""), ("fake-two", 1, False, "nope")])
    with pytest.raises(TargetError) as err:
        plugins.get_target("fake-three")
    text = str(err.value)
    assert "fake-three" in text and "fake-one" in text and "fake-two" in text


def test_unavailable_target_error_has_reason(isolated):
    dist, _ = make_dist(isolated, [("fake-gpu", 7, False, "libfakegpu.so not found")])
    with pytest.raises(TargetError) as err:
        plugins.get_target("fake-gpu")
    assert "libfakegpu.so not found" in str(err.value)
    assert dist in str(err.value)


def test_availability_that_raises_counts_as_unavailable(isolated):
    body = textwrap.dedent("""
        from tritium.plugins import hookimpl
        from tritium.target import Target
        class Bad(Target):
            name = "fake-raises"
            priority = 50
            def availability(self):
                raise RuntimeError("probe exploded")
        @hookimpl
        def tritium_targets():
            return [Bad()]
    """)
    make_dist(isolated, body=body)
    make_dist(isolated, [("fake-ok", 1, True, "")])
    assert plugins.get_target().name == "fake-ok"
    with pytest.raises(TargetError, match="probe exploded"):
        plugins.get_target("fake-raises")


def test_broken_entry_point_is_reported_not_fatal(isolated):
    broken_dist, broken_mod = make_dist(isolated, body="raise ImportError('missing libfoo')\n")
    make_dist(isolated, [("fake-fine", 2, True, "")])
    assert plugins.get_target().name == "fake-fine"  # the broken one does not take others down
    broken = plugins.broken_plugins()
    assert len(broken) == 1
    assert broken[0].distribution == broken_dist and "missing libfoo" in broken[0].error
    assert broken_mod in broken[0].value
    with pytest.raises(TargetError) as err:
        plugins.get_target("fake-other")
    assert "missing libfoo" in str(err.value) and broken_dist in str(err.value)


def test_raising_targets_hook_is_reported_not_fatal(isolated):
    body = ("from tritium.plugins import hookimpl\n"
            "@hookimpl\ndef tritium_targets():\n    raise ValueError('bad config')\n")
    make_dist(isolated, body=body)
    make_dist(isolated, [("fake-fine", 2, True, "")])
    assert list(plugins.targets()) == ["fake-fine"]
    (broken,) = plugins.broken_plugins()
    assert broken.stage == "tritium_targets" and "bad config" in broken.error


def test_duplicate_target_names_name_both_packages(isolated):
    d1, _ = make_dist(isolated, [("fake-dup", 1, True, "")])
    d2, _ = make_dist(isolated, [("fake-dup", 2, True, "")])
    with pytest.raises(TargetError) as err:
        plugins.targets()
    assert d1 in str(err.value) and d2 in str(err.value)
    with pytest.raises(TargetError):
        plugins.get_target("fake-dup")


def test_no_targets_installed(isolated):
    with pytest.raises(TargetError, match="no tritium target is installed"):
        plugins.get_target()


def test_extend_pipeline_and_conformance_hooks(isolated):
    hooks = """
        @hookimpl
        def tritium_extend_pipeline(target, stages):
            if target.name == "fake-ext":
                stages["extra"] = lambda value, ctx: value
                stages.pop("drop-me", None)

        @hookimpl
        def tritium_conformance_expectations(target):
            return {"case[" + target.name + "]": "known gap"}
    """
    make_dist(isolated, [("fake-ext", 1, True, "")], hooks=hooks)
    target = plugins.get_target("fake-ext")
    stages = {"first": None, "drop-me": None}
    plugins.extend_pipeline(target, stages, options=None)
    assert list(stages) == ["first", "extra"]
    assert plugins.conformance_expectations(target) == {"case[fake-ext]": "known gap"}


def test_hookspecs_are_documented():
    for name in ("tritium_targets", "tritium_extend_pipeline", "tritium_conformance_expectations"):
        spec = getattr(plugins.HookSpecs, name)
        assert spec.__doc__ and len(spec.__doc__.strip()) > 80
        assert hasattr(plugins.plugin_manager().hook, name)


def test_runtime_registration(isolated):
    from types import SimpleNamespace

    from tritium.target import Target

    class Local(Target):
        name = "fake-local"
        priority = 1

    plugin = SimpleNamespace(tritium_targets=plugins.hookimpl(lambda: [Local()]))
    plugins.register(plugin, name="local")
    assert plugins.get_target().name == "fake-local"


def test_core_has_no_target_specific_branches():
    src = Path(plugins.__file__).read_text()
    for name in ('"cpu"', '"nvptx"', '"amdgpu"', '"interpreter"', "'cpu'", "'nvptx'"):
        assert name not in src


def test_entry_point_scan_agrees_with_importlib_metadata(site):
    from importlib import metadata

    make_dist(site, [("fake-scan", 1, True, "")], version="0.9")
    egg = site / "tritium_test_fake_egg.egg-info"  # an egg-info folder (old-style develop install)
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.2\nName: tritium-test-fake-egg\nVersion: 2.0\n\nbody\n")
    (egg / "entry_points.txt").write_text("[console_scripts]\nx = y:z\n\n[tritium]\negg = some.module:attr\n")
    ours = {(ep.dist.name, ep.name, ep.value) for ep in plugins._iter_entry_points()}
    theirs = {(ep.dist.name, ep.name, ep.value) for ep in metadata.entry_points(group="tritium")}
    assert ours == theirs
    assert ("tritium-test-fake-egg", "egg", "some.module:attr") in ours
    for dist in ("pluggy", "pytest", "tritium-test-fake-egg"):
        assert plugins.distribution_version(dist) == metadata.version(dist)
    assert plugins.distribution_version("no-such-distribution-here") == ""


def test_zip_on_sys_path_falls_back_to_importlib_metadata(site, monkeypatch, tmp_path_factory):
    zipped = tmp_path_factory.mktemp("z") / "lib.zip"
    zipped.write_bytes(b"PK\x05\x06" + b"\x00" * 18)  # an empty zip archive
    monkeypatch.syspath_prepend(str(zipped))
    make_dist(site, [("fake-zip", 1, True, "")])
    assert plugins.distributions() is None
    assert "fake-zip" in plugins.targets()
