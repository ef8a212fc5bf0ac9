"""Python's ``not``, ``and``/``or``, ``a if c else b`` and a number's ``.dtype`` in kernels, for the
compiler and the interpreter alike. Both evaluate operands lazily (``thunks``): the frontend visits
AST nodes, the interpreter runs the rewritten kernel's expressions."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .dtypes import dtype
from .semantic import (SemanticError, _core, _python_number, broadcast_shapes, broadcast_to, builder, cast,
                       computation_type, full, literal_dtype, logical, to_tensor, where)


def _python(v: Any) -> Any:
    core = _core()
    return v.value if isinstance(v, core.constexpr) else v


#: the attributes of a tensor that Triton's kernels read from a number held in a name
SCALAR_TENSOR_ATTRIBUTES = frozenset({"dtype", "to", "shape", "item"})


def python_attribute(value: Any, name: str) -> Any:
    """``value.name``: Triton turns a number assigned to a name into a scalar tensor, so its
    ``.dtype`` and ``.to()`` are a tensor's (``val = 1e50; val.dtype`` is fp64)."""
    if name in SCALAR_TENSOR_ATTRIBUTES and type(value) in (bool, int, float):
        value = to_tensor(value)
    return getattr(value, name)


def python_not(v: Any) -> Any:
    """``not v``: an int1 tensor for a tensor, Python's ``not`` otherwise."""
    v = _python(v)
    return v.logical_not() if isinstance(v, _core().tensor) else not v


def python_bool_op(is_and: bool, first: Any, rest: Sequence[Callable[[], Any]],
                   check: Callable[[Any], None] = lambda v: None) -> Any:
    """``a and b`` / ``a or b``: Python's short-circuit while the values are constants, ``tl`` logic
    (an int1 tensor) once a tensor takes part; ``check`` sees each operand that is combined."""
    core = _core()
    result = _python(first)
    for thunk in rest:
        if not isinstance(result, core.tensor) and (not result if is_and else result):
            return result
        nxt = _python(thunk())
        check(result)
        check(nxt)
        if isinstance(result, core.tensor) or isinstance(nxt, core.tensor):
            result = logical("and" if is_and else "or", result, nxt)
        else:
            result = nxt
    return result


def python_if_exp(cond: Any, body: Callable[[], Any], orelse: Callable[[], Any],
                  pure: tuple[bool, bool] = (False, False)) -> Any:
    """``body if cond else orelse``: one side, as Python's, when ``cond`` is a compile-time value; a
    ``tl.where`` of both sides when it is a block. On a scalar tensor the compiler runs only the
    side taken (an ``scf.if``, typed by ``if_exp_type``); so does the interpreter, and it types that
    side as both would be where the other is ``pure`` (calls nothing, so evaluating it changes
    nothing), else as it is."""
    core = _core()
    cond = _python(cond)
    if not isinstance(cond, core.tensor):
        return body() if cond else orelse()
    if cond.shape != () or not getattr(builder(), "interprets", False):
        then, other = body(), orelse()
        if_exp_type(then, other)
        return where(cond, then, other)
    taken = bool(builder().python_value(cond))
    value = body() if taken else orelse()
    if not (pure[1] if taken else pure[0]):
        return value
    t, shape = if_exp_type(value, (orelse if taken else body)())
    value = cast(value, t) if isinstance(value, core.tensor) else full((), _python(value), t)
    return broadcast_to(value, shape) if shape else value


def if_exp_type(then: Any, other: Any) -> tuple[dtype, tuple[int, ...]]:
    """The type and shape both sides of ``then if cond else other`` take when ``cond`` is a tensor:
    numbers and blocks as a binary operator's operands, pointers of one type only."""
    core = _core()
    sides = [v.value if isinstance(v, core.constexpr) else v for v in (then, other)]
    numbers = [None if isinstance(v, core.tensor) else _python_number(v) for v in sides]
    types = [v.dtype if n is None and isinstance(v, core.tensor) else literal_dtype(n) if n is not None else None
             for v, n in zip(sides, numbers)]
    if None in types or (types[0] != types[1] and any(t.is_ptr() for t in types)):
        names = [str(t) if t is not None else type(v).__name__ for t, v in zip(types, sides)]
        raise SemanticError(f"Ternary expression with dynamic condition has inconsistent types {names[0]} and "
                            f"{names[1]}: both sides must be values of one kind (one pointer type for pointers)")
    t = types[0] if types[0] == types[1] else computation_type(*types, a_literal=numbers[0] is not None,
                                                                 b_literal=numbers[1] is not None)
    return t, broadcast_shapes(*(getattr(v, "shape", ()) for v in sides))


