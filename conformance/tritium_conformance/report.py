"""The suite's results as a Markdown report: what ran where (device, date, versions) and each case.

A case that killed its worker process or hung is a row like any other (status ``crash`` or
``timeout``, how it died in the details), and the header names those cases too.

The device is the target's ``device_description()`` (e.g. ``"NVIDIA H100 80GB HBM3 (sm_90a), driver
CUDA 13.0"``); a target that gives none runs on the host, which the report names.
"""

from __future__ import annotations

import datetime
import os
import platform
import re
import subprocess
from typing import Any, Iterable

from .suite import COMPILED, CRASH, FAIL, PASS, TIMEOUT, XFAIL, XPASS, Result

#: distributions whose versions the report lists when they are installed (read from their
#: metadata: nothing is imported)
VERSIONED = ("tritium", "tritium-conformance", "llvmlite", "torch-mlir", "numpy", "torch", "triton", "cuda-python",
             "cuda-bindings", "cupy-cuda12x", "cupy-cuda13x")


def _ask(target: Any, attribute: str) -> str:
    method = getattr(target, attribute, None)
    try:
        value = method() if callable(method) else None
    except Exception as exc:  # a device that cannot be asked is reported, not fatal
        return f"unknown ({type(exc).__name__}: {exc})"
    return str(value) if value else ""


def host_description() -> str:
    """The host CPU: its model name where the OS tells it, and its core count."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    return f"host: {model or platform.processor() or platform.machine()}, {os.cpu_count()} cores"


def device_description(target: Any) -> str:
    """The target's own description of its device, else the host's."""
    return _ask(target, "device_description") or host_description()


def versions(target: Any, provider: str) -> dict[str, str]:
    """Name -> version of what produced the results: Python, the installed distributions of
    ``VERSIONED``, the target's provider and its driver when it says."""
    from tritium.plugins import distribution_version

    out = {"python": platform.python_version()}
    for name in VERSIONED:
        v = distribution_version(name)
        if v:
            out[name] = v
    commit = _git_commit()
    if commit and "tritium" in out:
        out["tritium"] += f" (commit {commit})"
    out[f"target {target.name}"] = provider
    return out


def _git_commit() -> str:
    """The commit of the tritium checkout that is imported, when it is one ('' otherwise)."""
    import tritium

    try:
        proc = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=os.path.dirname(tritium.__file__),
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def default_name(target: Any) -> str:
    """``<target>-<device>.md``, the device reduced to lowercase words joined by dashes."""
    device = device_description(target).removeprefix("host: ").split(",")[0]
    slug = re.sub(r"[^a-z0-9]+", "-", device.lower()).strip("-")[:60]
    return f"{target.name}-{slug or 'unknown'}.md"


def devices_used(results: Iterable[Result]) -> dict[str, list[int]]:
    """Each device the results ran on (``Result.device``), with the workers that ran there."""
    out: dict[str, set[int]] = {}
    for r in results:
        workers = out.setdefault(r.device or "this process", set())
        if r.worker is not None:
            workers.add(r.worker)
    return {d: sorted(w) for d, w in sorted(out.items())}


def _where(r: Result) -> str:
    """``worker 1, device 0``: who ran a case (the device's index only: the header describes it)."""
    device = r.device.split(":", 1)[0] if r.device and r.device[0].isdigit() else ""
    parts = ([f"worker {r.worker}"] if r.worker is not None else []) + ([f"device {device}"] if device else [])
    return ", ".join(parts) or "this process"


#: the columns of the feature table, in the order a reader looks for them
OUTCOMES = (PASS, COMPILED, FAIL, CRASH, TIMEOUT, XFAIL, XPASS)


def feature_of(case_id: str) -> str:
    """A case's feature: its id up to the first dash (``random-randint-seed0`` -> ``random``)."""
    return case_id.split("-", 1)[0]


def feature_table(results: Iterable[Result]) -> list[str]:
    """Markdown rows: one per feature, how many of its cases had each outcome (columns with no case
    left out), and a total row."""
    counts: dict[str, dict[str, int]] = {}
    for r in results:
        row = counts.setdefault(feature_of(r.case_id), {})
        row[r.status] = row.get(r.status, 0) + 1
    shown = [o for o in OUTCOMES if any(o in row for row in counts.values())]
    lines = ["| feature | " + " | ".join(shown) + " | cases |", "|---" * (len(shown) + 2) + "|"]
    for feature, row in sorted(counts.items()):
        cells = [str(row.get(o, "")) for o in shown]
        lines.append(f"| {feature} | " + " | ".join(cells) + f" | {sum(row.values())} |")
    totals = [str(sum(row.get(o, 0) for row in counts.values())) for o in shown]
    lines.append("| **all** | " + " | ".join(totals) + f" | {sum(sum(row.values()) for row in counts.values())} |")
    return lines


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def markdown(target: Any, provider: str, results: Iterable[Result], summary: str, compile_only: bool,
             command: str = "", now: datetime.datetime | None = None) -> str:
    """The report: a header with device, date, mode, the devices the cases ran on (each with its
    workers), versions (and the cases that crashed or timed out), a table of outcomes by feature,
    then one table row per case, saying which worker and device ran it."""
    results = list(results)
    died = ", ".join(f"`{r.case_id}` ({r.status})" for r in results if r.status in (CRASH, TIMEOUT))
    now = now or datetime.datetime.now(datetime.timezone.utc)
    used = devices_used(results)
    devices = "; ".join(f"{d}" + (f" (worker{'s' if len(w) > 1 else ''} {', '.join(map(str, w))})" if w else "")
                        for d, w in used.items())
    mode = "compile only (every case compiled through the binary stage, none run)" if compile_only else \
        "run and checked against numpy references"
    lines = [f"# tritium conformance: target `{target.name}`", "",
             f"- Device: {device_description(target)}",
             f"- Date: {now.strftime('%Y-%m-%d %H:%M %Z').strip()}",
             f"- Mode: {mode}",
             *([f"- Devices used: {devices}"] if any(r.device for r in results) and not compile_only else []),
             "- Versions: " + ", ".join(f"{k} {v}" for k, v in versions(target, provider).items()),
             *([f"- Command: `{command}`"] if command else []),
             f"- Result: {summary}",
             *([f"- Crashed or timed out: {died}"] if died else []), "",
             "## By feature", "", *feature_table(results), "", "## Cases", "",
             "| case | status | max error | ms | details | ran on |", "|---|---|---|---|---|---|"]
    for r in results:
        err = "" if r.max_error is None else f"{r.max_error:.3g}"
        lines.append(f"| `{r.case_id}` | {r.status} | {err} | {r.seconds * 1e3:.1f} | {_cell(r.message)} | "
                     f"{_where(r)} |")
    return "\n".join(lines) + "\n"


def write_json(path: str, target: Any, provider: str, results: list[Result]) -> None:
    """The results as JSON: the target, its provider, the devices used (each with its workers) and
    every ``Result``."""
    import dataclasses
    import json

    with open(path, "w") as f:
        json.dump({"target": target.name, "provider": provider, "devices": devices_used(results),
                   "results": [dataclasses.asdict(r) for r in results]}, f, indent=1)


def portable(results: Iterable[Result]) -> list[Result]:
    """The results with the files their messages name relative to the working directory (the
    repository, where committed reports are made), so a report names no path of the machine that
    made it."""
    import dataclasses

    here = os.getcwd().rstrip(os.sep) + os.sep
    return [dataclasses.replace(r, message=r.message.replace(here, "")) for r in results]


def write(path: str, target: Any, provider: str, results: list[Result], summary: str,
          compile_only: bool, command: str = "") -> str:
    """Write the report to ``path`` (a directory, or a name ending in ``/``: ``default_name`` in it),
    and the results as JSON beside it (the same name, ``.json``); returns the Markdown file written."""
    if path.endswith(os.sep) or os.path.isdir(path):
        path = os.path.join(path, default_name(target))
    results = portable(results)
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "w") as f:
        f.write(markdown(target, provider, results, summary, compile_only, command))
    write_json(os.path.splitext(path)[0] + ".json", target, provider, results)
    return path
