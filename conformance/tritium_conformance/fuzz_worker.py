"""A fuzzing worker: ``python -m tritium_conformance.fuzz_worker TARGET`` reads job paths on stdin,
runs each job's kernel on TARGET and pickles the outputs (or the error) beside the job.

The parent process keeps one worker per target and restarts it when it dies, so a kernel that
crashes the process (a segfault, an LLVM abort) or hangs is reported for that kernel alone.
"""

from __future__ import annotations

import importlib.util
import pickle
import sys

import numpy as np


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
            buf = driver.to_device(np.zeros(size, dtype=dtype))
            outs.append(buf)
            args.append(buf)
        else:
            args.append(value)
    target.run(module.kernel, (job["grid"],), tuple(args), dict(job["meta"]))
    driver.synchronize()
    return {"outputs": [np.array(driver.to_host(b)) for b in outs]}


def main() -> None:
    from tritium import plugins

    target = plugins.targets()[sys.argv[1]]
    for line in sys.stdin:
        path = line.strip()
        try:
            result = run_job(target, path)
        except Exception as exc:  # any failure of the target is this kernel's result
            result = {"error": f"{type(exc).__name__}: {exc}"[:4000]}
        with open(f"{path}.{target.name}.out", "wb") as f:
            pickle.dump(result, f)
        print("done", flush=True)


if __name__ == "__main__":
    main()
