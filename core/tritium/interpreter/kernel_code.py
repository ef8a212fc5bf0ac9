"""The Python function the interpreter runs for a ``@jit`` function: its own, with ``assert`` read
as the compiler reads it.

An ``assert`` on a tensor is ``tl.device_assert`` (Triton's rule): checked only in debug mode,
element by element. Python's own ``assert`` would instead ask the tensor for one truth value,
always. So the interpreter runs a copy of the function compiled from its AST with each ``assert``
turned into a call; the copy shares the function's globals, closure and defaults, and its lines.
"""

from __future__ import annotations

import ast
import copy
import types
import weakref
from typing import Any, Callable

from ..language import debug, semantic
from ..runtime.jit import JIT_CODE

_ASSERT = "__tritium_assert__"
_CACHE: "weakref.WeakKeyDictionary[Any, Callable]" = weakref.WeakKeyDictionary()


def checked_assert(cond: Any, msg: Any = "") -> None:
    """``assert cond, msg`` in a kernel: a device assertion on tensors, a static one otherwise
    (with the compiler's message)."""
    from ..language.core import constexpr, tensor

    cond = cond.value if isinstance(cond, constexpr) else cond
    if isinstance(cond, tensor):
        debug.device_assert(cond, msg)
    elif not cond:
        raise semantic.SemanticError(f"static assertion failed: {msg if msg != '' else 'assertion failed'}")


class _Asserts(ast.NodeTransformer):
    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        args = [node.test] + ([node.msg] if node.msg is not None else [])
        call = ast.Call(ast.Name(_ASSERT, ast.Load()), args, [])
        return ast.copy_location(ast.Expr(ast.copy_location(call, node)), node)


def interpreted(jitfn) -> Callable:
    """``jitfn``'s function as the interpreter runs it (the function itself when it has no ``assert``)."""
    fn = _CACHE.get(jitfn)
    if fn is None:
        fn = _CACHE[jitfn] = _rewrite(jitfn)
    return fn


def _rewrite(jitfn) -> Callable:
    original = jitfn.fn
    fdef = copy.deepcopy(jitfn.ast.body[0])
    if not any(isinstance(n, ast.Assert) for n in ast.walk(fdef)):
        return original
    fdef.decorator_list = []
    fdef = _Asserts().visit(fdef)
    ast.increment_lineno(fdef, jitfn.first_line - 1)
    # nested in a function binding the free names, so that they stay free variables of the copy
    free = list(original.__code__.co_freevars) + [_ASSERT]
    module = ast.parse("def __tritium_outer__():\n    pass")
    module.body[0].body = [ast.Assign([ast.Name(n, ast.Store())], ast.Constant(None)) for n in free] + [fdef]
    module = ast.fix_missing_locations(module)
    outer_code = next(c for c in compile(module, jitfn.filename, "exec").co_consts if isinstance(c, types.CodeType))
    code = next(c for c in outer_code.co_consts if isinstance(c, types.CodeType) and c.co_name == fdef.name)
    cells = dict(zip(original.__code__.co_freevars, original.__closure__ or ()))
    cells[_ASSERT] = types.CellType(checked_assert)
    fn = types.FunctionType(code, original.__globals__, original.__name__, original.__defaults__,
                            tuple(cells[n] for n in code.co_freevars))
    fn.__kwdefaults__ = original.__kwdefaults__
    JIT_CODE.add(code)
    return fn
