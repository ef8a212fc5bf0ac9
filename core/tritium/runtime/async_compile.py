"""Compiling in the background (Triton's ``AsyncCompileMode`` and ``FutureKernel``).

Inside ``with AsyncCompileMode(executor):`` a ``kernel.warmup(...)`` that must compile submits the
compilation to ``executor`` (a ``concurrent.futures.Executor``) and returns at once with a
``FutureKernel``; leaving the block waits for every compilation it started and raises the first
error (unless ``ignore_errors``). A launch inside the block compiles as it always does, since it
needs the kernel before it can run.
"""

from __future__ import annotations

from concurrent.futures import Executor, Future, as_completed
from contextvars import ContextVar
from typing import Any, Callable

#: the mode of the current context (None: compile in the caller)
active_mode: ContextVar[AsyncCompileMode | None] = ContextVar("tritium_async_compile_mode", default=None)


class FutureKernel:
    """A kernel being compiled. ``result()`` waits for it and returns the ``CompiledKernel``; its
    attributes (``asm``, ``metadata``, ...) are the compiled kernel's, waited for likewise."""

    def __init__(self, future: Future):
        self.future, self.kernel = future, None

    def result(self, ignore_errors: bool = False) -> Any:
        if self.kernel is None:
            try:
                kernel = self.future.result()
            except Exception:
                if ignore_errors:
                    return None
                raise
            self.kernel = kernel
        return self.kernel

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("future", "kernel"):
            raise AttributeError(name)
        return getattr(self.result(), name)


class AsyncCompileMode:
    """``with AsyncCompileMode(executor, ignore_errors=False):`` compiles warmups on ``executor``."""

    def __init__(self, executor: Executor, *, ignore_errors: bool = False):
        self.executor, self.ignore_errors = executor, ignore_errors
        self.future_kernels: dict[Any, FutureKernel] = {}

    def submit(self, key: Any, compile_fn: Callable[[], Any]) -> FutureKernel:
        """The compilation of ``key`` (one per key and mode), started on the executor if new."""
        found = self.future_kernels.get(key)
        if found is None:
            found = self.future_kernels[key] = FutureKernel(self.executor.submit(compile_fn))
        return found

    def __enter__(self) -> AsyncCompileMode:
        if active_mode.get() is not None:
            raise RuntimeError("another AsyncCompileMode is already active")
        self._token = active_mode.set(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        active_mode.reset(self._token)
        by_future = {k.future: k for k in self.future_kernels.values()}
        for future in as_completed(by_future):
            by_future[future].result(self.ignore_errors or exc_type is not None)
