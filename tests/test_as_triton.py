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


def test_a_kernel_s_source_can_be_replaced_as_triton_s_tests_do(tmp_path):
    """``JITFunction._unsafe_update_src``: Triton's tests fill in a template kernel's body."""
    import numpy as np
    import tritium
    from tritium.errors import TritiumError

    from .kernels.basic import add_kernel

    kernel = tritium.JITFunction(add_kernel.fn)
    kernel._unsafe_update_src(kernel.src.replace("tl.load(x_ptr + offs, mask=mask) + ", "2 * "))
    x, y, out = np.ones(8, np.float32), np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    kernel[(1,)](x, y, out, 8, BLOCK=8)
    np.testing.assert_array_equal(out, 2 * y)
    add_kernel[(1,)](x, y, out, 8, BLOCK=8)  # the template is unchanged
    np.testing.assert_array_equal(out, x + y)
    with pytest.raises(TritiumError, match="the new source must define 'add_kernel'"):
        kernel._unsafe_update_src("def other(x):\n    pass\n")


def test_triton_s_allocator_module_is_there():
    from tritium.errors import TritiumError
    from tritium.runtime import _allocation

    with pytest.raises(TritiumError, match="require an allocator: call triton.set_allocator"):
        _allocation.NullAllocator()(64, 16, None)
    _allocation.set_allocator(_allocation.NullAllocator())
    assert isinstance(_allocation.current_allocator(), _allocation.NullAllocator)
    _allocation.set_allocator(None)


def test_triton_interpret_selects_the_interpreter_under_the_alias():
    env = {k: v for k, v in os.environ.items() if k != "TRITIUM_TARGET"}
    run = subprocess.run([sys.executable, "-m", "tritium", "run", "-m", "tritium_target_probe"], capture_output=True,
                         text=True, cwd=HERE, timeout=120, env={**env, "PYTHONPATH": str(HERE), "TRITON_INTERPRET": "1"})
    assert run.returncode == 0 and run.stdout.strip() == "interpreter", run.stderr


def test_processes_a_program_starts_see_tritium_too(tmp_path):
    """Triton's tests run helpers in subprocesses (``test_subprocess.py``): under ``tritium run`` a
    child's ``import triton`` gives tritium as well, its ``triton.language`` too; a child started
    outside ``tritium run`` is left alone."""
    child = ("import triton, triton.language as tl, tritium; "
             "print(triton.jit is tritium.jit, tl.float32 is tritium.language.float32, triton.__version__)")
    (tmp_path / "parent.py").write_text(
        "import subprocess, sys\n"
        f"print(subprocess.run([sys.executable, '-c', {child!r}], capture_output=True, text=True).stdout)\n")
    run = _run("run", str(tmp_path / "parent.py"), target_name="cpu")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "True", "3.6.0"]
