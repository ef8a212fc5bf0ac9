"""The parts of ``benchmarks/gpu.py`` that need no GPU: byte counts, launch parameters, the table,
the JSON, the refusal to run without torch/triton/CUDA, and the shared kernel source compiled by
tritium (run here on the cpu target against numpy)."""

from __future__ import annotations

import datetime
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu.py"


@pytest.fixture(scope="module")
def gpu():
    spec = importlib.util.spec_from_file_location("gpu_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bytes_and_bandwidth(gpu):
    assert gpu.vector_add_bytes(2**24) == 3 * 2**24 * 4 == 201_326_592
    assert gpu.softmax_bytes(4096, 1024) == 2 * 4096 * 1024 * 4
    assert gpu.layernorm_bytes(16384, 8192) == 2 * 16384 * 8192 * 2 + 2 * 8192 * 2 + 2 * 16384 * 4
    assert gpu.gbps(3_000_000_000, 1.0) == pytest.approx(3000.0)  # 3 GB in 1 ms


def test_launch_parameters_follow_the_tutorials(gpu):
    assert [gpu.next_power_of_2(n) for n in (1, 2, 3, 1000, 1024, 1025)] == [1, 2, 4, 1024, 1024, 2048]
    assert gpu.softmax_config(1024) == (1024, 4)
    assert gpu.softmax_config(2000) == (2048, 8)
    assert gpu.softmax_config(8192) == (8192, 16)
    assert gpu.layernorm_config(8192) == (8192, 8)  # fp16: blocks up to 32768 elements
    assert gpu.layernorm_config(100_000) == (32768, 8)
    assert gpu.layernorm_config(300) == (512, 2)


def _rows(gpu):
    return [gpu.finish_row({"measure": "vector add fp32 n=2^24", "unit": "GB/s", "tritium": 2900.0, "triton": 3000.0,
                            "torch": 2950.0, "errors": {}, "checks": {"tritium": "ok", "triton": "ok"}}),
            gpu.finish_row({"measure": "launch overhead", "unit": "us/launch", "tritium": 6.0, "triton": 16.0,
                            "torch": None, "errors": {}, "checks": {}}),
            gpu.finish_row({"measure": "cold compile + first launch", "unit": "s cold", "tritium": None,
                            "triton": 1.4, "torch": None, "errors": {"tritium": "RuntimeError: boom"}, "checks": {}}),
            gpu.finish_row({"measure": "fused softmax fp32 4096x1024", "unit": "GB/s", "tritium": 10.0,
                            "triton": 2000.0, "torch": None, "errors": {},
                            "checks": {"tritium": "mismatch: 3 elements", "triton": "ok"}})]


def test_rows_get_ratio_and_goal(gpu):
    add, launch, cold, softmax = _rows(gpu)
    assert add["ratio"] == pytest.approx(2900 / 3000) and add["goal_met"] is True  # 0.967 >= 0.95
    assert launch["ratio"] == pytest.approx(6 / 16) and launch["goal"] == "<= 8 us" and launch["goal_met"] is True
    assert cold["ratio"] is None and cold["goal_met"] is None
    assert softmax["goal_met"] is False


def test_table_shows_values_errors_and_wrong_results(gpu):
    rows = _rows(gpu)
    text = gpu.format_table(rows)
    lines = text.splitlines()
    assert lines[0].split() == ["measure", "tritium", "triton", "torch", "tritium/triton", "goal"]
    add = next(line for line in lines if line.startswith("vector add"))
    assert add.split()[5:] == ["2900.0", "3000.0", "2950.0", "0.967", "ratio", ">=", "0.95", "met"]
    cold = next(line for line in lines if line.startswith("cold compile"))
    assert cold.split()[7:] == ["error", "1.4", "-", "-", "<=", "0.5", "s"]
    assert "WRONG" in next(line for line in lines if line.startswith("fused softmax"))
    assert "  cold compile + first launch, tritium: RuntimeError: boom" in lines
    assert "  fused softmax fp32 4096x1024, tritium: mismatch: 3 elements" in lines
    assert gpu.failed(rows) and not gpu.failed(rows[:2])


def test_json_document(gpu, tmp_path):
    when = datetime.datetime(2026, 11, 23, 12, 0, tzinfo=datetime.timezone.utc)
    path = gpu.results_path(tmp_path, when)
    assert path == tmp_path / "gpu-2026-11-23.json"
    doc = gpu.document(_rows(gpu), {"name": "NVIDIA H100"}, {"triton": "3.6.0"}, {"quick": True}, when)
    back = json.loads(json.dumps(doc))
    assert back["date"] == "2026-11-23T12:00:00+00:00" and back["device"]["name"] == "NVIDIA H100"
    assert back["versions"] == {"triton": "3.6.0"}
    assert [r["measure"] for r in back["measures"]][:2] == ["vector add fp32 n=2^24", "launch overhead"]


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None and importlib.util.find_spec("triton") is not None,
                    reason="torch and triton are installed: the refusal path is not reachable this way")
def test_refuses_clearly_without_torch_triton_or_a_gpu(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--out", str(tmp_path / "x.json")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "is not installed; the GPU benchmark compares tritium with Triton and torch" in proc.stderr
    assert not (tmp_path / "x.json").exists()


def test_the_shared_kernel_source_compiles_with_tritium(gpu, monkeypatch, tmp_path):
    """The kernels the benchmark gives Triton and tritium, run by tritium on the cpu target."""
    from tritium import plugins

    if "cpu" not in plugins.targets():
        pytest.skip("the cpu target is not installed")
    monkeypatch.setenv("TRITIUM_TARGET", "cpu")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    k = gpu.build_kernels("tritium")
    rng = np.random.default_rng(0)
    x, y = rng.random(3000, dtype=np.float32), rng.random(3000, dtype=np.float32)
    out = np.zeros_like(x)
    k.add_kernel[(gpu.cdiv(3000, 1024),)](x, y, out, 3000, BLOCK_SIZE=1024)
    np.testing.assert_allclose(out, x.astype(np.float64) + y, rtol=1e-6)

    a = rng.standard_normal((5, 300), dtype=np.float32)
    sm = np.zeros_like(a)
    block, warps = gpu.softmax_config(300)
    k.softmax_kernel[(5,)](sm, a, 300, 300, 300, BLOCK_SIZE=block, num_warps=warps)
    e = np.exp(a.astype(np.float64) - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(sm, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)

    M, N, eps = 4, 700, 1e-5
    xh = (rng.standard_normal((M, N)) * 2 + 0.5).astype(np.float16)
    w, b = (rng.random(N) + 0.5).astype(np.float16), rng.standard_normal(N).astype(np.float16)
    yh, mean, rstd = np.zeros_like(xh), np.zeros(M, np.float32), np.zeros(M, np.float32)
    k.layer_norm_fwd_kernel[(M,)](xh, yh, w, b, mean, rstd, N, N, eps, BLOCK_SIZE=256, num_warps=1)
    x64 = xh.astype(np.float64)
    want_rstd = 1 / np.sqrt(x64.var(axis=1) + eps)
    want = (x64 - x64.mean(axis=1, keepdims=True)) * want_rstd[:, None] * w + b
    np.testing.assert_allclose(mean, x64.mean(axis=1), rtol=1e-5)
    np.testing.assert_allclose(rstd, want_rstd, rtol=1e-5)
    np.testing.assert_allclose(yh.astype(np.float64), want, rtol=0, atol=1e-2)
