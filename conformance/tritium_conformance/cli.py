"""The ``tritium-conformance`` command: run the suite on one target and print a report.

Cases run in worker processes (``-n N``, ``isolated.py``): a case that kills its process is reported
as a crash, one that hangs as a timeout, and the run goes on. Exit status: 0 when no case failed,
crashed or timed out unexpectedly (declared gaps excepted), 1 when one did, 2 for a usage error
(unknown or unavailable target, no case matching ``-k``, workers that cannot start).
``--compile-only`` compiles every case instead of running it, on a target that need not be
available here (a GPU target without a GPU): exit status 1 when a compile failed outside the
target's declared gaps. ``--report PATH`` writes the results as Markdown and JSON, naming the
device (and worker) of each case; ``-n N`` on a machine with several GPUs runs one worker per GPU
(``isolated.py``). ``--fuzz N`` runs the differential tester instead (``fuzz.py``): exit status 1
when any kernel mismatches, crashes, hangs or fails to compile.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
import time

import numpy as np

from . import CASES, CompileOnlyDevice, Device, Result, run_suite, select
from .suite import COMPILED, CRASH, FAIL, PASS, TIMEOUT, XFAIL, XPASS, installed_target, load_cases


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tritium-conformance", description="Run tritium's conformance suite on a target.")
    p.add_argument("--target", default=None, action="append",
                   help="target name (default: TRITIUM_TARGET, else automatic selection); with --fuzz, "
                   "repeatable (default: every available target)")
    p.add_argument("-k", dest="patterns", action="append", default=[], metavar="SUBSTRING",
                   help="run only cases whose id contains SUBSTRING (repeatable: any of them)")
    p.add_argument("--list", action="store_true", help="list the selected case ids and exit")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    p.add_argument("-q", "--quiet", action="store_true", help="print only failures and the summary")
    p.add_argument("--compile-only", action="store_true",
                   help="compile every selected case through the target's binary stage without running it; the "
                   "target need not be available here (e.g. nvptx without a GPU). Kernels found in the disk cache "
                   "are not compiled again: TRITIUM_CACHE_DISABLE=1 runs every stage")
    p.add_argument("-n", dest="workers", type=int, default=1, metavar="N",
                   help="worker processes the cases run in (default 1); a case that kills its worker is reported as "
                   "a crash and the run goes on. On a machine with several devices of the target (GPUs), worker k "
                   "runs on device k modulo their count: -n <GPUs> gives one worker per GPU. 0: run in this "
                   "process, without that isolation (for a debugger)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="seconds before a case (default 120) or a fuzzed kernel (default 60) counts as hung")
    p.add_argument("--cases", action="append", default=[], metavar="FILE",
                   help="also register the cases that the Python file FILE defines with "
                   "tritium_conformance.suite.cases (repeatable)")
    p.add_argument("--report", metavar="PATH", help="also write a Markdown report (device, date, versions, one row per "
                   "case) to PATH, and the results as JSON beside it; a directory gets <target>-<device>.md and .json")
    fz = p.add_argument_group("differential fuzzing (instead of the suite)")
    fz.add_argument("--fuzz", type=int, metavar="N", help="run N random kernels on every target (or those named "
                    "with --target) and compare each with a numpy model of Triton's semantics")
    fz.add_argument("--seed", type=int, default=0, help="first seed (default 0): seeds S .. S+N-1 run")
    fz.add_argument("--jobs", type=int, default=1, help="kernels run in parallel (default 1)")
    fz.add_argument("--keep", metavar="DIR", help="save each kernel with a finding (module and arguments) in DIR")
    fz.add_argument("--without", action="append", default=[], metavar="KIND",
                    help="generate no statement or load of KIND (repeatable; e.g. helper, mode, offset-bool: to "
                    "look past a known bug; the same seed then gives another kernel)")
    fz.add_argument("--large-blocks", action="store_true",
                    help="blocks of 32x64 to 128x128 (1-D: 128, whose outer products are 128x128) instead of "
                    "small ones: compile times at Triton's tile sizes (each target's maximum and 99th percentile "
                    "are printed)")
    return p


def fuzz_main(args: argparse.Namespace) -> int:
    """``--fuzz N``: each finding with its seed and kernel source; exit status 1 when any."""
    from . import fuzz

    from .fuzz_gen import FEATURES, LOAD_FORMS, LOOPS, STATEMENTS, generate

    kinds = set(STATEMENTS) | set(LOAD_FORMS) | set(FEATURES) | set(LOOPS)
    unknown = set(args.without) - kinds
    try:
        if unknown:
            raise ValueError(f"unknown kind(s) {sorted(unknown)}; kinds: {sorted(kinds)}")
        compile_only = fuzz.compile_only_targets(args.target)
        targets = [t for t in fuzz.available_targets(args.target) if t not in compile_only]
    except ValueError as e:
        print(f"tritium-conformance: {e}", file=sys.stderr)
        return 2
    without = f" without {', '.join(args.without)}" if args.without else ""
    print(f"tritium fuzz: {args.fuzz} kernels (seeds {args.seed}..{args.seed + args.fuzz - 1}){without} on "
          f"{', '.join(targets)}" + (f"; compiled only for {', '.join(compile_only)}" if compile_only else ""),
          flush=True)

    def show(seed: int, found: list) -> None:
        for f in found:
            print(f, flush=True)
        if found and not args.quiet:
            print("    " + found[0].source.replace("\n", "\n    ").rstrip(), flush=True)

    t0 = time.perf_counter()
    seconds: dict[str, list[tuple[float, int]]] = {}
    timeout = 60.0 if args.timeout is None else args.timeout
    findings = fuzz.run(range(args.seed, args.seed + args.fuzz), targets, args.jobs, timeout, show,
                         frozenset(args.without), compile_only, args.keep,
                         functools.partial(generate, large=args.large_blocks), seconds)
    seeds = sorted({f.seed for f in findings})
    print(f"{args.fuzz} kernels in {time.perf_counter() - t0:.1f} s: {len(findings)} findings in {len(seeds)} "
          f"kernels" + (f" (seeds {' '.join(map(str, seeds))})" if seeds else ""))
    for target, times in sorted(seconds.items()):
        what = "compile" if target in compile_only else "compile and run"
        worst, seed = max(times)
        p99 = float(np.percentile([t for t, _ in times], 99))
        print(f"{target} ({what}, per kernel): max {worst:.2f} s (seed {seed}), 99th percentile {p99:.2f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([dataclasses.asdict(x) for x in findings], f, indent=1)
    return 1 if findings else 0


def _line(r: Result) -> str:
    err = "-" if r.max_error is None else f"{r.max_error:.3g}"
    text = f"{r.status.upper():6} {r.case_id:44} max err {err:>9}  {r.seconds * 1e3:7.1f} ms"
    return text + (f"\n       {r.message}" if r.message and r.status != COMPILED else "")


def summary(results: list[Result], seconds: float, compile_only: bool = False) -> str:
    counts = {s: sum(r.status == s for r in results) for s in (PASS, FAIL, CRASH, TIMEOUT, XFAIL, XPASS, COMPILED)}
    died = f"{counts[CRASH]} crashed, {counts[TIMEOUT]} timed out"
    if compile_only:
        return (f"{len(results)} cases: {counts[COMPILED]} compiled, {counts[FAIL]} failed to compile, {died}, "
                f"{counts[XFAIL]} xfailed (declared gaps) in {seconds:.1f} s")
    return (f"{len(results)} cases: {counts[PASS]} passed, {counts[FAIL]} failed, {died}, {counts[XFAIL]} xfailed "
            f"(declared gaps), {counts[XPASS]} xpassed in {seconds:.1f} s")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.fuzz is not None:
        return fuzz_main(args)
    if args.target and len(args.target) > 1:
        print("tritium-conformance: the suite runs on one --target at a time", file=sys.stderr)
        return 2
    args.target = args.target[0] if args.target else None
    try:
        for path in args.cases:
            load_cases(path)
    except (OSError, ValueError) as e:
        print(f"tritium-conformance: {e}", file=sys.stderr)
        return 2
    selected = select(args.patterns)
    if not selected:
        print(f"no case id contains any of {args.patterns}; {len(CASES)} cases exist (see --list)", file=sys.stderr)
        return 2
    if args.list:
        print("\n".join(c.id for c in selected))
        return 0

    from tritium import plugins
    from tritium.errors import TritiumError

    try:
        target = installed_target(args.target) if args.compile_only else plugins.get_target(args.target)
        expectations = plugins.conformance_expectations(target)
    except TritiumError as e:
        print(f"tritium-conformance: {e}", file=sys.stderr)
        return 2
    provider = next((i.provider for i in plugins.target_infos() if i.target is target), "")
    mode = ""
    if args.compile_only:
        ok, why = plugins.availability(target)
        mode = ", compile only" + ("" if ok else f" (cannot run here: {why})")
    print(f"tritium conformance on target '{target.name}' ({provider}){mode}: {len(selected)} cases, "
          f"{len(expectations)} declared gaps", flush=True)

    def show(r: Result) -> None:
        if not args.quiet or not r.ok or r.status == XPASS:
            print(_line(r), flush=True)

    t0 = time.perf_counter()
    if args.workers > 0:
        from .isolated import WorkerStartError, run_isolated

        try:
            devices = 1 if args.compile_only else target.device_count()
            results = run_isolated(target.name, selected, expectations, args.workers,
                                   120.0 if args.timeout is None else args.timeout, args.compile_only, args.cases,
                                   show, devices)
        except (WorkerStartError, TritiumError) as e:
            print(f"tritium-conformance: {e}", file=sys.stderr)
            return 2
    else:
        dev = CompileOnlyDevice(target) if args.compile_only else Device(target)
        results = run_suite(dev, selected, expectations, show)
    text = summary(results, time.perf_counter() - t0, args.compile_only)
    print(text)
    from . import report

    if args.report:
        command = " ".join(["python -m tritium_conformance", *(sys.argv[1:] if argv is None else argv)])
        print(f"report: {report.write(args.report, target, provider, results, text, args.compile_only, command)}")
    if args.json:
        report.write_json(args.json, target, provider, results)
    return 0 if all(r.ok for r in results) else 1
