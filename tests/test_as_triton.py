"""``tritium run``: a library written for Triton runs unchanged, on its Triton 3 path, with
``import triton`` resolved to tritium; without the opt-in nothing is shadowed."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "triton_style"


def _run(*args: str, target_name: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TRITIUM_TARGET": target_name}
    return subprocess.run([sys.executable, "-m", "tritium", *args], capture_output=True, text=True, env=env,
                          cwd=HERE, timeout=300)


@pytest.mark.parametrize("target_name", ["cpu", "interpreter"])
def test_a_triton_library_runs_unchanged_on_its_triton_3_path(target_name):
    run = _run("run", "run_gelu.py", target_name=target_name)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "gelu ok; triton 3.6.0, installed 3.6.0, triton 3 path: True" in run.stdout


def test_modules_run_too_with_their_arguments(tmp_path):
    (tmp_path / "x.json").write_text('{"b": 1, "a": 2}')
    run = _run("run", "-m", "json.tool", "--sort-keys", str(tmp_path / "x.json"), target_name="cpu")
    assert run.returncode == 0 and run.stdout.index('"a"') < run.stdout.index('"b"'), run.stderr
    failed = _run("run", "-m", "json.tool", str(tmp_path / "missing.json"), target_name="cpu")
    assert failed.returncode != 0 and "missing.json" in failed.stderr


def test_tritium_keeps_its_own_version_under_the_alias():
    run = subprocess.run([sys.executable, "-m", "tritium", "run", "-m", "tritium_version_probe"], capture_output=True,
                         text=True, cwd=HERE, timeout=120, env={**os.environ, "PYTHONPATH": str(HERE)})
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["3.6.0", "0.1.0", "True"]


@pytest.mark.skipif(importlib.util.find_spec("triton") is not None, reason="the real Triton is installed here")
def test_without_the_opt_in_nothing_is_shadowed():
    run = subprocess.run([sys.executable, "-c", "import tritium\nimport triton"], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode != 0 and "No module named 'triton'" in run.stderr
