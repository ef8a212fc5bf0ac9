"""The parts of ``benchmarks/gpu.py`` that need no GPU: byte and flop counts, launch parameters,
goals, autotuning lists and options, the table, the JSON, the refusal to run without
torch/triton/CUDA, and the shared kernel source compiled by tritium (run here on the cpu target
against float64 numpy), its autotuned matmul included."""

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


def test_flops_and_goals(gpu):
    assert gpu.matmul_flops(4096, 4096, 4096) == 2 * 4096**3 == 137_438_953_472
    full = gpu.attention_flops(4, 8, 4096, 64, causal=False)
    assert full == 4 * 32 * 4096 * 4096 * 64 and gpu.attention_flops(4, 8, 4096, 64, causal=True) == full / 2
    assert gpu.RATES["TFLOP/s"](2e12, 2.0) == pytest.approx(1000.0)  # 2 TFLOP in 2 ms
    # issue 22: fp16 at 4096^3 and 8192^3 >= 0.9x Triton; 1024^3 and bf16 >= 0.8x
    assert [gpu.matmul_goal(d, n).text for d, n in [("fp16", 4096), ("fp16", 8192), ("fp16", 1024), ("bf16", 4096)]] \
        == ["ratio >= 0.9", "ratio >= 0.9", "ratio >= 0.8", "ratio >= 0.8"]
    row = {"measure": "m", "unit": "TFLOP/s", "tritium": 500.0, "triton": 600.0, "torch": None}
    assert gpu.finish_row(dict(row), gpu.matmul_goal("fp16", 4096))["goal_met"] is False  # 0.833 < 0.9
    assert gpu.finish_row(dict(row), gpu.matmul_goal("fp16", 1024))["goal_met"] is True  # 0.833 >= 0.8
    # a relative goal is not judged without Triton's number; an absolute one is
    compile_row = gpu.finish_row({"measure": "c", "unit": "s compile", "tritium": 3.0, "triton": None, "torch": None})
    assert compile_row["goal"] == "ratio <= 1" and compile_row["goal_met"] is None
    assert gpu.finish_row({"measure": "c", "unit": "s compile", "tritium": 3.0, "triton": 2.0,
                           "torch": None})["goal_met"] is False
    assert gpu.finish_row({"measure": "s", "unit": "s cold", "tritium": 0.2, "triton": None,
                           "torch": None})["goal_met"] is True


#: Triton's tutorial 03, get_cuda_autotune_config(): its configs before the ones it marks "for fp8 inputs"
TUTORIAL_03_FP16 = [
    ({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8}, 3, 8),
    ({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, 4, 4),
    ({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, 4, 4),
    ({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, 4, 4),
    ({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, 4, 4),
    ({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, 4, 4),
    ({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, 5, 2),
    ({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, 5, 2),
]


@pytest.fixture()
def cpu_kernels(gpu, monkeypatch, tmp_path):
    """``build(autotune)``: the shared kernels built by tritium for the cpu target."""
    from tritium import plugins

    if "cpu" not in plugins.targets():
        pytest.skip("the cpu target is not installed")
    monkeypatch.setenv("TRITIUM_TARGET", "cpu")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    return lambda autotune=None: gpu.build_kernels("tritium", autotune)


def test_cold_compile_runs_each_framework_in_a_new_empty_cache(gpu, monkeypatch):
    calls = []

    def child(args, env):
        cache = Path(env["TRITIUM_CACHE_DIR"])
        calls.append((args, env, cache.is_dir() and not any(cache.iterdir())))
        if args[1] == "triton":
            raise RuntimeError("--cold-compile triton process failed: no GPU")
        return {"s": 2.5, "configs": 8}
    monkeypatch.setattr(gpu, "_child", child)
    row = gpu.cold_compile_row(4096, None, "nvptx")
    assert [c[0] for c in calls] == [["--cold-compile", "tritium", "4096", "0"], ["--cold-compile", "triton", "4096", "0"]]
    assert all(fresh for _, _, fresh in calls)  # the directory exists and is empty when the child starts
    (_, env1, _), (_, env2, _) = calls
    assert env1["TRITON_CACHE_DIR"] == env1["TRITIUM_CACHE_DIR"] != env2["TRITIUM_CACHE_DIR"]
    assert env1["TRITIUM_TARGET"] == "nvptx" and not Path(env1["TRITIUM_CACHE_DIR"]).exists()  # removed after
    assert row["tritium"] == 2.5 and row["configs_compiled"] == {"tritium": 8} and row["unit"] == "s compile"
    assert row["triton"] is None and "no GPU" in row["errors"]["triton"] and row["goal_met"] is None


def test_autotuning_lists(gpu, cpu_kernels):
    k = cpu_kernels()
    assert [gpu.config_dict(c) for c in k.matmul_kernel.configs] == \
        [{**kw, "num_warps": warps, "num_stages": stages} for kw, stages, warps in TUTORIAL_03_FP16]
    assert k.matmul_kernel.keys == ["M", "N", "K"]
    assert [gpu.config_dict(c) for c in k.attention_fwd_kernel.configs] == [
        {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3},
        {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3},
        {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 4},
        {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 4},
        {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3}]
    assert k.attention_fwd_kernel.keys == ["N_CTX", "HEAD_DIM"]


def test_autotune_options(gpu):
    def timer(fn, quantiles):
        return [1.0] * len(quantiles)
    assert gpu.autotune_options(timer, None) == {"do_bench": timer}
    options = gpu.autotune_options(None, 2)
    assert options["do_bench"] is None
    prune = options["prune_configs_by"]["early_config_prune"]
    assert prune(["a", "b", "c"], {"M": 1}, grid=(1,)) == ["a", "b"] and prune(["a"], {}) == ["a"]
    assert gpu.FULL["max_configs"] is None and gpu.QUICK["max_configs"] == 2


def test_kernel_resources_of_either_framework(gpu):
    from types import SimpleNamespace

    tritium_kernel = SimpleNamespace(metadata={"registers": 168, "spills": 0, "shared": 98304})
    assert gpu.kernel_resources(tritium_kernel) == {"registers": 168, "spill_bytes": 0}
    # Triton: metadata is a namedtuple; n_spills is the driver's local memory size in 4-byte words
    triton_kernel = SimpleNamespace(metadata=("not", "a", "dict"), n_regs=232, n_spills=6)
    assert gpu.kernel_resources(triton_kernel) == {"registers": 232, "spill_bytes": 24}
    assert gpu.kernel_resources(SimpleNamespace()) == {"registers": None, "spill_bytes": None}


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


def test_table_lists_the_configs_that_won(gpu):
    row = gpu.finish_row({"measure": "matmul fp16 4096^3 (tutorial 03, autotuned)", "unit": "TFLOP/s",
                          "tritium": 540.0, "triton": 600.0, "torch": 700.0, "errors": {}, "checks": {},
                          "configs": {"tritium": {"BLOCK_SIZE_M": 128, "num_warps": 8, "num_stages": 3},
                                      "triton": {"BLOCK_SIZE_M": 64, "num_warps": 4, "num_stages": 4}},
                          "resources": {"tritium": {"registers": 168, "spill_bytes": 0},
                                        "triton": {"registers": None, "spill_bytes": None}}},
                         gpu.matmul_goal("fp16", 4096))
    lines = gpu.format_table([row]).splitlines()
    assert lines[2].split()[-6:] == ["700.0", "0.900", "ratio", ">=", "0.9", "met"]
    at = lines.index("configs that won (registers per thread, spilled bytes):")
    assert lines[at + 1:] == [
        "  matmul fp16 4096^3 (tutorial 03, autotuned), tritium: BLOCK_SIZE_M=128 num_warps=8 num_stages=3; "
        "168 registers, 0 bytes spilled",
        "  matmul fp16 4096^3 (tutorial 03, autotuned), triton: BLOCK_SIZE_M=64 num_warps=4 num_stages=4"]
    assert "configs that won" not in gpu.format_table(_rows(gpu))


def test_a_measure_that_fails_outside_the_frameworks_becomes_an_error_row(gpu, capsys):
    import functools

    def matmul(dtype, size):
        raise MemoryError("CUDA out of memory")
    row = gpu.guarded(functools.partial(matmul, "fp16", 8192))
    assert row["measure"] == "matmul('fp16', 8192)" and row["errors"] == {"measure": "MemoryError: CUDA out of memory"}
    assert gpu.failed([row]) and "  matmul('fp16', 8192), measure: MemoryError: CUDA out of memory" in \
        gpu.format_table([row]).splitlines()
    good = _rows(gpu)[0]
    assert gpu.guarded(functools.partial(lambda: good)) is good
    assert "vector add fp32 n=2^24 (GB/s): tritium 2900.0, triton 3000.0, torch 2950.0" in capsys.readouterr().err


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


def test_the_shared_kernel_source_compiles_with_tritium(gpu, cpu_kernels):
    """The kernels the benchmark gives Triton and tritium, run by tritium on the cpu target."""
    k = cpu_kernels()
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


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_the_autotuned_matmul_runs_and_reports_its_config(gpu, cpu_kernels, dtype):
    """Tutorial 03's kernel through tritium's autotuner with the benchmark's options (its two
    smallest configs, timed by a stand-in timer that prefers the second): the launch returns the
    compiled kernel of the winner, and the product is right (fp16 result, as the tutorial writes)."""
    import tritium
    import tritium.language as tl

    timed = []

    def timer(fn, quantiles):
        fn()
        timed.append(fn)
        return [2.0 - len(timed)] * len(quantiles)
    k = cpu_kernels({"do_bench": timer, "prune_configs_by": {"early_config_prune": lambda c, nargs, **kw: c[-2:]}})
    rng = np.random.default_rng(1)
    size = 96
    a, b = (rng.standard_normal((size, size)).astype(np.float32) for _ in range(2))
    if dtype == "bf16":  # numpy has no bf16: the top halves of fp32 values, passed as bf16 bits
        bits = [(x.view(np.uint32) >> 16).astype(np.uint16) for x in (a, b)]
        a, b = ((x.astype(np.uint32) << 16).view(np.float32) for x in bits)
        args = [tritium.reinterpret(x, tl.bfloat16) for x in bits]
    else:
        a, b = a.astype(np.float16), b.astype(np.float16)
        args = [a, b]
    c = np.zeros((size, size), np.float16)

    def grid(meta):
        return (gpu.cdiv(size, meta["BLOCK_SIZE_M"]) * gpu.cdiv(size, meta["BLOCK_SIZE_N"]),)
    compiled = k.matmul_kernel[grid](*args, c, size, size, size, size, 1, size, 1, size, 1)
    assert len(timed) == 2
    assert gpu.config_dict(k.matmul_kernel.best_config) == {**TUTORIAL_03_FP16[-1][0], "num_warps": 2, "num_stages": 5}
    assert compiled.name == "matmul_kernel" and set(gpu.kernel_resources(compiled)) == {"registers", "spill_bytes"}
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=2e-3, atol=2e-2)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_the_attention_forward_computes_attention(gpu, cpu_kernels, causal):
    """Tutorial 06's forward as the benchmark writes it (one config, through the autotuned
    kernel's jit function), against float64 softmax(q k^T * scale) v, and its log2-sum-exp2 rows."""
    k = cpu_kernels()
    rng = np.random.default_rng(2)
    batch, heads, seq, head_dim, scale = 1, 2, 128, 32, 0.3
    q, kk, v = ((rng.standard_normal((batch, heads, seq, head_dim)) * 0.5).astype(np.float16) for _ in range(3))
    out = np.full_like(q, np.nan)
    lse = np.zeros((batch * heads, seq), np.float32)
    elems = [s // q.itemsize for s in q.strides]
    k.attention_fwd_kernel.fn[(seq // 64, batch * heads)](q, kk, v, scale, lse, out, elems[0], elems[1], elems[2],
                                                         heads, seq, HEAD_DIM=head_dim, BLOCK_M=64, BLOCK_N=32,
                                                         STAGE=3 if causal else 1, num_warps=4)
    s = np.einsum("zhmd,zhnd->zhmn", q.astype(np.float64), kk.astype(np.float64)) * scale
    if causal:
        s = np.where(np.tril(np.ones((seq, seq), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = p @ v.astype(np.float64) / p.sum(-1, keepdims=True)
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=0, atol=2e-3)
    want_lse = (s.max(-1) + np.log(p.sum(-1))) / np.log(2)
    np.testing.assert_allclose(lse.reshape(batch, heads, seq), want_lse, rtol=1e-5, atol=1e-5)
