"""The ``tritium`` command (also ``python -m tritium``).

    tritium targets [--json]      installed targets: available or why not, providing package,
                                  and which one TRITIUM_TARGET / automatic selection picks
    tritium cache dir             the cache directory
    tritium cache list [--json]   cache entries with size and kernel name
    tritium cache clear           delete every cache entry
    tritium pipeline [--target T] the ordered compilation stages for a target (plugins included)

Exit status: 0 on success; 1 when something is wrong (a plugin failed to load, two packages provide
one target name, TRITIUM_TARGET names a target that cannot be used, a cache error); 2 for usage
errors. ``tritium targets`` with nothing available but TRITIUM_TARGET unset says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Sequence

from .as_triton import TRITON_VERSION

TARGET_ENV = "TRITIUM_TARGET"


def _table(rows: list[list[str]], headers: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def _targets_report() -> dict:
    from . import plugins
    from .errors import TritiumError

    infos = plugins.target_infos()
    dups = plugins.duplicate_targets()
    auto = plugins.auto_target_info()
    env = os.environ.get(TARGET_ENV, "")
    selected, selection_error = None, None
    try:
        selected = getattr(plugins.get_target(), "name", None)
    except TritiumError as exc:
        selection_error = str(exc)
    rows = []
    for info in infos:
        ok, why = info.availability()
        rows.append({
            "name": info.name, "available": ok, "reason": why, "priority": info.priority,
            "device": _device_description(info.target) if ok else "",
            "distribution": info.distribution, "version": info.version, "plugin": info.plugin,
            "auto": auto is not None and info is auto, "duplicate": info.name in dups,
        })
    broken = [{"name": b.name, "value": b.value, "distribution": b.distribution, "version": b.version,
               "stage": b.stage, "error": b.error, "message": b.describe()}
              for b in plugins.broken_plugins()]
    return {"targets": rows, "auto": auto.name if auto is not None else None, "env": {TARGET_ENV: env},
            "selected": selected, "selection_error": selection_error, "broken_plugins": broken,
            "duplicates": sorted(dups)}


def _device_description(target) -> str:
    try:
        return str(target.device_description())
    except Exception as exc:  # a target's bug must not hide the others
        return f"device_description() raised {type(exc).__name__}: {exc}"


def cmd_targets(args: argparse.Namespace) -> int:
    report = _targets_report()
    explicit = bool(report["env"][TARGET_ENV].strip()) and report["env"][TARGET_ENV].strip().lower() != "auto"
    bad = bool(report["broken_plugins"] or report["duplicates"] or (explicit and report["selection_error"]))
    if args.json:
        print(json.dumps(report, indent=2))
        return 1 if bad else 0
    rows = []
    for t in report["targets"]:
        dist = t["distribution"] or f"(plugin {t['plugin']})"
        rows.append([t["name"] + (" *" if t["auto"] else ""), "yes" if t["available"] else "no",
                     str(t["priority"]), f"{dist} {t['version']}".strip(),
                     "; ".join(filter(None, [
                         "DUPLICATE NAME" if t["duplicate"] else "", t["device"], t["reason"],
                         "only when named (negative priority)" if t["priority"] < 0 else ""]))])
    if rows:
        print(_table(rows, ["TARGET", "AVAILABLE", "PRIORITY", "PROVIDED BY", "NOTE"]))
    else:
        print("no tritium targets are installed (install a target package, e.g. tritium-cpu)")
    print()
    auto = report["auto"]
    print(f"auto-selection picks: {auto} (marked *)" if auto else
          "auto-selection picks: nothing (no available target with priority >= 0)")
    env = report["env"][TARGET_ENV]
    if env.strip():
        if report["selected"]:
            print(f"{TARGET_ENV}={env} selects: {report['selected']}")
        else:
            print(f"{TARGET_ENV}={env}: error")
    if report["selection_error"]:
        label = "error" if explicit else "note"
        print(f"{label}: {report['selection_error']}", file=sys.stderr)
    for b in report["broken_plugins"]:
        print(f"error: {b['message']}", file=sys.stderr)
    return 1 if bad else 0


def _human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def cmd_cache(args: argparse.Namespace) -> int:
    from .runtime.cache import Cache

    cache = Cache()
    if args.action == "dir":
        print(cache.directory)
        return 0
    if os.path.exists(cache.directory) and not os.path.isdir(cache.directory):
        print(f"tritium: the cache directory {cache.directory} is not a directory (set TRITIUM_CACHE_DIR to a "
              "directory); nothing was " + ("removed" if args.action == "clear" else "listed"), file=sys.stderr)
        return 1
    if args.action == "clear":
        if not os.path.isdir(cache.directory):
            print(f"removed 0 files from {cache.directory} (it does not exist)")
            return 0
        removed = cache.clear()
        print(f"removed {removed} file{'s' if removed != 1 else ''} from {cache.directory}")
        return 0
    # list
    entries = sorted(cache.entries(), key=lambda e: e.mtime, reverse=True)
    if args.json:
        print(json.dumps({"directory": cache.directory, "entries": [e.as_dict() for e in entries]}, indent=2))
        return 0
    if not entries:
        print(f"no entries in {cache.directory}")
        return 0
    rows = [[e.key[:16], e.name or "?", _human_size(e.size),
             time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.mtime)) if e.mtime else "",
             "" if e.valid else f"CORRUPT: {e.error}"] for e in entries]
    print(_table(rows, ["KEY", "KERNEL", "SIZE", "MODIFIED", ""]))
    total = sum(e.size for e in entries)
    print(f"\n{len(entries)} entr{'ies' if len(entries) != 1 else 'y'}, {_human_size(total)} in {cache.directory}")
    return 0


def cmd_pipeline(args: argparse.Namespace) -> int:
    from . import plugins
    from .runtime.compiler import build_pipeline

    target = plugins.get_target(args.target, runnable=False)  # the stages need no device
    stages = build_pipeline(target, target.parse_options({}))
    print(f"target {target.name}:\n{stages}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """Run a script or module with ``import triton`` resolved to tritium (``as_triton``)."""
    import runpy

    from . import as_triton

    if not args.program:
        print("tritium run: name a script (tritium run script.py ...) or a module (tritium run -m pytest ...)",
              file=sys.stderr)
        return 2
    as_triton.install()
    as_triton.inherit()  # the processes the program starts see tritium too
    target, *rest = args.program
    sys.argv = [target, *rest]
    try:
        if args.module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
            runpy.run_path(target, run_name="__main__")
    except SystemExit as e:  # as the interpreter handles it: a message, or a status
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tritium", description="tritium kernel compiler: targets and cache.")
    version = getattr(sys.modules.get(__package__ or "tritium"), "__version__", "") or "unknown"
    parser.add_argument("--version", action="version", version=f"tritium {version}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("targets", help="list installed targets, their availability and the auto choice",
                       description="List every installed target: whether it can run here (and why not), "
                                   "the package that provides it, and which one TRITIUM_TARGET or "
                                   "automatic selection picks. Exit status 1 if a plugin is broken.")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_targets)

    p = sub.add_parser("cache", help="the on-disk kernel cache (TRITIUM_CACHE_DIR)",
                       description="Inspect or clear the on-disk kernel cache.")
    csub = p.add_subparsers(dest="action", metavar="ACTION")
    csub.required = True
    csub.add_parser("dir", help="print the cache directory")
    pl = csub.add_parser("list", help="list entries with size and kernel name")
    pl.add_argument("--json", action="store_true", help="print JSON instead of a table")
    csub.add_parser("clear", help="delete every entry")
    p.set_defaults(func=cmd_cache)

    p = sub.add_parser("pipeline", help="print the compilation stages of a target",
                       description="Print the ordered stages (name, callable, what it does) that compile "
                                   "kernels for a target, after every plugin extended them.")
    p.add_argument("--target", default=None, help="target name (default: TRITIUM_TARGET or automatic)")
    p.set_defaults(func=cmd_pipeline)

    p = sub.add_parser("run", help="run a program written for Triton: import triton gives tritium",
                       description="Run a Python script (or, with -m, a module such as pytest) with every "
                                   "'triton' import resolved to tritium; code that checks Triton's version "
                                   f"sees {TRITON_VERSION}, the version whose language tritium implements.")
    p.add_argument("-m", dest="module", action="store_true", help="run a module, as python -m does")
    p.add_argument("program", nargs=argparse.REMAINDER, help="the script (or module) and its arguments")
    p.set_defaults(func=cmd_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a clear line instead of a traceback for expected failures
        from .errors import TritiumError

        if isinstance(exc, (TritiumError, OSError)):
            print(f"tritium: error: {exc}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
