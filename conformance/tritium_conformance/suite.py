"""The machinery of the suite: the case registry, the device a case runs on, checking and running.

A case is a function ``fn(dev, **params) -> list[Output]``: it launches kernels through ``dev``
(the target's own memory API, so no framework is needed) and returns what it computed beside an
independent numpy reference. ``run_case`` turns that into a ``Result``: pass, fail (with the largest
error), or xfail/xpass when the target declared the case a known gap.

``compile_case`` runs a case on a ``CompileOnlyDevice`` instead: every launch compiles (through the
target's whole pipeline, binary stage included) and nothing runs, so a GPU target is checked on a
machine without a GPU. Its result is ``compiled`` or a failure with the compile error.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import importlib.util
import itertools
import os
import re
import sys
import time
import traceback
import zlib
from typing import Any, Callable, Iterable

import numpy as np


# ------------------------------------------------------------------------------------------------
# Registry
# ------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Case:
    """One conformance case: ``fn(dev, **params)`` returns the outputs to check."""

    id: str
    fn: Callable[..., list["Output"]]
    params: tuple[tuple[str, Any], ...] = ()

    def run(self, dev: "Device") -> list["Output"]:
        return self.fn(dev, **dict(self.params))


CASES: dict[str, Case] = {}


def cases(id_pattern: str, **grid: Iterable[Any]) -> Callable:
    """Register ``fn`` once per combination of the parameter values in ``grid``.

    ``id_pattern`` is formatted with the parameters (``"vector_add-n{n}"``); a parameter given as a
    dict contributes its keys to the id and its values to the call.
    """
    def register(fn: Callable) -> Callable:
        names = list(grid)
        for combo in itertools.product(*(list(v) for v in grid.values())):
            labels = dict(zip(names, combo))
            values = {n: (grid[n][c] if isinstance(grid[n], dict) else c) for n, c in labels.items()}
            case_id = id_pattern.format(**labels)
            if case_id in CASES:
                raise ValueError(f"duplicate conformance case id '{case_id}'")
            CASES[case_id] = Case(case_id, fn, tuple(values.items()))
        return fn
    return register


def select(patterns: Iterable[str] = ()) -> list[Case]:
    """The registered cases whose id contains any of ``patterns`` (all cases when none is given)."""
    pats = list(patterns)
    return [c for c in CASES.values() if not pats or any(p in c.id for p in pats)]


def declared_gap(case_id: str, expectations: dict[str, str]) -> str | None:
    """The reason a target gave for failing ``case_id``; keys may be exact ids or shell-style
    patterns (``"cast-*fp16*"``)."""
    if case_id in expectations:
        return expectations[case_id]
    for pattern, reason in expectations.items():
        if fnmatch.fnmatchcase(case_id, pattern):
            return reason
    return None


def load_cases(path: str) -> None:
    """Register the cases of the Python file ``path`` too (a file that uses ``cases``)."""
    name = "tritium_conformance_extra_" + re.sub(r"\W", "_", os.path.abspath(path))
    if name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load cases from '{path}': not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)


def rng_for(case_id: str) -> np.random.Generator:
    """A random generator seeded by the case id: inputs are the same on every run and target."""
    return np.random.default_rng(zlib.crc32(case_id.encode()))


# ------------------------------------------------------------------------------------------------
# Device
# ------------------------------------------------------------------------------------------------
class Device:
    """A target and its memory API: what a case needs to move data and launch kernels."""

    def __init__(self, target: Any):
        self.target = target
        self.driver = target.driver

    @property
    def name(self) -> str:
        return self.target.name

    @functools.cached_property
    def label(self) -> str:
        """The device cases run on, for results and reports (``device_label``)."""
        return device_label(self.target)

    def to_device(self, array: np.ndarray) -> Any:
        return self.driver.to_device(np.ascontiguousarray(array))

    def empty(self, shape, dtype) -> Any:
        return self.driver.empty(tuple(shape) if not isinstance(shape, int) else (shape,), np.dtype(dtype))

    def full(self, shape, value, dtype) -> Any:
        """A device array filled with ``value`` (to notice elements a kernel failed to write)."""
        return self.to_device(np.full(shape, value, dtype=dtype))

    def to_host(self, buffer: Any) -> np.ndarray:
        self.driver.synchronize()
        return np.asarray(self.driver.to_host(buffer))

    def usable(self) -> bool:
        """Whether data still goes to the device and back: after a device fault (an illegal
        address on a GPU) the process may have lost its device for good."""
        try:
            return self.to_host(self.to_device(np.arange(4, dtype=np.int32))).tolist() == [0, 1, 2, 3]
        except Exception:
            return False

    def launch(self, kernel: Any, grid: Any, *args: Any, **kwargs: Any) -> None:
        """``kernel[grid](*args, **kwargs)`` on this device's target, whatever TRITIUM_TARGET says."""
        from tritium.runtime.launch import run_kernel

        run_kernel(self.target, kernel, grid, args, kwargs)


def device_label(target: Any, compile_only: bool = False) -> str:
    """``"<index>: <description>"`` of the target's current device (``"compile only"`` when nothing
    runs); a target that cannot be asked is described by the error."""
    if compile_only:
        return "compile only"
    from .report import device_description

    try:
        index = target.current_device()
    except Exception as exc:  # a device that cannot be asked is reported, not fatal
        return f"unknown ({type(exc).__name__}: {exc})"
    return f"{index}: {device_description(target)}"


def installed_target(name: str | None) -> Any:
    """``--compile-only``'s target: installed and compiling, available here or not."""
    from tritium import plugins
    from tritium.errors import TargetError

    name = (name or os.environ.get(plugins.TARGET_ENV, "")).strip()
    target = plugins.get_target(name) if not name or name == "auto" else plugins.targets().get(name)
    if target is None:
        raise TargetError(f"unknown target '{name}'; installed targets: {', '.join(plugins.targets()) or 'none'}")
    if not target.compiles:
        raise TargetError(f"target '{target.name}' runs kernels without compiling them, so --compile-only has "
                          "nothing to do there; run the suite on it without --compile-only")
    return target


class CompileOnlyDevice(Device):
    """A device that compiles each launch instead of running it: host numpy arrays stand in for
    device memory (their dtypes give the signature), aligned as device allocators align theirs, so
    pointers specialise as in a launch; the target's driver is never asked.

    ``compiled`` lists ``(kernel name, seconds, how)`` for every launch so far; ``how`` is
    ``compiled``, ``disk cache`` or ``earlier case`` (the specialisation an earlier launch compiled).
    ``kernels`` holds the compiled kernels of the launches, in order (their stage times and IR).
    """

    #: device allocators return memory aligned to at least this many bytes (CUDA and HIP: 256)
    ALIGNMENT = 256

    def __init__(self, target: Any):
        self.target = target
        self.label = device_label(target, compile_only=True)
        self.compiled: list[tuple[str, float, str]] = []
        self.kernels: list[Any] = []
        self._seen: set[int] = set()  # the compiled kernels of earlier launches

    def to_device(self, array: np.ndarray) -> np.ndarray:
        array = np.asarray(array)
        out = self.empty(array.shape, array.dtype)
        out[...] = array
        return out

    def empty(self, shape, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        raw = np.zeros(nbytes + self.ALIGNMENT, np.uint8)
        skip = -raw.__array_interface__["data"][0] % self.ALIGNMENT
        return raw[skip:skip + nbytes].view(dtype).reshape(shape)

    def to_host(self, buffer: Any) -> np.ndarray:
        return np.asarray(buffer)

    def launch(self, kernel: Any, grid: Any, *args: Any, **kwargs: Any) -> None:
        from tritium.runtime.launch import compile_for_arguments

        t0 = time.perf_counter()
        compiled = compile_for_arguments(self.target, kernel, args, kwargs)
        seconds = time.perf_counter() - t0
        how = "earlier case" if id(compiled) in self._seen else "disk cache" if compiled.cache_hit else "compiled"
        self._seen.add(id(compiled))
        self.compiled.append((compiled.name, seconds, how))
        self.kernels.append(compiled)


# ------------------------------------------------------------------------------------------------
# Checking
# ------------------------------------------------------------------------------------------------
_DEFAULT_TOL = {  # (rtol, atol) by output dtype kind and size; integers must match exactly
    ("f", 2): (1e-3, 1e-3),
    ("f", 4): (2e-6, 1e-6),
    ("f", 8): (1e-12, 1e-13),
}


@dataclasses.dataclass
class Output:
    """One computed array beside its reference; ``rtol``/``atol`` default by ``got``'s dtype."""

    name: str
    got: np.ndarray
    want: np.ndarray
    rtol: float | None = None
    atol: float | None = None

    def check(self) -> tuple[float, str]:
        """(max abs error, "" when within tolerance else what is wrong)."""
        got, want = np.asarray(self.got), np.asarray(self.want)
        if got.shape != want.shape:
            return float("inf"), f"{self.name}: shape {got.shape}, expected {want.shape}"
        if got.size == 0:
            return 0.0, ""
        if got.dtype.kind in "iub":
            diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
            err = float(diff.max())
            bad = diff != 0
            tol = "exact"
        else:
            rtol, atol = _DEFAULT_TOL.get((got.dtype.kind, got.dtype.itemsize), (0.0, 0.0))
            rtol = rtol if self.rtol is None else self.rtol
            atol = atol if self.atol is None else self.atol
            with np.errstate(invalid="ignore", over="ignore"):
                g, w = got.astype(np.float64), want.astype(np.float64)
                diff = np.abs(g - w)
                same = (g == w) | (np.isnan(g) & np.isnan(w))  # equal infinities, NaN where NaN is due
                bad = ~same & ~(diff <= atol + rtol * np.abs(w))
            err = float(np.max(np.where(same, 0.0, diff)))
            tol = f"rtol {rtol:g}, atol {atol:g}"
        if not bad.any():
            return err, ""
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        return err, (f"{self.name}: {int(bad.sum())} of {bad.size} elements differ ({tol}); first at "
                     f"{list(first)}: got {got[first]!r}, expected {want[first]!r}")


# ------------------------------------------------------------------------------------------------
# Running
# ------------------------------------------------------------------------------------------------
PASS, FAIL, XFAIL, XPASS, COMPILED = "pass", "fail", "xfail", "xpass", "compiled"
#: a case that killed its worker process, or ran past the time limit (``isolated``)
CRASH, TIMEOUT = "crash", "timeout"


@dataclasses.dataclass
class Result:
    case_id: str
    status: str                  #: pass, fail, xfail, xpass, compiled (compile-only), crash or timeout
    max_error: float | None      #: None when the case raised before producing outputs
    message: str = ""            #: what went wrong (or, for xfail/xpass, the declared reason)
    seconds: float = 0.0
    device: str = ""             #: where it ran: ``"<index>: <description>"`` (``device_label``)
    worker: int | None = None    #: the worker process (0, 1, ...) that ran it; None in process

    @property
    def ok(self) -> bool:
        """False only for an undeclared failure, crash or timeout."""
        return self.status not in (FAIL, CRASH, TIMEOUT)


def run_case(case: Case, dev: Device, gap: str | None = None) -> Result:
    """Run one case on ``dev``; ``gap`` is the target's declared reason for failing it, if any."""
    t0 = time.perf_counter()
    err: float | None = None
    try:
        problems = []
        err = 0.0
        for out in case.run(dev):
            e, problem = out.check()
            err = max(err, e)
            if problem:
                problems.append(problem)
        message = "; ".join(problems)
    except Exception as exc:  # a compile error or crash of the target is a failure of this case
        err = None
        message = _describe(exc)
    seconds = time.perf_counter() - t0
    failed = bool(message)
    if gap is not None:
        if failed:
            return Result(case.id, XFAIL, err, f"declared gap: {gap}; {message}", seconds)
        return Result(case.id, XPASS, err, f"passes, although declared a gap: {gap}", seconds)
    return Result(case.id, FAIL if failed else PASS, err, message, seconds)


def compile_case(case: Case, dev: CompileOnlyDevice, gap: str | None = None) -> Result:
    """Compile every kernel ``case`` launches, running none: ``compiled`` with the compile seconds,
    or the compile error (``xfail`` when ``gap`` declares the case a known gap of the target)."""
    del dev.compiled[:], dev.kernels[:]
    t0 = time.perf_counter()
    try:
        case.run(dev)  # outputs are not checked: nothing ran
    except Exception as exc:
        message = _describe(exc)
        if gap is not None:
            return Result(case.id, XFAIL, None, f"declared gap: {gap}; {message}", time.perf_counter() - t0)
        return Result(case.id, FAIL, None, message, time.perf_counter() - t0)
    message = ", ".join(f"{name} ({how})" for name, _, how in dev.compiled) or "launches no kernel"
    return Result(case.id, COMPILED, None, message, sum(s for _, s, _ in dev.compiled))


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {text}{where}" if text else f"{type(exc).__name__}{where}"


def check_case(case: Case, dev: Device, gap: str | None = None) -> Result:
    """``compile_case`` on a ``CompileOnlyDevice``, else ``run_case``; the result names the device."""
    r = compile_case(case, dev, gap) if isinstance(dev, CompileOnlyDevice) else run_case(case, dev, gap)
    r.device = dev.label
    return r


def run_suite(dev: Device, selected: Iterable[Case], expectations: dict[str, str] | None = None,
              on_result: Callable[[Result], None] | None = None) -> list[Result]:
    """Run ``selected`` cases on ``dev`` (compile them on a ``CompileOnlyDevice``), calling
    ``on_result`` after each."""
    results = []
    for case in selected:
        r = check_case(case, dev, declared_gap(case.id, expectations or {}))
        results.append(r)
        if on_result is not None:
            on_result(r)
    return results
