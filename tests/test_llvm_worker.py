"""LLVM steps run in a forked worker (passes/llvm_worker): an LLVM abort is a ``CompilationError``
naming the kernel, the stage and LLVM's message, and the process lives on; issue 30's kernels that
aborted LLVM compile and give the interpreter's answers."""

import os
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import plugins
from tritium.errors import TritiumError
from tritium.passes.llvm_worker import LLVMFallbackWarning, run_isolated
from tritium.runtime.compiler import compile_specialized

from .kernels.frontend_only import FrontendOnly


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))


@tritium.jit
def small_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)


def _abort(message: str):
    """What an LLVM assertion does: a line on stderr, then SIGABRT."""
    os.write(2, f"LoopVectorize.cpp:7264: Assertion `{message}' failed.\n".encode())
    os.abort()


def _compile_with_stage(stage):
    """Compile ``small_kernel`` with ``stage`` added to the pipeline as a plugin would add it."""
    def extend(target, stages):
        if target.name == "frontend-only":
            stages["boom"] = stage

    plugin = SimpleNamespace(tritium_extend_pipeline=plugins.hookimpl(extend))
    plugins.register(plugin, name="aborting-stage")
    try:
        return compile_specialized(small_kernel, FrontendOnly(), {"x_ptr": "*fp32"}, {"BLOCK": 8}, {}, {})
    finally:
        plugins.plugin_manager().unregister(plugin)


def test_a_stage_that_aborts_is_a_located_compilation_error():
    def boom(module, ctx):
        return run_isolated(ctx.signature.name, "boom", lambda safe: _abort("cost models disagreed"))

    with pytest.warns(LLVMFallbackWarning, match="kernel 'small_kernel': LLVM failed in stage 'boom'"):
        with pytest.raises(tritium.CompilationError) as info:
            _compile_with_stage(boom)
    text = str(info.value)
    assert "in kernel 'small_kernel'" in text and "stage 'boom'" in text
    assert "Assertion `cost models disagreed' failed." in text and "SIGABRT" in text
    assert os.getpid() and _compile_with_stage(lambda module, ctx: module).asm["boom"]  # alive, compiles on


def test_an_abort_falls_back_to_the_conservative_pipeline_with_a_warning():
    tried = []

    def work(safe):
        tried.append(safe)  # in the child: the parent's list stays empty
        return "safe code" if safe else _abort("vectorizer")

    with pytest.warns(LLVMFallbackWarning, match=r"stage 'ptx' \(.*Assertion `vectorizer' failed"):
        assert run_isolated("k", "ptx", work) == "safe code"
    assert tried == []


def test_errors_and_results_cross_the_process_boundary():
    assert run_isolated("k", "asm", lambda safe: ("text", b"\0bytes", safe)) == ("text", b"\0bytes", False)

    def refuse(safe):
        raise TritiumError("libdevice is missing")

    with pytest.raises(TritiumError, match="libdevice is missing"):
        run_isolated("k", "ptx", refuse)
    with pytest.raises(ZeroDivisionError) as info:
        run_isolated("k", "ptx", lambda safe: 1 // 0)
    assert "in the LLVM worker process" in "".join(getattr(info.value, "__notes__", []))


def test_a_worker_that_exits_without_a_result_is_reported():
    with pytest.warns(LLVMFallbackWarning), pytest.raises(tritium.CompilationError,
                                                          match=r"LLVM ERROR: Cannot select(.|\n)*status 1"):
        run_isolated("k", "obj", lambda safe: (os.write(2, b"LLVM ERROR: Cannot select\n"), os._exit(1)))


# -- issue 30's kernels --------------------------------------------------------------------------

G0 = tl.constexpr(5)


@tritium.jit
def helper0(a, b):
    return a


@tritium.jit
def vectorizer_abort_kernel(x1, x2, xl, out0, s0, n, K, BLOCK: tl.constexpr, C0: tl.constexpr):
    """A random kernel whose nvptx compile once died in LLVM's loop vectorizer (issue 30)."""
    pid = tl.program_id(0) + tl.num_programs(0) * (tl.program_id(1) + tl.num_programs(1) * tl.program_id(2))
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v1 = tl.load(x1 + offs.to(tl.int64), mask=mask, other=-51)
    v2 = tl.load(x2 + offs, mask=mask, other=3.0)
    acc1 = tl.full((), 0, tl.float16)
    j2 = 0
    while j2 < K:
        l3 = tl.load(xl + ((j2 * n) + offs), mask=mask)
        t4 = l3.to(tl.int8, bitcast=True) - (v2 == s0).to(tl.int8)
        lt = helper0(tl.zeros((BLOCK,), dtype=tl.int32), j2) < tl.ravel(tl.reshape(v1, (1, 1)))
        picked = tl.where(lt, tl.where(t4 < t4, v1, v2), ~j2).to(tl.float16)
        acc1 = tl.minimum(acc1, tl.sum(tl.where(mask, picked, 0), axis=None))
        j2 += 1
    if G0 == 5:
        c = tl.minimum(tl.maximum(v2, -2147483648.0), 2147483520.0).to(tl.int32).to(tl.uint32)
        y5 = (((acc1 - C0) < (acc1 * 0)) ^ ((tl.zeros((BLOCK,), dtype=tl.uint32) % tl.where(c == 0, 7, c)) != s0))
        y5 = y5.to(tl.float64)
    u7 = (acc1.to(tl.float32) / v1) - y5
    ri8, ri9 = tl.min(tl.where(u7 == u7, u7, 0.0), 0, return_indices=True)
    tl.store(out0 + offs, tl.where(s0 > (ri9 < 57), s0, tl.full((), 100.0, tl.float64)), mask=mask)


SIGNATURE = {"x1": "*i32", "x2": "*fp32", "xl": "*u8", "out0": "*fp32", "s0": "fp32", "n": "i32", "K": "i32"}


def test_the_vectorizer_abort_kernel_compiles_for_nvptx_without_a_gpu():
    pytest.importorskip("tritium_nvptx", reason="tritium-nvptx is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("error", LLVMFallbackWarning)  # the normal pipeline: no vectorizer to fail
        compiled = tritium.compile(vectorizer_abort_kernel, signature=SIGNATURE, constants={"BLOCK": 1, "C0": 3},
                                   target="nvptx")
    assert ".entry vectorizer_abort_kernel" in compiled.asm["ptx"]


def test_the_vectorizer_abort_kernel_gives_the_interpreters_answer(target):
    rng = np.random.default_rng(30)
    n, K = 5, 3
    x1 = rng.integers(-3, 4, n).astype(np.int32)
    x1[x1 == 0] = 2
    x2 = rng.integers(-3, 4, n).astype(np.float32)
    xl = rng.integers(0, 256, n * K).astype(np.uint8)
    dev = target.driver
    out = dev.to_device(np.full(n, -7.0, np.float32))
    vectorizer_abort_kernel[(n,)](dev.to_device(x1), dev.to_device(x2), dev.to_device(xl), out, 1.0, n, K,
                                  BLOCK=1, C0=3)
    # per program, one element: the min over one element is at index 0, and 1.0 > (0 < 57) is false
    np.testing.assert_array_equal(dev.to_host(out), np.full(n, 100.0, np.float32))


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads process states from Linux's /proc")
def test_the_llvm_worker_dies_with_a_killed_parent():
    """A process killed while its LLVM step runs (a conformance case past its time) takes the
    step's forked worker with it, instead of leaving LLVM running on, re-parented."""
    import signal
    import subprocess
    import sys
    import time

    parent = subprocess.Popen([sys.executable, "-c", "import time\n"
                               "from tritium.passes.llvm_worker import run_isolated\n"
                               "run_isolated('k', 'stage', lambda safe: time.sleep(60))"])
    try:
        deadline, workers = time.monotonic() + 30, []
        while not workers and time.monotonic() < deadline:
            time.sleep(0.2)
            with open(f"/proc/{parent.pid}/task/{parent.pid}/children") as f:
                workers = f.read().split()
        assert workers, "the step's worker never started"
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    time.sleep(1)

    def running(pid: str) -> bool:
        try:
            with open(f"/proc/{pid}/status") as f:
                return f.read().split("State:")[1].split()[0] not in ("Z", "X")
        except (FileNotFoundError, ProcessLookupError):
            return False

    assert not [w for w in workers if running(w)]
