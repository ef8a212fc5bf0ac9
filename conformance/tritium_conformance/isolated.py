"""The suite in worker processes: a case that kills its process is that case's crash, and the run goes on.

``run_isolated`` hands batches of case ids to worker processes (``python -m
tritium_conformance.isolated``: each selects the target by name and builds its device once) and
collects one ``Result`` per case. When a worker dies (an LLVM abort, a segfault, a device fault)
while running a case after others, that case runs again alone in a fresh worker: when it dies
alone it is reported as ``crash``, with how it died (signal or exit status, the last lines of its
stderr); when it does not, it is a crash too, and says so (an earlier case may have left the
process broken). A death at the first case of a fresh worker is that case's own. A case without
a result within the time limit is a ``timeout``; its worker is killed. The cases of a dead
worker's batch that had not started go on in another worker, as a batch; so do those after a
case that raised and left the device unusable (a GPU's context is lost after a device fault).

One worker per device: with ``devices`` > 1 (a machine with several GPUs of the target), worker
``k`` is pinned to device ``k % devices`` (``Target.set_current_device``), and each result names
its worker and device.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import queue
import threading
import time
from typing import Callable, Iterable

from .cases_debug import LOSES_DEVICE
from .suite import (CASES, CRASH, FAIL, TIMEOUT, XFAIL, Case, CompileOnlyDevice, Device, Result, check_case,
                    declared_gap, installed_target, load_cases)
from .workers import Death, Worker, run_lanes, serve

#: the most cases a worker gets at a time
BATCH = 8
#: what a worker says after a case that left its device unusable, before it stops
RETIRE = "retire"


class WorkerStartError(RuntimeError):
    """A worker died or hung before it could take a case (no case is to blame)."""


@dataclasses.dataclass
class _Task:
    ids: list[str]
    died_before: str = ""  #: how a worker died while running this case after others: it runs alone now


def run_isolated(target: str, selected: Iterable[Case], expectations: dict[str, str], workers: int = 1,
                 timeout: float = 120.0, compile_only: bool = False, case_files: Iterable[str] = (),
                 on_result: Callable[[Result], None] | None = None, devices: int = 1) -> list[Result]:
    """Run (or with ``compile_only`` compile) ``selected`` on the target named ``target`` in
    ``workers`` worker processes, worker ``k`` on device ``k % devices``; results in ``selected``'s
    order, ``on_result`` called as each arrives. ``case_files`` are loaded by each worker
    (``suite.load_cases``): cases registered from them."""
    ids = [c.id for c in selected]
    gaps = {i: declared_gap(i, expectations) for i in ids}
    lanes = max(1, min(workers, len(ids)))
    size = max(1, min(BATCH, -(-len(ids) // (4 * lanes))))
    tasks: queue.Queue[_Task | None] = queue.Queue()
    for i in range(0, len(ids), size):
        tasks.put(_Task(ids[i:i + size]))
    results: dict[str, Result] = {}
    lock = threading.Lock()

    def stop() -> None:
        for _ in range(lanes):
            tasks.put(None)

    def record(r: Result) -> None:
        with lock:
            results[r.case_id] = r
            if on_result is not None:
                on_result(r)
            if len(results) == len(ids):
                stop()

    def lane(index: int) -> None:
        device = index % max(1, devices)
        worker = Worker(worker_argv(target, compile_only, case_files, None if compile_only else device), timeout)
        seen = [f"{device}" if not compile_only else "compile only"]  # the worker's label, once it answered

        def mark(r: Result) -> None:
            r.worker = index
            if r.device:
                seen[0] = r.device
            else:  # died without answering: the device the lane is pinned to
                r.device = seen[0]
            record(r)

        try:
            while (task := tasks.get()) is not None:
                _run_task(worker, task, gaps, tasks, mark)
        finally:
            worker.close()

    run_lanes([functools.partial(lane, k) for k in range(lanes)] if ids else [], on_failure=stop)
    return [results[i] for i in ids]


def worker_argv(target: str, compile_only: bool = False, case_files: Iterable[str] = (),
                device: int | None = None) -> list[str]:
    """The ``python -m`` arguments of a worker that runs cases on ``target`` (on ``device`` when
    given), loading ``case_files`` first."""
    return ["tritium_conformance.isolated", "--target", target, *(["--compile-only"] if compile_only else []),
            *(a for f in case_files for a in ("--cases", f)),
            *(["--device", str(device)] if device is not None else [])]


def run_alone(worker: Worker, case_id: str, gap: str | None = None) -> Result:
    """One case in ``worker`` (started when none runs), as ``run_isolated`` runs it: when the worker
    dies after earlier cases, the case runs again alone in a fresh one to tell whose crash it is."""
    tasks: queue.Queue[_Task | None] = queue.Queue()
    tasks.put(_Task([case_id]))
    results: list[Result] = []
    while not tasks.empty():
        task = tasks.get()
        assert task is not None
        _run_task(worker, task, {case_id: gap}, tasks, results.append)
    return results[-1]


def _run_task(worker: Worker, task: _Task, gaps: dict[str, str | None], tasks: queue.Queue,
              record: Callable[[Result], None]) -> None:
    if task.died_before and worker.used:
        worker.close()
    fresh = not worker.used  # then a death at the first case is that case's own
    answer: str | Death | None = worker.send(json.dumps([[i, gaps[i]] for i in task.ids]))
    if isinstance(answer, Death):
        raise WorkerStartError(f"a worker process ({' '.join(worker.argv)}) did not start: {answer.how}")
    t0 = time.perf_counter()  # the worker is ready: a dead case's seconds leave its start out
    done = 0
    while answer is None and done < len(task.ids):
        answer = worker.receive()
        if answer == RETIRE:
            worker.close()
            if task.ids[done:]:
                tasks.put(_Task(task.ids[done:]))
            return
        if isinstance(answer, str):
            r = Result(**json.loads(answer))
            record(_not_alone(r, task.died_before, gaps[r.case_id]) if task.died_before else r)
            done, answer, t0 = done + 1, None, time.perf_counter()
    if not isinstance(answer, Death):
        return
    case, rest, seconds = task.ids[done], task.ids[done + 1:], time.perf_counter() - t0
    if answer.kind == "timeout":
        record(_dead(case, TIMEOUT, f"{answer.how}; its worker was killed", gaps[case], seconds))
    elif fresh and done == 0:
        record(_dead(case, CRASH, answer.how, gaps[case], seconds))
    else:
        tasks.put(_Task([case], died_before=answer.how))
    if rest:  # cases that never started: not suspects
        tasks.put(_Task(rest))


def _dead(case_id: str, status: str, how: str, gap: str | None, seconds: float) -> Result:
    if gap is not None:
        return Result(case_id, XFAIL, None, f"declared gap: {gap}; {status}: {how}", seconds)
    return Result(case_id, status, None, how, seconds)


def _not_alone(r: Result, how: str, gap: str | None) -> Result:
    """A case that killed its batch's worker, run alone without dying: still a crash."""
    return _dead(r.case_id, CRASH, f"died after other cases in the same process ({how}); alone it gives "
                 f"{r.status}{': ' + r.message if r.message else ''} (an earlier case may have left the process "
                 "broken)", gap, r.seconds)


def main(argv: list[str] | None = None) -> None:
    """A worker: reads batches ``[[case id, declared gap or null], ...]``, answers a ``Result`` (JSON) per case."""
    from tritium import plugins

    p = argparse.ArgumentParser(prog="tritium_conformance.isolated")
    p.add_argument("--target", required=True)
    p.add_argument("--compile-only", action="store_true")
    p.add_argument("--cases", action="append", default=[])
    p.add_argument("--device", type=int, default=None, help="the device this worker runs its cases on")
    args = p.parse_args(argv)
    for path in args.cases:
        load_cases(path)
    if args.compile_only:
        dev = CompileOnlyDevice(installed_target(args.target))
    else:
        target = plugins.get_target(args.target)
        if args.device is not None:
            target.set_current_device(args.device)
        dev = Device(target)

    def handle(request: str):
        for case_id, gap in json.loads(request):
            r = check_case(CASES[case_id], dev, gap)
            # a case may leave the device unusable: a fault, or a failed device assertion (on a GPU
            # its context is lost), which a case expects
            retire = (r.max_error is None and r.status in (FAIL, XFAIL) or case_id.startswith(LOSES_DEVICE)) \
                and not dev.usable()
            if retire:
                r.message += "; the device was unusable after it: the cases after it ran in a fresh worker"
            yield json.dumps(dataclasses.asdict(r))
            if retire:
                yield RETIRE
                return

    serve(handle)


if __name__ == "__main__":
    main()
