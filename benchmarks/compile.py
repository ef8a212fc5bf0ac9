"""How long kernels take to compile, stage by stage, per target: the examples, the slowest
conformance cases, and the block-wide operations at each block size.

Each block-wide kernel loads one ``B x B`` block and applies one operation (issue 27's list:
``tl.gather``, ``tl.histogram`` of the ravelled block, ``tl.sort``, ``tl.topk``, a reverse
``tl.cumsum``, and the re-indexing ops ``tl.trans`` and ``tl.interleave``). The examples' kernels
compile as their host functions launch them, and every conformance case as the suite's
``--compile-only`` compiles it (the ``--slowest`` of each target are shown). Nothing is launched
(so a GPU target needs its compiler but no GPU) and the disk cache is off. A refusal is recorded
with its message. Prints tables (seconds per stage, the total, the lines of LLVM IR) and writes
JSON (``--out``, default ``benchmarks/results/compile.json``).

    python benchmarks/compile.py [--targets cpu,nvptx] [--sizes 32,64,128] [--ops gather,sort]
                                 [--slowest 20] [--out PATH]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path

os.environ["TRITIUM_CACHE_DISABLE"] = "1"  # every case compiles from scratch

import tritium  # noqa: E402
import tritium.language as tl  # noqa: E402
from tritium.errors import TritiumError  # noqa: E402
from tritium_conformance import suite  # noqa: E402
from tritium_conformance.kernels import blockwide_kernel  # noqa: E402

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"


OPS = ("gather", "histogram", "sort", "topk", "cumsum", "trans", "interleave", "ravel")
SIGNATURE = {"x_ptr": "*fp32", "i_ptr": "*i32", "o_ptr": "*fp32"}


def measure(target: str, op: str, size: int) -> dict:
    """One compile: the seconds of each stage, the total, and the LLVM IR's lines (or the refusal)."""
    start = time.perf_counter()
    try:
        compiled = tritium.compile(blockwide_kernel, signature=SIGNATURE, constants={"B": size, "OP": op},
                                   target=target, num_warps=4)
    except TritiumError as e:
        return {"target": target, "op": op, "size": size, "error": str(e).splitlines()[0]}
    llir = compiled.asm.get("llir", "")
    return {"target": target, "op": op, "size": size, "seconds": time.perf_counter() - start,
            "stages": dict(compiled.metadata["stage_seconds"]),
            "llir_lines": llir.count("\n") if isinstance(llir, str) else None}


class _CompileOnly:
    """Stands for an example's kernel: ``kernel[grid](...)`` compiles on ``dev`` instead of running."""

    def __init__(self, kernel, dev: suite.CompileOnlyDevice):
        self.kernel, self.dev = kernel, dev

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.dev.launch(self.kernel, grid, *args, **kwargs)


def _example_runs(dev: suite.CompileOnlyDevice) -> dict:
    """name -> a call of the example's host function on ``dev``'s arrays, its kernel compiling."""
    sys.path.insert(0, str(EXAMPLES))
    modules = {name: importlib.import_module(name) for name in ("vector_add", "softmax", "layernorm", "matmul")}
    for module, kernel in (("vector_add", "add_kernel"), ("softmax", "softmax_kernel"),
                           ("layernorm", "layer_norm_fwd_kernel"), ("matmul", "matmul_kernel")):
        jitted = getattr(modules[module], kernel)
        jitted = jitted.kernel if isinstance(jitted, _CompileOnly) else jitted  # an earlier target's stand-in
        setattr(modules[module], kernel, _CompileOnly(jitted, dev))
    f32 = "float32"
    return {
        "vector_add 2^20": lambda: modules["vector_add"].add(*(dev.empty(2**20, f32) for _ in range(3))),
        "softmax 4096x1024": lambda: modules["softmax"].softmax(dev.empty((4096, 1024), f32),
                                                                dev.empty((4096, 1024), f32)),
        "layernorm 4096x1024": lambda: modules["layernorm"].layer_norm(
            dev.empty((4096, 1024), f32), dev.empty(1024, f32), dev.empty(1024, f32), dev.empty((4096, 1024), f32),
            dev.empty(4096, f32), dev.empty(4096, f32)),
        "matmul fp32 1024^3": lambda: modules["matmul"].matmul(*(dev.empty((1024, 1024), f32) for _ in range(3))),
    }


def _compiled_row(target: str, what: str, dev: suite.CompileOnlyDevice, seconds: float) -> dict:
    """A row for the kernels ``dev`` compiled for one example or case: stage seconds and IR lines summed."""
    stages: dict[str, float] = {}
    lines = 0
    for kernel in dev.kernels:
        for stage, t in kernel.metadata.get("stage_seconds", {}).items():
            stages[stage] = stages.get(stage, 0.0) + t
        llir = kernel.asm.get("llir", "")
        lines += llir.count("\n") if isinstance(llir, str) else 0
    return {"target": target, "op": what, "size": "", "seconds": seconds, "stages": stages, "llir_lines": lines}


def examples(target: str) -> list[dict]:
    """Each example's kernel as the example launches it on ``target``."""
    dev = suite.CompileOnlyDevice(suite.installed_target(target))
    rows = []
    for name, call in _example_runs(dev).items():
        del dev.compiled[:], dev.kernels[:]
        start = time.perf_counter()
        try:
            call()
        except TritiumError as e:
            rows.append({"target": target, "op": name, "size": "", "error": str(e).splitlines()[0]})
            continue
        rows.append(_compiled_row(target, name, dev, time.perf_counter() - start))
    return rows


def slowest_cases(target: str, count: int) -> tuple[list[dict], dict]:
    """The ``count`` conformance cases that take longest to compile for ``target``, and the suite's
    totals (cases, failures, the maximum and the 99th percentile)."""
    from tritium import plugins

    found = suite.installed_target(target)
    expectations = plugins.conformance_expectations(found)
    dev = suite.CompileOnlyDevice(found)
    rows, failed, gaps = [], [], []
    for case in suite.select():
        result = suite.compile_case(case, dev, suite.declared_gap(case.id, expectations))
        if result.status != suite.COMPILED:
            (gaps if result.status == suite.XFAIL else failed).append(case.id)
            continue
        rows.append(_compiled_row(target, case.id, dev, result.seconds))
    rows.sort(key=lambda r: -r["seconds"])
    times = sorted(r["seconds"] for r in rows)
    totals = {"target": target, "cases": len(rows) + len(failed) + len(gaps), "failed": failed, "gaps": gaps,
              "max_seconds": times[-1] if times else None,
              "p99_seconds": times[min(len(times) - 1, int(0.99 * len(times)))] if times else None}
    return rows[:count], totals


def table(rows: list[dict], what: str = "op") -> str:
    stages = list(dict.fromkeys(s for r in rows for s in r.get("stages", {})))
    head = ["target", what, "B", *stages, "total", "llir lines"]
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    for r in rows:
        cells = [r["target"], r["op"], str(r["size"])]
        if "error" in r:
            cells += ["refused: " + r["error"]]
        else:
            cells += [f"{r['stages'][s]:.2f}" if s in r["stages"] else "" for s in stages]
            cells += [f"{r['seconds']:.2f}", str(r["llir_lines"] or "")]
        lines.append(" | ".join(cells))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="cpu,nvptx", help="comma-separated targets (default: cpu,nvptx)")
    parser.add_argument("--sizes", default="32,64,128", help="comma-separated block sizes B (default: 32,64,128)")
    parser.add_argument("--ops", default=",".join(OPS), help=f"comma-separated operations (default: all of {OPS})")
    parser.add_argument("--slowest", type=int, default=20,
                        help="how many of each target's slowest conformance cases to show (0: skip the suite)")
    parser.add_argument("--out", default=str(HERE / "results" / "compile.json"))
    args = parser.parse_args()
    unknown = set(args.ops.split(",")) - set(OPS)
    if unknown:
        parser.error(f"unknown operations {sorted(unknown)}; known: {', '.join(OPS)}")
    targets = args.targets.split(",")
    example_rows = [row for target in targets for row in examples(target)]
    print(table(example_rows, "example"), flush=True)
    case_rows, totals = [], []
    for target in targets if args.slowest else []:
        rows, total = slowest_cases(target, args.slowest)
        case_rows += rows
        totals.append(total)
        print(f"\n{target}: {total['cases']} conformance cases, {len(total['failed'])} failed to compile, "
              f"{len(total['gaps'])} declared gaps; "
              f"per case max {total['max_seconds']:.2f} s, 99th percentile {total['p99_seconds']:.2f} s", flush=True)
    if case_rows:
        print(table(case_rows, "slowest conformance cases"), flush=True)
    rows = []
    for target in targets:
        for op in args.ops.split(","):
            for size in map(int, args.sizes.split(",")):
                rows.append(measure(target, op, size))
                print(table(rows[-1:]).splitlines()[-1], flush=True)
    print()
    print(table(rows))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": platform.platform(), "cpus": os.cpu_count(), "examples": example_rows,
                               "conformance": totals, "slowest_cases": case_rows, "cases": rows}, indent=1))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
