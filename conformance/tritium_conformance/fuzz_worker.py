"""A fuzzing worker: ``python -m tritium_conformance.fuzz_worker TARGET`` reads job paths on stdin,
runs each job's kernel on TARGET and pickles the outputs (or the error) beside the job.

The parent process keeps one worker per target (``workers.Worker``) and restarts it when it dies, so a kernel that
crashes the process (a segfault, an LLVM abort) or hangs is reported for that kernel alone.
"""

from __future__ import annotations

import importlib.util
import pickle
import sys

import numpy as np
from tritium.runtime.launch import run_kernel

from .workers import serve

GUARD = 64      #: elements after each output that a kernel must leave alone
POISON = 0x5A   #: the byte every output starts as


def run_job(target, path: str) -> dict:
    with open(path + ".job", "rb") as f:
        job = pickle.load(f)
    spec = importlib.util.spec_from_file_location(job["module"], path + ".py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[job["module"]] = module
    spec.loader.exec_module(module)
    driver = target.driver
    args, outs = [], []
    for kind, _name, value in job["args"]:
        if kind == "array":
            args.append(driver.to_device(np.ascontiguousarray(value)))
        elif kind == "output":
            size, dtype = value
            buf = driver.to_device(_poisoned(size + GUARD, dtype))
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

    target = plugins.targets()[sys.argv[1]]

    def handle(path: str):
        try:
            result = run_job(target, path)
        except Exception as exc:  # any failure of the target is this kernel's result
            result = {"error": f"{type(exc).__name__}: {exc}"[:4000]}
        with open(f"{path}.{target.name}.out", "wb") as f:
            pickle.dump(result, f)
        yield "done"

    serve(handle)


if __name__ == "__main__":
    main()
