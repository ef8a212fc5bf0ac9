"""``TRITIUM_TARGET=interpreter``: kernels run as plain Python on numpy, one program at a time.

Nothing is compiled, so ``print`` and ``breakpoint()`` work inside kernels; the results define the
language's reference semantics for tests.
"""

from __future__ import annotations

import itertools
import linecache
from typing import Any

import numpy as np

from ..errors import ArgumentError, CompilationError, TritiumError
from ..language import core as tlc
from ..language import dtypes as T
from ..language import semantic
from ..runtime.host import HostMemory, host_address
from ..runtime.jit import JIT_CODE
from ..runtime.launch import bind_arguments, normalize_grid, split_arguments
from ..target import Driver, LaunchOptions, Target
from .numpy_builder import NumpyBuilder, np_dtype


class InterpreterTarget(Target):
    name = "interpreter"
    priority = -100  # never chosen automatically
    binary_stage = ""

    def __init__(self):
        self._driver = HostMemory()
        self._checked: set = set()  # kernels whose source passed the compiler's construct check

    def version(self) -> str:
        return "numpy-" + np.__version__

    def parse_options(self, options: dict[str, Any]) -> LaunchOptions:
        return LaunchOptions.parse(options, self.name)  # checked so typos show; no meaning here

    def add_stages(self, stages, options) -> None:
        raise TritiumError("the interpreter runs kernels as Python and does not compile them; "
                           "choose a compiling target (e.g. TRITIUM_TARGET=cpu) to see IR")

    @property
    def driver(self) -> Driver:
        return self._driver

    def bind_arg(self, value: Any, arg_type: str, arg_name: str) -> Any:
        t = T.from_signature(arg_type)
        if t.is_ptr():
            return tlc.tensor(np.uint64(host_address(value, arg_name, self.name)), t, ())
        return tlc.tensor(np.array(value).astype(np_dtype(t)), t, ())

    def execute(self, kernel, grid, args: tuple, kwargs: dict) -> None:
        if kernel not in self._checked:
            from ..frontend.ast_to_tile import check_supported  # imports MLIR: only when interpreting

            check_supported(kernel)
            self._checked.add(kernel)
        bound, options = split_arguments(kernel, args, kwargs)
        try:
            self.parse_options(options)
        except TritiumError as e:
            raise ArgumentError(f"kernel '{kernel.__name__}': {e}") from None
        call = {name: value for name, _, value in bind_arguments(self, kernel, bound)}
        dims = normalize_grid(grid, bound, kernel.__name__)
        for z, y, x in itertools.product(range(dims[2]), range(dims[1]), range(dims[0])):
            with semantic.using(NumpyBuilder((x, y, z), dims)):
                try:
                    kernel.fn(**call)
                except TritiumError as e:
                    raise _located(kernel, e) from None
                except Exception as e:  # the user's own mistake: keep its traceback as the cause
                    raise _located(kernel, e) from e


def _located(kernel, e: Exception) -> CompilationError:
    """The error, pointing at the innermost line of a @jit function (the kernel or a helper) that
    raised it."""
    filename, lineno = kernel.filename, None
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code in JIT_CODE:
            filename, lineno = tb.tb_frame.f_code.co_filename, tb.tb_lineno
        tb = tb.tb_next
    line = linecache.getline(filename, lineno) if lineno else ""
    message = str(e) if isinstance(e, TritiumError) else f"{type(e).__name__}: {e}"
    return CompilationError(kernel.__name__, message, filename=filename, lineno=lineno, source_line=line.strip())
