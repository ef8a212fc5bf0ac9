"""The core tests run on every installed target that can run here.

A test that takes the ``target`` fixture runs once per installed target whose ``availability()`` is
true and that is tested by default (``Target.test_by_default``; test ids are the target names),
with ``TRITIUM_TARGET`` set to it and a private kernel cache.
The fixture gives the ``Target`` object: a test that needs a property asks the target for it, never
its name. Two fixtures narrow the targets by what the test needs:

- ``host_target``: kernels read host memory directly (the target's driver is core's
  ``HostMemory``), so numpy arrays, DLPack and buffer-protocol objects go straight to kernels;
- ``compiling_target``: the target compiles kernels (``Target.compiles``), so it has stages.

Tests that should run on a GPU target too move their data through ``target.driver.to_device`` and
``to_host``. ``pytest --tritium-target NAME`` (or ``TRITIUM_TEST_TARGET=NAME``) runs them on one
target only.
"""

from __future__ import annotations

import argparse

import os

import pytest

from tritium import plugins
from tritium.runtime.host import HostMemory
from tritium.target import Target

#: the environment variable that does what ``--tritium-target`` does
TEST_TARGET_ENV = "TRITIUM_TEST_TARGET"


def pytest_addoption(parser: pytest.Parser) -> None:
    try:
        parser.addoption("--tritium-target", metavar="NAME", default=None,
                         help=f"run the core tests on this installed target only (default: every available "
                              f"one; also {TEST_TARGET_ENV}=NAME)")
    except (ValueError, argparse.ArgumentError):  # tritium-conformance's pytest plugin (installed)
        pass  # declares the same option; pytest reports the clash as either, depending on its version


def pytest_configure(config: pytest.Config) -> None:
    runnable_targets(config)  # a wrong --tritium-target is one usage error, not one per test module


def runnable_targets(config: pytest.Config) -> dict[str, Target]:
    """The installed, available targets by name, or the one ``--tritium-target`` names."""
    installed = plugins.targets()
    option = config.getoption("--tritium-target")
    chosen = (option or os.environ.get(TEST_TARGET_ENV, "")).strip()
    if not chosen:
        return {name: t for name, t in installed.items() if t.test_by_default and plugins.availability(t)[0]}
    given = f"--tritium-target {chosen}" if option else f"{TEST_TARGET_ENV}={chosen}"
    if chosen not in installed:
        raise pytest.UsageError(f"{given}: no such target is installed "
                                f"(installed: {', '.join(sorted(installed)) or 'none'})")
    ok, why = plugins.availability(installed[chosen])
    if not ok:
        raise pytest.UsageError(f"{given}: the target is not available here: {why}")
    return {chosen: installed[chosen]}


def _reads_host_memory(target: Target) -> bool:
    return isinstance(target.driver, HostMemory)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "target" not in metafunc.fixturenames:
        return
    found = runnable_targets(metafunc.config)
    names = [name for name, t in found.items()
             if ("host_target" not in metafunc.fixturenames or _reads_host_memory(t))
             and ("compiling_target" not in metafunc.fixturenames or t.compiles)]
    metafunc.parametrize("target", names, ids=names, indirect=True)


@pytest.fixture
def target(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path) -> Target:
    """The target under test: ``TRITIUM_TARGET`` names it, kernels are cached in ``tmp_path``."""
    monkeypatch.setenv(plugins.TARGET_ENV, request.param)
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    return plugins.targets()[request.param]


@pytest.fixture
def host_target(target: Target) -> Target:
    """``target``, among the targets whose kernels read host memory directly."""
    return target


@pytest.fixture
def compiling_target(target: Target) -> Target:
    """``target``, among the targets that compile kernels."""
    return target
