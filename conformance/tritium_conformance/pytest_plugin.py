"""The suite as pytest tests: ``pytest --pyargs tritium_conformance --tritium-target NAME``.

Registered through the ``pytest11`` entry point, so installing tritium-conformance is enough. Each
case is one test, named by its id (``-k`` selects as usual). A case the target declares a known gap
(``tritium_conformance_expectations``) is an ``xfail`` with the target's reason, strict: a declared
gap that starts passing fails as ``XPASS(strict)``, so it is noticed.

Crash isolation as in the command line: by default the cases run in a worker process
(``isolated.py``), so a case that kills it (an LLVM abort, a segfault, a device fault) fails as that
case's crash and the session goes on; a case that dies after others runs again alone to be sure.
``--tritium-in-process`` runs them in pytest's process instead (for a debugger; a crash then ends
the session).

One worker per device: under pytest-xdist (``-n N``), xdist worker ``gwK`` runs its cases on device
``K`` modulo the target's device count, so ``-n <GPUs>`` on a machine with several GPUs gives one
worker per GPU. ``--tritium-report DIR`` writes the Markdown report (and JSON beside it) naming each
device and which worker ran each case, as the command's ``--report`` does.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

PACKAGE_DIR = Path(__file__).resolve().parent
#: the ``user_properties`` key under which each test carries its ``Result`` (JSON) to the report
RESULT_PROPERTY = "tritium_conformance_result"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tritium-conformance", "tritium's conformance suite (pytest --pyargs tritium_conformance)")
    group.addoption("--tritium-target", metavar="NAME", default=None,
                    help="the target tritium's tests and conformance cases run on (default: TRITIUM_TARGET, else "
                    "automatic selection)")
    group.addoption("--tritium-compile-only", action="store_true",
                    help="conformance cases compile through the target's binary stage without running (a GPU "
                    "target on a machine without a GPU)")
    group.addoption("--tritium-in-process", action="store_true",
                    help="run conformance cases in pytest's process, without crash isolation (for a debugger)")
    group.addoption("--tritium-cases", action="append", default=[], metavar="FILE",
                    help="also register the conformance cases the Python file FILE defines (repeatable)")
    group.addoption("--tritium-timeout", type=float, default=120.0, metavar="SECONDS",
                    help="seconds before an isolated conformance case counts as hung (default 120)")
    group.addoption("--tritium-report", metavar="DIR", default=None,
                    help="write the conformance results as Markdown (and JSON beside it) to DIR")


def worker_index() -> int | None:
    """This process's pytest-xdist worker number (``gw3`` -> 3), None outside xdist."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(name[2:]) if name.startswith("gw") and name[2:].isdigit() else None


def pinned_device(worker: int | None, devices: int) -> int | None:
    """The device xdist worker ``worker`` runs on: one worker per device, round robin when there are
    more workers than devices; None (the target's current device) outside xdist."""
    return None if worker is None else worker % max(1, devices)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name == "__init__.py" and file_path.resolve().parent == PACKAGE_DIR:
        return ConformanceCases.from_parent(parent, path=file_path)
    return None


class Runner:
    """The target, its declared gaps and where the cases run: a worker process (isolated) or this one."""

    def __init__(self, config: pytest.Config):
        from tritium import plugins

        from .suite import CompileOnlyDevice, Device, installed_target, load_cases

        self.case_files = [os.path.abspath(f) for f in config.getoption("tritium_cases")]
        for path in self.case_files:
            load_cases(path)
        name = config.getoption("tritium_target")
        self.compile_only = config.getoption("tritium_compile_only")
        self.target = installed_target(name) if self.compile_only else plugins.get_target(name)
        self.expectations = plugins.conformance_expectations(self.target)
        self.worker = worker_index()
        self.device = None if self.compile_only else pinned_device(self.worker, self.target.device_count())
        #: the device of a case that died before saying where it ran
        self.where = "compile only" if self.compile_only else \
            str(self.device if self.device is not None else self.target.current_device())
        self.timeout = config.getoption("tritium_timeout")
        self.isolated = not config.getoption("tritium_in_process")
        self._worker_process: Any = None
        self._dev: Any = None
        if not self.isolated:
            if self.device is not None:
                self.target.set_current_device(self.device)
            self._dev = CompileOnlyDevice(self.target) if self.compile_only else Device(self.target)

    def run(self, case_id: str) -> Any:
        """The ``Result`` of one case (its declared gap is pytest's xfail marker, not passed here)."""
        from .suite import CASES, check_case

        if not self.isolated:
            return check_case(CASES[case_id], self._dev)
        from .isolated import run_alone, worker_argv
        from .workers import Worker

        if self._worker_process is None:
            self._worker_process = Worker(worker_argv(self.target.name, self.compile_only, self.case_files,
                                                      self.device), self.timeout)
        return run_alone(self._worker_process, case_id)

    def close(self) -> None:
        if self._worker_process is not None:
            self._worker_process.close()


_RUNNER_KEY = pytest.StashKey[Runner]()


def _runner(config: pytest.Config) -> Runner:
    runner = config.stash.get(_RUNNER_KEY, None)
    if runner is None:
        runner = config.stash[_RUNNER_KEY] = Runner(config)
    return runner


class ConformanceCases(pytest.File):
    """The package's ``__init__.py`` stands for the suite: one item per registered case."""

    def collect(self):
        from tritium.errors import TritiumError

        from .suite import CASES, declared_gap

        try:
            runner = _runner(self.config)
        except (TritiumError, OSError, ValueError) as e:
            raise pytest.UsageError(f"tritium-conformance: {e}") from None
        for case_id in CASES:
            item = ConformanceCase.from_parent(self, name=case_id)
            gap = declared_gap(case_id, runner.expectations)
            if gap is not None:
                item.add_marker(pytest.mark.xfail(reason=f"declared gap: {gap}", strict=True))
            yield item


class CaseFailed(Exception):
    """A conformance case that failed, crashed or timed out (its message is the report)."""


class ConformanceCase(pytest.Item):
    def runtest(self) -> None:
        from .suite import COMPILED, PASS

        runner = _runner(self.config)
        t0 = time.perf_counter()
        r = runner.run(self.name)
        r.worker = runner.worker
        r.device = r.device or runner.where
        r.seconds = r.seconds or time.perf_counter() - t0
        self.user_properties.append((RESULT_PROPERTY, json.dumps(dataclasses.asdict(r))))
        if r.status not in (PASS, COMPILED):
            err = "" if r.max_error is None else f" (max error {r.max_error:.3g})"
            raise CaseFailed(f"{r.status}{err} on {r.device}: {r.message}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CaseFailed):
            return f"{self.name}: {excinfo.value}"
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"conformance case {self.name}"


# -- the report: results travel in user_properties (from xdist workers too) -----------------------
#: node id -> Result (JSON) of each case run in this session (in the controller under xdist)
_RESULTS: dict[str, str] = {}


def pytest_configure(config: pytest.Config) -> None:
    _RESULTS.clear()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        for key, value in report.user_properties:
            if key == RESULT_PROPERTY:
                _RESULTS[report.nodeid] = value


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    runner = config.stash.get(_RUNNER_KEY, None)
    if runner is not None:
        runner.close()
    folder = config.getoption("tritium_report")
    if not folder or hasattr(config, "workerinput") or not _RESULTS:
        return  # xdist workers send their results to the controller, which writes the report
    write_report(config, folder, dict(_RESULTS))


def write_report(config: pytest.Config, folder: str, found: dict[str, str]) -> None:
    from tritium import plugins

    from . import report
    from .cli import summary
    from .suite import Result, installed_target, load_cases

    for path in config.getoption("tritium_cases"):  # the targets they register (an xdist controller collects none)
        load_cases(os.path.abspath(path))
    results = [Result(**json.loads(v)) for v in found.values()]
    compile_only = config.getoption("tritium_compile_only")
    name = config.getoption("tritium_target")
    target = installed_target(name) if compile_only else plugins.get_target(name)
    provider = next((i.provider for i in plugins.target_infos() if i.target is target), "")
    text = summary(results, sum(r.seconds for r in results), compile_only)
    report.write(folder if folder.endswith(os.sep) else folder + os.sep, target, provider, results, text,
                 compile_only, "pytest --pyargs tritium_conformance " + " ".join(config.invocation_params.args))
