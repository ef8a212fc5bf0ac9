"""Triton's typing rules, shared by the compiler and the interpreter.

Every builtin and operator lands here: operands are converted to tensors, promoted to a common
type, broadcast to a common shape, and the result is emitted through the active *builder* (the
MLIR builder of the frontend or the numpy builder of the interpreter). Builders only ever see
operands of matching types and shapes, so the rules live in one place.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator, Sequence

from . import dtypes as T
from .dtypes import dtype
from ..errors import TritiumError


class SemanticError(TritiumError):
    """A kernel asks for something the language does not allow; the frontend adds the source line."""


_state = threading.local()


def builder() -> Any:
    stack = getattr(_state, "stack", None)
    if not stack:
        raise SemanticError("tritium.language functions can only be called inside a @tritium.jit kernel")
    return stack[-1]


def active_builder_interprets() -> bool:
    stack = getattr(_state, "stack", None)
    return bool(stack) and getattr(stack[-1], "interprets", False)


@contextlib.contextmanager
def using(b: Any) -> Iterator[Any]:
    """Make ``b`` the builder that language calls emit to (per thread, nestable)."""
    stack = _state.__dict__.setdefault("stack", [])
    stack.append(b)
    try:
        yield b
    finally:
        stack.pop()


def _core():
    from . import core
    return core


# -- conversions ---------------------------------------------------------------------------------


def literal_dtype(v: Any) -> dtype:
    if isinstance(v, bool):
        return T.int1
    if isinstance(v, int):
        if -2**31 <= v < 2**31:
            return T.int32
        if -2**63 <= v < 2**63:
            return T.int64
        if v < 2**64:
            return T.uint64
        raise SemanticError(f"integer literal {v} does not fit in 64 bits")
    if isinstance(v, float):
        return T.float32
    raise SemanticError(f"cannot use {type(v).__name__} value {v!r} as a tensor")


def to_tensor(v: Any, like: dtype | None = None):
    """Tensors pass through; Python numbers become scalar constants (typed after ``like`` when the
    literal is weakly typed, as Triton does: ``x_fp16 + 1.0`` stays fp16)."""
    core = _core()
    v = v.value if isinstance(v, core.constexpr) else v
    if isinstance(v, core.tensor):
        return v
    t = literal_dtype(v)
    if like is not None and not like.is_ptr() and not isinstance(v, bool):
        if isinstance(v, float) and like.is_floating():
            t = like
        elif isinstance(v, int) and (like.is_floating() or (like.is_int() and not like.is_bool() and _fits(v, like))):
            t = like
    return core.tensor(builder().constant(v, t), t, ())


def _fits(v: int, t: dtype) -> bool:
    bits = t.primitive_bitwidth
    return (0 <= v < 2**bits) if t.is_int_unsigned() else (-2**(bits - 1) <= v < 2**(bits - 1))


def _pair(a: Any, b: Any):
    core = _core()
    a_t = a if isinstance(a, core.tensor) else None
    b_t = b if isinstance(b, core.tensor) else None
    a = to_tensor(a, b_t.dtype if b_t is not None else None)
    b = to_tensor(b, a_t.dtype if a_t is not None else None)
    return a, b


# -- shapes ------------------------------------------------------------------------------------


def broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    if len(a) < len(b):
        a = (1,) * (len(b) - len(a)) + a
    if len(b) < len(a):
        b = (1,) * (len(a) - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise SemanticError(f"shape mismatch: cannot broadcast {list(a)} and {list(b)} together")
        out.append(max(x, y) if 1 in (x, y) else x)
    return tuple(out)


def broadcast_to(x, shape: tuple[int, ...]):
    core = _core()
    shape = tuple(shape)
    if x.shape == shape:
        return x
    b = builder()
    if x.shape == ():
        return core.tensor(b.splat(x.handle, x.dtype, shape), x.dtype, shape)
    if len(x.shape) > len(shape):
        raise SemanticError(f"cannot broadcast shape {list(x.shape)} to {list(shape)}")
    while len(x.shape) < len(shape):
        x = expand_dims(x, 0)
    if broadcast_shapes(x.shape, shape) != shape:
        raise SemanticError(f"cannot broadcast shape {list(x.shape)} to {list(shape)}")
    return core.tensor(b.broadcast(x.handle, x.dtype, x.shape, shape), x.dtype, shape)


def expand_dims(x, axis: int):
    core = _core()
    rank = len(x.shape)
    if axis < 0:
        axis += rank + 1
    if not 0 <= axis <= rank:
        raise SemanticError(f"expand_dims axis {axis} out of range for a tensor of rank {rank}")
    if rank == 0:
        return broadcast_to(x, (1,))
    shape = x.shape[:axis] + (1,) + x.shape[axis:]
    return core.tensor(builder().expand_dims(x.handle, x.dtype, axis, shape), x.dtype, shape)


def subscript(x, idx: tuple):
    """``x[:, None]``: ``:`` keeps a dimension, ``None`` inserts one of size 1."""
    keep = [i for i in idx if i is not None]
    if len(keep) != len(x.shape) or any(not _is_full_slice(i) for i in keep):
        raise SemanticError("tensors can only be indexed with ':' and None (e.g. x[:, None]); "
                            "to read elements, use tl.load with pointers")
    axis = 0
    for i in idx:
        if i is None:
            x = expand_dims(x, axis)
        axis += 1
    return x


def _is_full_slice(i: Any) -> bool:
    return isinstance(i, slice) and i.start is None and i.stop is None and i.step is None


def _same_shape(*ts):
    shape: tuple[int, ...] = ()
    for t in ts:
        shape = broadcast_shapes(shape, t.shape)
    return [broadcast_to(t, shape) for t in ts], shape


# -- types ---------------------------------------------------------------------------------------


def _int_promote(a: dtype, b: dtype) -> dtype:
    if a == b:
        return a
    if a.is_bool():
        return b
    if b.is_bool():
        return a
    if a.is_int_signed() == b.is_int_signed():
        return a if a.primitive_bitwidth >= b.primitive_bitwidth else b
    u, s = (a, b) if a.is_int_unsigned() else (b, a)
    return u if u.primitive_bitwidth >= s.primitive_bitwidth else s


def computation_type(a: dtype, b: dtype, div_or_mod: bool = False) -> dtype:
    if a.is_floating() or b.is_floating():
        if T.float64 in (a, b):
            return T.float64
        if T.float32 in (a, b):
            return T.float32
        if a.is_floating() and b.is_floating():
            return a if a == b else T.float32
        f = a if a.is_floating() else b
        return T.float32 if div_or_mod and f.primitive_bitwidth < 32 else f
    return _int_promote(a, b)


def cast(x, to: dtype, bitcast: bool = False):
    core = _core()
    x = to_tensor(x)
    if not isinstance(to, dtype):
        raise SemanticError(f".to() expects a tritium dtype such as tl.float32, got {to!r}")
    src = x.dtype
    if src == to:
        return x
    b = builder()
    if bitcast:
        if src.primitive_bitwidth != to.primitive_bitwidth:
            raise SemanticError(f"cannot bitcast {src} to {to}: sizes differ")
        op = "bitcast"
    elif src.is_ptr() or to.is_ptr():
        raise SemanticError(f"cannot cast {src} to {to}")
    elif to.is_bool():
        return compare("ne", x, 0)
    elif src.is_floating() and to.is_floating():
        op = "extf" if to.primitive_bitwidth > src.primitive_bitwidth else "truncf"
        if src.primitive_bitwidth == to.primitive_bitwidth:  # fp16 <-> bf16
            x = cast(x, T.float32)
            return cast(x, to)
    elif src.is_int() and to.is_floating():
        op = "uitofp" if src.is_int_unsigned() else "sitofp"
    elif src.is_floating() and to.is_int():
        op = "fptoui" if to.is_int_unsigned() else "fptosi"
    elif to.primitive_bitwidth > src.primitive_bitwidth:
        op = "extui" if src.is_int_unsigned() else "extsi"
    elif to.primitive_bitwidth < src.primitive_bitwidth:
        op = "trunci"
    else:  # same-width signed <-> unsigned: the bits stay, only the type changes
        return core.tensor(b.retype(x.handle, src, to, x.shape), to, x.shape)
    return core.tensor(b.cast(op, x.handle, src, to, x.shape), to, x.shape)


# -- arithmetic ----------------------------------------------------------------------------------


def _binary_operands(a, b, div_or_mod: bool = False):
    a, b = _pair(a, b)
    if a.dtype.is_ptr() or b.dtype.is_ptr():
        raise SemanticError(f"unsupported operand types {a.dtype} and {b.dtype}")
    t = computation_type(a.dtype, b.dtype, div_or_mod)
    (a, b), shape = _same_shape(cast(a, t), cast(b, t))
    return a, b, t, shape


def _emit(op: str, operands: Sequence[Any], t: dtype, shape):
    core = _core()
    return core.tensor(builder().arith(op, [o.handle for o in operands], t, shape), t, shape)


def add(a, b):
    a, b = _pair(a, b)
    if b.dtype.is_ptr() and not a.dtype.is_ptr():
        a, b = b, a
    if a.dtype.is_ptr():
        return _addptr(a, b)
    a, b, t, shape = _binary_operands(a, b)
    return _emit("addf" if t.is_floating() else "addi", (a, b), t, shape)


def sub(a, b):
    a, b = _pair(a, b)
    if a.dtype.is_ptr():
        return _addptr(a, neg(b))
    a, b, t, shape = _binary_operands(a, b)
    return _emit("subf" if t.is_floating() else "subi", (a, b), t, shape)


def _addptr(p, off):
    core = _core()
    if not off.dtype.is_int():
        raise SemanticError(f"pointer offsets must be integers, got {off.dtype}")
    (p, off), shape = _same_shape(p, off)
    return core.tensor(builder().addptr(p.handle, off.handle, p.dtype, shape), p.dtype, shape)


def mul(a, b):
    a, b, t, shape = _binary_operands(a, b)
    return _emit("mulf" if t.is_floating() else "muli", (a, b), t, shape)


def truediv(a, b):
    a, b = _pair(a, b)
    if a.dtype.is_int() and b.dtype.is_int():
        a, b = cast(a, T.float32), cast(b, T.float32)
    a, b, t, shape = _binary_operands(a, b, div_or_mod=True)
    return _emit("divf", (a, b), t, shape)


def floordiv(a, b):
    a, b, t, shape = _binary_operands(a, b, div_or_mod=True)
    if t.is_floating():
        raise SemanticError("'//' needs integer operands; use '/' and tl.floor for floats")
    return _emit("divui" if t.is_int_unsigned() else "divsi", (a, b), t, shape)


def mod(a, b):
    a, b, t, shape = _binary_operands(a, b, div_or_mod=True)
    if t.is_floating():
        return _emit("remf", (a, b), t, shape)
    return _emit("remui" if t.is_int_unsigned() else "remsi", (a, b), t, shape)


def bitwise(kind: str, a, b):
    a, b, t, shape = _binary_operands(a, b)
    if not t.is_int():
        raise SemanticError(f"bitwise '{ {'and': '&', 'or': '|', 'xor': '^'}[kind] }' needs integer operands, got {t}")
    return _emit(kind + "i", (a, b), t, shape)


def shift(kind: str, a, b):
    a, b, t, shape = _binary_operands(a, b)
    if not t.is_int():
        raise SemanticError(f"shifts need integer operands, got {t}")
    op = "shli" if kind == "shl" else ("shrui" if t.is_int_unsigned() else "shrsi")
    return _emit(op, (a, b), t, shape)


def neg(x):
    x = to_tensor(x)
    if x.dtype.is_floating():
        return _emit("negf", (x,), x.dtype, x.shape)
    return sub(to_tensor(0, x.dtype), x)


def invert(x):
    x = to_tensor(x)
    if not x.dtype.is_int():
        raise SemanticError(f"'~' needs an integer operand, got {x.dtype}")
    return bitwise("xor", x, to_tensor(1 if x.dtype.is_bool() else -1, x.dtype))


_PRED = {"lt": ("slt", "ult", "olt"), "le": ("sle", "ule", "ole"), "gt": ("sgt", "ugt", "ogt"),
         "ge": ("sge", "uge", "oge"), "eq": ("eq", "eq", "oeq"), "ne": ("ne", "ne", "une")}


def compare(kind: str, a, b):
    core = _core()
    a, b = _pair(a, b)
    if a.dtype.is_ptr() or b.dtype.is_ptr():
        raise SemanticError("comparing pointers is not supported")
    a, b, t, shape = _binary_operands(a, b)
    signed, unsigned, fl = _PRED[kind]
    if t.is_floating():
        h = builder().cmp("f", fl, a.handle, b.handle, t, shape)
    else:
        h = builder().cmp("i", unsigned if t.is_int_unsigned() else signed, a.handle, b.handle, t, shape)
    return core.tensor(h, T.int1, shape)


def logical(kind: str, a, b):
    return bitwise(kind, cast(to_tensor(a), T.int1), cast(to_tensor(b), T.int1))


def logical_not(x):
    return compare("eq", cast(to_tensor(x), T.int1), False)


def where(cond, x, y):
    core = _core()
    cond = cast(to_tensor(cond), T.int1)
    x, y = _pair(x, y)
    if x.dtype.is_ptr() or y.dtype.is_ptr():
        if x.dtype != y.dtype:
            raise SemanticError(f"tl.where: both values must have one pointer type, got {x.dtype} and {y.dtype}")
        t = x.dtype
    else:
        t = computation_type(x.dtype, y.dtype)
        x, y = cast(x, t), cast(y, t)
    (cond, x, y), shape = _same_shape(cond, x, y)
    return core.tensor(builder().select(cond.handle, x.handle, y.handle, t, shape), t, shape)


def math_unary(op: str, x):
    x = to_tensor(x)
    if not x.dtype.is_floating():
        if x.dtype.is_int():
            x = cast(x, T.float32)
        else:
            raise SemanticError(f"tl.{op} needs a floating-point operand, got {x.dtype}")
    return _emit(op, (x,), x.dtype, x.shape)


def abs(x):  # noqa: A001
    x = to_tensor(x)
    if x.dtype.is_floating():
        return _emit("absf", (x,), x.dtype, x.shape)
    if x.dtype.is_int_unsigned():
        return x
    return _emit("absi", (x,), x.dtype, x.shape)


def minmax(kind: str, a, b):
    a, b, t, shape = _binary_operands(a, b)
    return _emit(_minmax_op(kind, t), (a, b), t, shape)


def _minmax_op(kind: str, t: dtype) -> str:
    if t.is_floating():
        return kind + "numf"
    return kind + ("ui" if t.is_int_unsigned() else "si")


# -- program, memory -----------------------------------------------------------------------------


def program_id(axis: int):
    core = _core()
    if axis not in (0, 1, 2):
        raise SemanticError(f"program_id axis must be 0, 1 or 2, got {axis}")
    return core.tensor(builder().program_id(axis), T.int32, ())


def num_programs(axis: int):
    core = _core()
    if axis not in (0, 1, 2):
        raise SemanticError(f"num_programs axis must be 0, 1 or 2, got {axis}")
    return core.tensor(builder().num_programs(axis), T.int32, ())


def arange(start: int, end: int):
    core = _core()
    n = end - start
    if n <= 0 or n & (n - 1):
        raise SemanticError(f"tl.arange({start}, {end}) has {n} elements; the extent must be a positive "
                            "power of two (pad the range and mask the excess)")
    return core.tensor(builder().make_range(start, end), T.int32, (n,))


def full(shape: tuple[int, ...], value: Any, t: dtype):
    core = _core()
    if not isinstance(t, dtype):
        raise SemanticError(f"expected a dtype such as tl.float32, got {t!r}")
    for s in shape:
        if s <= 0 or s & (s - 1):
            raise SemanticError(f"tensor dimensions must be powers of two, got shape {list(shape)}")
    v = cast(to_tensor(value, t), t)
    return broadcast_to(v, shape) if shape else core.tensor(v.handle, t, ())


def _check_pointer(p, what: str):
    if not isinstance(p, _core().tensor) or not p.dtype.is_ptr():
        raise SemanticError(f"{what} expects a pointer (or a block of pointers), got "
                            f"{getattr(p, 'dtype', type(p).__name__)}")


def _bool_mask(mask, what: str):
    mask = to_tensor(mask)
    if not mask.dtype.is_bool():
        raise SemanticError(f"{what}: the mask must be boolean (e.g. offs < n), got {mask.dtype}")
    return mask


def load(ptr, mask=None, other=None):
    core = _core()
    _check_pointer(ptr, "tl.load")
    elem = ptr.dtype.element_ty
    shape = ptr.shape
    m = o = None
    if mask is not None:
        mask = _bool_mask(mask, "tl.load")
        shape = broadcast_shapes(shape, mask.shape)
        m = broadcast_to(mask, shape)
    if other is not None:
        if mask is None:
            raise SemanticError("tl.load: 'other' needs a 'mask'")
        other = cast(to_tensor(other, elem), elem)
        shape = broadcast_shapes(shape, other.shape)
        o = broadcast_to(other, shape)
        m = broadcast_to(m, shape)
    ptr = broadcast_to(ptr, shape)
    h = builder().load(ptr.handle, m.handle if m is not None else None,
                       o.handle if o is not None else None, elem, shape)
    return core.tensor(h, elem, shape)


def store(ptr, value, mask=None):
    _check_pointer(ptr, "tl.store")
    elem = ptr.dtype.element_ty
    value = to_tensor(value, elem)
    shape = broadcast_shapes(ptr.shape, value.shape)
    if mask is not None:
        mask = _bool_mask(mask, "tl.store")
        shape = broadcast_shapes(shape, mask.shape)
        mask = broadcast_to(mask, shape)
    if shape != ptr.shape and ptr.shape == ():
        ptr = broadcast_to(ptr, shape)
    elif shape != ptr.shape:
        raise SemanticError(f"tl.store: value of shape {list(value.shape)} does not fit pointers of shape "
                            f"{list(ptr.shape)}")
    value = broadcast_to(cast(value, elem), shape)
    builder().store(ptr.handle, value.handle, mask.handle if mask is not None else None, shape)


# -- reductions ----------------------------------------------------------------------------------


def reduce(x, axis: int, combine: Callable[[Any, Any], Any], keep_dims: bool = False):
    """Reduce ``x`` along ``axis`` with ``combine(a, b)`` on scalar tensors of x's dtype."""
    core = _core()
    rank = len(x.shape)
    if rank == 0:
        raise SemanticError("cannot reduce a scalar")
    if axis < 0:
        axis += rank
    if not 0 <= axis < rank:
        raise SemanticError(f"reduction axis {axis} out of range for a tensor of rank {rank}")
    shape = x.shape[:axis] + x.shape[axis + 1:]
    t = x.dtype

    def combine_handles(a, b):
        out = combine(core.tensor(a, t, ()), core.tensor(b, t, ()))
        return cast(out, t).handle

    r = core.tensor(builder().reduce(x.handle, t, axis, x.shape, shape, combine_handles), t, shape)
    return expand_dims(r, axis) if keep_dims else r


def reduce_builtin(kind: str, x, axis, keep_dims: bool):
    x = to_tensor(x)
    if x.dtype.is_ptr():
        raise SemanticError(f"tl.{kind} cannot reduce pointers")
    if kind == "sum" and x.dtype.is_int() and x.dtype.primitive_bitwidth < 32:
        x = cast(x, T.int32)
    if kind == "sum":
        combine = add
    else:
        combine = lambda a, b: minmax(kind, a, b)  # noqa: E731
    if axis is None:
        for _ in range(len(x.shape)):
            x = reduce(x, len(x.shape) - 1, combine)
        return x
    if not isinstance(axis, int):
        raise SemanticError(f"tl.{kind}: axis must be a constant integer or None, got {axis!r}")
    return reduce(x, axis, combine, keep_dims)
