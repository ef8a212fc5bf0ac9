"""Triton's own language tests, unchanged, on a tritium target.

    python triton_tests/run.py fetch --source PATH_OR_URL [--ref REF]
    python triton_tests/run.py run --target cpu [--device cpu] [-n 2] [--sample N [--part K]] [FILES...] [PYTEST_ARGS...]

``fetch`` copies Triton's ``python/test/unit/language`` tests, the ``python/test/conftest.py`` they
use and ``python/triton/_internal_testing.py`` (Triton's test helpers) at ``REF`` (default: the
v3.6.0 tag) from a Triton git checkout or URL into ``triton_tests/upstream/``, which git ignores:
the project never holds Triton's files. ``run`` runs them under ``tritium run -m pytest`` (``import
triton`` gives tritium) on ``--target``, with the helpers importable as ``triton._internal_testing``
and the expected failures of ``expected_failures.txt`` marked ``xfail`` with their reasons; it
prints the counts per file and writes them as JSON (``--json``). On the ``interpreter`` target it
runs the tests Triton's CI runs under Triton's interpreter, those marked ``interpreter`` (``-m``
given among the pytest arguments chooses otherwise): the others, exhaustive conversions of 2**32
values and the like, are written for compiled kernels.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
UPSTREAM = HERE / "upstream"
#: the files fetched, by their path in Triton's repository -> where they go under ``upstream``
FILES = {"python/test/unit/language": "language", "python/test/conftest.py": "conftest.py",
         "python/triton/_internal_testing.py": "_internal_testing.py"}
DEFAULT_REF = "v3.6.0"


def fetch(source: str, ref: str) -> None:
    """Copy ``FILES`` at ``ref`` out of the Triton repository ``source`` (a path or a git URL)."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = source
        if not Path(source).exists():
            repo = os.path.join(tmp, "triton")
            subprocess.run(["git", "clone", "--filter=blob:none", "--no-checkout", source, repo], check=True)
        if UPSTREAM.exists():
            shutil.rmtree(UPSTREAM)
        (UPSTREAM / "language").mkdir(parents=True)
        listing = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", ref, "--", *FILES],
                                 check=True, capture_output=True, text=True).stdout.split()
        for path in listing:
            top = next(p for p in FILES if path == p or path.startswith(p + "/"))
            dest = UPSTREAM / (FILES[top] + path[len(top):])
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(subprocess.run(["git", "-C", repo, "show", f"{ref}:{path}"], check=True,
                                            capture_output=True).stdout)
    (UPSTREAM / "pytest.ini").write_text("[pytest]\n")  # not the project's pytest settings
    print(f"fetched {len(listing)} files of Triton at {ref} into {UPSTREAM}")


def run(target: str, device: str, workers: int, files: list[str], pytest_args: list[str], json_path: str,
        sample: int = 1, real: bool = False, part: int = 0) -> int:
    if not (UPSTREAM / "language").is_dir():
        print("no Triton tests here: run 'python triton_tests/run.py fetch --source ...' first", file=sys.stderr)
        return 2
    paths = [str(UPSTREAM / "language" / f) for f in files] or [str(UPSTREAM / "language")]
    env = {**os.environ, "TRITIUM_TARGET": target, "TRITON_TESTS_JSON": json_path, "TRITON_TESTS_SAMPLE": str(sample),
           "TRITON_TESTS_PART": str(part),
           # tritium's interpreter target takes Triton's tests as a compiled target does: with
           # TRITON_INTERPRET=1 they would exec kernel sources that have no file, which only
           # Triton's own interpreter runs
           "TRITON_TESTS_REAL": "1" if real else "", "TRITON_INTERPRET": "",
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    runner = ["-m"] if real else ["-m", "tritium", "run", "-m"]  # the real Triton: plain pytest
    if target == "interpreter" and "-m" not in pytest_args:  # the tests Triton runs under its interpreter
        pytest_args = ["-m", "interpreter", *pytest_args]
    command = [sys.executable, *runner, "pytest", *paths, "--device", device,
               "-p", "expected_failures", "-q", "-p", "no:cacheprovider", "-c", str(UPSTREAM / "pytest.ini"),
               *(["-n", str(workers)] if workers > 1 else []), *pytest_args]
    return subprocess.run(command, env=env, cwd=UPSTREAM).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="copy Triton's language tests into triton_tests/upstream")
    f.add_argument("--source", default="https://github.com/triton-lang/triton", help="a Triton git checkout or URL")
    f.add_argument("--ref", default=DEFAULT_REF, help=f"the commit or tag (default {DEFAULT_REF})")
    r = sub.add_parser("run", help="run them on a tritium target")
    r.add_argument("--target", default="cpu")
    r.add_argument("--device", default=None, help="Triton's --device (default: cpu for host targets, else cuda)")
    r.add_argument("-n", type=int, default=1, help="pytest-xdist workers")
    r.add_argument("--json", default=str(HERE / "results.json"), help="where the counts go")
    r.add_argument("--sample", type=int, default=1, help="run one test in N (the same ones every run)")
    r.add_argument("--part", type=int, default=0,
                   help="with --sample N, which of the N disjoint parts (0..N-1): a whole run split into N runs")
    r.add_argument("--real-triton", action="store_true",
                   help="run them on the installed Triton instead, for a side-by-side count")
    r.add_argument("files", nargs="*", help="test files under language/ (default: all)")
    args, rest = parser.parse_known_args(argv)
    if args.command == "fetch":
        fetch(args.source, args.ref)
        return 0
    device = args.device or ("cpu" if args.target in ("cpu", "interpreter") else "cuda")
    return run(args.target, device, args.n, args.files, [a for a in rest if a != "--"], args.json, args.sample,
               args.real_triton, args.part)


if __name__ == "__main__":
    sys.exit(main())
