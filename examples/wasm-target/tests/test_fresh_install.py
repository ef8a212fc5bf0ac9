"""The vendor's path, end to end: a fresh virtual environment gets core, ``tritium-conformance`` and
this package from their directories with pip, and no in-repo target. There, ``tritium targets``
lists wasm, the examples run on it and match numpy, and the whole conformance suite passes but for
the declared gaps, with nothing timing out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "examples" / "wasm-target"
EXAMPLES = {"vector_add.py": ["--size", "10000"], "softmax.py": ["--rows", "37", "--cols", "300"],
            "layernorm.py": ["--rows", "9", "--cols", "500", "--block", "128"], "matmul.py": ["--size", "128"]}


def test_the_vendor_path_from_a_fresh_venv(tmp_path):
    """One test, so that one worker builds the venv (pytest-xdist spreads a module's tests)."""
    env = _fresh_venv(tmp_path)
    listing = _run(env, "tritium", "targets")
    names = {line.split()[0] for line in listing.splitlines() if line and line.split()[0].isidentifier()}
    assert {"wasm", "interpreter"} <= names and not names & {"cpu", "nvptx", "amdgpu", "simt"}, listing

    for example, args in EXAMPLES.items():
        out = _run(env, "python", str(ROOT / "examples" / example), *args)
        assert " ok " in out and "MISMATCH" not in out, (example, out)

    results = tmp_path / "wasm.json"
    out = _run(env, "python", "-m", "tritium_conformance", "--target", "wasm", "-q", "-n", "2",
               "--timeout", "300", "--json", str(results), timeout=1500)
    outcomes = json.loads(results.read_text())["results"]
    assert len(outcomes) >= 1000, out
    bad = [(r["case_id"], r["status"], r["message"][:300]) for r in outcomes if r["status"] not in ("pass", "xfail")]
    assert not bad, bad
    assert all(r["message"] for r in outcomes if r["status"] == "xfail")  # each gap says why


def _fresh_venv(where: Path) -> dict[str, str]:
    """The environment of a fresh venv holding core, the conformance suite and tritium-wasm alone."""
    subprocess.run([sys.executable, "-m", "venv", str(where / "venv")], check=True)
    python = str(where / "venv" / "bin" / "python")
    done = subprocess.run([python, "-m", "pip", "install", "-q", str(ROOT), str(ROOT / "conformance"), str(PACKAGE)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRITIUM_", "PYTHON"))}
    return {**env, "PATH": f"{where / 'venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}",
            "TRITIUM_CACHE_DIR": str(where / "cache"), "TRITIUM_TARGET": "wasm"}


def _run(env: dict[str, str], *command: str, timeout: int = 600) -> str:
    done = subprocess.run(list(command), capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout
