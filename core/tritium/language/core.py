"""The language's values (``tensor``, ``constexpr``) and builtins (``tl.load``, ``tl.sum`` ...).

Builtins compute nothing themselves: they check and promote types in ``semantic`` and emit through
the active builder, which is the MLIR builder while the frontend compiles and the numpy builder
while the interpreter runs. One definition of the language therefore serves both.
"""

from __future__ import annotations

import enum
import operator
from typing import Any, Sequence

from . import semantic
from .dtypes import bfloat16, block_type, constexpr_type, dtype, float32, pointer_type


class constexpr:
    """A compile-time constant; ``x: tl.constexpr`` marks a kernel parameter as one."""

    def __init__(self, value: Any):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self) -> str:
        return f"constexpr[{self.value!r}]"

    def __index__(self) -> int:
        return int(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __hash__(self) -> int:
        return hash(self.value)

    @property
    def type(self) -> constexpr_type:
        return constexpr_type(self.value)


class const:
    """A parameter annotation (``x_ptr: tl.const``) marking a pointer to constant data: the
    parameter's pointers (and those computed from them) refuse ``tl.store`` and atomics."""


def must_use_result(x: Any, s: bool | str = True) -> Any:
    """Mark a function (a builtin or a @jit function) whose result a kernel must use: a call whose
    result is dropped is a compile error, worded by ``s`` when it is a string.
    ``@must_use_result`` and ``@must_use_result("why")`` both work, as in Triton."""
    if isinstance(x, str):
        return lambda fn: must_use_result(fn, x)
    x._must_use_result = s
    return x


def as_const(value: Any) -> Any:
    """``value`` as a parameter annotated ``tl.const`` sees it: pointers become const pointers."""
    t = getattr(value, "dtype", None)
    if isinstance(value, tensor) and t.is_ptr() and not t.is_const():
        return tensor(value.handle, pointer_type(t.element_ty, t.address_space, const=True), value.shape)
    return value


class condition:
    """``while tl.condition(c, disable_licm=False):`` is ``while c:`` with a hint for the loop.
    ``disable_licm`` asks Triton's compiler not to hoist loop-invariant code out of this loop
    (shorter live ranges); tritium's loop-invariant code motion (MLIR's, in ``tile-opt``) applies
    to every loop, so the hint changes nothing here and the results are the same."""

    def __init__(self, arg, disable_licm: bool = False):
        self.condition, self.disable_licm = arg, disable_licm

    def __bool__(self) -> bool:  # the interpreter runs the loop as Python
        return bool(self.condition)


def _constexpr_op(fn, reflected: bool = False):
    """Triton's constexpr operators: compute on the value, so ``MODE == "fast"`` compares strings
    (in the interpreter too, where kernels run as plain Python); a tensor result stays a tensor."""
    def op(self, *other):
        args = [self.value, *(_unwrap(o) for o in other)]
        out = fn(*reversed(args)) if reflected else fn(*args)
        return out if isinstance(out, tensor) or out is NotImplemented else constexpr(out)
    return op


for _name, _fn in (("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                   ("truediv", operator.truediv), ("floordiv", operator.floordiv), ("mod", operator.mod),
                   ("pow", operator.pow), ("and", operator.and_), ("or", operator.or_), ("xor", operator.xor),
                   ("lshift", operator.lshift), ("rshift", operator.rshift)):
    setattr(constexpr, f"__{_name}__", _constexpr_op(_fn))
    setattr(constexpr, f"__r{_name}__", _constexpr_op(_fn, reflected=True))
for _name, _fn in (("eq", operator.eq), ("ne", operator.ne), ("lt", operator.lt), ("le", operator.le),
                   ("gt", operator.gt), ("ge", operator.ge), ("neg", operator.neg), ("pos", operator.pos),
                   ("invert", operator.invert)):
    setattr(constexpr, f"__{_name}__", _constexpr_op(_fn))


def _unwrap(v: Any) -> Any:
    return v.value if isinstance(v, constexpr) else v


class tensor:
    """A block of values (``shape`` == () for a scalar) held by the active builder as ``handle``."""

    def __init__(self, handle: Any, dtype: dtype, shape: Sequence[int] = ()):
        self.handle, self.dtype, self.shape = handle, dtype, tuple(int(s) for s in shape)
        if self.shape:
            semantic.check_numel(self.shape)

    @property
    def type(self) -> dtype:
        """Triton's: the dtype of a scalar, the ``block_type`` of a block."""
        return block_type(self.dtype, self.shape) if self.shape else self.dtype

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __repr__(self) -> str:
        values = getattr(self.handle, "tolist", None)  # the interpreter holds numpy arrays
        shown = f"{values()}, " if values is not None else ""
        return f"tensor({shown}shape={list(self.shape)}, dtype={self.dtype!r})"

    def __hash__(self) -> int:
        return id(self)

    def __bool__(self) -> bool:
        return bool(semantic.builder().python_value(self))

    def __index__(self) -> int:
        """Only the interpreter knows a tensor's value (``range(n)`` with a runtime ``n``)."""
        if not self.dtype.is_int():
            raise semantic.SemanticError(f"a {self.dtype} value cannot be used as an integer")
        return int(semantic.builder().python_value(self))

    # arithmetic ------------------------------------------------------------------------------
    def __add__(self, o): return semantic.add(self, o)
    def __radd__(self, o): return semantic.add(o, self)
    def __sub__(self, o): return semantic.sub(self, o)
    def __rsub__(self, o): return semantic.sub(o, self)
    def __mul__(self, o): return semantic.mul(self, o)
    def __rmul__(self, o): return semantic.mul(o, self)
    def __truediv__(self, o): return semantic.truediv(self, o)
    def __rtruediv__(self, o): return semantic.truediv(o, self)
    def __floordiv__(self, o): return semantic.floordiv(self, o)
    def __rfloordiv__(self, o): return semantic.floordiv(o, self)
    def __mod__(self, o): return semantic.mod(self, o)
    def __rmod__(self, o): return semantic.mod(o, self)
    def __and__(self, o): return semantic.bitwise("and", self, o)
    def __rand__(self, o): return semantic.bitwise("and", o, self)
    def __or__(self, o): return semantic.bitwise("or", self, o)
    def __ror__(self, o): return semantic.bitwise("or", o, self)
    def __xor__(self, o): return semantic.bitwise("xor", self, o)
    def __rxor__(self, o): return semantic.bitwise("xor", o, self)
    def __lshift__(self, o): return semantic.shift("shl", self, o)
    def __rlshift__(self, o): return semantic.shift("shl", o, self)
    def __rshift__(self, o): return semantic.shift("shr", self, o)
    def __rrshift__(self, o): return semantic.shift("shr", o, self, self.dtype.is_int_signed())
    def __neg__(self): return semantic.neg(self)
    def __pos__(self): return self
    def __invert__(self): return semantic.invert(self)

    # comparisons -----------------------------------------------------------------------------
    def __lt__(self, o): return semantic.compare("lt", self, o)
    def __le__(self, o): return semantic.compare("le", self, o)
    def __gt__(self, o): return semantic.compare("gt", self, o)
    def __ge__(self, o): return semantic.compare("ge", self, o)
    def __eq__(self, o): return semantic.compare("eq", self, o)  # type: ignore[override]
    def __ne__(self, o): return semantic.compare("ne", self, o)  # type: ignore[override]

    def logical_and(self, o): return semantic.logical("and", self, o)
    def logical_or(self, o): return semantic.logical("or", self, o)
    def logical_not(self): return semantic.logical_not(self)

    # shape and type --------------------------------------------------------------------------
    def __getitem__(self, idx):
        return semantic.subscript(self, idx if isinstance(idx, tuple) else (idx,))

    def to(self, dtype: dtype, fp_downcast_rounding: str | None = None, bitcast: bool = False) -> "tensor":
        """This tensor converted to ``dtype`` (Triton's signature: the rounding mode comes second)."""
        return semantic.cast(self, _unwrap(dtype), bitcast=_unwrap(bitcast),
                             fp_downcast_rounding=_unwrap(fp_downcast_rounding))


# -- builtins ------------------------------------------------------------------------------------


def program_id(axis) -> tensor:
    return semantic.program_id(_axis(axis))


def num_programs(axis) -> tensor:
    return semantic.num_programs(_axis(axis))


def arange(start, end) -> tensor:
    return semantic.arange(_static_int(start, "tl.arange start"), _static_int(end, "tl.arange end"))


def zeros(shape, dtype) -> tensor:
    return semantic.full(_static_shape(shape), 0, _unwrap(dtype))


def full(shape, value, dtype) -> tensor:
    return semantic.full(_static_shape(shape), _unwrap(value), _unwrap(dtype))


def load(pointer, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
         eviction_policy="", volatile=False) -> tensor:
    """Read through ``pointer`` where ``mask``; ``other`` elsewhere. The cache and eviction hints
    and ``volatile`` are checked as Triton checks them and honoured where the target can (nvptx's
    cache operators); the host targets have no such controls and ignore them.
    ``boundary_check``/``padding_option`` belong to block pointers (``language.block_ptr``)."""
    from . import block_ptr

    pointer = _unwrap(pointer)
    if isinstance(pointer, block_ptr.block_ptr):
        return block_ptr.load(pointer, _unwrap(mask), _unwrap(other), boundary_check, padding_option)
    if block_ptr.padding(padding_option) or _unwrap(boundary_check):
        raise semantic.SemanticError(
            "padding_option and boundary_check apply to block pointers (tl.make_block_ptr) only: the compiler does "
            "not know the bounds of a tensor of pointers; mask the access instead (mask=..., other=...)")
    hints = semantic.memory_hints("tl.load", _unwrap(cache_modifier), _unwrap(eviction_policy), _unwrap(volatile))
    return semantic.load(pointer, _unwrap(mask), _unwrap(other), hints)


def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy="") -> None:
    """Write ``value`` through ``pointer`` where ``mask`` (hints as in ``load``)."""
    from . import block_ptr

    pointer = _unwrap(pointer)
    if isinstance(pointer, block_ptr.block_ptr):
        return block_ptr.store(pointer, value, _unwrap(mask), boundary_check)
    if _unwrap(boundary_check):
        raise semantic.SemanticError(
            "boundary_check applies to block pointers (tl.make_block_ptr) only: the compiler does not know the "
            "bounds of a tensor of pointers; mask the store instead (mask=...)")
    hints = semantic.memory_hints("tl.store", _unwrap(cache_modifier), _unwrap(eviction_policy))
    semantic.store(pointer, _unwrap(value), _unwrap(mask), hints)


def where(condition, x, y) -> tensor:
    """``x`` where ``condition`` holds, else ``y``; a condition that is not boolean is read as
    ``!= 0``, with Triton's warning."""
    condition = _unwrap(condition)
    if isinstance(condition, tensor) and condition.dtype != semantic.T.int1:
        from ..errors import warn

        warn(f"tl.where with a non-boolean condition is deprecated and will error out in a future triton release. "
             f"Got {condition.dtype}")
    return semantic.where(condition, _unwrap(x), _unwrap(y))


def broadcast_to(input, *shape) -> tensor:
    shape = shape[0] if len(shape) == 1 and isinstance(_unwrap(shape[0]), (tuple, list)) else shape
    return semantic.broadcast_to(semantic.to_tensor(input), _static_shape(shape))


def expand_dims(input, axis) -> tensor:
    """``input`` with a dimension of size 1 inserted at ``axis``, or at each axis of a sequence
    (axes of the result, as in Triton)."""
    x = semantic.to_tensor(_unwrap(input))
    axis = _unwrap(axis)
    axes = [_axis(a) for a in axis] if isinstance(axis, (tuple, list)) else [_axis(axis)]
    rank = len(x.shape) + len(axes)
    for a in axes:
        if not -rank <= a < rank:
            raise semantic.SemanticError(f"tl.expand_dims: invalid axis {a}, expected {-rank} <= axis < {rank}")
    axes = [a % rank for a in axes]
    if len(set(axes)) != len(axes):
        raise semantic.SemanticError(f"tl.expand_dims received duplicate axes, normalized axes = {axes}")
    for a in sorted(axes):
        x = semantic.expand_dims(x, a)
    return x


def _math(op: str, doc: str):
    def fn(x):
        return semantic.math_unary(op, _unwrap(x))
    fn.__name__, fn.__doc__ = op, doc
    return fn


exp = _math("exp", "Elementwise e**x.")
exp2 = _math("exp2", "Elementwise 2**x.")
log = _math("log", "Elementwise natural logarithm.")
log2 = _math("log2", "Elementwise base-2 logarithm.")
sqrt = _math("sqrt", "Elementwise square root.")
rsqrt = _math("rsqrt", "Elementwise 1/sqrt(x).")
sin = _math("sin", "Elementwise sine.")
cos = _math("cos", "Elementwise cosine.")
floor = _math("floor", "Elementwise floor.")
ceil = _math("ceil", "Elementwise ceiling.")


def abs(x) -> tensor:  # noqa: A001 - Triton's name
    return semantic.abs(_unwrap(x))


class PropagateNan(enum.IntEnum):
    """Whether ``maximum``/``minimum``/``clamp`` of floats return NaN when an operand is NaN (``ALL``)
    or the other operand (``NONE``, the default), as Triton's ``tl.PropagateNan``."""
    NONE = 0x0000
    ALL = 0xFFFF


def maximum(x, y, propagate_nan=PropagateNan.NONE) -> tensor:
    """The element-wise maximum. As in Triton, a Python number becomes a tensor of its own type
    first (an int int32, a float fp32: no weak typing), and bf16 computes in fp32."""
    x, y = (_promote_bf16(semantic.to_tensor(_unwrap(v))) for v in (x, y))
    return semantic.minmax("max", x, y, _propagate(propagate_nan))


def minimum(x, y, propagate_nan=PropagateNan.NONE) -> tensor:
    """The element-wise minimum, typed as ``maximum``."""
    x, y = (_promote_bf16(semantic.to_tensor(_unwrap(v))) for v in (x, y))
    return semantic.minmax("min", x, y, _propagate(propagate_nan))


def clamp(x, min, max, propagate_nan=PropagateNan.NONE) -> tensor:  # noqa: A002 - Triton's names
    """``minimum(maximum(x, min), max)`` of floats (bf16 computes in fp32, as in Triton); ``min <= max``
    is assumed."""
    x, lo, hi = (_promote_bf16(semantic.to_tensor(_unwrap(v))) for v in (x, min, max))
    lo, hi = semantic._binary_operands(lo, hi)
    x, lo = semantic._binary_operands(x, lo)
    x, hi = semantic._binary_operands(x, hi)
    if not x.dtype.is_floating():
        raise semantic.SemanticError(f"tl.clamp supports floating-point values only (as Triton), got {x.dtype}")
    nan = _propagate(propagate_nan)
    return semantic.minmax("min", semantic.minmax("max", x, lo, nan), hi, nan)


def _promote_bf16(x: tensor) -> tensor:
    return semantic.cast(x, float32) if x.dtype == bfloat16 else x


def _propagate(value) -> bool:
    value = _unwrap(value)
    if value not in (PropagateNan.NONE, PropagateNan.ALL):
        raise semantic.SemanticError(
            f"propagate_nan must be tl.PropagateNan.NONE or tl.PropagateNan.ALL, got {value!r}")
    return value == PropagateNan.ALL


def sum(input, axis=None, keep_dims=False, dtype=None) -> tensor:  # noqa: A001
    """The sum along ``axis`` (every axis when None), converted to and added in ``dtype`` when
    given (int8 ones over 32x32 wrap to 0), else narrow integers widen to 32 bits."""
    return semantic.reduce_builtin("sum", input, _unwrap(axis), _unwrap(keep_dims), _unwrap(dtype))


def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True,  # noqa: A001
        keep_dims=False):
    """The maximum along ``axis`` (every axis when None); with ``return_indices`` also its index
    (``tl.argmax``'s)."""
    return _extremum("max", input, axis, return_indices, return_indices_tie_break_left, keep_dims)


def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True,  # noqa: A001
        keep_dims=False):
    """The minimum along ``axis`` (every axis when None); with ``return_indices`` also its index."""
    return _extremum("min", input, axis, return_indices, return_indices_tie_break_left, keep_dims)


def _extremum(kind: str, input, axis, return_indices, tie_break_left, keep_dims):
    if _unwrap(return_indices):
        from . import reductions

        return reductions.with_indices(kind, _unwrap(input), _unwrap(axis), bool(_unwrap(tie_break_left)),
                                       bool(_unwrap(keep_dims)))
    return semantic.reduce_builtin(kind, input, _unwrap(axis), _unwrap(keep_dims))


def reduce(input, axis, combine_fn, keep_dims=False):
    """Reduce ``input`` (a tensor, or a tuple of tensors of one shape reduced together) along
    ``axis`` (every element when None) with the @jit ``combine_fn``; see ``language.reductions``."""
    from . import reductions

    return reductions.reduce(input, axis, combine_fn, keep_dims)


def xor_sum(input, axis=None, keep_dims=False) -> tensor:
    """The bitwise xor of the elements along ``axis`` (every axis when None); integers only."""
    return semantic.reduce_builtin("xor_sum", input, _unwrap(axis), _unwrap(keep_dims))


def zeros_like(input) -> tensor:
    """Zeros of ``input``'s shape and dtype."""
    x = semantic.to_tensor(_unwrap(input))
    return semantic.full(tuple(x.shape), 0, x.dtype)


def cdiv(x, div):
    """Ceiling division of integers (Python ints or integer tensors)."""
    return (x + div - 1) // div


def range(*args, num_stages=None, loop_unroll_factor=None, disallow_acc_multi_buffer=False,  # noqa: A001
          flatten=False, warp_specialize=False, disable_licm=False):
    """``for i in tl.range(...)``: like ``range``; the frontend compiles it to a loop.
    ``num_stages`` sets how deep GPU targets pipeline the loads feeding a ``tl.dot`` in it
    (``passes.software_pipeline``); the other flags are Triton's hints, accepted so kernels port,
    and used by no target yet."""
    import builtins

    return builtins.range(*(_unwrap(a) for a in args))


def static_range(arg1, arg2=None, step=None):
    """``for i in tl.static_range(...)``: a loop over constants, unrolled at compile time; takes
    ``range``'s arguments, and ``step`` by name as Triton's does."""
    import builtins

    args = [a for a in (arg1, arg2, step) if a is not None]
    if arg2 is None and step is not None:
        args = [0, *args]
    bounds = [_static_int(a, "tl.static_range bound") for a in args]
    return builtins.range(*bounds)


def static_assert(cond, msg: str = "") -> None:
    """Fail compilation (or interpretation) when a compile-time condition is false."""
    if isinstance(_unwrap(cond), tensor):
        raise semantic.SemanticError("tl.static_assert needs a compile-time condition (constexprs)")
    msg = _unwrap(msg)
    if not _unwrap(cond):
        raise semantic.StaticAssertionFailed(f"static assertion failed{': ' + msg if msg else ''}")


def device_print(prefix, *args, hex=False) -> None:
    """Print every element of each argument in every program, as ``pid (x, y, z) idx (i)
    <prefix>: <value>`` (Triton's format); ``hex=True`` prints the bits in hexadecimal."""
    from . import debug

    debug.device_print(prefix, args, _unwrap(hex))


def static_print(*values, sep: str = " ", end: str = "\n", file=None, flush: bool = False) -> None:
    """Print compile-time values (constexprs, and tensors by type and shape) while compiling, as
    ``print(*values, sep=sep, end=end)`` would; ``file`` and ``flush`` are accepted as in Triton."""
    from . import debug

    debug.static_print(values, _unwrap(sep), _unwrap(end))


def device_assert(cond, msg="", mask=None) -> None:
    """Fail the launch with ``DeviceAssertionError`` where ``cond`` is false (and ``mask`` true);
    checked only in debug mode (``debug=True``, ``@jit(debug=True)`` or ``TRITIUM_DEBUG=1``)."""
    from . import debug

    debug.device_assert(cond, msg, mask)


def debug_barrier() -> None:
    """Every thread of the program waits here, and sees the others' memory writes made before it
    (a no-op where a program is one thread: the cpu and the interpreter)."""
    semantic.builder().barrier()


def multiple_of(input, values):
    """A hint that ``input`` is a multiple of ``values`` (one per dimension); the value itself is
    unchanged. Recorded for the axis analysis (``passes/axis_info``)."""
    return _hint(input, values, "divisibility")


def max_contiguous(input, values):
    """A hint that runs of ``values`` elements of ``input`` are contiguous; the value is unchanged."""
    return _hint(input, values, "contiguity")


def max_constancy(input, values):
    """A hint that runs of ``values`` elements of ``input`` are equal; the value is unchanged."""
    return _hint(input, values, "constancy")


def _hint(input, values, field: str):
    values = [_unwrap(v) for v in (values if isinstance(values, (list, tuple)) else [values])]
    if not isinstance(input, tensor):
        return input
    if len(values) != (len(input.shape) or 1) or not all(isinstance(v, int) and v > 0 for v in values):
        raise semantic.SemanticError(f"the hint needs one positive constant integer per dimension of the "
                                     f"{len(input.shape)}-d input, got {values!r}")
    semantic.builder().hint(input.handle, field, values)
    return input


# Triton builtins this language does not have yet: using one raises errors.NotImplementedYet.
NOT_YET = frozenset()


def _axis(axis) -> int:
    axis = _unwrap(axis)
    if not isinstance(axis, int):
        raise semantic.SemanticError(f"axis must be a constant integer, got {axis!r}")
    return axis


def _static_int(v, what: str) -> int:
    v = _unwrap(v)
    if isinstance(v, tensor) or not isinstance(v, int):
        raise semantic.SemanticError(
            f"{what} must be a compile-time constant (a tl.constexpr parameter or a literal), got {v!r}")
    return v


def _static_shape(shape) -> tuple[int, ...]:
    shape = _unwrap(shape)
    if not isinstance(shape, (tuple, list)):
        shape = (shape,)
    return tuple(_static_int(s, "shape") for s in shape)
