"""``TRITIUM_TARGET=interpreter``: kernels run as plain Python on numpy, one program at a time.

Kernels run as Python (``rewrite``), so ``breakpoint()`` works inside them (``print`` is
``tl.device_print``, as when compiled); the results define the language's reference semantics for
tests. Each specialisation first goes through the compiler's frontend, so the interpreter refuses
what the compiler refuses, with the same message; every load and store is checked against the
memory of the argument its pointer derives from.
"""

from __future__ import annotations

import dataclasses
import itertools
import linecache
import platform
import weakref
from typing import Any

import numpy as np

from ..errors import (ArgumentError, CompilationError, CompileTimeAssertionFailure, KernelRuntimeError, LocatedError,
                      OutOfBoundsError, TritiumError, option_error)
from ..language import core as tlc
from ..language import dtypes as T
from ..language import semantic
from ..language.semantic import StaticAssertionFailed
from ..language.tensor_descriptor import host_tensor_descriptor
from ..runtime.args import bind_scalar, specialization
from ..runtime.host import HostMemory, host_address
from ..runtime.jit import JIT_CODE
from ..runtime.compiler import COMPILE_LOCK, CompiledKernel, parameter_placeholder
from ..runtime.descriptors import is_descriptor_type
from ..runtime.tuple_args import flat_signature, is_tuple_type, layout_key
from ..runtime.tuple_args import parameter as tuple_parameter
from ..runtime.descriptors import parse as parse_descriptor
from ..runtime.launch import bind_arguments, check_grid, normalize_grid, split_arguments
from ..target import Driver, GPUTarget, KernelSignature, LaunchOptions, Target
from .memory import AccessError, Pointers, region_of

# The interpreter's machinery (``numpy_builder``, ``rewrite``) loads when it first
# runs a kernel: plugin discovery imports this module on every first launch, on every target.


class InterpreterTarget(Target):
    name = "interpreter"
    priority = -100  # never chosen automatically
    binary_stage = ""

    def __init__(self):
        self._driver = HostMemory()
        #: kernel -> specialisation -> what the compiler's frontend said about it
        self._checked: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def version(self) -> str:
        return "numpy-" + np.__version__

    def current_target(self) -> GPUTarget:
        """The host, as the cpu target describes it (programs run one at a time, each a warp of one
        thread), with the machine's architecture as the arch: kernels are not compiled for a CPU."""
        return GPUTarget("cpu", platform.machine(), 1)

    def device_properties(self, device: int) -> dict[str, int]:
        """The host as the interpreter runs on it: one program at a time (one multiprocessor of one
        thread, ``warpSize`` 1), its blocks in host memory (``max_shared_mem``: no on-chip limit below
        a GiB); no clocks to report."""
        return {"multiprocessor_count": 1, "max_shared_mem": 2**30, "max_num_regs": 1024, "warpSize": 1,
                "max_threads_per_sm": 1, "sm_clock_rate": 0, "mem_clock_rate": 0, "mem_bus_width": 0}

    def parse_options(self, options: dict[str, Any]) -> LaunchOptions:
        return LaunchOptions.parse(options, self.name)  # checked so typos show; no meaning here

    def add_stages(self, stages, options) -> None:
        raise TritiumError("the interpreter runs kernels as Python and does not compile them; "
                           "choose a compiling target (e.g. TRITIUM_TARGET=cpu) to see IR")

    @property
    def driver(self) -> Driver:
        return self._driver

    def bind_arg(self, value: Any, arg_type: str, arg_name: str) -> Any:
        from .numpy_builder import np_dtype

        t = T.from_signature(arg_type)
        if t.is_ptr():
            address = host_address(value, arg_name, self.name)
            return tlc.tensor(Pointers.of(np.uint64(address), region_of(value, arg_name, address)), t, ())
        value = bind_scalar(value, arg_type, arg_name, self.name)  # a number of the type's kind and range
        return tlc.tensor(np.array(value).astype(np_dtype(t)), t, ())

    def execute(self, kernel, grid, args: tuple, kwargs: dict) -> None:
        from .numpy_builder import NumpyBuilder
        from .rewrite import Program

        bound, options = split_arguments(kernel, args, kwargs)
        try:
            opts = self.parse_options(options)
        except TritiumError as e:
            raise option_error(kernel.__name__, e) from None
        call, types, constants, regions, descriptors = {}, {}, {}, [], {}
        for name, t, value in bind_arguments(self, kernel, bound):
            call[name] = tlc.as_const(value) if name in kernel.const_params else value
            if t is None:
                constants[name] = value
                continue
            if _specialized_one(kernel, name, t, bound[name]):  # a constant, as compiled targets make it
                constants[name], call[name] = 1, tlc.constexpr(1)
                continue
            types[name] = t
            leaves = [value]
            if is_descriptor_type(t):  # its parts: a descriptor made per program, with its builder
                _, block, padding = parse_descriptor(t)
                descriptors[name] = (value, block, padding)
                leaves = [value[0]]
            elif is_tuple_type(t):  # the tuple rebuilt around its bound leaves
                layout, leaves = value
                constants[layout_key(name)] = layout
                call[name] = _tuple_argument(kernel, name, layout, leaves)
            for leaf in leaves:
                if isinstance(leaf.handle, Pointers):
                    regions.extend(leaf.handle.regions)
        key = (kernel.cache_key, tuple(types.items()), tuple(sorted((k, repr(v)) for k, v in constants.items())),
               opts.debug)
        kernel.check_globals()  # a constexpr global changed since the check: refused, as when compiled
        known = self._checked.setdefault(kernel, {})
        checked = known.get(key)
        if checked is None:
            checked = known[key] = _frontend_check(kernel, types, constants, self, opts)
        CompiledKernel.check_writable(checked, bound)
        dims = normalize_grid(grid, bound, kernel.__name__)
        check_grid(self, dims, kernel.__name__)
        program = Program()
        fn = program.function(kernel)
        static_printed: set = set()
        regions = tuple(regions)
        for z, y, x in itertools.product(range(dims[2]), range(dims[1]), range(dims[0])):
            builder = NumpyBuilder((x, y, z), dims, regions, program, opts.debug, kernel.__name__, static_printed,
                                   num_warps=opts.num_warps)
            with semantic.using(builder):
                try:
                    for name, (parts, block, padding) in descriptors.items():
                        call[name] = host_tensor_descriptor.from_parts(parts, block, padding)
                    fn(**call)
                except KernelRuntimeError:
                    raise  # located where it happened
                except StaticAssertionFailed as e:
                    raise _located(kernel, e, CompileTimeAssertionFailure) from None
                except TritiumError as e:
                    raise _located(kernel, e) from None
                except AccessError as e:
                    raise _located(kernel, e, OutOfBoundsError) from None
                except Exception as e:  # the user's own mistake: keep its traceback as the cause
                    raise _located(kernel, e) from e


def _specialized_one(kernel, name: str, arg_type: str, raw: Any) -> bool:
    """Whether argument ``name`` is an integer equal to 1 that compiled targets specialise to the
    constant 1 (``args.specialization``): the interpreter runs the same kernel, so a descriptor's
    last stride, say, is the constant 1 here too."""
    if isinstance(raw, bool) or not isinstance(raw, (int, np.integer)) or name in kernel.do_not_specialize:
        return False
    return specialization(arg_type, int(raw), name in kernel.annotated) == "1"


def _tuple_argument(kernel, name: str, layout, leaves: list) -> tuple:
    """Tuple argument ``name`` with its runtime leaves bound (``tuple_args.parameter``)."""
    bound = iter(leaves)

    def leaf(arg_type: str, spec: str) -> Any:
        if is_descriptor_type(arg_type):
            raise ArgumentError(f"kernel '{kernel.__name__}': argument '{name}' holds a tensor descriptor; the "
                                "interpreter takes descriptors as arguments of their own, not inside tuples")
        return next(bound)

    return tuple_parameter(layout, leaf)


@dataclasses.dataclass
class _Checked:
    """What the compiler's frontend says about one specialisation: the arguments stored through
    (read by ``CompiledKernel.check_writable``, so read-only arrays are refused alike)."""

    name: str
    written_args: tuple[str, ...]


def _frontend_check(kernel, types: dict[str, str], constants: dict[str, Any], target, opts) -> _Checked:
    """Run the compiler's frontend (and its neutral passes) on this specialisation, so the
    interpreter refuses exactly what the compiler refuses, with the same located message."""
    from ..frontend.ast_to_tile import generate_module  # imports MLIR: only when interpreting
    from ..ir import tile
    from ..ir.mlir import ir
    from ..passes.neutral import optimize
    from ..passes.pipeline import CompileContext

    values = [constants.get(n) if n not in types else tuple_parameter(constants[layout_key(n)], parameter_placeholder)
              if is_tuple_type(types[n]) else parameter_placeholder(types[n]) for n in kernel.arg_names]
    signature = KernelSignature(kernel.__name__, *flat_signature(tuple(types), tuple(types.values()), constants))
    ctx = CompileContext(signature, target, opts)
    with COMPILE_LOCK, tile.context(), ir.Location.unknown():
        module = generate_module(kernel, values, [], {}, debug=opts.debug, interpreting=True, num_warps=opts.num_warps)
        optimize(module, ctx)
    stored = ctx.metadata.get("stored_args")
    pointers = [n for n, t in zip(signature.arg_names, signature.arg_types) if t.startswith("*")]
    written = pointers if stored is None else [signature.arg_names[i] for i in stored]
    return _Checked(kernel.__name__, tuple(written))


def _located(kernel, e: Exception, kind: type[LocatedError] = CompilationError) -> LocatedError:
    """The error, pointing at the innermost line of a @jit function (the kernel or a helper) that
    raised it."""
    filename, lineno = kernel.filename, None
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code in JIT_CODE:
            filename, lineno = tb.tb_frame.f_code.co_filename, tb.tb_lineno
        tb = tb.tb_next
    line = linecache.getline(filename, lineno) if lineno else ""
    message = str(e) if isinstance(e, (TritiumError, AccessError)) else f"{type(e).__name__}: {e}"
    return kind(kernel.__name__, message, filename=filename, lineno=lineno, source_line=line.strip())
