"""``@tritium.jit``: the kernel object users launch with ``kernel[grid](*args, **meta)``."""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import textwrap
import types
from typing import Any, Callable

from ..errors import TritiumError, user_facing
from ..language import dtypes as _dtypes
from .args import annotation_type
from .reinterpret import TensorWrapper, reinterpret  # noqa: F401  (where Triton's code imports them from)
from .launch import run_kernel

#: Triton's name of every element type name -> its signature name (``"float32"`` -> ``"fp32"``)
type_canonicalisation_dict = _dtypes.canonical_names()


def _is_constexpr_annotation(ann: Any) -> bool:
    from ..language.core import constexpr

    return ann is constexpr or (isinstance(ann, str) and ann.split(".")[-1] == "constexpr")


def _is_const_annotation(ann: Any) -> bool:
    from ..language.core import const

    return ann is const or (isinstance(ann, str) and ann.split(".")[-1] == "const")


def allowed_global(value: Any) -> bool:
    """Triton's rule for the globals a kernel reads: constexprs, @jit functions, modules, namedtuple
    classes and the objects of ``tritium.language`` (functions, dtypes). Anything else could change
    after the kernel is compiled without the compiled kernel knowing."""
    return (isinstance(value, (JITFunction, types.ModuleType)) or is_constexpr_function(value)
            or (isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields"))
            or (getattr(value, "__module__", None) or "").startswith("tritium.language"))


def is_constexpr_function(value: Any) -> bool:
    """Whether ``value`` is a ``tritium.constexpr_function``."""
    return getattr(value, "__tritium_constexpr_function__", False) is True


def global_rule_message(name: str, value: Any, captured: bool = False) -> str:
    """Why a kernel may not read ``name``: a global, or (``captured``) a variable of an enclosing
    function, which follows the same rule."""
    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    what = "variable captured from an enclosing function" if captured else "global variable"
    return (f"Cannot access {what} '{name}' (= {shown}) in a kernel: kernels read only globals and captured "
            f"variables that are tl.constexpr, dtypes, @jit functions or modules, so that a compiled kernel "
            f"never goes stale; declare it as '{name} = tl.constexpr({shown})' or pass it as a tl.constexpr "
            f"parameter")


_MISSING = object()


class _ClosureCells:
    """The cells of a function's closure read like a globals dict (``get``), so a captured value is
    checked on every launch exactly as a global is: a cell rebound by ``nonlocal`` is seen."""

    def __init__(self, fn: Callable):
        self.cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))

    def get(self, name: str, default: Any = None) -> Any:
        cell = self.cells.get(name)
        try:
            return default if cell is None else cell.cell_contents
        except ValueError:  # an empty cell: the variable is not bound (yet, or any more)
            return default


def _source(fn: Callable) -> str:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):  # defined where its source cannot be read: its qualified name
        return f"{fn.__module__}.{fn.__qualname__}"


def _selected_target() -> Any:
    """The target launches use (``TRITIUM_TARGET``); plugin discovery loads on the first launch,
    not at ``import tritium``. The first call puts ``plugins.selected_target`` in its place, so
    later launches call it directly."""
    global _selected_target
    from .. import plugins

    _selected_target = plugins.selected_target
    return plugins.selected_target()

#: the code objects of every @jit function: the interpreter finds kernel frames in tracebacks by them
JIT_CODE: set = set()


class KernelInterface:
    """What launches as ``kernel[grid](*args)`` (Triton's name for it): ``run(*args, grid=...)``
    launches, ``warmup(*args, grid=...)`` compiles without launching, and ``kernel[grid]`` is
    ``run`` on ``grid``. @jit functions, autotuners and heuristics are kernel interfaces."""

    def run(self, *args, grid, **kwargs) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define run()")

    def warmup(self, *args, grid=(1,), **kwargs) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define warmup()")

    def __getitem__(self, grid) -> Callable[..., Any]:
        return functools.partial(self.run, grid=grid)


class JITFunction(KernelInterface):
    """A Python function compiled for the selected target on first launch for each specialisation."""

    def __init__(self, fn: Callable, do_not_specialize: tuple[str, ...] = (), debug: bool | None = None,
                 repr: Callable[[Any], str] | None = None):  # noqa: A002 - Triton's keyword
        if not inspect.isfunction(fn):
            raise TritiumError(f"@tritium.jit decorates Python functions, got {fn!r}")
        self.fn = fn
        JIT_CODE.add(fn.__code__)
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        params = self.signature.parameters.values()
        #: plain positional-or-keyword parameters let launches skip inspect's slow bind()
        self.plain_params = all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
        self.defaults = {p.name: p.default for p in params if p.default is not p.empty}
        self.constexprs = {n for n, p in self.signature.parameters.items()
                           if _is_constexpr_annotation(p.annotation)}
        #: parameters annotated ``tl.const``: pointers to constant data, which refuse writes
        self.const_params = {n for n, p in self.signature.parameters.items() if _is_const_annotation(p.annotation)}
        #: parameter -> the signature type its annotation fixes (``val: tl.float16``, ``n: "i64"``)
        self.annotated = {n: t for n, p in self.signature.parameters.items()
                          if n not in self.constexprs and (t := annotation_type(p.annotation)) is not None}
        self.do_not_specialize = set(do_not_specialize)
        #: Triton's ``repr``: names each compiled specialisation (``kernel_repr(specialization)``)
        self.repr = repr
        #: ``@jit(debug=True)``: the default of the ``debug`` launch option for this kernel
        self.debug = debug
        try:
            lines, self.first_line = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            raise TritiumError(f"@jit function '{fn.__name__}': its source code cannot be read; define "
                               "kernels in a Python file (not in exec'd strings or an interactive shell)") from None
        self.filename = inspect.getsourcefile(fn) or "<unknown>"
        self.src = textwrap.dedent("".join(lines))
        self.ast = ast.parse(self.src)
        self.ast.body[0].decorator_list = []
        #: (target name, specialisation key) -> CompiledKernel, and (binder, binder key) -> the same
        #: kernel for the launch fast path (``runtime.binder``)
        self.kernels: dict[Any, Any] = {}
        self.binders: dict[Any, Any] = {}  # target -> its launch fast path (runtime.binder.Binder)
        self._last_launch: tuple | None = None  # (grid, target, ``self[grid]``) of the last grid
        self._cache_key: str | None = None
        #: (globals dict or closure cells, name, value) of every constexpr, dtype and @jit function
        #: this function and its callees read from a global or a closure, recorded with the cache
        #: key and checked on every launch
        self.used_globals: tuple[tuple[Any, str, Any], ...] = ()
        self._cells = _ClosureCells(fn)

    def _unsafe_update_src(self, new_src: str) -> None:
        """Triton's: compile from ``new_src`` from now on (Triton's tests fill in a template kernel
        this way). Its name and parameters must stay; what was compiled from the old source is
        dropped."""
        tree = ast.parse(textwrap.dedent(new_src))
        if not tree.body or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].name != self.__name__:
            raise TritiumError(f"@jit function '{self.__name__}': the new source must define '{self.__name__}'")
        tree.body[0].decorator_list = []
        self.src, self.ast = textwrap.dedent(new_src), tree
        self.kernels.clear()
        self.binders.clear()
        self._last_launch, self._cache_key = None, None

    def closure_vars(self) -> dict[str, Any]:
        return dict(inspect.getclosurevars(self.fn).nonlocals)

    @property
    def cache_key(self) -> str:
        """A hash of the sources of this function and of every @jit function it reaches, and of
        the constexprs and dtypes they read from globals or closures (cycles included: recursion
        is reported by the frontend)."""
        if self._cache_key is None:
            from ..language.core import constexpr

            h = hashlib.sha256()
            seen: list[JITFunction] = []
            used: list[tuple[Any, str, Any]] = []
            todo = [self]
            while todo:
                fn = todo.pop()
                if fn in seen:
                    continue
                seen.append(fn)
                h.update(fn.src.encode())
                for name, scope, value in fn._globals_used():
                    used.append((scope, name.rsplit(".", 1)[-1], value))
                    if isinstance(value, JITFunction):
                        todo.append(value)
                        h.update(f"{name}=@jit {value.__module__}.{value.__name__}".encode())
                    elif is_constexpr_function(value):  # its source: editing it recompiles
                        h.update(f"{name}=constexpr_function {_source(value.__wrapped__)}".encode())
                    elif isinstance(value, constexpr):
                        h.update(f"{name}={value.value!r}".encode())
                    else:  # a dtype
                        h.update(f"{name}=dtype {value!r} const={value.is_const()}".encode())
            self.used_globals = tuple(used)
            self._cache_key = h.hexdigest()
        return self._cache_key

    def _globals_used(self) -> list[tuple[str, Any, Any]]:
        """The @jit functions, constexprs and dtypes this function's names (``SCALE``, a captured
        ``dt``) and module attributes (``helpers.twice``) refer to, sorted, each with where to look
        it up again (the globals dict, or the closure's cells)."""
        from ..language.core import constexpr
        from ..language.dtypes import dtype

        nonlocals = self.closure_vars()
        # Python's rule: a name bound anywhere in the function (a parameter, an assignment, a loop
        # variable) is local everywhere in it, so it never reads the global of the same name
        local = set(self.arg_names) | {n.id for n in ast.walk(self.ast)
                                       if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        out: dict[str, tuple[str, dict | None, Any]] = {}
        for node in ast.walk(self.ast):
            path: list[str] = []
            while isinstance(node, ast.Attribute):
                path.insert(0, node.attr)
                node = node.value
            if not isinstance(node, ast.Name) or node.id in local:
                continue
            if node.id in nonlocals:
                scope, value = self._cells, nonlocals[node.id]
            else:
                scope = self.fn.__globals__
                value = scope.get(node.id, _MISSING)
            name = node.id
            for attr in path:
                if not isinstance(value, types.ModuleType):
                    break
                scope, value, name = vars(value), getattr(value, attr, _MISSING), f"{name}.{attr}"
            # a dtype counts where a variable names it (``DT``, a captured ``dt``): a module's own
            # (``tl.float32``) is the language's, and checking it on every launch would only cost
            bound_dtype = isinstance(value, dtype) and "." not in name
            if isinstance(value, (JITFunction, constexpr)) or bound_dtype or is_constexpr_function(value):
                out[name] = (name, scope, value)
        return [out[k] for k in sorted(out)]

    def check_globals(self) -> None:
        """Raise if a global this kernel was compiled with has been reassigned since (Triton does
        the same): the compiled kernel holds the old value."""
        for scope, name, value in self.used_globals:
            now = scope.get(name, _MISSING)
            if now is not value:
                self._global_changed(scope, name, value, now)

    def _global_changed(self, scope: Any, name: str, old: Any, now: Any) -> None:
        from ..language.core import constexpr
        from ..language.dtypes import dtype

        same_constant = isinstance(now, constexpr) and isinstance(old, constexpr) \
            and type(now.value) is type(old.value) and now.value == old.value
        same_dtype = isinstance(now, dtype) and isinstance(old, dtype) and now == old \
            and now.is_const() == old.is_const()
        if same_constant or same_dtype:  # rebound to an equal value (e.g. a module reloaded)
            self.used_globals = tuple((s, n, now if (s is scope and n == name) else v)
                                      for s, n, v in self.used_globals)
            return
        def shown(v: Any) -> str:
            return "(deleted)" if v is _MISSING else repr(v.value if isinstance(v, constexpr) else v)

        what = "captured variable" if isinstance(scope, _ClosureCells) else "global variable"
        raise TritiumError(
            f"kernel '{self.__name__}': {what} '{name}' has changed since the kernel was compiled, "
            f"from {shown(old)} to {shown(now)}; a compiled kernel keeps the value it was compiled with, so "
            f"do not reassign {what}s that kernels read: pass the value as a tl.constexpr parameter instead")

    def __getitem__(self, grid) -> Callable[..., Any]:
        """``kernel[grid]``: the launch function for ``grid`` on the selected target, its generated
        fast path where the target compiles (``runtime.binder``)."""
        try:
            target = _selected_target()
        except TritiumError:  # the launch itself reports it
            return functools.partial(self.run, grid=grid)
        last = self._last_launch  # a loop launches on one grid object: one partial for all of it
        if last is not None and last[0] is grid and last[1] is target:
            return last[2]
        fast = None
        if target.compiles:
            from .launch import binder_of

            binder = binder_of(target, self)
            fast = binder.on_grid(grid) if binder.usable else None
        fn = fast or functools.partial(self.run, grid=grid)
        self._last_launch = (grid, target, fn)
        return fn

    @user_facing
    def run(self, *args, grid, **kwargs) -> Any:
        return run_kernel(_selected_target(), self, grid, args, kwargs)

    @user_facing
    def warmup(self, *args, grid=(1,), **kwargs) -> Any:
        """Compile for these arguments (and the selected target) without launching. As in Triton, a
        torch dtype stands for a tensor of that dtype (``MockTensor``)."""
        from .args import MockTensor
        from .launch import prepare

        args = tuple(MockTensor.wrap_dtype(a) for a in args)
        kwargs = {k: MockTensor.wrap_dtype(v) for k, v in kwargs.items()}
        return prepare(_selected_target(), self, args, kwargs, warmup=True).kernel

    def __call__(self, *args, **kwargs):
        from ..language import semantic

        call_jit = getattr(semantic.active_builder(), "call_jit", None)
        if call_jit is not None:  # a call from the language (tl.reduce's combine) or an interpreted kernel
            return call_jit(self, args, kwargs)
        raise TritiumError(f"@jit function '{self.__name__}' cannot be called from Python directly: launch "
                           f"it with {self.__name__}[grid](...) or call it from another @jit function")

    def __repr__(self) -> str:
        return f"JITFunction({self.__module__}:{self.__name__})"


def jit(fn: Callable | None = None, *, do_not_specialize=(), debug: bool | None = None,
        repr: Callable[[Any], str] | None = None, **_ignored) -> Any:  # noqa: A002 - Triton's keyword
    """Decorate a kernel (or a helper it calls): ``@tritium.jit`` or ``@tritium.jit(...)``;
    ``debug=True`` compiles it with device assertions and bounds checks on; ``repr(specialization)``
    names each compiled specialisation, as Triton's does: ``specialization.signature`` maps the
    runtime parameters to their types, ``specialization.constants`` the constexprs (and the
    integers specialised to 1) to their values."""
    if fn is None:
        return lambda f: JITFunction(f, tuple(do_not_specialize), debug, repr)
    return JITFunction(fn, tuple(do_not_specialize), debug, repr)
