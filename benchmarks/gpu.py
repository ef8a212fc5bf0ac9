"""tritium's nvptx target beside Triton and torch, in one process on one NVIDIA GPU.

Every kernel is written once (``gpu_kernels.py``) and compiled by both ``triton.jit`` and
``tritium.jit``; tensors are torch CUDA tensors passed straight to ``kernel[grid](...)``, and one
timer serves all three: ``triton.testing.do_bench`` (median). Each result is checked against torch
before it is timed. Measures:

- vector add fp32 (2^24, 2^28 elements), GB/s = 3 * n * 4 bytes / time;
- fused softmax fp32 (4096x1024, 16384x8192; one program per row, as Triton's tutorial 02),
  GB/s = 2 * bytes of x / time;
- layer norm forward fp16 (16384x8192; Triton's tutorial 05), GB/s from the bytes moved (x, w and b
  read, y written, mean and rstd written);
- matmul (Triton's tutorial 03 kernel, autotuned by each framework over the tutorial's 8 CUDA configs
  for fp16, key M, N, K): fp16 1024^3, 4096^3 and 8192^3, bf16 4096^3; TFLOP/s = 2 * M * N * K / time;
- attention forward fp16 (Triton's tutorial 06 forward: q @ k^T, an online softmax in exp2, p @ v into
  a rescaled accumulator; causal and not through its constexpr STAGE), 32 heads x 4096 with head
  sizes 64 and 128, autotuned over 5 configs (BLOCK_M 128 and BLOCK_N 64 with 3 or 4 stages and 4 or
  8 warps, and 64 x 64); TFLOP/s = 4 * B * H * N^2 * D / time, halved when causal; torch's
  ``scaled_dot_product_attention`` beside; on sm_90 and later also the forward tutorial 06 runs
  there, through host tensor descriptors (TMA);
- cold compile of the autotuned matmul, every config it tunes over (``kernel.warmup``), each framework
  in a new process with an empty cache (its runtime started first by one vector add, not timed);
- launch overhead of a tiny kernel from Python, µs per launch (median over rounds of many launches,
  synchronized at the end of each round);
- cold compile and first launch (a new process, an empty cache) and the first call in a new process
  with a warm cache (imports reported separately), each framework in its own process.

Both autotuners time configs with Triton's ``do_bench`` (one timer, as for the measures). An
autotuned row records each framework's winning config and its compiled kernel's registers per thread
and spilled bytes (tritium: ptxas's spill stores; Triton: the driver's local memory size, which also
counts local arrays). The sizes keep a full run to a few minutes on an H100: the 8 configs are
tutorial 03's fp16 ones (not its 8 extra fp8 ones), attention's are 5 of tutorial 06's;
``--max-configs N`` tunes over the first N of each list (``--quick``: 2, small sizes).

Prints a table (measure, tritium, triton, torch, ratio tritium/triton, goal), the configs that won,
and writes JSON (``--out``, default ``benchmarks/results/gpu-<date>.json``) with the device and versions. Exit
status 2 (with a message) when torch, triton, a CUDA device or tritium's target is missing; 1 when a
kernel failed or computed a wrong result; else 0 (goals missed are reported, not an error).

    python benchmarks/gpu.py [--quick] [--out PATH] [--rep-ms MS] [--startup-runs N] [--max-configs N]
"""

from __future__ import annotations

import argparse
import datetime
import functools
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any, Callable, NamedTuple

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "gpu_kernels.py"
FRAMEWORKS = ("tritium", "triton", "torch")

#: matmul: (dtype, M = N = K); attention: (batch, heads, sequence, head size), each causal and not;
#: max_configs: how many of each autotuning list (None: all)
FULL = {"vector_add": [2**24, 2**28], "softmax": [(4096, 1024), (16384, 8192)], "layernorm": [(16384, 8192)],
        "matmul": [("fp16", 1024), ("fp16", 4096), ("fp16", 8192), ("bf16", 4096), ("fp8e4", 4096), ("fp32", 4096),
                   ("fp32wt", 4096)],
        "attention": [(4, 8, 4096, 64), (4, 8, 4096, 128)], "compile_size": 4096, "max_configs": None,
        "launches": (10_000, 7), "startup_runs": 3, "rep_ms": 100.0}
QUICK = {"vector_add": [2**20], "softmax": [(1024, 1024)], "layernorm": [(1024, 2048)],
         "matmul": [("fp16", 512), ("bf16", 512)], "attention": [(1, 2, 256, 64), (1, 2, 256, 128)],
         "compile_size": 512, "max_configs": 2, "launches": (1_000, 3), "startup_runs": 1, "rep_ms": 20.0}


class Goal(NamedTuple):
    """What a goal says and its test of a row; ``relative`` goals need Triton's number (the ratio)."""
    text: str
    met: Callable[[dict], bool]
    relative: bool


def at_least(ratio: float) -> Goal:
    return Goal(f"ratio >= {ratio:g}", lambda r: r["ratio"] >= ratio, True)


#: the issues' goals per kind of measure (rows of matmul and attention get theirs from issue 22's table)
GOALS: dict[str, Goal] = {
    "GB/s": at_least(0.95),
    "us/launch": Goal("<= 8 us", lambda r: r["tritium"] <= 8.0, False),
    "s cold": Goal("<= 0.5 s", lambda r: r["tritium"] <= 0.5, False),
    "s warm": Goal("<= 0.05 s", lambda r: r["tritium"] <= 0.05, False),
    "s compile": Goal("ratio <= 1", lambda r: r["ratio"] <= 1.0, True),
}


# -- pure parts: sizes, bytes, launch parameters, the table and the JSON --------------------------
def vector_add_bytes(n: int) -> int:
    """x and y read, the sum written, fp32."""
    return 3 * n * 4


def softmax_bytes(rows: int, cols: int, itemsize: int = 4) -> int:
    """The input read once and the output written once."""
    return 2 * rows * cols * itemsize


def layernorm_bytes(rows: int, cols: int) -> int:
    """fp16 x read and y written, fp16 weight and bias read, fp32 mean and rstd written."""
    return 2 * rows * cols * 2 + 2 * cols * 2 + 2 * rows * 4


def gbps(nbytes: int, ms: float) -> float:
    return nbytes / (ms * 1e-3) / 1e9


def matmul_flops(m: int, n: int, k: int) -> int:
    """A multiply and an add per term of each product."""
    return 2 * m * n * k


def attention_flops(batch: int, heads: int, seq: int, head_dim: int, causal: bool) -> float:
    """Two products (q @ k^T and p @ v) of 2 * seq^2 * head_dim each per head; causal does half."""
    flops = 4 * batch * heads * seq * seq * head_dim
    return flops / 2 if causal else flops


def matmul_goal(dtype: str, size: int) -> Goal:
    """Issue 22: fp16 at 4096^3 and over >= 0.9x Triton, smaller or other dtypes >= 0.8x."""
    return at_least(0.9 if dtype == "fp16" and size >= 4096 else 0.8)


#: the rate each throughput unit reports: amount (bytes, floating-point operations) per ms -> unit
RATES = {"GB/s": gbps, "TFLOP/s": lambda flops, ms: flops / (ms * 1e-3) / 1e12}


def next_power_of_2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def softmax_config(cols: int) -> tuple[int, int]:
    """(BLOCK_SIZE, num_warps) as Triton's tutorial 02 chooses them: the row in one block, more warps
    for wider rows."""
    block = next_power_of_2(cols)
    return block, 16 if block >= 4096 else 8 if block >= 2048 else 4


def layernorm_config(cols: int, itemsize: int = 2) -> tuple[int, int]:
    """(BLOCK_SIZE, num_warps) as Triton's tutorial 05 chooses them: blocks under 64 KB."""
    block = min(65536 // itemsize, next_power_of_2(cols))
    return block, min(max(block // 256, 1), 8)


def ratio(row: dict) -> float | None:
    """tritium / triton (higher is better for GB/s, lower for times)."""
    t, r = row.get("tritium"), row.get("triton")
    return t / r if isinstance(t, (int, float)) and isinstance(r, (int, float)) and r else None


def finish_row(row: dict, goal: Goal | None = None) -> dict:
    """Add the ratio, the goal (``goal``, else the one of the row's unit) and whether it is met
    (None when there is no value to judge)."""
    row["ratio"] = ratio(row)
    goal = goal or GOALS.get(row["unit"])
    row["goal"] = goal.text if goal else ""
    judged = goal is not None and row["tritium"] is not None and (row["ratio"] is not None or not goal.relative)
    row["goal_met"] = goal.met(row) if judged else None
    return row


def first_configs(n: int) -> Callable[..., list]:
    """An ``early_config_prune`` for both autotuners: the first ``n`` configs of the list."""
    def prune(configs: list, named_args: dict, **kwargs: Any) -> list:
        return list(configs)[:n]
    return prune


def autotune_options(timer: Callable | None, max_configs: int | None) -> dict:
    """The ``autotune`` keyword arguments both frameworks' kernels get (``build_kernels``)."""
    options: dict = {"do_bench": timer}
    if max_configs:
        options["prune_configs_by"] = {"early_config_prune": first_configs(max_configs)}
    return options


def config_dict(config: Any) -> dict:
    """A Config of either framework as JSON: its meta-parameters, num_warps and num_stages."""
    return {**config.kwargs, "num_warps": config.num_warps, "num_stages": config.num_stages}


def kernel_resources(kernel: Any) -> dict:
    """Registers per thread and spilled bytes of a launched compiled kernel: tritium's from ptxas
    (``metadata``), Triton's from the driver (``n_regs``, and ``n_spills``: local memory in words)."""
    meta = getattr(kernel, "metadata", None)
    if isinstance(meta, dict):
        return {"registers": meta.get("registers"), "spill_bytes": meta.get("spills")}
    spills = getattr(kernel, "n_spills", None)
    return {"registers": getattr(kernel, "n_regs", None), "spill_bytes": None if spills is None else 4 * spills}


def _cell(row: dict, framework: str) -> str:
    value = row.get(framework)
    if framework in row.get("errors", {}):
        return "error"
    if framework in row.get("checks", {}) and row["checks"][framework] != "ok":
        return "WRONG"
    if value is None:
        return "-"
    return f"{value:.4g}" if row["unit"].startswith("s") else f"{value:.1f}"


def describe_config(config: dict, resources: dict | None) -> str:
    """``BLOCK_SIZE_M=128 ... num_warps=8 num_stages=3; 168 registers, 0 bytes spilled``."""
    text = " ".join(f"{k}={v}" for k, v in config.items())
    if resources and resources.get("registers") is not None:
        text += f"; {resources['registers']} registers, {resources.get('spill_bytes')} bytes spilled"
    return text


def format_table(rows: list[dict]) -> str:
    """The table the benchmark prints, then the configs that won the autotuned rows, then the
    errors and wrong results."""
    head = f"{'measure':64} {'tritium':>9} {'triton':>9} {'torch':>9} {'tritium/triton':>15}  goal"
    lines = [head, "-" * len(head)]
    notes, won = [], []
    for r in rows:
        rat = "-" if r["ratio"] is None else f"{r['ratio']:.3f}"
        met = "" if r["goal_met"] is None else (" met" if r["goal_met"] else " MISSED")
        lines.append(f"{r['measure'] + ' (' + r['unit'] + ')':64} {_cell(r, 'tritium'):>9} {_cell(r, 'triton'):>9} "
                     f"{_cell(r, 'torch'):>9} {rat:>15}  {r['goal']}{met}")
        won += [f"  {r['measure']}, {fw}: {describe_config(config, r.get('resources', {}).get(fw))}"
                for fw, config in r.get("configs", {}).items()]
        notes += [f"  {r['measure']}, {fw}: {msg}" for fw, msg in r.get("errors", {}).items()]
        notes += [f"  {r['measure']}, {fw}: {msg}" for fw, msg in r.get("checks", {}).items() if msg != "ok"]
    return "\n".join(lines + (["", "configs that won (registers per thread, spilled bytes):", *won] if won else [])
                     + (["", "problems:", *notes] if notes else []))


def failed(rows: list[dict]) -> bool:
    return any(r.get("errors") or any(v != "ok" for v in r.get("checks", {}).values()) for r in rows)


def results_path(folder: Path, when: datetime.datetime) -> Path:
    return folder / f"gpu-{when.strftime('%Y-%m-%d')}.json"


def document(rows: list[dict], device: dict, versions: dict, settings: dict, when: datetime.datetime) -> dict:
    """The JSON written: when, where, with what, and every row."""
    return {"date": when.isoformat(timespec="seconds"), "device": device, "versions": versions,
            "settings": settings, "measures": rows}


# -- the environment -------------------------------------------------------------------------------
def requirements_problem(target: str) -> str | None:
    """Why the benchmark cannot run here, or None."""
    for module in ("torch", "triton"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed; the GPU benchmark compares tritium with Triton and torch"
    import torch

    if not torch.cuda.is_available():
        return "no CUDA device is available (torch.cuda.is_available() is False)"
    from tritium import plugins
    from tritium.errors import TritiumError

    try:
        plugins.get_target(target)
    except TritiumError as e:
        return f"tritium's {target} target cannot run here: {e}"
    return None


def device_info() -> dict:
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {"name": props.name, "capability": "sm_%d%d" % (props.major, props.minor),
            "memory_gib": round(props.total_memory / 2**30, 1), "multiprocessors": props.multi_processor_count}


def versions(target: str) -> dict:
    import torch
    import triton

    import tritium
    from tritium.plugins import distribution_version

    out = {"python": sys.version.split()[0], "tritium": tritium.__version__,
           f"tritium-{target}": distribution_version(f"tritium-{target}"), "triton": triton.__version__,
           "torch": torch.__version__, "torch cuda": str(torch.version.cuda),
           "llvmlite": distribution_version("llvmlite")}
    from tritium_nvptx import cuda

    version = cuda.driver_version()
    if version is not None:
        out["cuda driver"] = f"{version // 1000}.{version % 1000 // 10}"
    return out


def build_kernels(framework: str, autotune: dict | None = None) -> types.ModuleType:
    """``gpu_kernels.py`` executed with ``triton`` and ``tl`` bound to ``framework``'s (tritium or
    triton), and ``AUTOTUNE`` to ``autotune``: keyword arguments of both frameworks' ``autotune``
    (``do_bench``, ``prune_configs_by``) given to every autotuned kernel."""
    if framework == "tritium":
        import tritium as jit_module
        import tritium.language as tl
    else:
        import triton as jit_module
        import triton.language as tl
    name = f"gpu_kernels_{framework}"
    module = types.ModuleType(name)
    module.__file__ = str(KERNELS)
    module.triton, module.tl, module.AUTOTUNE = jit_module, tl, dict(autotune or {})
    sys.modules[name] = module
    exec(compile(KERNELS.read_text(), str(KERNELS), "exec"), module.__dict__)
    return module


# -- measures ----------------------------------------------------------------------------------------
class Bench:
    """Runs each framework's version of a measure: checked against torch, then timed."""

    def __init__(self, kernels: dict[str, types.ModuleType], rep_ms: float):
        import torch
        import triton.testing

        self.torch, self.kernels, self.rep_ms = torch, kernels, rep_ms
        self.do_bench = triton.testing.do_bench

    def time_ms(self, fn: Callable[[], Any]) -> float:
        return self.do_bench(fn, warmup=self.rep_ms / 4, rep=self.rep_ms, return_mode="median")

    def row(self, measure: str, nbytes: float, runs: dict[str, Callable[[], Any]],
            outputs: dict[str, Callable[[], Any]], want: Any, tol: dict | None = None, unit: str = "GB/s",
            tuned: dict[str, Any] | None = None, goal: Goal | None = None) -> dict:
        """``unit`` (GB/s of ``nbytes`` moved, or TFLOP/s of ``nbytes`` operations) of each framework's
        ``runs[fw]``; first ``outputs[fw]()`` after one run is compared with ``want``
        (torch.testing.assert_close, its default tolerances unless ``tol``). ``tuned[fw]`` is the
        autotuned kernel that ``runs[fw]`` launches (returning the compiled kernel): the row records
        the config that won and the compiled kernel's registers and spills."""
        row: dict = {"measure": measure, "unit": unit, "bytes": nbytes, "ms": {}, "errors": {}, "checks": {}}
        for fw, run in runs.items():
            try:
                compiled = run()  # the first run of an autotuned kernel tunes it
                self.torch.cuda.synchronize()
                if fw in (tuned or {}):
                    row.setdefault("configs", {})[fw] = config_dict(tuned[fw].best_config)
                    row.setdefault("resources", {})[fw] = kernel_resources(compiled)
                row["checks"][fw] = _compare(self.torch, outputs[fw](), want, tol or {})
                ms = self.time_ms(run)
                row["ms"][fw], row[fw] = ms, RATES[unit](nbytes, ms)
            except Exception as e:  # one framework failing must not hide the others' numbers
                row["errors"][fw] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
                row[fw] = None
        for fw in FRAMEWORKS:
            row.setdefault(fw, None)
        return finish_row(row, goal)

    def vector_add(self, n: int) -> dict:
        torch = self.torch
        x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
        outs = {fw: torch.empty_like(x) for fw in FRAMEWORKS}
        block = 1024

        def launch(fw):
            return lambda: self.kernels[fw].add_kernel[(cdiv(n, block),)](x, y, outs[fw], n, BLOCK_SIZE=block)
        runs = {"tritium": launch("tritium"), "triton": launch("triton"),
                "torch": lambda: torch.add(x, y, out=outs["torch"])}
        return self.row(f"vector add fp32 n=2^{n.bit_length() - 1}", vector_add_bytes(n), runs,
                        outputs={fw: (lambda fw=fw: outs[fw]) for fw in FRAMEWORKS}, want=x + y)

    def softmax(self, rows: int, cols: int) -> dict:
        torch = self.torch
        x = torch.randn(rows, cols, device="cuda")
        outs = {fw: torch.empty_like(x) for fw in FRAMEWORKS}
        block, warps = softmax_config(cols)

        def launch(fw):
            k = self.kernels[fw].softmax_kernel
            return lambda: k[(rows,)](outs[fw], x, x.stride(0), outs[fw].stride(0), cols, BLOCK_SIZE=block,
                                      num_warps=warps)

        def torch_softmax():
            outs["torch"] = torch.softmax(x, dim=-1)
        runs = {"tritium": launch("tritium"), "triton": launch("triton"), "torch": torch_softmax}
        return self.row(f"fused softmax fp32 {rows}x{cols}", softmax_bytes(rows, cols), runs,
                        outputs={fw: (lambda fw=fw: outs[fw]) for fw in FRAMEWORKS}, want=torch.softmax(x, dim=-1),
                        tol={"rtol": 1e-5, "atol": 1e-6})

    def layernorm(self, rows: int, cols: int) -> dict:
        torch = self.torch
        eps = 1e-5
        x = (torch.randn(rows, cols, device="cuda") * 2 + 0.5).to(torch.float16)
        w = (torch.rand(cols, device="cuda") + 0.5).to(torch.float16)
        b = torch.randn(cols, device="cuda").to(torch.float16)
        outs = {fw: torch.empty_like(x) for fw in FRAMEWORKS}
        mean, rstd = torch.empty(rows, device="cuda"), torch.empty(rows, device="cuda")
        block, warps = layernorm_config(cols)

        def launch(fw):
            k = self.kernels[fw].layer_norm_fwd_kernel
            return lambda: k[(rows,)](x, outs[fw], w, b, mean, rstd, x.stride(0), cols, eps, BLOCK_SIZE=block,
                                      num_warps=warps)

        def torch_layernorm():
            outs["torch"] = torch.nn.functional.layer_norm(x, (cols,), w, b, eps)
        want = torch.nn.functional.layer_norm(x.float(), (cols,), w.float(), b.float(), eps)
        runs = {"tritium": launch("tritium"), "triton": launch("triton"), "torch": torch_layernorm}
        return self.row(f"layer norm fp16 {rows}x{cols}", layernorm_bytes(rows, cols), runs,
                        outputs={fw: (lambda fw=fw: outs[fw].float()) for fw in FRAMEWORKS}, want=want,
                        tol={"rtol": 0.0, "atol": 1e-2})

    def matmul(self, dtype: str, size: int) -> dict:
        """Tutorial 03's autotuned kernel on ``dtype`` inputs (fp32 accumulation, an fp16 result as
        the tutorial writes it); torch's matmul (its result in ``dtype``) beside. "fp8e4" is the
        tutorial's fp8 path (a in e4m3, b transposed then in e4m3, so K-major; no torch beside);
        "fp32" runs at Triton's default precision, tf32 (torch allowed tf32 too); "fp32wt" the
        same with b a transposed view (``x @ w.T``: K-major, which Hopper's tf32 instruction reads)."""
        torch = self.torch
        tdtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "fp32wt": torch.float32,
                  "fp8e4": torch.float16}[dtype]
        a = torch.randn(size, size, device="cuda", dtype=tdtype)
        b = torch.randn(size, size, device="cuda", dtype=tdtype)
        if dtype == "fp8e4":
            a, b = a.to(torch.float8_e4m3fn), b.T.to(torch.float8_e4m3fn)
        elif dtype == "fp32wt":
            b = b.T
        outs = {fw: torch.empty(size, size, device="cuda", dtype=torch.float16) for fw in ("tritium", "triton")}
        outs["torch"] = torch.empty(size, size, device="cuda", dtype=tdtype)
        torch.backends.cuda.matmul.allow_tf32 = dtype.startswith("fp32")

        def grid(meta):
            return (cdiv(size, meta["BLOCK_SIZE_M"]) * cdiv(size, meta["BLOCK_SIZE_N"]),)

        def launch(fw):
            k, c = self.kernels[fw].matmul_kernel, outs[fw]
            return lambda: k[grid](a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                   c.stride(0), c.stride(1))
        runs = {"tritium": launch("tritium"), "triton": launch("triton")}
        if dtype != "fp8e4":
            runs["torch"] = lambda: torch.matmul(a, b, out=outs["torch"])
        # tf32 rounds the operands; fp8 tensor cores accumulate with fewer bits than fp32 (Triton's
        # results and tritium's agree bit for bit, 1.1 away from fp32's at 4096^3 on an H200)
        tol = {"fp32": {"rtol": 1e-2, "atol": 0.5}, "fp32wt": {"rtol": 1e-2, "atol": 0.5},
               "fp8e4": {"rtol": 2e-2, "atol": 2.0}}.get(
            dtype, {"rtol": 1e-2, "atol": 1e-1})
        return self.row(f"matmul {dtype} {size}^3 (tutorial 03, autotuned)", matmul_flops(size, size, size), runs,
                        outputs={fw: (lambda fw=fw: outs[fw].float()) for fw in FRAMEWORKS}, want=a.float() @ b.float(),
                        tol=tol, unit="TFLOP/s",
                        tuned={fw: self.kernels[fw].matmul_kernel for fw in ("tritium", "triton")},
                        goal=matmul_goal(dtype, size))

    def attention(self, batch: int, heads: int, seq: int, head_dim: int, causal: bool, tma: bool = False) -> dict:
        """Tutorial 06's forward, autotuned, fp16 q, k, v of N(0, 0.5); torch's fp16
        scaled_dot_product_attention beside; all checked against torch's in fp32 (atol 1e-2, as the
        tutorial's test). ``tma``: the forward tutorial 06 runs on Hopper, through host tensor
        descriptors (each framework's ``TensorDescriptor``; TMA copies on sm_90)."""
        torch = self.torch
        shape = (batch, heads, seq, head_dim)
        q, k, v = (torch.empty(shape, device="cuda", dtype=torch.float16).normal_(0.0, 0.5) for _ in range(3))
        sm_scale = head_dim ** -0.5
        outs = {fw: torch.empty_like(q) for fw in FRAMEWORKS}
        lse = {fw: torch.empty(batch * heads, seq, device="cuda") for fw in ("tritium", "triton")}

        def grid(meta):
            return (cdiv(seq, meta["BLOCK_M"]), batch * heads)

        def launch(fw):
            kernel, o = self.kernels[fw].attention_fwd_kernel, outs[fw]
            return lambda: kernel[grid](q, k, v, sm_scale, lse[fw], o, q.stride(0), q.stride(1), q.stride(2), heads, seq,
                                        HEAD_DIM=head_dim, STAGE=3 if causal else 1)

        def launch_tma(fw):
            descriptor = importlib.import_module(f"{fw}.tools.tensor_descriptor").TensorDescriptor
            rows = [batch * heads * seq, head_dim]
            descs = [descriptor(t, rows, [head_dim, 1], [1, 1]) for t in (q, k, v, outs[fw])]  # blocks: pre_hook
            kernel = self.kernels[fw].attention_fwd_tma_kernel
            return lambda: kernel[grid](sm_scale, lse[fw], *descs, seq, HEAD_DIM=head_dim, STAGE=3 if causal else 1)

        sdpa = torch.nn.functional.scaled_dot_product_attention

        def torch_attention():
            outs["torch"] = sdpa(q, k, v, is_causal=causal, scale=sm_scale)
        want = sdpa(q.float(), k.float(), v.float(), is_causal=causal, scale=sm_scale)
        runs = {fw: (launch_tma if tma else launch)(fw) for fw in ("tritium", "triton")} | {"torch": torch_attention}
        kind = ("causal" if causal else "not causal") + (", TMA descriptors" if tma else "")
        return self.row(f"attention fwd fp16 {batch * heads}x{seq} d{head_dim} {kind} (tutorial 06)",
                        attention_flops(batch, heads, seq, head_dim, causal), runs,
                        outputs={fw: (lambda fw=fw: outs[fw].float()) for fw in FRAMEWORKS}, want=want,
                        tol={"rtol": 0.0, "atol": 1e-2}, unit="TFLOP/s",
                        tuned={fw: getattr(self.kernels[fw], "attention_fwd_tma_kernel" if tma else "attention_fwd_kernel")
                               for fw in ("tritium", "triton")},
                        goal=at_least(0.8))


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _compare(torch, got, want, tol: dict) -> str:
    try:
        torch.testing.assert_close(got, want, **({"rtol": tol["rtol"], "atol": tol["atol"]} if tol else {}))
        return "ok"
    except AssertionError as e:
        return "mismatch: " + " ".join(str(e).split())[:300]


# -- in a new process per framework: launch overhead and startup ------------------------------------
def launch_overhead(framework: str, launches: int, rounds: int) -> dict:
    """In a fresh process (what earlier measures allocated does not weigh on Python's collector):
    µs per launch of a 128-element vector add, ``launches`` launches in a loop and one synchronize
    per round, the median of the rounds."""
    import torch

    k = build_kernels(framework).add_kernel
    x = torch.ones(128, device="cuda")
    out = torch.empty_like(x)
    k[(1,)](x, x, out, 128, BLOCK_SIZE=128)  # compiled, loaded and warm
    torch.cuda.synchronize()
    per = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(launches):
            k[(1,)](x, x, out, 128, BLOCK_SIZE=128)
        torch.cuda.synchronize()
        per.append((time.perf_counter() - t0) / launches * 1e6)
    return {"us": statistics.median(per), "check": _compare(torch, out, x + x, {})}


def launch_overhead_row(launches: int, rounds: int, target: str) -> dict:
    row: dict = {"measure": f"launch overhead, {launches} launches x {rounds}", "unit": "us/launch",
                 "errors": {}, "checks": {}, "torch": None}
    for fw in ("tritium", "triton"):
        try:
            got = _child(["--launch-overhead", fw, str(launches), str(rounds)], {"TRITIUM_TARGET": target})
            row[fw], row["checks"][fw] = got["us"], got["check"]
        except Exception as e:
            row["errors"][fw], row[fw] = f"{type(e).__name__}: {e}", None
    return finish_row(row)


def _child(args: list[str], env: dict[str, str]) -> dict:
    """Run this script in a new process with ``args``; its last line of output, as JSON."""
    env = dict(os.environ, **env)
    env.pop("TRITIUM_CACHE_DISABLE", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed for users: modules load from bytecode
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), *args], env=env,
                          capture_output=True, text=True, timeout=600)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(args)} process failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])



def first_call(framework: str) -> dict:
    """In a fresh process: import, then time the first launch of vector add (compile included when
    the cache is empty) up to the synchronize after it."""
    t0 = time.perf_counter()
    import torch

    x = torch.ones(4096, device="cuda")
    out = torch.empty_like(x)
    torch.cuda.synchronize()  # torch's CUDA context exists before the clock starts
    t1 = time.perf_counter()
    kernels = build_kernels(framework)
    t2 = time.perf_counter()
    kernels.add_kernel[(4,)](x, x, out, 4096, BLOCK_SIZE=1024)
    torch.cuda.synchronize()
    t3 = time.perf_counter()
    if not bool((out == 2).all()):
        raise SystemExit(f"{framework}: wrong result in the first call")
    return {"torch_import_and_init_s": t1 - t0, "import_s": t2 - t1, "first_call_s": t3 - t2}


def _run_first_call(framework: str, cache_dir: str, target: str) -> dict:
    return _child(["--first-call", framework],
                  {"TRITIUM_CACHE_DIR": cache_dir, "TRITON_CACHE_DIR": cache_dir, "TRITIUM_TARGET": target})


def startup_rows(runs: int, target: str) -> list[dict]:
    """Cold (an empty cache) and warm (the cache the cold process filled) first calls, medians over
    ``runs`` pairs of processes per framework."""
    cold: dict[str, list] = {"tritium": [], "triton": []}
    warm: dict[str, list] = {"tritium": [], "triton": []}
    errors: dict[str, str] = {}
    for fw in cold:
        try:
            for _ in range(runs):
                with tempfile.TemporaryDirectory(prefix=f"{fw}-bench-cache-") as cache:
                    cold[fw].append(_run_first_call(fw, cache, target))
                    warm[fw].append(_run_first_call(fw, cache, target))
        except Exception as e:
            errors[fw] = str(e)

    def row(measure: str, unit: str, samples: dict, key: str) -> dict:
        r = {"measure": measure, "unit": unit, "torch": None, "checks": {},
             "errors": {fw: msg for fw, msg in errors.items()}}
        for fw, got in samples.items():
            r[fw] = statistics.median(s[key] for s in got) if got and fw not in errors else None
        return finish_row(r)

    return [row("cold compile + first launch", "s cold", cold, "first_call_s"),
            row("first call, new process, warm cache", "s warm", warm, "first_call_s"),
            row("import (new process, warm cache)", "s", warm, "import_s")]


def cold_compile(framework: str, size: int, max_configs: int | None) -> dict:
    """In a fresh process with an empty cache: the framework's runtime started by one vector add
    (compiled and launched, not timed), then every config of the autotuned matmul compiled without
    launching (``warmup``) for fp16 operands of ``size``^3, as the matmul rows specialise them."""
    import torch

    kernels = build_kernels(framework, autotune_options(None, max_configs))
    x = torch.ones(1024, device="cuda")
    out = torch.empty_like(x)
    kernels.add_kernel[(1,)](x, x, out, 1024, BLOCK_SIZE=1024)
    torch.cuda.synchronize()
    a = torch.empty(size, size, device="cuda", dtype=torch.float16)
    c = torch.empty_like(a)
    t0 = time.perf_counter()
    compiled = kernels.matmul_kernel.warmup(a, a, c, size, size, size, a.stride(0), a.stride(1), a.stride(0),
                                            a.stride(1), c.stride(0), c.stride(1), grid=(1,))
    return {"s": time.perf_counter() - t0, "configs": len(compiled)}


def cold_compile_row(size: int, max_configs: int | None, target: str) -> dict:
    """Seconds to compile every config of the autotuned fp16 matmul, each framework in a new process
    with a new, empty cache directory."""
    row: dict = {"measure": "cold compile, autotuned matmul fp16, every config", "unit": "s compile",
                 "errors": {}, "checks": {}, "torch": None}
    for fw in ("tritium", "triton"):
        try:
            with tempfile.TemporaryDirectory(prefix=f"{fw}-bench-cache-") as cache:
                got = _child(["--cold-compile", fw, str(size), str(max_configs or 0)],
                             {"TRITIUM_CACHE_DIR": cache, "TRITON_CACHE_DIR": cache, "TRITIUM_TARGET": target})
            row[fw], row.setdefault("configs_compiled", {})[fw] = got["s"], got["configs"]
        except Exception as e:
            row["errors"][fw], row[fw] = f"{type(e).__name__}: {e}", None
    return finish_row(row)


def guarded(job: functools.partial) -> dict:
    """``job()``'s row, shown on stderr as it comes (a run takes minutes); a measure that fails
    outside the frameworks' own runs (allocating, torch's reference) becomes a row with its error,
    so the other measures still report."""
    try:
        row = job()
    except Exception as e:
        row = finish_row({"measure": f"{job.func.__name__}{job.args}", "unit": "", "tritium": None, "triton": None,
                          "torch": None, "checks": {}, "errors": {"measure": f"{type(e).__name__}: {e}"}})
    print(f"{row['measure']} ({row['unit']}): " + ", ".join(f"{fw} {_cell(row, fw)}" for fw in FRAMEWORKS),
          file=sys.stderr, flush=True)
    return row


# -- main --------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only, short timing")
    parser.add_argument("--out", help="JSON output (default benchmarks/results/gpu-<date>.json)")
    parser.add_argument("--target", default="nvptx", help="tritium's target (default nvptx)")
    parser.add_argument("--rep-ms", type=float, help="do_bench's rep per measurement (default 100, quick 20)")
    parser.add_argument("--startup-runs", type=int, help="process pairs per startup measure (default 3, quick 1)")
    parser.add_argument("--max-configs", type=int,
                        help="autotune over the first N configs of each list (default all, quick 2)")
    parser.add_argument("--only", action="append", choices=("vector_add", "softmax", "layernorm", "matmul", "attention",
                                                            "compile", "launch", "startup"),
                        help="run only these rows (repeatable; default all)")
    parser.add_argument("--first-call", choices=("tritium", "triton"), help=argparse.SUPPRESS)  # child process
    parser.add_argument("--launch-overhead", nargs=3, help=argparse.SUPPRESS)  # child: framework launches rounds
    parser.add_argument("--cold-compile", nargs=3, help=argparse.SUPPRESS)  # child: framework size max_configs
    args = parser.parse_args(argv)
    if args.first_call:
        print(json.dumps(first_call(args.first_call)))
        return 0
    if args.launch_overhead:
        framework, launches, rounds = args.launch_overhead
        print(json.dumps(launch_overhead(framework, int(launches), int(rounds))))
        return 0
    if args.cold_compile:
        framework, size, max_configs = args.cold_compile
        print(json.dumps(cold_compile(framework, int(size), int(max_configs) or None)))
        return 0
    os.environ["TRITIUM_TARGET"] = args.target
    problem = requirements_problem(args.target)
    if problem:
        print(f"benchmarks/gpu.py: {problem}", file=sys.stderr)
        return 2
    sizes = QUICK if args.quick else FULL
    rep_ms = args.rep_ms or sizes["rep_ms"]
    when = datetime.datetime.now(datetime.timezone.utc)
    device, vers = device_info(), versions(args.target)
    print(f"{device['name']} ({device['capability']}); " + ", ".join(f"{k} {v}" for k, v in vers.items()), flush=True)

    max_configs = args.max_configs or sizes["max_configs"]
    import triton.testing

    timer = functools.partial(triton.testing.do_bench, warmup=25, rep=100)  # both autotuners time alike
    bench = Bench({fw: build_kernels(fw, autotune_options(timer, max_configs)) for fw in ("tritium", "triton")}, rep_ms)
    jobs = [*(("vector_add", functools.partial(bench.vector_add, n)) for n in sizes["vector_add"]),
            *(("softmax", functools.partial(bench.softmax, m, n)) for m, n in sizes["softmax"]),
            *(("layernorm", functools.partial(bench.layernorm, m, n)) for m, n in sizes["layernorm"]),
            *(("matmul", functools.partial(bench.matmul, dtype, n)) for dtype, n in sizes["matmul"]),
            *(("attention", functools.partial(bench.attention, *shape, causal, tma)) for shape in sizes["attention"]
              for causal in (False, True) for tma in ((False, True) if int(device["capability"][3:]) >= 90 else (False,))),
            ("compile", functools.partial(cold_compile_row, sizes["compile_size"], max_configs, args.target)),
            ("launch", functools.partial(launch_overhead_row, *sizes["launches"], args.target))]
    rows = [guarded(job) for kind, job in jobs if not args.only or kind in args.only]
    if not args.only or "startup" in args.only:
        rows += startup_rows(args.startup_runs or sizes["startup_runs"], args.target)
    print(format_table(rows))

    settings = {"quick": args.quick, "only": args.only, "rep_ms": rep_ms, "timer": "triton.testing.do_bench, median",
                "autotune_timer": "triton.testing.do_bench, warmup 25 ms, rep 100 ms", "max_configs": max_configs,
                "target": args.target}
    out = Path(args.out) if args.out else results_path(HERE / "results", when)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document(rows, device, vers, settings, when), indent=1) + "\n")
    print(f"\nwrote {out}")
    return 1 if failed(rows) else 0


if __name__ == "__main__":
    sys.exit(main())
