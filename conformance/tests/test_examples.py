"""The examples: they run and check themselves on the host targets with numpy, and choose torch
tensors on the GPU for a GPU target."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from tritium import plugins

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SMALL = {"vector_add.py": ["--size", "1000"], "softmax.py": ["--rows", "5", "--cols", "100"],
         "layernorm.py": ["--rows", "4", "--cols", "300", "--block", "128"], "matmul.py": ["--size", "64"]}


@pytest.mark.parametrize("target", ["cpu", "interpreter"])
@pytest.mark.parametrize("example", sorted(SMALL))
def test_example_runs_and_checks_itself(example, target, tmp_path):
    if target not in plugins.targets():
        pytest.skip(f"target {target} is not installed")
    env = {**os.environ, "TRITIUM_TARGET": target, "TRITIUM_CACHE_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, str(EXAMPLES / example), *SMALL[example]], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " ok " in proc.stdout and "MISMATCH" not in proc.stdout
    if example == "matmul.py":  # judged in FLOP/s, beside numpy's product
        assert " GFLOP/s (numpy " in proc.stdout and "GB/s" not in proc.stdout


@pytest.fixture
def example_utils(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import example_utils

    return example_utils


def test_host_targets_get_numpy_arrays(example_utils):
    arrays = example_utils.Arrays("cpu")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    d = arrays.to_device(x)
    assert type(d) is np.ndarray and d is not x and d.tolist() == x.tolist()
    assert arrays.empty((4,), np.int16).dtype == np.int16
    assert arrays.to_host(d) is d


def test_gpu_targets_get_torch_tensors_on_the_gpu(example_utils, monkeypatch):
    moved = []

    class Tensor:
        def __init__(self, array):
            self.array = array

        def to(self, device):
            moved.append(device)
            return self

        def cpu(self):
            return SimpleNamespace(numpy=lambda: self.array)

    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(from_numpy=Tensor))
    arrays = example_utils.Arrays("nvptx")
    t = arrays.to_device(np.ones(3, np.float32))
    assert isinstance(t, Tensor) and moved == ["cuda"]
    assert arrays.to_host(arrays.empty((2, 2), np.float16)).shape == (2, 2)


def test_speed_is_tflops_beside_torch_on_a_gpu_and_gflops_beside_numpy_on_the_host(example_utils, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace())
    gpu, host = example_utils.Arrays("nvptx"), example_utils.Arrays("cpu")
    assert (gpu.library, gpu.flop_rate(2 * 4096 ** 3, 2.0)) == ("torch", "68.72 TFLOP/s")
    assert (host.library, host.flop_rate(2 * 512 ** 3, 2.0)) == ("numpy", "134.22 GFLOP/s")


def test_gpu_targets_without_torch_say_so(example_utils, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    with pytest.raises(SystemExit, match="the examples pass torch tensors to the nvptx target: install torch"):
        example_utils.Arrays("nvptx")
