"""Kernels as the interpreter runs them: the user's Python, rewritten where plain Python would
type values differently from the compiler.

The compiler (``frontend.ast_to_tile``) gives ``range``/``tl.range`` loops an int32 loop variable
(int64 when a bound is 64-bit), turns Python numbers carried through a loop or out of an ``if`` on
a tensor into tensors, makes ``not``/``and``/``or`` on tensors int1 tensors, and ``a if c else b``
on a block ``c`` a ``tl.where`` (on a scalar, one side typed as both would be), reads a number's
``.dtype`` (``.to``, ...) as a scalar tensor's; ``assert`` on a tensor is ``tl.device_assert``
(checked in debug mode only, element by element) and ``print`` is ``tl.device_print``. Plain Python
would give ints and bools, so results would wrap in other types (``x_int8 + i * 100``). Each
``@jit`` function is therefore run from a copy of its AST where those places call the hooks below. The copy is compiled with the original file name
and line numbers, so frames, ``print``, ``breakpoint()`` and tracebacks still show the user's code.
"""

from __future__ import annotations

import ast
import builtins
import copy
import types
import weakref
from typing import Any, Iterator

import numpy as np

from ..frontend.names import assigned_names
from ..language import core as tlc
from ..language import tuples as tltuples
from ..language import dtypes as T
from ..language import debug, python_ops, semantic
from ..runtime.jit import JIT_CODE, JITFunction
from .numpy_builder import np_dtype

_PREFIX = "__tritium_"


def _value(v: Any) -> Any:
    return v.value if isinstance(v, tlc.constexpr) else v


def loop(fn: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    """``for i in fn(*args)``: the values the compiled loop's induction variable takes."""
    if fn is not builtins.range and fn is not tlc.range:
        return fn(*args, **kwargs)  # tl.static_range: Python ints, as the compiler unrolls it
    if not 1 <= len(args) <= 3:
        raise semantic.SemanticError("range() takes 1 to 3 arguments")
    bounds = [semantic.to_tensor(a) for a in args]
    if any(not b.dtype.is_int() or b.shape != () for b in bounds):
        raise semantic.SemanticError("range() bounds must be scalar integers")
    ity = T.int64 if any(b.dtype.primitive_bitwidth > 32 for b in bounds) else T.int32
    values = [int(semantic.builder().python_value(b)) for b in bounds]
    if len(values) == 3 and values[2] == 0:
        return iter(())  # the compiled loop runs zero times
    return (tlc.tensor(np.array(i, dtype=np_dtype(ity)), ity, ()) for i in builtins.range(*values))


def carried(value: Any, like: Any = None) -> Any:
    """A value carried through a loop: Python numbers become tensors (typed like the value the
    loop started with), as the compiler makes them loop arguments."""
    if isinstance(value, tlc.tensor) or isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if like is not None and not isinstance(like, tlc.tensor):
        return value
    return semantic.to_tensor(value, like.dtype if like is not None else None)


def joined(value: Any, cond: Any) -> Any:
    """A name bound in an ``if`` on a tensor: a Python number becomes a tensor (an ``scf.if``
    result when compiled)."""
    if isinstance(_value(cond), tlc.tensor) and isinstance(value, (int, float)):
        return semantic.to_tensor(value)
    return value


def checked_assert(cond: Any, msg: Any = "") -> None:
    """``assert cond, msg``: a device assertion on tensors, a static one otherwise (with the
    compiler's message)."""
    cond = _value(cond)
    if isinstance(cond, tlc.tensor):
        debug.device_assert(cond, msg)
    elif not cond:
        raise semantic.StaticAssertionFailed(f"static assertion failed: {msg if msg != '' else 'assertion failed'}")


def kernel_print(*args: Any, **kwargs: Any) -> None:
    """``print(...)`` in a kernel is ``tl.device_print`` (Triton's rule)."""
    debug.builtin_print(args, **kwargs)


def list_literal(items: list) -> tltuples.tuple:
    """A list literal in a kernel is a ``tl.tuple``, as the compiler makes it."""
    return tltuples.tuple(items)


#: the rewritten kernels call these; the Python operators are the frontend's own rules (``python_ops``)
_HOOKS = {f"{_PREFIX}{f.__name__}": f for f in (loop, carried, joined, checked_assert, list_literal,
                                                 python_ops.python_not, python_ops.python_bool_op,
                                                 python_ops.python_if_exp, python_ops.python_attribute)}
_HOOKS["print"] = kernel_print


def _call(hook: str, args: list[ast.expr], node: ast.AST, keywords=()) -> ast.Call:
    return ast.copy_location(ast.Call(ast.Name(_PREFIX + hook, ast.Load()), args, list(keywords)), node)


def _thunk(expr: ast.expr) -> ast.Lambda:
    no_args = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    return ast.copy_location(ast.Lambda(no_args, expr), expr)


class _Rewriter(ast.NodeTransformer):
    def visit_List(self, node: ast.List) -> ast.AST:
        self.generic_visit(node)
        return _call("list_literal", [node], node) if isinstance(node.ctx, ast.Load) else node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        """``n.dtype`` (``.to``, ``.shape``, ``.item``) of a number: a scalar tensor's, as compiled."""
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or node.attr not in python_ops.SCALAR_TENSOR_ATTRIBUTES:
            return node
        return _call("python_attribute", [node.value, ast.copy_location(ast.Constant(node.attr), node)], node)

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        self.generic_visit(node)
        args = [node.test] + ([node.msg] if node.msg is not None else [])
        return ast.copy_location(ast.Expr(_call("checked_assert", args, node)), node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        return _call("python_not", [node.operand], node) if isinstance(node.op, ast.Not) else node

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        # which sides call nothing: the hook may evaluate such a side it does not take, for its type
        pure = [not any(isinstance(n, ast.Call) for n in ast.walk(side)) for side in (node.body, node.orelse)]
        self.generic_visit(node)
        flags = ast.copy_location(ast.Tuple([ast.Constant(p) for p in pure], ast.Load()), node)
        return _call("python_if_exp", [node.test, _thunk(node.body), _thunk(node.orelse), flags], node)

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        is_and = ast.copy_location(ast.Constant(isinstance(node.op, ast.And)), node)
        thunks = ast.copy_location(ast.List([_thunk(v) for v in node.values[1:]], ast.Load()), node)
        return _call("python_bool_op", [is_and, node.values[0], thunks], node)

    def visit_If(self, node: ast.If) -> Any:
        """``c = test; if c: ...``, then ``n = joined(n, c)`` for each name either branch binds."""
        self.generic_visit(node)
        names = assigned_names(node.body) | assigned_names(node.orelse)
        if not names:
            return node
        cond = f"{_PREFIX}cond_{node.lineno}_{node.col_offset}"
        test = ast.copy_location(ast.Assign([ast.Name(cond, ast.Store())], node.test), node)
        node.test = ast.copy_location(ast.Name(cond, ast.Load()), node)
        after = [s for n in sorted(names) for s in _guarded(f"{n} = {_PREFIX}joined({n}, {cond})", "pass", node)]
        return [test, node, *after]

    def visit_For(self, node: ast.For) -> Any:
        self.generic_visit(node)
        names = assigned_names(node.body) - assigned_names([node.target])
        if isinstance(node.iter, ast.Call):
            it = node.iter
            node.iter = _call("loop", [it.func, *it.args], it, it.keywords)
        return self._carry(node, names)

    def visit_While(self, node: ast.While) -> Any:
        self.generic_visit(node)
        return self._carry(node, assigned_names(node.body))

    @staticmethod
    def _carry(node: ast.For | ast.While, names: set[str]) -> list[ast.stmt]:
        """Before the loop ``n = carried(n)`` (remembering its start in ``__tritium_start_n``);
        at the end of each iteration ``n = carried(n, start)``. Names unbound there are skipped."""
        before, after = [], []
        for n in sorted(names):
            start = f"{_PREFIX}start_{n}"
            before += _guarded(f"{start} = {n} = {_PREFIX}carried({n})", f"{start} = None", node)
            after += _guarded(f"{n} = {_PREFIX}carried({n}, {start})", "pass", node)
        node.body = node.body + after
        return [*before, node]


def _guarded(stmt: str, otherwise: str, node: ast.AST) -> list[ast.stmt]:
    tree = ast.parse(f"try:\n    {stmt}\nexcept NameError:\n    {otherwise}\n").body
    for n in tree:
        for sub in ast.walk(n):
            ast.copy_location(sub, node)
            if hasattr(sub, "end_lineno"):
                sub.end_lineno, sub.end_col_offset = node.lineno, node.col_offset
    return tree


_CODE: weakref.WeakKeyDictionary[JITFunction, types.CodeType] = weakref.WeakKeyDictionary()


def _code(jitfn: JITFunction) -> types.CodeType:
    code = _CODE.get(jitfn)
    if code is None:
        tree = _Rewriter().visit(copy.deepcopy(jitfn.ast))
        ast.increment_lineno(tree, jitfn.first_line - 1)
        ast.fix_missing_locations(tree)
        module = compile(tree, jitfn.filename, "exec", dont_inherit=True)
        name = jitfn.ast.body[0].name  # the def's own name: a function may be renamed (its __name__)
        code = next(c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == name)
        JIT_CODE.add(code)
        _CODE[jitfn] = code
    return code


class Program:
    """The rewritten functions of one launch: the kernel and, on first call, each @jit helper
    (``JITFunction.__call__`` reaches them through the builder), bound to their module's globals
    (and closure variables) as they are now."""

    def __init__(self):
        self._functions: dict[JITFunction, types.FunctionType] = {}

    def function(self, jitfn: JITFunction) -> types.FunctionType:
        fn = self._functions.get(jitfn)
        if fn is None:
            env = {**jitfn.fn.__globals__, **jitfn.closure_vars(), **_HOOKS}
            fn = types.FunctionType(_code(jitfn), env, jitfn.__name__, jitfn.fn.__defaults__)
            fn.__kwdefaults__ = jitfn.fn.__kwdefaults__
            self._functions[jitfn] = fn
        return fn

