"""Lowering of one elementwise ``arith``/``math`` op to LLVM IR.

Operands are llvmlite values that are all scalars or all vectors of one width (a select's
condition may stay scalar), so the same emitter serves scalar code, SIMD chunks of a tensor and
GPU per-thread values. ``EMITTERS`` maps each MLIR op name to its emitter.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from llvmlite import ir as ll

from ..errors import TritiumError
from ..ir.mlir import ir
from . import fp8, intrinsics
from .math import INTRINSICS, LIBM, TRANSCENDENTAL, MathHooks
from .types import const, scalar_of

Emitter = Callable[[ll.IRBuilder, Sequence[ll.Value], ll.Type, Mapping[str, ir.Attribute], MathHooks],
                   ll.Value]
EMITTERS: dict[str, Emitter] = {}
#: the unit attribute marking a correctly rounded ``math.sqrt`` / ``arith.divf`` (``tl.sqrt_rn``, ``tl.div_rn``)
IEEE = "tile.ieee"
#: the unit attribute marking an ``arith.truncf`` that rounds toward zero (``fp_downcast_rounding="rtz"``)
TOWARD_ZERO = "tile.rtz"


def emit(builder: ll.IRBuilder, op_name: str, operands: Sequence[ll.Value], result_type: ll.Type,
         attrs: Mapping[str, ir.Attribute], hooks: MathHooks) -> ll.Value:
    """Emit ``op_name`` on ``operands``; ``result_type`` has the operands' width."""
    emitter = EMITTERS.get(op_name)
    if emitter is None:
        raise TritiumError(f"op {op_name} is not an elementwise op this code generator knows")
    if not hooks.bf16_arithmetic and op_name in BF16_IN_FP32 and str(scalar_of(operands[0].type)) == "bfloat":
        wide = ll.VectorType(ll.FloatType(), result_type.count) if isinstance(result_type, ll.VectorType) \
            else ll.FloatType()
        operands = [hooks.convert(builder, "fpext", x, wide) for x in operands]
        if str(scalar_of(result_type)) != "bfloat":  # to an integer: from the exact fp32 value
            return emitter(builder, operands, result_type, attrs, hooks)
        return hooks.convert(builder, "fptrunc", emitter(builder, operands, wide, attrs, hooks), result_type)
    return emitter(builder, operands, result_type, attrs, hooks)


#: float arithmetic (and conversions to integers) a target without bf16 arithmetic
#: (``MathHooks.bf16_arithmetic``) computes in fp32
BF16_IN_FP32 = frozenset({"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf", "arith.negf",
                          "math.fma", "math.absf", "arith.maximumf", "arith.minimumf", "arith.maxnumf",
                          "arith.minnumf", "arith.fptosi", "arith.fptoui"})


def scalar_constant(attr: ir.Attribute, t: ll.Type) -> ll.Constant:
    """The LLVM constant of type ``t`` of a scalar integer, boolean or float attribute."""
    fmt = fp8.format_of(attr.type)
    if fmt is not None:
        return ll.Constant(t, fp8.constant_bits(ir.FloatAttr(attr).value, fmt))
    if isinstance(t, ll.IntType):
        value = attr.value if isinstance(attr, ir.BoolAttr) else ir.IntegerAttr(attr).value
        return ll.Constant(t, int(value))
    return ll.Constant(t, ir.FloatAttr(attr).value)


def _simple(method: str) -> Emitter:
    return lambda b, ops, ty, attrs, hooks: getattr(b, method)(*ops)


def _float(method: str) -> Emitter:
    """A float add, subtract or multiply, with the target's fast-math flags."""
    return lambda b, ops, ty, attrs, hooks: getattr(b, method)(*ops, flags=hooks.fp_flags)


def _divf(b, ops, ty, attrs, hooks):
    if IEEE in attrs:  # tl.div_rn: correctly rounded wherever the target approximates '/'
        return b.fdiv(*ops)
    return hooks.divide(b, *ops)


def _cast(method: str) -> Emitter:
    return lambda b, ops, ty, attrs, hooks: ops[0] if ops[0].type == ty else getattr(b, method)(ops[0], ty)


def _ptr_cast(b, ops, ty, attrs, hooks):
    """``tile.ptr_cast``: pointers are opaque, so only a change of kind (int <-> pointer) is an instruction."""
    x = ops[0]
    if x.type == ty:
        return x
    from_ptr, to_ptr = (isinstance(scalar_of(t), ll.PointerType) for t in (x.type, ty))
    if from_ptr and to_ptr:
        return b.addrspacecast(x, ty)
    return b.inttoptr(x, ty) if to_ptr else b.ptrtoint(x, ty)


def _convert(method: str) -> Emitter:
    """A conversion that produces floats, through the target's hooks."""
    return lambda b, ops, ty, attrs, hooks: ops[0] if ops[0].type == ty else hooks.convert(b, method, ops[0], ty)


def _intrinsic(name: str) -> Emitter:
    return lambda b, ops, ty, attrs, hooks: intrinsics.call(b, name, ops)


def _safe_divisor(b: ll.IRBuilder, num: ll.Value, den: ll.Value, signed: bool) -> ll.Value:
    """Replace divisors that would trap (0, and -1 under INT_MIN) by 1.

    LLVM scalarises vector division on x86 and masked-off lanes often hold zeros; Triton kernels
    must not fault there. Dividing by 1 yields the wrapped result for INT_MIN / -1.
    """
    t = den.type
    bad = b.icmp_unsigned("==", den, const(t, 0))
    if signed:
        width = scalar_of(t).width
        overflow = b.and_(b.icmp_signed("==", num, const(t, -(1 << (width - 1)))),
                          b.icmp_signed("==", den, const(t, -1)))
        bad = b.or_(bad, overflow)
    return b.select(bad, const(t, 1), den)


def _division(method: str, signed: bool) -> Emitter:
    def emit_div(b, ops, ty, attrs, hooks):
        num, den = ops
        return getattr(b, method)(num, _safe_divisor(b, num, den, signed))
    return emit_div


_ICMP = {0: ("==", True), 1: ("!=", True), 2: ("<", True), 3: ("<=", True), 4: (">", True),
         5: (">=", True), 6: ("<", False), 7: ("<=", False), 8: (">", False), 9: (">=", False)}
_FCMP = {1: ("==", True), 2: (">", True), 3: (">=", True), 4: ("<", True), 5: ("<=", True),
         6: ("!=", True), 7: ("ord", True), 8: ("==", False), 9: (">", False), 10: (">=", False),
         11: ("<", False), 12: ("<=", False), 13: ("!=", False), 14: ("uno", False)}


def _predicate(attrs: Mapping[str, ir.Attribute]) -> int:
    return ir.IntegerAttr(attrs["predicate"]).value


def _cmpi(b, ops, ty, attrs, hooks):
    op, signed = _ICMP[_predicate(attrs)]
    return (b.icmp_signed if signed else b.icmp_unsigned)(op, *ops)


def _cmpf(b, ops, ty, attrs, hooks):
    pred = _predicate(attrs)
    if pred in (0, 15):  # always false / always true
        return const(ty, int(pred == 15))
    op, ordered = _FCMP[pred]
    return hooks.compare(b, op, ordered, *ops)


def _math(fn: str) -> Emitter:
    """A ``math`` op through the target's hooks; half types compute in f32 (as Triton does)."""
    def emit_math(b, ops, ty, attrs, hooks):
        if IEEE in attrs:  # tl.sqrt_rn: LLVM's sqrt is correctly rounded on every target
            return intrinsics.call(b, INTRINSICS[fn], ops)
        narrow = fn in TRANSCENDENTAL and str(scalar_of(ty)) in ("half", "bfloat")
        if not narrow:
            return hooks.call(b, fn, ops)
        wide = ll.VectorType(ll.FloatType(), ty.count) if isinstance(ty, ll.VectorType) else ll.FloatType()
        return hooks.convert(b, "fptrunc", hooks.call(b, fn, [hooks.convert(b, "fpext", x, wide) for x in ops]), ty)
    return emit_math


def _negf(b, ops, ty, attrs, hooks):
    return b.fneg(ops[0])


def _float_to(b: ll.IRBuilder, x: ll.Value, ty: ll.Type, hooks: MathHooks, src_fp8: str | None = None,
              dst_fp8: str | None = None) -> ll.Value:
    """Float ``x`` converted to the float type ``ty``, rounding to nearest; ``src_fp8``/``dst_fp8``
    name the fp8 format when ``x``/the result are fp8 bits (``i8``)."""
    if src_fp8 is not None:
        x = fp8.to_f32(b, x, src_fp8)  # exact, as is every float type wider than fp8 it then goes to
    if dst_fp8 is not None:
        wider = _float_to(b, x, fp8.f32_like(x.type), hooks)  # f16/bf16: exact
        sign = fp8.half_sign(b, x) if str(scalar_of(x.type)) == "half" else None
        return fp8.from_f32(b, wider, ty, dst_fp8, nan_sign=sign)
    if x.type == ty:
        return x
    if fp8.width(scalar_of(ty)) > fp8.width(scalar_of(x.type)):
        return hooks.convert(b, "fpext", x, ty)
    return hooks.convert(b, "fptrunc", x, ty)


def _fp8_format(attrs: Mapping[str, ir.Attribute]) -> str | None:
    attr = attrs.get(fp8.FORMAT_ATTRIBUTE)
    return None if attr is None else ir.StringAttr(attr).value


def _extf(b, ops, ty, attrs, hooks):
    return _float_to(b, ops[0], ty, hooks, src_fp8=_fp8_format(attrs))


def _truncf(b, ops, ty, attrs, hooks):
    fmt = _fp8_format(attrs)
    nearest = _float_to(b, ops[0], ty, hooks, dst_fp8=fmt)
    if TOWARD_ZERO not in attrs:
        return nearest
    back = _float_to(b, nearest, ops[0].type, hooks, src_fp8=fmt)
    return fp8.toward_zero(b, ops[0], nearest, back)


def _int_resize(int_method: str) -> Emitter:
    """``index_cast``-style casts that extend or truncate depending on the widths."""
    def emit_cast(b, ops, ty, attrs, hooks):
        src = scalar_of(ops[0].type).width
        dst = scalar_of(ty).width
        if src == dst:
            return ops[0]
        return getattr(b, int_method if dst > src else "trunc")(ops[0], ty)
    return emit_cast


EMITTERS.update({
    "arith.addi": _simple("add"), "arith.subi": _simple("sub"), "arith.muli": _simple("mul"),
    "arith.andi": _simple("and_"), "arith.ori": _simple("or_"), "arith.xori": _simple("xor"),
    "arith.shli": _simple("shl"), "arith.shrsi": _simple("ashr"), "arith.shrui": _simple("lshr"),
    "arith.divsi": _division("sdiv", True), "arith.divui": _division("udiv", False),
    "arith.remsi": _division("srem", True), "arith.remui": _division("urem", False),
    "arith.addf": _float("fadd"), "arith.subf": _float("fsub"), "arith.mulf": _float("fmul"),
    "arith.divf": _divf, "arith.remf": lambda b, ops, ty, attrs, hooks: hooks.remainder(b, *ops),
    "arith.negf": _negf,
    "arith.maxnumf": _intrinsic("llvm.maxnum"), "arith.minnumf": _intrinsic("llvm.minnum"),
    "arith.maximumf": _intrinsic("llvm.maximum"), "arith.minimumf": _intrinsic("llvm.minimum"),
    "arith.maxsi": _intrinsic("llvm.smax"), "arith.minsi": _intrinsic("llvm.smin"),
    "arith.maxui": _intrinsic("llvm.umax"), "arith.minui": _intrinsic("llvm.umin"),
    "arith.extf": _extf, "arith.truncf": _truncf,
    "arith.sitofp": _convert("sitofp"), "arith.uitofp": _convert("uitofp"),
    "arith.fptosi": _cast("fptosi"), "arith.fptoui": _cast("fptoui"),
    "arith.extsi": _cast("sext"), "arith.extui": _cast("zext"), "arith.trunci": _cast("trunc"),
    "arith.bitcast": _cast("bitcast"), "tile.ptr_cast": _ptr_cast,
    "arith.index_cast": _int_resize("sext"), "arith.index_castui": _int_resize("zext"),
    "arith.cmpi": _cmpi, "arith.cmpf": _cmpf, "arith.select": _simple("select"),
})
EMITTERS.update({f"math.{fn}": _math(fn) for fn in (
    "exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "floor",
    "ceil", "round", "roundeven", "trunc", "absf", "absi", "fma", "copysign", "erf", *LIBM)})

#: ops whose cost justifies keeping their result in memory rather than recomputing it
EXPENSIVE = frozenset({"arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.divf",
                       "arith.remf", *(name for name in EMITTERS if name.startswith("math.")
                                       and name not in ("math.absf", "math.absi"))})

