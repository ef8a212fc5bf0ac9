"""Triton's typing rules, shared by the compiler and the interpreter.

Every builtin and operator lands here: operands are converted to tensors, promoted to a common
type, broadcast to a common shape, and the result is emitted through the active *builder* (the
MLIR builder of the frontend or the numpy builder of the interpreter). Builders only ever see
operands of matching types and shapes, so the rules live in one place.
"""

from __future__ import annotations

import builtins
import contextlib
import threading
from typing import Any, Callable, Iterator, Sequence

from . import dtypes as T
from .dtypes import dtype
from ..errors import TritiumError


class SemanticError(TritiumError):
    """A kernel asks for something the language does not allow; the frontend adds the source line."""


class StaticAssertionFailed(SemanticError):
    """A compile-time assertion was false (the frontend raises ``CompileTimeAssertionFailure``)."""


_state = threading.local()


def builder() -> Any:
    stack = getattr(_state, "stack", None)
    if not stack:
        raise SemanticError("tritium.language functions can only be called inside a @tritium.jit kernel")
    return stack[-1]


def active_builder() -> Any:
    """The builder language calls emit to, or None outside a kernel."""
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else None


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


def _python_number(v: Any) -> Any:
    """``v`` as a Python bool/int/float when it is a number given in the source (a literal, a
    constexpr, a numpy scalar), else None: Triton types such operands weakly."""
    if isinstance(v, (bool, int, float)):
        return v
    item = getattr(v, "item", None)
    if item is not None and type(v).__module__ == "numpy" and getattr(v, "shape", None) == ():
        return item()
    return None


def literal_dtype(v: Any) -> dtype:
    """The type a Python number gets when it becomes a tensor (Triton's ``to_tensor_type``):
    ints by range (int32, uint32, int64, uint64), floats fp32 unless only fp64 holds them."""
    if isinstance(v, bool):
        return T.int1
    if isinstance(v, int):
        if -2**31 <= v < 2**31:
            return T.int32
        if 2**31 <= v < 2**32:
            return T.uint32
        if -2**63 <= v < 2**63:
            return T.int64
        if 2**63 <= v < 2**64:
            return T.uint64
        raise SemanticError(f"integer literal {v} does not fit in 64 bits")
    if isinstance(v, float):
        magnitude = builtins.abs(v)
        if v != v or magnitude in (0.0, float("inf")) or 2.0**-126 <= magnitude <= (2 - 2.0**-23) * 2.0**127:
            return T.float32
        return T.float64
    raise _not_a_tensor(v)


def _not_a_tensor(v: Any) -> SemanticError:
    if hasattr(v, "block_shape") and hasattr(v, "addressable"):  # a block pointer or a tensor descriptor
        kind = ("a block pointer (read it with tl.load)" if v.addressable else
                "a tensor descriptor (read it with desc.load(offsets))")
        return SemanticError(f"cannot use {kind} {v!r} as a tensor")
    return SemanticError(f"cannot use {type(v).__name__} value {v!r} as a tensor")


def argument_dtype(v: Any) -> dtype:
    """The type a Python number passed as a kernel argument gets (Triton's launcher): int32 when
    it fits, else int64 (uint64 above int64's range); floats are always fp32. Unlike a literal in
    the source, an argument in [2**31, 2**32) is int64, not uint32."""
    t = literal_dtype(v)
    if t == T.uint32:
        return T.int64
    return T.float32 if t == T.float64 else t


def constant(v: Any, t: dtype):
    """A scalar constant ``v`` of type ``t`` (the caller checked that ``v`` fits); an fp8 one is
    rounded as converting the fp32 constant rounds (saturating, as every fp8 conversion)."""
    if t.is_fp8():
        return cast(constant(v, T.float32), t)
    return _core().tensor(builder().constant(v, t), t, ())


def to_tensor(v: Any, like: dtype | None = None):
    """Tensors pass through; Python numbers become scalar constants, of type ``like`` when Triton's
    weak typing lets them (``x_fp16 + 1.0`` stays fp16), else of their own type."""
    core = _core()
    v = v.value if isinstance(v, core.constexpr) else v
    if isinstance(v, core.tensor):
        return v
    n = _python_number(v)
    if n is None:
        raise _not_a_tensor(v)
    t = literal_dtype(n)
    if like is not None and not like.is_ptr() and _kind(t) <= _kind(like) and \
            (not like.is_int() or _fits(n, like)):
        t = like
    return constant(n, t)


def _fits(v: int, t: dtype) -> bool:
    bits = t.primitive_bitwidth
    return (0 <= v < 2**bits) if t.is_int_unsigned() else (-2**(bits - 1) <= v < 2**(bits - 1))


def _kind(t: dtype) -> int:
    """Triton's order of kinds: bool < integer < floating point."""
    return 0 if t.is_bool() else (1 if t.is_int() else 2)


# -- shapes ------------------------------------------------------------------------------------

#: the most elements a block may have (Triton's limit of the same name)
TRITON_MAX_TENSOR_NUMEL = 1048576


def check_numel(shape: tuple[int, ...]) -> None:
    """Refuse a block larger than Triton allows. Called wherever a block is made (``tensor()``, and
    before building the values of ``arange`` and broadcasts, which the interpreter allocates), as
    Triton checks every block type, so a kernel is refused alike on every target."""
    numel = 1
    for d in shape:
        numel *= d
    if numel > TRITON_MAX_TENSOR_NUMEL:
        raise SemanticError(f"a block of shape {list(shape)}: numel ({numel}) exceeds triton maximum tensor numel "
                            f"({TRITON_MAX_TENSOR_NUMEL}); use smaller blocks (a loop over parts of the data)")


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
        check_numel(shape)
        return core.tensor(b.splat(x.handle, x.dtype, shape), x.dtype, shape)
    if len(x.shape) > len(shape):
        raise SemanticError(f"cannot broadcast shape {list(x.shape)} to {list(shape)}")
    while len(x.shape) < len(shape):
        x = expand_dims(x, 0)
    if broadcast_shapes(x.shape, shape) != shape:
        raise SemanticError(f"cannot broadcast shape {list(x.shape)} to {list(shape)}")
    check_numel(shape)
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
    """``x[:, None]``: ``:`` keeps a dimension, ``None`` inserts one of size 1 where it stands; as in
    Triton, dimensions left unnamed are kept and a ``:`` past the last one changes nothing (a
    scalar's ``z[None, None, :]`` is a [1, 1] block)."""
    keep = [i for i in idx if i is not None]
    if any(not _is_full_slice(i) for i in keep):
        raise SemanticError("unsupported tensor index: tensors can only be indexed with ':' and None (e.g. "
                            "x[:, None]); to read elements, use tl.load with pointers")
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
    """C's usual arithmetic conversions on integer types (int1 counts as unsigned, as in Triton)."""
    a_bits, b_bits = a.primitive_bitwidth, b.primitive_bitwidth
    if a.is_int_unsigned() == b.is_int_unsigned():
        return a if a_bits > b_bits else b
    if a.is_int_unsigned():
        return a if a_bits >= b_bits else b
    return b if b_bits >= a_bits else a


def computation_type(a: dtype, b: dtype, div_or_mod: bool = False, a_literal: bool = False,
                     b_literal: bool = False) -> dtype:
    """The type both operands of an arithmetic op convert to (Triton's ``computation_type_impl``).

    A Python number (``*_literal``) of a kind no higher than the tensor's (bool < int < float)
    takes the tensor's type; fp16/bf16 ``/`` and ``%`` compute in fp32 (PTX has neither).
    """
    if a_literal != b_literal:
        lit, ten = (a, b) if a_literal else (b, a)
        if _kind(lit) <= _kind(ten):
            return T.float32 if div_or_mod and ten in (T.float16, T.bfloat16) else ten
    if T.float64 in (a, b):
        return T.float64
    if T.float32 in (a, b):
        return T.float32
    if T.float16 in (a, b):
        return T.float32 if div_or_mod else T.float16
    if a == b == T.bfloat16:
        return T.float32 if div_or_mod else T.bfloat16
    if T.bfloat16 in (a, b):
        return T.float32
    if a.is_fp8() and b.is_fp8():
        return a if a == b else T.float16
    if a.is_fp8() or b.is_fp8():
        raise SemanticError(f"unsupported operand types {a} and {b}: convert the fp8 value with .to() first")
    if div_or_mod and a.is_int_unsigned() != b.is_int_unsigned():
        raise SemanticError(f"Cannot use /, // or % with {a} and {b} because they have different signedness; "
                            "cast them to the same signedness")
    return _int_promote(a, b)


def cast(x, to: dtype, bitcast: bool = False, fp_downcast_rounding: str | None = None):
    """``x.to(to)`` as Triton converts: ``fp_downcast_rounding`` ("rtne", the default, or "rtz")
    applies only to conversions to a narrower float type; fp8 converts from and to floats only."""
    core = _core()
    x = to_tensor(x)
    if not isinstance(to, dtype):
        raise SemanticError(f".to() expects a tritium dtype such as tl.float32, got {to!r}")
    src = x.dtype
    if fp_downcast_rounding not in (None, "rtne", "rtz"):
        raise SemanticError(f"invalid rounding mode {fp_downcast_rounding!r}: the supported rounding modes are "
                            "'rtne' and 'rtz'")
    downcast = src.is_floating() and to.is_floating() and to.primitive_bitwidth < src.primitive_bitwidth
    if fp_downcast_rounding is not None and not (downcast and not bitcast):
        raise SemanticError(f"fp_downcast_rounding applies only to conversions to a narrower float type, not "
                            f"from {src} to {to}")
    if src == to:
        return x
    b = builder()
    if not bitcast:
        for t, other in ((src, to), (to, src)):
            if t.name in T.dtype.FP8_FROM_FP32_ONLY and other == T.float64:
                raise SemanticError(f"cannot convert {src} to {to} directly (Triton refuses it): go through "
                                    "tl.float32")
        if to.name in T.dtype.FP8_FROM_FP32_ONLY and fp_downcast_rounding == "rtz":
            raise SemanticError(f"fp_downcast_rounding='rtz' is not supported for conversions to {to}: Triton "
                                "rounds to it only one way")
        if (src.is_fp8() or to.is_fp8()) and not (src.is_floating() and to.is_floating()):
            raise SemanticError(f"cannot convert {src} to {to} directly: fp8 converts to and from floats only; "
                                "go through tl.float32")
        if src.is_fp8() and to.is_fp8():  # through fp32, which holds every fp8 value exactly
            return cast(cast(x, T.float32), to, fp_downcast_rounding=fp_downcast_rounding)
    if src.is_ptr() or to.is_ptr():  # Triton's rules: pointers to pointers, any int to a pointer, a
        return _pointer_cast(x, to, bitcast)  # pointer to int64 (its address) or int1 (non-null)
    if bitcast:
        if src.primitive_bitwidth != to.primitive_bitwidth:
            raise SemanticError(f"cannot bitcast {src} to {to}: sizes differ")
        op = "bitcast"
    elif to.is_bool():
        return compare("ne", x, 0)
    elif src.is_floating() and to.is_floating():
        op = "extf" if to.primitive_bitwidth > src.primitive_bitwidth else "truncf"
        if src.primitive_bitwidth == to.primitive_bitwidth:  # fp16 <-> bf16
            x = cast(x, T.float32)
            return cast(x, to, fp_downcast_rounding=fp_downcast_rounding)
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
    toward_zero = fp_downcast_rounding == "rtz"
    return core.tensor(b.cast(op, x.handle, src, to, x.shape, toward_zero) if toward_zero else
                       b.cast(op, x.handle, src, to, x.shape), to, x.shape)


def _pointer_cast(x, to: dtype, bitcast: bool):
    core, src = _core(), x.dtype
    if to.is_ptr() and not (src.is_ptr() or src.is_int()) or src.is_ptr() and not (to.is_ptr() or to.is_int()):
        raise SemanticError(f"cannot cast {src} to {to}: pointers convert to and from integers and other pointers")
    if src.is_ptr() and to.is_bool() and not bitcast:
        return compare("ne", _pointer_cast(x, T.int64, False), 0)
    if src.is_ptr() and to.is_int() and to.primitive_bitwidth != 64:
        raise SemanticError(f"cannot cast {src} to {to}: a pointer converts to int64 (its address) or int1")
    if to.is_ptr() and src.is_int() and src.primitive_bitwidth != 64:
        if bitcast:
            raise SemanticError(f"cannot bitcast {src} to {to}: sizes differ")
        x = cast(cast(x, _unsigned(src), bitcast=True), T.uint64)  # zero-extended, as LLVM's inttoptr
    return core.tensor(builder().cast("ptr_cast", x.handle, x.dtype, to, x.shape), to, x.shape)


def _unsigned(t: dtype) -> dtype:
    return getattr(T, f"uint{t.primitive_bitwidth}") if t.primitive_bitwidth > 1 else t


# -- arithmetic ----------------------------------------------------------------------------------


def _binary_operands(a, b, div_or_mod: bool = False, allow_lhs_ptr: bool = False, allow_rhs_ptr: bool = False):
    """Both operands as tensors of one type and shape (Triton's ``binary_op_type_checking_impl``):
    Python numbers are typed weakly and range-checked against the computation type."""
    core = _core()
    a = a.value if isinstance(a, core.constexpr) else a
    b = b.value if isinstance(b, core.constexpr) else b
    a_num = None if isinstance(a, core.tensor) else _python_number(a)
    b_num = None if isinstance(b, core.tensor) else _python_number(b)
    a_t = to_tensor(a) if a_num is None else None
    b_t = to_tensor(b) if b_num is None else None
    a_ty = a_t.dtype if a_t is not None else literal_dtype(a_num)
    b_ty = b_t.dtype if b_t is not None else literal_dtype(b_num)
    for x, y, allowed in ((a_ty, b_ty, allow_lhs_ptr), (b_ty, a_ty, allow_rhs_ptr)):
        if x.is_ptr() and (not allowed or (y.is_ptr() and x != y) or y.is_floating()):
            raise SemanticError(f"unsupported operand types {a_ty} and {b_ty}")
    if a_ty.is_ptr() or b_ty.is_ptr():
        a_t = a_t if a_t is not None else constant(a_num, a_ty)
        b_t = b_t if b_t is not None else constant(b_num, b_ty)
        return _same_shape(a_t, b_t)[0]
    t = computation_type(a_ty, b_ty, div_or_mod, a_num is not None, b_num is not None)
    operands = []
    for num, ten in ((a_num, a_t), (b_num, b_t)):
        if ten is not None:
            operands.append(cast(ten, t))
            continue
        if t.is_int_unsigned() and num < 0:
            raise SemanticError(f"cannot combine an unsigned {t} value with the negative number {num}; "
                                "cast one of them explicitly")
        if t.is_int() and not _fits(num, t):
            raise SemanticError(f"the number {num} is out of range for {t}; cast explicitly (e.g. with .to())")
        operands.append(constant(num, t))
    return _same_shape(*operands)[0]


def _typed_operands(a, b, div_or_mod: bool = False):
    a, b = _binary_operands(a, b, div_or_mod)
    return a, b, a.dtype, a.shape


def _emit(op: str, operands: Sequence[Any], t: dtype, shape):
    """``op`` on ``operands`` of type ``t``; fp8 values compute in fp32 and round back to ``t``
    (no target has fp8 arithmetic; fp32 holds any product of two fp8 values exactly)."""
    core = _core()
    if t.is_fp8():
        wide = _emit(op, [cast(o, T.float32) for o in operands], T.float32, shape)
        return cast(wide, t)
    return core.tensor(builder().arith(op, [o.handle for o in operands], t, shape), t, shape)


def add(a, b):
    a, b = _binary_operands(a, b, allow_lhs_ptr=True, allow_rhs_ptr=True)
    if a.dtype.is_ptr() and b.dtype.is_ptr():
        raise SemanticError("cannot add pointers together")
    if b.dtype.is_ptr():
        a, b = b, a
    if a.dtype.is_ptr():
        return _addptr(a, b)
    return _emit("addf" if a.dtype.is_floating() else "addi", (a, b), a.dtype, a.shape)


def sub(a, b):
    a, b = _binary_operands(a, b, allow_lhs_ptr=True)
    if a.dtype.is_ptr():
        return _addptr(a, neg(b))
    return _emit("subf" if a.dtype.is_floating() else "subi", (a, b), a.dtype, a.shape)


def _addptr(p, off):
    """``p + off``; narrower unsigned (and bool) offsets are zero-extended first, as in Triton,
    because the address arithmetic treats offsets as signed."""
    core = _core()
    if not off.dtype.is_int():
        raise SemanticError(f"pointer offsets must be integers, got {off.dtype}")
    if off.dtype.is_int_unsigned() and off.dtype.primitive_bitwidth < 64:
        off = cast(off, T.int64)
    (p, off), shape = _same_shape(p, off)
    return core.tensor(builder().addptr(p.handle, off.handle, p.dtype, shape), p.dtype, shape)


def mul(a, b):
    a, b, t, shape = _typed_operands(a, b)
    return _emit("mulf" if t.is_floating() else "muli", (a, b), t, shape)


def truediv(a, b):
    a, b, t, shape = _typed_operands(a, b, div_or_mod=True)
    if t.is_int():  # int / int divides in fp32
        a, b, t = cast(a, T.float32), cast(b, T.float32), T.float32
    return _emit("divf", (a, b), t, shape)


def floordiv(a, b):
    a, b, t, shape = _typed_operands(a, b, div_or_mod=True)
    if t.is_floating():
        raise SemanticError("'//' needs integer operands; use '/' and tl.floor for floats")
    return _emit("divui" if t.is_int_unsigned() else "divsi", (a, b), t, shape)


def mod(a, b):
    a, b, t, shape = _typed_operands(a, b, div_or_mod=True)
    if t.is_floating():
        return _emit("remf", (a, b), t, shape)
    return _emit("remui" if t.is_int_unsigned() else "remsi", (a, b), t, shape)


def bitwise(kind: str, a, b):
    types = [_operand_dtype(x) for x in (a, b)]
    if not all(t.is_int() for t in types):  # Triton's wording, which its tests match
        raise SemanticError(f"invalid operands of type {types[0]} and {types[1]}: bitwise "
                            f"'{ {'and': '&', 'or': '|', 'xor': '^'}[kind] }' needs integer operands")
    a, b, t, shape = _typed_operands(a, b)
    return _emit(kind + "i", (a, b), t, shape)


def _operand_dtype(x) -> dtype:
    """The dtype of a binary operator's operand as given: a tensor's, or a Python number's literal type."""
    core = _core()
    x = x.value if isinstance(x, core.constexpr) else x
    if isinstance(x, core.tensor):
        return x.dtype
    number = _python_number(x)
    return literal_dtype(number) if number is not None else to_tensor(x).dtype


def shift(kind: str, a, b, arithmetic: bool | None = None):
    """``a << b`` or ``a >> b`` in the operands' common type. As in Triton, ``>>`` shifts
    arithmetically when the tensor it is called on is signed (``arithmetic``; by default the left
    operand's type decides), even if the common type is unsigned: int8 -17 >> uint16 14 is 65535."""
    core = _core()
    if arithmetic is None:
        left = a.value if isinstance(a, core.constexpr) else a
        arithmetic = (left.dtype if isinstance(left, core.tensor) else literal_dtype(left)).is_int_signed()
    a, b, t, shape = _typed_operands(a, b)
    if not t.is_int():
        raise SemanticError(f"shifts need integer operands, got {t}")
    op = "shli" if kind == "shl" else ("shrsi" if arithmetic else "shrui")
    return _emit(op, (a, b), t, shape)


def neg(x):
    """``-x`` is ``0 - x`` in x's own type, as in Triton (so ``-0.0`` is ``0.0``)."""
    x = to_tensor(x)
    if x.dtype.is_ptr():
        raise SemanticError(f"cannot negate a pointer ({x.dtype})")
    return sub(constant(0, x.dtype), x)


def invert(x):
    """``~x``: x xor all-ones of x's own type (``~uint16(0)`` is 65535)."""
    x = to_tensor(x)
    if not x.dtype.is_int():
        raise SemanticError(f"'~' needs an integer operand, got {x.dtype}")
    ones = 2**x.dtype.primitive_bitwidth - 1 if x.dtype.is_int_unsigned() else -1
    return bitwise("xor", x, constant(ones, x.dtype))


_PRED = {"lt": ("slt", "ult", "olt"), "le": ("sle", "ule", "ole"), "gt": ("sgt", "ugt", "ogt"),
         "ge": ("sge", "uge", "oge"), "eq": ("eq", "eq", "oeq"), "ne": ("ne", "ne", "une")}


def compare(kind: str, a, b):
    core = _core()
    a, b = _binary_operands(a, b)
    t, shape = a.dtype, a.shape
    signed, unsigned, fl = _PRED[kind]
    if t.is_fp8():
        a, b, t = cast(a, T.float32), cast(b, T.float32), T.float32
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
    x, y = _binary_operands(x, y, allow_lhs_ptr=True, allow_rhs_ptr=True)
    if x.dtype != y.dtype:
        raise SemanticError(f"tl.where: both values must have one pointer type, got {x.dtype} and {y.dtype}")
    t = x.dtype
    (cond, x, y), shape = _same_shape(cond, x, y)
    return core.tensor(builder().select(cond.handle, x.handle, y.handle, t, shape), t, shape)


def check_dtype(name: str, names: tuple[str, ...], *args: Any) -> None:
    """Triton's ``_check_dtype`` (its ``language/math.py``): every tensor argument of ``tl.{name}``
    has one of the scalar types ``names``, else the error says so in Triton's words, so that tests
    ported from Triton match it."""
    core = _core()
    for a in args:
        if isinstance(a, core.tensor) and a.dtype.name not in names:
            to = "float32" if names[0].startswith("fp") else "int32"
            raise SemanticError(f"tl.{name}: Expected dtype {list(names)} but got {a.dtype.name} (Triton declares "
                                f"tl.{name} for these types only); convert with .to(tl.{to}) first")


#: the types Triton declares its elementwise math functions for (exp, log, sin, sqrt, floor, ...)
MATH_FLOATS = ("fp32", "fp64")


def math_unary(op: str, x):
    """``tl.{op}(x)`` of fp32 or fp64 values; Triton refuses the others (fp16, bf16, integers)."""
    x = to_tensor(x)
    check_dtype(op, MATH_FLOATS, x)
    return _emit(op, (x,), x.dtype, x.shape)


def abs(x):  # noqa: A001
    x = to_tensor(x)
    if x.dtype.is_fp8() and x.dtype.name not in ("fp8e4b8", "fp8e5b16"):  # its sign bit cleared, as Triton
        bits = cast(x, T.uint8, bitcast=True)  # (through the value, e4b15's 1.875 would saturate to 1.75;
        return cast(bitwise("and", bits, 0x7F), x.dtype, bitcast=True)  # fnuz's NaN, 0x80, is no sign)
    if x.dtype.is_floating():
        return _emit("absf", (x,), x.dtype, x.shape)
    if x.dtype.is_int_unsigned():
        return x
    return _emit("absi", (x,), x.dtype, x.shape)


def minmax(kind: str, a, b, propagate_nan: bool = False):
    a, b, t, shape = _typed_operands(a, b)
    return _emit(_minmax_op(kind, t, propagate_nan), (a, b), t, shape)


def _minmax_op(kind: str, t: dtype, propagate_nan: bool = False) -> str:
    if t.is_floating():
        return kind + ("imumf" if propagate_nan else "numf")
    return kind + ("ui" if t.is_int_unsigned() else "si")


# -- program, memory -----------------------------------------------------------------------------


def program_id(axis: int):
    core = _core()
    if axis not in (0, 1, 2):
        raise SemanticError(f"program_id axis must be 0, 1, or 2 but got {axis}")
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
    check_numel((n,))
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


def refuse_const(p, what: str):
    if p.dtype.is_const():
        raise SemanticError(f"Cannot store to a constant pointer: {what} cannot write through a pointer to constant "
                            "data (a parameter annotated tl.const); drop the annotation to write through it")


def _bool_mask(mask, what: str):
    mask = to_tensor(mask)
    if not mask.dtype.is_bool():
        raise SemanticError(f"{what}: the mask must be boolean (e.g. offs < n), got {mask.dtype}")
    return mask


#: Triton's cache modifiers of loads and stores, and eviction policies
LOAD_CACHE = ("", ".ca", ".cg", ".cv")
STORE_CACHE = ("", ".wb", ".cg", ".cs", ".wt")
EVICTION = ("", "evict_first", "evict_last")


def memory_hints(what: str, cache_modifier: Any, eviction_policy: Any, volatile: Any = False) -> dict:
    """The cache hints of a load or store, checked as Triton checks them; a target honours them
    where it can (the GPUs' cache operators) and ignores them elsewhere."""
    cache_modifier, eviction_policy = cache_modifier or "", eviction_policy or ""
    if cache_modifier not in (LOAD_CACHE if what == "tl.load" else STORE_CACHE):
        raise SemanticError(f"{what}: cache modifier {cache_modifier!r} is not supported; use one of "
                            f"{', '.join(repr(c) for c in (LOAD_CACHE if what == 'tl.load' else STORE_CACHE))}")
    if eviction_policy not in EVICTION:
        raise SemanticError(f"{what}: eviction policy {eviction_policy!r} is not supported; use one of "
                            f"{', '.join(repr(e) for e in EVICTION)}")
    hints = {"cache": cache_modifier, "evict": eviction_policy, "volatile": bool(volatile)}
    return {k: v for k, v in hints.items() if v}


def load(ptr, mask=None, other=None, hints: dict | None = None):
    """``hints``: ``memory_hints``'s."""
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
                       o.handle if o is not None else None, elem, shape, hints or None)
    return core.tensor(h, elem, shape)


def store(ptr, value, mask=None, hints: dict | None = None):
    """``hints``: ``memory_hints``'s."""
    from .elementwise_fns import refuse_writes_in_map

    refuse_writes_in_map("tl.store")
    _check_pointer(ptr, "tl.store")
    refuse_const(ptr, "tl.store")
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
    builder().store(ptr.handle, value.handle, mask.handle if mask is not None else None, shape, hints or None)


# -- reductions ----------------------------------------------------------------------------------


def reduce(x, axis: int, combine: Callable[[Any, Any], Any], keep_dims: bool = False, what: str = "tl.reduce"):
    """Reduce ``x`` along ``axis`` with ``combine(a, b)`` on scalar tensors of x's dtype."""
    from .reductions import reduce_tensors

    return reduce_tensors([x], axis, lambda a, b: [combine(a[0], b[0])], keep_dims, what)[0]


def sum_dtype(t: dtype, to: Any) -> dtype:
    """Triton's ``_pick_sum_dtype``: what ``tl.sum``/``tl.cumsum`` convert to and add in: ``to``
    when given, else integers narrower than 32 bits widen to int32 (uint32 when unsigned, bool
    included), everything else stays."""
    if to is not None:
        if not isinstance(to, dtype):
            raise SemanticError(f"dtype must be a tritium dtype such as tl.float32, got {to!r}")
        return to
    if t.is_int() and t.primitive_bitwidth < 32:
        return T.uint32 if t.is_int_unsigned() else T.int32
    return t


def reduce_builtin(kind: str, x, axis, keep_dims: bool, to: dtype | None = None):
    """``tl.sum``, ``tl.max``, ``tl.min`` or ``tl.xor_sum`` along ``axis``; ``tl.sum`` converts to
    ``to`` (its ``dtype``) first and adds in it, with no further widening (as Triton)."""
    x = to_tensor(x)
    if x.dtype.is_ptr():
        raise SemanticError(f"tl.{kind} cannot reduce pointers")
    if kind == "xor_sum":
        if not x.dtype.is_int():
            raise SemanticError(f"tl.xor_sum reduces integers only, got {x.dtype}")
        combine = lambda a, b: bitwise("xor", a, b)  # noqa: E731
    elif kind == "sum":
        x = cast(x, sum_dtype(x.dtype, to))
        combine = add
    else:
        if x.dtype.primitive_bitwidth < 32:  # Triton's standard library widens narrow inputs
            x = cast(x, T.float32 if x.dtype.is_floating() else T.int32)
        combine = lambda a, b: minmax(kind, a, b)  # noqa: E731
    return reduce_axes(x, axis, combine, keep_dims, f"tl.{kind}")


def reduce_axes(x, axis, combine: Callable[[Any, Any], Any], keep_dims: bool, what: str = "tl.reduce"):
    """``reduce`` along ``axis``, or along every axis when it is None (``keep_dims`` then keeps them
    all, as size 1)."""
    from .reductions import reduce_all

    return reduce_all([to_tensor(x)], axis, lambda a, b: [combine(a[0], b[0])], keep_dims, what)[0]
