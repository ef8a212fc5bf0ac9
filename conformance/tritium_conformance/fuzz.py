"""tritium's differential tester: random kernels on every target, checked against a numpy model.

``run(seeds, targets)`` generates each seed's kernel (``fuzz_gen``), writes it as a module, runs it
on every target in worker processes (``fuzz_worker`` through ``workers``; one per target and lane,
restarted after a crash or a hang) and compares every output with the model (``fuzz_model``), exactly for integers
and within the model's error bound for floats. A ``Finding`` is a mismatch, a crash, a hang, an
error (compile failure), an abort (LLVM died and the compile passed only with the fallback
pipeline) or an overrun (a write past the end of an output) on one target; it carries the seed, so
``--fuzz 1 --seed S`` re-runs it, and ``keep`` saves the kernel of each finding as a module.

A target that compiles but cannot run here (nvptx without a GPU) takes part compile-only
(``compile_only``): its findings are crashes, hangs, aborts and compile errors.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import pickle
import shutil
import tempfile
import threading
from typing import Callable, Iterable

import numpy as np

from .fuzz_gen import Kernel, generate
from .fuzz_model import same_value
from .workers import Death, Worker, run_lanes


@dataclasses.dataclass
class Finding:
    seed: int
    target: str
    kind: str          #: mismatch, crash, hang, error, abort or overrun (a write past an output's end)
    detail: str
    source: str
    tags: list[str]    #: constructs of the kernel that known bugs involve (a hint for triage)

    def __str__(self) -> str:
        tags = f" [uses: {', '.join(self.tags)}]" if self.tags else ""
        return f"seed {self.seed}: {self.target}: {self.kind.upper()}: {self.detail}{tags}"


class _Worker(Worker):
    """The worker process of one target (``fuzz_worker``)."""

    def __init__(self, target: str, workdir: str, timeout: float, compile_only: bool = False):
        super().__init__(["tritium_conformance.fuzz_worker", target] + (["--compile-only"] if compile_only else []),
                         timeout, dict(os.environ, TRITIUM_CACHE_DISABLE="1"), workdir)
        self.target = target

    def run(self, path: str) -> dict:
        """The job's result: {"outputs": [...]}, {"error": ...}, {"limitation": ...} (the target said it cannot
        compile the kernel: no finding), {"crash": ...} or {"hang": ...}."""
        answer = self.send(path) or self.receive()
        if isinstance(answer, Death):
            return {"hang" if answer.kind == "timeout" else "crash": answer.how}
        with open(f"{path}.{self.target}.out", "rb") as f:
            return pickle.load(f)


def write_job(kernel: Kernel, workdir: str) -> str:
    """The kernel as a module ``fuzz_<seed>.py`` and its arguments beside it; returns the stem."""
    stem = os.path.join(workdir, f"fuzz_{kernel.seed}")
    with open(stem + ".py", "w") as f:
        f.write(kernel.source)
    args = [(k, n, (v[0], np.dtype(_np(v[1]))) if k == "output" else v) for k, n, v in kernel.args]
    with open(stem + ".job", "wb") as f:
        pickle.dump({"module": f"fuzz_{kernel.seed}", "args": args, "grid": kernel.grid, "meta": kernel.meta,
                     "debug": kernel.debug}, f)
    return stem


def _np(ty: str):
    from .fuzz_model import NP

    return NP[ty]


def compare(kernel: Kernel, results: dict[str, dict]) -> list[Finding]:
    """Findings of one kernel: each target's failure or each output that differs from the model."""
    found = []
    for target, res in results.items():
        for kind in ("crash", "hang", "error", "abort", "overrun"):
            if kind in res:
                found.append(Finding(kernel.seed, target, kind, res[kind], kernel.source, kernel.tags))
        if "outputs" not in res:
            continue
        for out, got in zip(kernel.outputs, res["outputs"]):
            ok = same_value(got, out.want, out.err, out.ty)
            if ok.all():
                continue
            i = int(np.argwhere(~ok)[0][0])
            others = ", ".join(f"{t} {r['outputs'][kernel.outputs.index(out)][i]!r}" for t, r in results.items()
                               if "outputs" in r)
            bound = "" if out.err is None else f" (bound {out.err[i]:.3g})"
            found.append(Finding(kernel.seed, target, "mismatch",
                                 f"{out.name} ({out.ty}): {int((~ok).sum())} of {ok.size} elements differ; first "
                                 f"at [{i}]: {others}, model {out.want[i]!r}{bound}", kernel.source,
                                 kernel.tags))
    return found


def available_targets(names: Iterable[str] | None = None) -> list[str]:
    """The named targets (default: every installed target that can run here and is tested by
    default, ``Target.test_by_default``)."""
    from tritium import plugins

    installed = plugins.targets()
    if names:
        missing = [n for n in names if n not in installed]
        if missing:
            raise ValueError(f"unknown target(s) {missing}; installed: {sorted(installed)}")
        return list(names)
    return [n for n, t in installed.items() if t.test_by_default and plugins.availability(t)[0]]


def compile_only_targets(names: Iterable[str] | None = None) -> list[str]:
    """The named targets (default: every installed one) that compile kernels but cannot run them
    here, such as nvptx without a GPU: the tester compiles its kernels for them."""
    from tritium import plugins

    installed = plugins.targets()
    return [n for n in (names or installed) if n in installed and installed[n].compiles
            and not plugins.availability(installed[n])[0]]


def run(seeds: Iterable[int], targets: list[str], jobs: int = 1, timeout: float = 60.0,
        on_kernel: Callable[[int, list[Finding]], None] | None = None,
        exclude: frozenset[str] = frozenset(), compile_only: Iterable[str] = (),
        keep: str | None = None, generator: Callable[[int, frozenset[str]], Kernel] = generate,
        seconds: dict[str, list[tuple[float, int]]] | None = None) -> list[Finding]:
    """Fuzz ``seeds`` on ``targets`` (and compile them for ``compile_only``) with ``jobs`` lanes of
    workers; returns every finding. ``keep``: a directory where each kernel with a finding is
    saved (``fuzz_<seed>.py`` and its arguments, ``fuzz_<seed>.job``); ``generator`` makes each
    seed's kernel; ``seconds`` gets, per target, each kernel's ``(seconds, seed)`` in its worker
    (compiling it, and running it where the target runs)."""
    compile_only = list(compile_only)
    seeds = list(seeds)
    findings: list[Finding] = []
    lock = threading.Lock()
    with tempfile.TemporaryDirectory(prefix="tritium-fuzz-") as workdir:
        def lane(mine: list[int]) -> None:
            workers = {t: _Worker(t, workdir, timeout) for t in targets}
            workers.update({t: _Worker(t, workdir, timeout, compile_only=True) for t in compile_only})
            try:
                for seed in mine:
                    kernel = generator(seed, exclude)
                    stem = write_job(kernel, workdir)
                    results = {t: w.run(stem) for t, w in workers.items()}
                    found = compare(kernel, results)
                    if found and keep:
                        os.makedirs(keep, exist_ok=True)
                        for suffix in (".py", ".job"):
                            shutil.copy(stem + suffix, keep)
                    with lock:
                        findings.extend(found)
                        for t, res in results.items():
                            if seconds is not None and "seconds" in res:
                                seconds.setdefault(t, []).append((res["seconds"], seed))
                        if on_kernel is not None:
                            on_kernel(seed, found)
            finally:
                for w in workers.values():
                    w.close()

        run_lanes([functools.partial(lane, seeds[i::jobs]) for i in range(max(1, jobs))])
    return findings
