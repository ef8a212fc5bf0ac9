"""A fuzzing worker: ``python -m tritium_conformance.fuzz_worker TARGET [--compile-only]`` reads job
paths on stdin, runs each job's kernel on TARGET (or only compiles it, for a target that cannot run
here: nvptx without a GPU) and pickles the outputs (or the error) beside the job. A compile that
LLVM aborted and that passed only with the fallback pipeline is reported as an ``abort``.

The parent process keeps one worker per target (``workers.Worker``) and restarts it when it dies, so a kernel that
crashes the process (a segfault, an LLVM abort) or hangs is reported for that kernel alone.
"""

from __future__ import annotations

import importlib.util
import pickle
import sys
import time
import warnings

import numpy as np
from tritium.runtime.launch import run_kernel

from .workers import serve

GUARD = 64      #: elements after each output that a kernel must leave alone
POISON = 0x5A   #: the byte every output starts as


def _load(path: str):
    with open(path + ".job", "rb") as f:
        job = pickle.load(f)
    spec = importlib.util.spec_from_file_location(job["module"], path + ".py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[job["module"]] = module
    spec.loader.exec_module(module)
    return job, module


def compile_job(target, path: str) -> dict:
    """Compile the job's kernel for ``target`` with the types of its arguments; no launch."""
    import tritium

    job, module = _load(path)
    signature = {}
    for kind, name, value in job["args"]:
        if kind == "output":
            signature[name] = "*" + _short(np.dtype(value[1]))
        elif kind in ("array", "inout"):
            signature[name] = "*" + _short(np.asarray(value).dtype)
        else:
            signature[name] = "fp32" if isinstance(value, float) else "i32" if -2**31 <= value < 2**31 else "i64"
    tritium.compile(module.kernel, signature=signature, constants=job["meta"], target=target.name,
                    **({"debug": True} if job.get("debug") else {}))
    return {"compiled": True}


def _short(dtype: np.dtype) -> str:
    if dtype == np.bool_:
        return "i1"
    return {"f": "fp", "i": "i", "u": "u"}[dtype.kind] + str(dtype.itemsize * 8)


def run_job(target, path: str) -> dict:
    job, module = _load(path)
    driver = target.driver
    args, outs = [], []
    for kind, _name, value in job["args"]:
        if kind == "array":
            args.append(driver.to_device(np.ascontiguousarray(value)))
        elif kind in ("output", "inout"):  # inout: an atomics' buffer, with its contents
            size, dtype = value if kind == "output" else (value.size, value.dtype)
            host = _poisoned(size + GUARD, dtype)
            if kind == "inout":
                host[:size] = value
            buf = driver.to_device(host)
            outs.append((buf, size, dtype))
            args.append(buf)
        else:
            args.append(value)
    grid = job["grid"]
    kwargs = dict(job["meta"], **({"debug": True} if job.get("debug") else {}))
    run_kernel(target, module.kernel, tuple(grid) if isinstance(grid, (tuple, list)) else (grid,), tuple(args),
               kwargs)
    driver.synchronize()
    result: dict = {"outputs": []}
    for i, (buf, size, dtype) in enumerate(outs):
        host = np.array(driver.to_host(buf))
        result["outputs"].append(host[:size])
        tail = host[size:].view(np.uint8)
        if np.any(tail != POISON):
            first = int(np.argmax(tail != POISON)) // np.dtype(dtype).itemsize
            result["overrun"] = (f"output {i} ({size} elements of {np.dtype(dtype)}) was written past its end, "
                                 f"at element {size + first}")
    return result


def _poisoned(size: int, dtype) -> np.ndarray:
    """An array of ``size`` elements whose bytes are all POISON: unwritten elements and writes past
    the end of an output stand out."""
    return np.frombuffer(bytes([POISON]) * (size * np.dtype(dtype).itemsize), dtype=dtype).copy()


def main() -> None:
    from tritium import plugins
    from tritium.errors import TargetLimitation
    from tritium.passes.llvm_worker import LLVMFallbackWarning

    target = plugins.targets()[sys.argv[1]]
    job = compile_job if "--compile-only" in sys.argv[2:] else run_job

    def handle(path: str):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", LLVMFallbackWarning)
            start = time.perf_counter()
            try:
                result = job(target, path)
            except TargetLimitation as exc:  # the target says it cannot: no finding, nothing to compare
                result = {"limitation": str(exc)[:4000]}
            except Exception as exc:  # any failure of the target is this kernel's result
                result = {"error": f"{type(exc).__name__}: {exc}"[:4000]}
            result["seconds"] = time.perf_counter() - start  # compiling (and running) the kernel
        aborts = [str(w.message) for w in caught if issubclass(w.category, LLVMFallbackWarning)]
        if aborts:
            result["abort"] = aborts[0][:4000]
        with open(f"{path}.{target.name}.out", "wb") as f:
            pickle.dump(result, f)
        yield "done"

    serve(handle)


if __name__ == "__main__":
    main()
