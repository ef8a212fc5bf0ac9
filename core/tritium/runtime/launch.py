"""The launch path: bind arguments, find (or compile) the specialised kernel, normalise the grid, run.

Kept lean because it runs on every launch: a dictionary lookup on the specialisation key is all
that stands between a warm kernel and its launcher.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any, Iterator, Sequence

import numpy as np

from ..errors import ArgumentError, user_facing
from ..tools.tensor_descriptor import TensorDescriptor
from .args import MockTensor, arg_type, bind, mock_type, specialization
from .async_compile import active_mode
from .binder import Binder, environment_key
from .descriptors import bind as bind_descriptor
from .descriptors import is_descriptor_type
from .host import HostMemory, host_address
from .tuple_args import is_tuple_argument, is_tuple_type, layout_key
from .tuple_args import layout as tuple_layout
from .tuple_args import spell as spell_tuple


@dataclasses.dataclass
class Prepared:
    kernel: Any                 # CompiledKernel
    values: list[Any]           # bound runtime arguments, in signature order
    meta: dict[str, Any]        # every argument by name, for grid callables


def split_arguments(jitfn, args: tuple, kwargs: dict) -> tuple[dict, dict]:
    """Bind ``args``/``kwargs`` to the kernel's parameters; the rest of ``kwargs`` are options."""
    names = jitfn.arg_names
    options = {k: v for k, v in kwargs.items() if k not in names}
    if jitfn.debug is not None and "debug" not in options:
        options["debug"] = jitfn.debug
    call_kwargs = {k: v for k, v in kwargs.items() if k in names}
    bound = _fast_bind(jitfn, args, call_kwargs)
    if bound is None:
        bound = _slow_bind(jitfn, args, call_kwargs)
    bad = [n for n, v in bound.items() if n in jitfn.constexprs and not _hashable(v)]
    bad += [n for n, v in options.items() if not _hashable(v)]
    if bad:
        raise ArgumentError(f"kernel '{jitfn.__name__}': {', '.join(bad)} must be a constant such as an int, "
                            "float, bool, str or dtype (constexprs are compile-time values), not an array")
    return bound, options


def _fast_bind(jitfn, args: tuple, kwargs: dict) -> dict | None:
    """The common case without ``inspect``: positional args, then keywords and defaults."""
    names = jitfn.arg_names
    if not jitfn.plain_params or len(args) > len(names):
        return None
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in bound:
            return None  # given twice: let bind() word the error
        bound[k] = v
    if len(bound) < len(names):
        for n in names:
            if n not in bound:
                if n not in jitfn.defaults:
                    return None
                bound[n] = jitfn.defaults[n]
    return {n: bound[n] for n in names}


def _slow_bind(jitfn, args: tuple, call_kwargs: dict) -> dict:
    try:
        bound = jitfn.signature.bind(*args, **call_kwargs)
    except TypeError as e:
        missing = [n for n in jitfn.arg_names if n not in call_kwargs][len(args):]
        hint = ""
        if missing and all(n in jitfn.constexprs for n in missing):
            hint = f"; pass constexpr {', '.join(missing)} as keyword(s): {jitfn.__name__}[grid](..., " + \
                   ", ".join(f"{n}=..." for n in missing) + ")"
        raise ArgumentError(f"kernel '{jitfn.__name__}': {e}{hint}") from None
    bound.apply_defaults()
    return dict(bound.arguments)


def bind_arguments(target, jitfn, bound: dict[str, Any], binder=bind,
                   warmup: bool = False) -> Iterator[tuple[str, str | None, Any]]:
    """Each bound argument as ``(name, signature type, value bound by the target)``; constexprs
    (and None) come as ``(name, None, constant value)``. ``binder`` has ``bind``'s signature.
    ``warmup`` (compiling only): a ``MockTensor`` binds to its address, 0."""
    from ..language.core import constexpr

    for name, v in bound.items():
        if name in jitfn.constexprs or v is None:
            yield name, None, (v.value if isinstance(v, constexpr) else v)
        elif warmup and isinstance(v, MockTensor):
            yield name, mock_type(v, name, jitfn.__name__), v.data_ptr()
        elif is_tuple_argument(v):
            yield _bind_tuple(target, jitfn, name, v, binder, warmup)
        else:
            t = jitfn.annotated.get(name) or arg_type(v, name, jitfn.__name__)
            yield name, t, binder(target, v, t, name, jitfn.__name__)


def _bind_tuple(target, jitfn, name: str, value: tuple, binder, warmup: bool) -> tuple[str, str, tuple]:
    """A tuple argument as ``(name, signature type, (Layout, its runtime leaves bound))``."""
    kernel = jitfn.__name__

    def leaf(v: Any, path: str) -> tuple[str, Any, str]:
        if warmup and isinstance(v, MockTensor):
            t, b = mock_type(v, path, kernel), v.data_ptr()
        else:
            t = arg_type(v, path, kernel)
            b = binder(target, v, t, path, kernel)
        return t, b, specialization(t, b)

    lay, bound = tuple_layout(value, name, kernel, leaf, specialize=name not in jitfn.do_not_specialize)
    return name, spell_tuple(lay), (lay, tuple(bound))


def prepare(target, jitfn, args: tuple, kwargs: dict, binder=bind, warmup: bool = False) -> Prepared:
    """Bind the arguments (through ``binder``, ``bind``'s signature) and find or compile the
    specialisation they select. ``warmup`` (compiling without launching): ``MockTensor``s bind,
    and inside an ``AsyncCompileMode`` the kernel is a ``FutureKernel`` compiling in the background."""
    from .compiler import COMPILE_LOCK, compile_specialized

    bound, options = split_arguments(jitfn, args, kwargs)
    types, specs, values, constants = [], [], [], []
    for name, t, v in bind_arguments(target, jitfn, bound, binder, warmup):
        if t is None:
            constants.append((name, v))
            continue
        types.append(t)
        if is_tuple_type(t):  # its leaves' specialisations are in its layout, a constant of the key
            lay, v = v
            constants.append((layout_key(name), lay))
            specs.append("")
        else:
            specs.append("" if name in jitfn.do_not_specialize else specialization(t, v, name in jitfn.annotated))
        values.append(v)
    key = (target.name, tuple(types), tuple(specs), tuple(constants), tuple(sorted(options.items())),
           *environment_key(target))
    kernel = jitfn.kernels.get(key)
    if kernel is None:
        names = [n for n in bound if n not in dict(constants)]  # (a tuple's layout is under another name)

        def compile_once() -> Any:
            with COMPILE_LOCK:  # a kernel launched from several threads compiles once
                found = jitfn.kernels.get(key)
                if found is None:
                    found = jitfn.kernels[key] = compile_specialized(
                        jitfn, target, dict(zip(names, types)), dict(constants), dict(zip(names, specs)), options)
                return found

        mode = active_mode.get() if warmup else None
        if mode is not None:
            return Prepared(mode.submit((jitfn, key), compile_once), values, bound)
        kernel = compile_once()
    if jitfn.used_globals:
        jitfn.check_globals()
    kernel.check_writable(bound)
    return Prepared(kernel, values, bound)


def _bind_host_arrays(target, value: Any, arg_type: str, name: str, kernel: str) -> Any:
    """Pointers as the address of a host array standing in for device memory; scalars as the
    target binds them (the target's driver is never asked)."""
    if is_descriptor_type(arg_type):
        return bind_descriptor(lambda v, t, n: _bind_host_arrays(target, v, t, n, kernel), value, arg_type, name,
                               kernel)
    if arg_type.startswith("*"):
        try:
            return host_address(value, name, target.name)
        except ArgumentError:
            raise ArgumentError(f"kernel '{kernel}': compiling without launching takes host arrays (e.g. numpy) "
                                f"standing in for device memory; argument '{name}' ({type(value).__name__}) is "
                                "not one") from None
    return bind(target, value, arg_type, name, kernel)


def compile_for_arguments(target, jitfn, args: tuple, kwargs: dict) -> Any:
    """Compile ``jitfn`` for ``target`` as a launch with these arguments would, without launching and
    without the target's driver: a GPU kernel compiles on a machine with no GPU.

    Host arrays stand in for device memory: their dtypes give the signature and their addresses the
    pointer specialisation (divisible by 16 or not), so pass arrays aligned as the target's allocator
    aligns its memory. Scalars and constexprs specialise as in a launch. Returns the ``CompiledKernel``
    (the one a launch with the same specialisation then finds in the kernel's table).
    """
    return prepare(target, jitfn, args, kwargs, _bind_host_arrays).kernel


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def normalize_grid(grid: Any, meta: dict | None, kernel_name: str) -> tuple[int, int, int]:
    if type(grid) is tuple and 0 < len(grid) <= 3 and all(type(g) is int and 0 <= g < 2**31 for g in grid):
        return grid + (1,) * (3 - len(grid))  # the common case, checked without operator.index
    if callable(grid):
        grid = grid(meta)
    if isinstance(grid, int):
        grid = (grid,)
    try:
        dims = tuple(operator.index(g) for g in grid)
    except TypeError:
        raise ArgumentError(f"kernel '{kernel_name}': the grid must be a tuple of 1 to 3 ints or a "
                            f"callable returning one, got {grid!r}") from None
    if not 1 <= len(dims) <= 3 or any(not 0 <= d < 2**31 for d in dims):
        raise ArgumentError(f"kernel '{kernel_name}': the grid must have 1 to 3 extents in [0, 2**31), got {dims}")
    return dims + (1,) * (3 - len(dims))


def check_grid(target, dims: tuple[int, int, int], kernel_name: str) -> None:
    """Refuse a grid past ``target``'s limits (``Target.max_grid`` and ``max_programs``): one check
    for every target, so that the interpreter refuses what a compiled target refuses."""
    if any(d > most for d, most in zip(dims, target.max_grid)):
        raise ArgumentError(f"kernel '{kernel_name}': grid {dims} exceeds the {target.name} target's limit of "
                            f"{target.max_grid} programs along axes 0, 1 and 2")
    total = dims[0] * dims[1] * dims[2]
    if target.max_programs is not None and total > target.max_programs:
        raise ArgumentError(f"kernel '{kernel_name}': grid {dims} has {total} programs; the {target.name} target "
                            f"runs at most {target.max_programs} programs in one launch: give each program more "
                            f"work (a larger BLOCK) or launch several times")


def launch_dims(kernel, grid: Any, params: tuple) -> tuple[int, int, int] | None:
    """The generated launch path's grid other than ``(n,)``: the 3-D extents, or None for an empty
    grid; ``params`` are the kernel's arguments in parameter order (a grid callable gets them by name)."""
    dims = normalize_grid(grid, dict(zip(kernel.params, params)) if callable(grid) else None, kernel.name)
    check_grid(kernel.target, dims, kernel.name)
    return dims if dims[0] * dims[1] * dims[2] else None


def run_on_grid(kernel, grid: Any, values: Sequence[Any], meta: dict[str, Any] | None) -> None:
    """Launch a compiled kernel with bound ``values`` (an empty grid launches nothing); ``meta``
    (every argument by name) is what a grid callable gets."""
    dims = normalize_grid(grid, meta, kernel.name)
    check_grid(kernel.target, dims, kernel.name)
    if dims[0] * dims[1] * dims[2]:
        kernel.launcher(dims, values)


def binder_of(target, jitfn) -> Binder:
    """The kernel's generated launch functions for ``target`` (made on its first launch there)."""
    binder = jitfn.binders.get(target)
    if binder is None:
        binder = jitfn.binders[target] = Binder(jitfn, target, lambda grid, args, kwargs:
                                                general_launch(target, jitfn, grid, args, kwargs))
    return binder


def launch(target, jitfn, grid: Any, args: tuple, kwargs: dict) -> Any:
    """Compile (or fetch) the specialisation for these arguments and run it on ``grid``: through the
    kernel's generated launch function (``binder.Binder``) where there is one."""
    binder = binder_of(target, jitfn)
    if binder.usable:
        try:
            return binder.launch(grid, *args, **kwargs)
        except TypeError as e:  # arguments that do not bind to the generated signature (a missing
            if e.__traceback__.tb_next is not None:  # constexpr): the general path names the parameter
                raise  # raised inside the launch, not by the call
    return general_launch(target, jitfn, grid, args, kwargs)


@user_facing
def general_launch(target, jitfn, grid: Any, args: tuple, kwargs: dict) -> Any:
    """The launch path for first launches and everything the generated one gives up on: it words
    the errors, compiles, and tells the generated path which kernel its key selects (kept in
    ``jitfn.kernels``: clearing it forgets that too)."""
    binder = binder_of(target, jitfn)
    key = None
    if binder.usable:
        try:
            key, _ = binder.bind(*args, **kwargs)
        except Exception:  # an argument the generated path cannot take: this one stays general
            pass
    # after binder.bind: a target may keep what its last bind_arg calls saw for the launch
    p = prepare(target, jitfn, args, kwargs)
    if key is not None:
        if isinstance(target.driver, HostMemory):  # only host arrays can be read-only (numpy's flags)
            p.kernel.written_params = [jitfn.arg_names.index(n) for n in p.kernel.written_args]  # (no tuples here)
        p.kernel.launcher  # loaded: the generated path reads it without the property
        jitfn.kernels[binder, key] = p.kernel
    run_on_grid(p.kernel, grid, p.values, p.meta)
    return p.kernel


_HAS_FLAGS: dict[type, bool] = {}


def check_writable(kernel, jitfn, params: tuple) -> None:
    """``kernel.check_writable`` when a written argument is of a class with numpy's ``flags`` (or a
    tensor descriptor, whose base may be such)."""
    for i in kernel.written_params:
        value = params[i]
        cls = type(value)
        if cls is np.ndarray:  # the common case, without building the arguments' dictionary
            if value.flags.writeable:
                continue
            has = True
        else:
            has = _HAS_FLAGS.get(cls)
            if has is None:
                has = _HAS_FLAGS[cls] = hasattr(cls, "flags") or cls is TensorDescriptor  # (its base may have them)
        if has:
            kernel.check_writable(dict(zip(jitfn.arg_names, params)))
            return


def run_kernel(target, jitfn, grid: Any, args: tuple, kwargs: dict) -> Any:
    """``jitfn[grid](*args, **kwargs)`` on ``target``: compiled and launched, or handed to a target
    that runs kernels without compiling them (``Target.execute``)."""
    if target.compiles:
        return launch(target, jitfn, grid, args, kwargs)
    return target.execute(jitfn, grid, args, kwargs)
