"""The pytest plugin ``run.py`` loads into Triton's language tests: Triton's test helpers as
``triton._internal_testing``, the expected failures of ``expected_failures.txt`` as ``xfail`` with
their reasons, torch's TF32 switch restored after each test (one test's setting must not change
another's reference), and the counts per file at the end (printed, and as JSON to
``TRITON_TESTS_JSON``)."""

from __future__ import annotations

import fnmatch
import importlib.abc
import importlib.util
import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from tritium import as_triton

HERE = Path(__file__).resolve().parent
HELPERS = HERE / "upstream" / "_internal_testing.py"


def expected_failures(path: Path = HERE / "expected_failures.txt", target: str = "") -> list[tuple[str, str]]:
    """``(pattern, reason)`` of each line ``[TARGETS] PATTERN | REASON`` that concerns ``target``: a
    test id (``*`` allowed), after an optional ``[nvptx,amdgpu]`` naming the only targets it fails
    on; ``#`` starts a comment."""
    entries = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if not line:
            continue
        pattern, _, reason = line.partition(" | ")
        pattern = pattern.strip()
        if pattern.startswith("["):
            targets, _, pattern = pattern[1:].partition("]")
            if target not in {t.strip() for t in targets.split(",")}:
                continue
        entries.append((pattern.strip(), reason.strip()))
    return entries


class _Helpers(importlib.abc.MetaPathFinder):
    """``triton._internal_testing`` is Triton's file, fetched beside the tests."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "triton._internal_testing":
            return importlib.util.spec_from_file_location(fullname, HELPERS)
        return None


#: the same tests on the real Triton, for a side-by-side count (``run.py --real-triton``)
REAL = bool(os.environ.get("TRITON_TESTS_REAL"))
if not REAL:
    as_triton.install()  # also in pytest-xdist's workers, which ``tritium run`` does not start
    sys.meta_path.append(_Helpers())
_ENTRIES = [] if REAL else expected_failures(target=os.environ.get("TRITIUM_TARGET", ""))
_COUNTS: dict[str, Counter] = defaultdict(Counter)


def pytest_collection_modifyitems(config, items):
    every = int(os.environ.get("TRITON_TESTS_SAMPLE", "1") or 1)
    part = int(os.environ.get("TRITON_TESTS_PART", "0") or 0) % every
    if every > 1:  # one test in ``every`` (part ``part`` of ``every``), the same ones on every run and target
        config.hook.pytest_deselected(items=[t for i, t in enumerate(items) if i % every != part])
        items[:] = items[part::every]
    for item in items:
        test_id = item.nodeid.split("language/", 1)[-1]
        for pattern, reason in _ENTRIES:
            if fnmatch.fnmatchcase(test_id, pattern.replace("[", "[[]")):  # a test id's [ is literal
                item.add_marker(pytest.mark.xfail(reason=reason, strict=False))
                break


def pytest_runtest_setup(item):
    """Remember torch's TF32 switch: test_core's test_dot sets it for its own reference, and a later
    test in the same worker (test_matmul's fp32 references) would otherwise compute in TF32."""
    torch = sys.modules.get("torch")
    item.stash[_TF32] = torch.backends.cuda.matmul.allow_tf32 if torch is not None else None


def pytest_runtest_teardown(item, nextitem):
    torch, saved = sys.modules.get("torch"), item.stash.get(_TF32, None)
    if torch is not None and saved is not None:
        torch.backends.cuda.matmul.allow_tf32 = saved


_TF32 = pytest.StashKey[object]()


def pytest_collectreport(report):
    """A test file that does not import (a name tritium lacks) counts as an error of that file."""
    if report.failed and report.nodeid.endswith(".py"):
        _COUNTS[report.nodeid.rsplit("/", 1)[-1]]["error"] += 1


def pytest_runtest_logreport(report):
    file = report.nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    if report.when == "call" or (report.when == "setup" and not report.passed):
        outcome = "xfailed" if hasattr(report, "wasxfail") and report.skipped else \
            "xpassed" if hasattr(report, "wasxfail") else report.outcome
        _COUNTS[file][outcome] += 1


def pytest_terminal_summary(terminalreporter):
    if not _COUNTS or hasattr(terminalreporter.config, "workerinput"):
        return
    write = terminalreporter.write_line
    write(f"{'file':32} {'passed':>7} {'failed':>7} {'skipped':>8} {'xfailed':>8} {'xpassed':>8} {'pass %':>7} "
          "(a file that does not import: 'error')")
    total = Counter()
    for file in sorted(_COUNTS):
        c = _COUNTS[file]
        total.update(c)
        ran = c["passed"] + c["failed"] + c["xfailed"] + c["xpassed"]
        rate = 100 * (c["passed"] + c["xpassed"]) / ran if ran else 0.0
        write(f"{file:32} {c['passed']:7} {c['failed']:7} {c['skipped']:8} {c['xfailed']:8} {c['xpassed']:8} "
              + (f"{rate:7.1f}" if ran or not c["error"] else "  error"))
    ran = total["passed"] + total["failed"] + total["xfailed"] + total["xpassed"]
    write(f"{'all':32} {total['passed']:7} {total['failed']:7} {total['skipped']:8} {total['xfailed']:8} "
          f"{total['xpassed']:8} {100 * (total['passed'] + total['xpassed']) / max(ran, 1):7.1f}")
    out = os.environ.get("TRITON_TESTS_JSON")
    if out:
        Path(out).write_text(json.dumps({f: dict(c) for f, c in sorted(_COUNTS.items())}, indent=1))
