"""How long the block-wide operations take to compile, stage by stage, per target and block size.

Each kernel loads one ``B x B`` block and applies one operation (issue 27's list: ``tl.gather``,
``tl.histogram`` of the ravelled block, ``tl.sort``, ``tl.topk``, a reverse ``tl.cumsum``, and the
re-indexing ops ``tl.trans`` and ``tl.interleave``). Every case compiles without launching
(``tritium.compile``), with the disk cache off, so a GPU target needs its compiler but no GPU. A
refusal is recorded with its message. Prints a table (seconds per stage, the total, the lines of
LLVM IR) and writes JSON (``--out``, default ``benchmarks/results/compile.json``).

    python benchmarks/compile.py [--targets cpu,nvptx] [--sizes 32,64,128] [--ops gather,sort] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

os.environ["TRITIUM_CACHE_DISABLE"] = "1"  # every case compiles from scratch

import tritium  # noqa: E402
import tritium.language as tl  # noqa: E402
from tritium.errors import TritiumError  # noqa: E402
from tritium_conformance.kernels import blockwide_kernel  # noqa: E402

HERE = Path(__file__).resolve().parent


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


def table(rows: list[dict]) -> str:
    stages = list(dict.fromkeys(s for r in rows for s in r.get("stages", {})))
    head = ["target", "op", "B", *stages, "total", "llir lines"]
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
    parser.add_argument("--out", default=str(HERE / "results" / "compile.json"))
    args = parser.parse_args()
    unknown = set(args.ops.split(",")) - set(OPS)
    if unknown:
        parser.error(f"unknown operations {sorted(unknown)}; known: {', '.join(OPS)}")
    rows = []
    for target in args.targets.split(","):
        for op in args.ops.split(","):
            for size in map(int, args.sizes.split(",")):
                rows.append(measure(target, op, size))
                print(table(rows[-1:]).splitlines()[-1], flush=True)
    print()
    print(table(rows))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": platform.platform(), "cpus": os.cpu_count(), "cases": rows}, indent=1))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
