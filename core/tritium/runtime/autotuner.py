"""``@tritium.autotune``, ``tritium.Config`` and ``@tritium.heuristics`` with Triton 3.6's semantics.

``@autotune(configs, key)`` above ``@jit`` makes ``kernel[grid](...)`` benchmark every (pruned)
config once per tuning key (the values of the ``key`` arguments, plus the dtypes of the array
arguments, as Triton does), then launch with the fastest. The choice is kept in memory and in the
kernel cache directory (keyed by the kernel's ``cache_key``, the target, the tuning key and the
configs), so a new process launches at once instead of benchmarking again; configs with a
``pre_hook`` are not kept on disk (a function cannot be stored), as in Triton. A config that fails
to compile or load (out of resources) is skipped with a warning, as Triton skips them. The configs
compile side by side on threads first (``_precompile``): while one waits for LLVM or the target's
assembler in another process, the next runs its front end.

Benchmarking launches the kernel many times, so arguments it writes would end up wrong:
``reset_to_zero`` names arguments zeroed before each benchmarking run (and once after, so the real
launch starts from zero) and ``restore_value`` names arguments put back after each run. Saving works
on numpy arrays, objects with torch's ``clone``/``copy_``/``zero_``, and the target's own buffers
(through its driver's memory API and a small copy kernel launched on the target), so no framework
is needed on any target.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Mapping, Sequence

import tritium.language as tl

from ..errors import ArgumentError, KernelRuntimeError, TritiumError, user_facing, warn
from .async_compile import AsyncCompileMode
from .jit import JITFunction, KernelInterface, jit

#: the most configs compiling at once (each waits on a worker process part of the time)
MAX_COMPILE_THREADS = 8


class Config:
    """One point of the search space: meta-parameters (``kwargs``) and launch options."""

    def __init__(self, kwargs: Mapping[str, Any], num_warps: int = 4, num_stages: int = 3, num_ctas: int = 1,
                 maxnreg: int | None = None, pre_hook: Callable[[dict], None] | None = None):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self) -> dict[str, Any]:
        """The meta-parameters and the launch options a launch with this config passes. ``num_ctas``
        and ``maxnreg`` are passed only when set away from their defaults, so a target without
        them refuses only a config that asks for them."""
        extra = {"num_ctas": self.num_ctas} if self.num_ctas != 1 else {}
        if self.maxnreg is not None:
            extra["maxnreg"] = self.maxnreg
        return {**self.kwargs, "num_warps": self.num_warps, "num_stages": self.num_stages, **extra}

    def __str__(self) -> str:
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts += [f"num_warps: {self.num_warps}", f"num_ctas: {self.num_ctas}",
                  f"num_stages: {self.num_stages}", f"maxnreg: {self.maxnreg}"]
        return ", ".join(parts)

    def __repr__(self) -> str:
        return f"Config({self})"

    def _identity(self) -> tuple:
        return (*self.all_kwargs().items(), self.pre_hook)

    def __hash__(self) -> int:
        return hash(self._identity())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self._identity() == other._identity()


def _base_jit(fn: Any) -> JITFunction:
    while not isinstance(fn, JITFunction):
        if not hasattr(fn, "fn"):
            raise TritiumError(f"@autotune and @heuristics decorate @tritium.jit kernels (put them above "
                               f"@jit), got {fn!r}")
        fn = fn.fn
    return fn


class _Decorated(KernelInterface):
    """A wrapper of a @jit function that launches as ``kernel[grid](...)``."""

    def __init__(self, fn: Any):
        self.fn = fn
        self.base_fn = _base_jit(fn)
        self.arg_names = self.base_fn.arg_names
        self.__name__ = self.base_fn.__name__

    def __call__(self, *args, **kwargs):
        return self.base_fn(*args, **kwargs)  # the error of calling a kernel from Python


# -- saving and restoring arguments while benchmarking ---------------------------------------------
@jit
def _copy_kernel(dst, src, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


class _Saved:
    """A copy of one argument, and how to put it back or zero the argument in place."""

    def __init__(self, value: Any, name: str, kernel: str):
        import numpy as np

        self.value = value
        if isinstance(value, np.ndarray):
            self.kind = "numpy"
            self.copy = value.copy()
        elif all(hasattr(value, m) for m in ("clone", "copy_", "zero_")):
            self.kind = "tensor"
            self.copy = value.clone()
        else:
            from .. import plugins

            driver = plugins.get_target().driver
            try:
                if not (hasattr(value, "shape") and hasattr(value, "dtype")):
                    raise TypeError
                host = np.asarray(driver.to_host(value))
                self.copy = driver.to_device(host)
                self.zeros = driver.to_device(np.zeros_like(host))
            except Exception:
                raise ArgumentError(
                    f"kernel '{kernel}': autotuning cannot save or zero argument '{name}' "
                    f"({type(value).__name__}) for reset_to_zero/restore_value: pass a numpy array, a torch "
                    "tensor or a buffer of the target's memory API (target.driver.to_device)") from None
            self.kind = "buffer"
            self.size = int(host.size)

    def restore(self) -> None:
        self._put(self.copy)

    def zero(self) -> None:
        if self.kind == "numpy":
            self.value.fill(0)
        elif self.kind == "tensor":
            self.value.zero_()
        else:
            self._put(self.zeros)

    def _put(self, source: Any) -> None:
        if self.kind == "numpy":
            self.value[...] = source
        elif self.kind == "tensor":
            self.value.copy_(source)
        elif self.size:
            _copy_kernel[(-(-self.size // 1024),)](self.value, source, self.size, BLOCK=1024)


# -- the autotuner ------------------------------------------------------------------------------------
class Autotuner(_Decorated):
    """A kernel that picks its fastest config per tuning key (see the module docstring)."""

    def __init__(self, fn: Any, configs: Sequence[Config], key: Sequence[str], prune_configs_by: dict | None,
                 reset_to_zero: Iterable[str] | None, restore_value: Iterable[str] | None,
                 warmup: float | None, rep: float | None, do_bench: Callable | None):
        super().__init__(fn)
        if not configs:  # every launch would miss the meta-parameters the configs are meant to set
            raise TritiumError(f"@autotune of kernel '{self.__name__}': the config list is empty; give at least "
                               "one tritium.Config (Config({}) launches with the default options)")
        self.configs = list(configs)
        self.keys = list(key)
        self.reset_to_zero = list(reset_to_zero or ())
        self.restore_value = list(restore_value or ())
        for name in [*self.keys, *self.reset_to_zero, *self.restore_value]:
            if name not in self.arg_names:
                raise TritiumError(f"@autotune of kernel '{self.__name__}': '{name}' is not a parameter of the "
                                   f"kernel (parameters: {', '.join(self.arg_names)})")
        prune = dict(prune_configs_by or {})
        unknown = set(prune) - {"perf_model", "top_k", "early_config_prune"}
        if unknown:
            raise TritiumError(f"@autotune of kernel '{self.__name__}': prune_configs_by takes perf_model, top_k "
                               f"and early_config_prune, not {', '.join(sorted(unknown))}")
        self.perf_model = prune.get("perf_model")
        self.configs_top_k = prune.get("top_k", 1.0)
        #: what configs set: passing any of it at launch is an error
        self._tuned_names = frozenset().union(*(c.all_kwargs() for c in self.configs))
        self.early_config_prune = prune.get("early_config_prune")
        self.warmup_ms = 25 if warmup is None else warmup
        self.rep_ms = 100 if rep is None else rep
        self._do_bench = do_bench
        #: tuning key -> the chosen Config
        self.cache: dict[tuple, Config] = {}
        self.configs_timings: dict[Config, Any] = {}
        self.best_config: Config | None = None
        self.bench_time = 0.0

    def do_bench(self, fn: Callable[[], Any], quantiles: Sequence[float]) -> Any:
        if self._do_bench is not None:
            return self._do_bench(fn, quantiles=quantiles)
        from ..testing import do_bench

        return do_bench(fn, warmup=self.warmup_ms, rep=self.rep_ms, quantiles=quantiles)

    def _tuning_key(self, nargs: dict) -> tuple:
        key = [nargs[k] for k in self.keys if k in nargs]
        key += [str(v.dtype) for v in nargs.values() if hasattr(v, "dtype")]
        return tuple(key)

    def _check_conflicts(self, kwargs: dict) -> None:
        conflicts = sorted(kwargs.keys() & self._tuned_names)
        if conflicts:
            raise ArgumentError(f"kernel '{self.__name__}': {', '.join(conflicts)} passed at launch, but the "
                                "autotuner sets them from its configs; do not pass auto-tuned meta-parameters "
                                "or options yourself")

    def _named(self, args: tuple, kwargs: dict) -> dict:
        """The launch's kernel arguments by name (options and meta-parameters not in the signature left out)."""
        return {**dict(zip(self.arg_names, args)), **{k: v for k, v in kwargs.items() if k in self.arg_names}}

    def _given_below(self) -> set[str]:
        """The parameters that defaults and ``@heuristics`` between this autotuner and ``@jit`` give."""
        given, fn = set(self.base_fn.defaults), self.fn
        while fn is not self.base_fn:
            given |= set(getattr(fn, "values", ()))
            fn = fn.fn
        return given

    def _launch(self, method: Callable[..., Any], config: Config, args: tuple, grid: Any, kwargs: dict) -> Any:
        """``method`` (``run`` or ``warmup`` of the decorated kernel) with ``config``; a parameter that
        neither the config nor the launch gives is reported with the config that lacks it."""
        try:
            return method(*args, grid=grid, **kwargs, **config.all_kwargs())
        except ArgumentError:
            given = self._named(args, kwargs).keys() | config.kwargs.keys() | self._given_below()
            missing = [n for n in self.arg_names if n not in given]
            if not missing:
                raise
            stray = [k for k in config.kwargs if k not in self.arg_names]
            hint = (f"; the config sets {', '.join(stray)}, which the kernel has no parameter of (misspelt?)"
                    if stray else "; add it to every config or pass it at launch")
            raise ArgumentError(f"kernel '{self.__name__}': autotune config ({config}) does not set parameter(s) "
                                f"{', '.join(missing)}, and the launch does not pass them{hint}") from None

    @user_facing
    def run(self, *args, grid: Any, **kwargs) -> Any:
        nargs = self._named(args, kwargs)
        self._check_conflicts(kwargs)
        if len(self.configs) > 1:
            key = self._tuning_key(nargs)
            if key not in self.cache:
                configs = self.prune_configs(nargs, kwargs)
                if not self._load(key, configs):
                    self._precompile(configs, args, grid, kwargs)
                    self._benchmark(key, configs, args, grid, nargs, kwargs)
            config = self.cache[key]
        else:
            config = self.configs[0]
        self.best_config = config
        if config.pre_hook is not None:
            config.pre_hook({**nargs, **kwargs, **config.all_kwargs()})
        return self._launch(self.fn.run, config, args, grid, kwargs)

    def prune_configs(self, nargs: dict, kwargs: dict) -> list[Config]:
        """``early_config_prune(configs, nargs, **kwargs)``, then the ``top_k`` configs by
        ``perf_model(**nargs, **kwargs, **config.all_kwargs())`` (a float top_k <= 1 is a fraction)."""
        configs = self.configs
        if self.early_config_prune:
            configs = list(self.early_config_prune(self.configs, nargs, **kwargs))
            if not configs:
                raise TritiumError(f"@autotune of kernel '{self.__name__}': early_config_prune returned no "
                                   "config; it must keep at least one")
        if self.perf_model:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = max(1, int(len(self.configs) * top_k))
            elif not isinstance(top_k, int) or isinstance(top_k, bool):
                raise TritiumError(f"@autotune of kernel '{self.__name__}': prune_configs_by['top_k'] must be a "
                                   f"float <= 1.0 (a fraction of the configs) or an int, got {top_k!r}")
            if len(configs) > top_k:
                est = {c: self.perf_model(**nargs, **kwargs, **c.all_kwargs()) for c in configs}
                configs = sorted(configs, key=est.__getitem__)[:top_k]
        return configs

    def _benchmark(self, key: tuple, configs: list[Config], args: tuple, grid: Any, nargs: dict,
                   kwargs: dict) -> None:
        start = time.perf_counter()
        saved = {n: _Saved(nargs[n], n, self.__name__) for n in dict.fromkeys(self.reset_to_zero + self.restore_value)}
        timings: dict[Config, Any] = {}
        failures: list[str] = []
        for i, config in enumerate(configs):
            _progress(f"autotuning {self.__name__} {key}: config {i + 1}/{len(configs)} ({config})")
            full = {**nargs, **kwargs, **config.all_kwargs()}

            def call(config: Config = config, full: dict = full) -> None:
                if config.pre_hook:
                    config.pre_hook(full)
                for name in self.reset_to_zero:
                    saved[name].zero()
                try:
                    self._launch(self.fn.run, config, args, grid, kwargs)
                finally:
                    for name in self.restore_value:
                        saved[name].restore()
            try:
                timings[config] = self.do_bench(call, quantiles=(0.5, 0.2, 0.8))
            except (ArgumentError, KernelRuntimeError):
                raise  # the arguments' fault or the kernel's, not the config's
            except TritiumError as e:  # a compile error, ptxas refusing, too much shared memory, ...
                failures.append(f"{config}: {e}")
                warn(f"tritium.autotune: kernel '{self.__name__}' does not compile or load with config {config}; "
                     f"it is skipped: {e}")
        _progress(None)
        if not timings:
            raise TritiumError(f"kernel '{self.__name__}': no autotuning config compiles:\n  " + "\n  ".join(failures))
        best = min(timings, key=timings.__getitem__)
        for name in self.reset_to_zero:
            saved[name].zero()
        self.cache[key] = best
        self.configs_timings = timings
        self.bench_time = time.perf_counter() - start
        self._store(key, configs, best, timings)

    # -- the choice on disk -------------------------------------------------------------------------
    def _disk_key(self, key: tuple, configs: list[Config]) -> str | None:
        from .. import plugins
        from .cache import cache_key

        if any(c.pre_hook for c in configs):
            return None
        target = plugins.get_target()
        try:
            return cache_key({"autotune": self.base_fn.cache_key, "target": target.name,
                              "target_version": target.version(), "key": [repr(k) for k in key],
                              "configs": [str(c) for c in configs]})
        except TypeError:
            return None

    def _load(self, key: tuple, configs: list[Config]) -> bool:
        from .cache import Cache

        disk_key = self._disk_key(key, configs)
        entry = Cache().get(disk_key) if disk_key else None
        if entry is None:
            return False
        best = entry.metadata.get("best")
        if not isinstance(best, int) or not 0 <= best < len(configs) or str(configs[best]) != entry.metadata.get("config"):
            return False
        self.cache[key] = configs[best]
        self.bench_time = 0.0
        return True

    def _store(self, key: tuple, configs: list[Config], best: Config, timings: dict) -> None:
        from .cache import Cache

        disk_key = self._disk_key(key, configs)
        if disk_key:
            Cache().put(disk_key, b"", {"name": f"{self.__name__} (autotune)", "best": configs.index(best),
                                        "config": str(best), "key": repr(key),
                                        "timings": [[str(c), _jsonable(t)] for c, t in timings.items()]})

    @user_facing
    def warmup(self, *args, grid: Any = (1,), **kwargs) -> list[Any]:
        """Compile every (pruned) config without launching."""
        configs = self.prune_configs(self._named(args, kwargs), kwargs)
        self._precompile(configs, args, grid, kwargs)
        return [self._launch(self.fn.warmup, c, args, grid, kwargs) for c in configs]

    def _precompile(self, configs: list[Config], args: tuple, grid: Any, kwargs: dict) -> None:
        """Compile ``configs`` side by side on threads, before they are timed or returned one by one
        (``runtime.compile_lock`` lets a compile waiting on another process make way). A config that
        fails is left to that later compile, which reports it; one with a ``pre_hook`` compiles there
        too (its hook may change what the kernel specialises on)."""
        todo = [c for c in configs if c.pre_hook is None]
        workers = min(len(todo), os.cpu_count() or 1, MAX_COMPILE_THREADS)
        if workers < 2:
            return
        with ThreadPoolExecutor(workers) as pool, AsyncCompileMode(pool, ignore_errors=True):
            for config in todo:
                try:
                    self._launch(self.fn.warmup, config, args, grid, kwargs)
                except TritiumError:
                    pass


def _jsonable(t: Any) -> Any:
    return [float(x) for x in t] if isinstance(t, (list, tuple)) else float(t)


_progress_shown = [False]


def _progress(line: str | None) -> None:
    """One updating line on a terminal (stderr only when it is one); None ends it."""
    if not sys.stderr.isatty():
        return
    if line is None:
        if _progress_shown[0]:
            sys.stderr.write("\n")
            _progress_shown[0] = False
    else:
        sys.stderr.write("\r\033[K" + line[:200])
        _progress_shown[0] = True
    sys.stderr.flush()


def autotune(configs: Sequence[Config], key: Sequence[str], prune_configs_by: dict | None = None,
             reset_to_zero: Iterable[str] | None = None, restore_value: Iterable[str] | None = None,
             warmup: float | None = None, rep: float | None = None,
             do_bench: Callable | None = None) -> Callable[[Any], Autotuner]:
    """Decorate a @jit kernel (``@autotune`` goes above ``@jit``) to launch with the fastest of
    ``configs`` per value of the ``key`` arguments. ``do_bench(fn, quantiles=...)`` replaces the
    timer (``tritium.testing.do_bench`` with ``warmup``/``rep`` ms by default)."""
    return user_facing(lambda fn: Autotuner(fn, configs, key, prune_configs_by, reset_to_zero, restore_value, warmup,
                                            rep, do_bench))


class Heuristics(_Decorated):
    """A kernel whose meta-parameters are computed from its arguments at each launch."""

    def __init__(self, fn: Any, values: Mapping[str, Callable[[dict], Any]]):
        super().__init__(fn)
        self.values = dict(values)

    def _computed(self, args: tuple, kwargs: dict) -> dict:
        """``kwargs`` with each heuristic's meta-parameter added (a later heuristic sees the earlier ones)."""
        for name, heur in self.values.items():
            kwargs[name] = heur({**dict(zip(self.arg_names, args)), **kwargs})
        return kwargs

    def run(self, *args, grid: Any, **kwargs) -> Any:
        return self.fn.run(*args, grid=grid, **self._computed(args, kwargs))

    def warmup(self, *args, grid: Any = (1,), **kwargs) -> Any:
        return self.fn.warmup(*args, grid=grid, **self._computed(args, kwargs))


def heuristics(values: Mapping[str, Callable[[dict], Any]]) -> Callable[[Any], Heuristics]:
    """``@heuristics({"BLOCK": lambda args: ...})`` above ``@jit`` (or ``@autotune``): each named
    meta-parameter is computed from the launch's arguments (a dict by name)."""
    return lambda fn: Heuristics(fn, values)
