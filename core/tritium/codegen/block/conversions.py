"""Float conversions the x86 backend gets wrong or hands to runtime helpers, lowered inline.

On this target LLVM lowers ``fptrunc`` double -> half / bfloat and float -> bfloat (and so every int
-> bfloat) to calls of compiler-rt's ``__truncdfhf2``, ``__truncdfbf2`` and ``__truncsfbf2``, which
a JIT-loaded kernel cannot resolve. Here they become vector-friendly integer code with one
round-to-nearest-even, as the hardware conversions of GPUs do. LLVM still calls
``__truncsfbf2`` for bf16 arithmetic (computed in float, rounded back), so the driver also
defines those helpers for the JIT (``helpers_ir``), with the same code.

* double -> half / bfloat: double -> float rounded *to odd* (truncate, then set the last bit if
  anything was dropped), then float -> half (an instruction) or float -> bfloat (integer rounding).
  Rounding to odd with at least two spare bits makes the second rounding exact, where two
  round-to-nearest steps would round some ties twice.
* int -> bfloat: exactly to double (ints wider than 53 bits are first rounded to odd at 53 bits),
  then as double -> bfloat.
* int -> half: int -> float -> half (an int that float rounds is beyond half's range, so one
  rounding), with the overflow to inf made explicit: LLVM folds ``fpext(sitofp x to half)`` into
  one int -> float conversion when ``x`` has few significant bits, losing the inf.
"""

from __future__ import annotations

from llvmlite import ir as ll

from .. import intrinsics
from ..types import BFloatType, const, scalar_of

F32, F64 = ll.FloatType(), ll.DoubleType()
HALF_OVERFLOW = 65520.0  # the smallest magnitude that rounds to inf in half


def _like(t: ll.Type, elem: ll.Type) -> ll.Type:
    """``elem``, or a vector of it as wide as ``t``."""
    return ll.VectorType(elem, t.count) if isinstance(t, ll.VectorType) else elem


def _is(t: ll.Type, name: str) -> bool:
    return str(scalar_of(t)) == name


def convert(b: ll.IRBuilder, method: str, value: ll.Value, ty: ll.Type) -> ll.Value:
    """``b.<method>(value, ty)`` with round-to-nearest-even and no runtime helper calls."""
    src = value.type
    if method == "fptrunc" and _is(ty, "bfloat"):
        wide = value if _is(src, "float") else _double_to_float_odd(b, value)
        return _float_to_bfloat(b, wide, ty)
    if method == "fptrunc" and _is(ty, "half") and _is(src, "double"):
        return b.fptrunc(_double_to_float_odd(b, value), ty)
    if method in ("sitofp", "uitofp") and _is(ty, "bfloat"):
        return _float_to_bfloat(b, _double_to_float_odd(b, _int_to_double_odd(b, method, value)), ty)
    if method in ("sitofp", "uitofp") and _is(ty, "half"):
        return _int_to_half(b, getattr(b, method)(value, _like(ty, F32)), ty)
    return getattr(b, method)(value, ty)


def bfloat_bits_to_float(b: ll.IRBuilder, x: ll.Value) -> ll.Value:
    """A bfloat (scalar or vector) as the float with the same value: its 16 bits, shifted up."""
    i16, i32 = _like(x.type, ll.IntType(16)), _like(x.type, ll.IntType(32))
    return b.bitcast(b.shl(b.zext(b.bitcast(x, i16), i32), const(i32, 16)), _like(x.type, F32))


def _int_to_half(b: ll.IRBuilder, wide: ll.Value, ty: ll.Type) -> ll.Value:
    """An int already converted to float, to half; ints past half's range are explicitly inf.

    LLVM folds ``fpext(fptrunc(sitofp x))`` into ``sitofp x`` when ``x`` has few significant bits
    (e.g. ``k * 2**26``), ignoring half's exponent range; the select keeps the overflow whatever
    is folded.
    """
    inf = float("inf")
    overflow = b.fcmp_ordered(">=", intrinsics.call(b, "llvm.fabs", [wide]), const(wide.type, HALF_OVERFLOW))
    signed_inf = b.select(b.fcmp_ordered("<", wide, const(wide.type, 0.0)), const(ty, -inf), const(ty, inf))
    return b.select(overflow, signed_inf, b.fptrunc(wide, ty))


def _double_to_float_odd(b: ll.IRBuilder, x: ll.Value) -> ll.Value:
    """``x`` (double) rounded to float toward zero, with the last bit set when inexact."""
    ft, it = _like(x.type, F32), _like(x.type, ll.IntType(32))
    nearest = b.fptrunc(x, ft)
    back = b.fpext(nearest, x.type)
    away = b.fcmp_ordered(">", intrinsics.call(b, "llvm.fabs", [back]), intrinsics.call(b, "llvm.fabs", [x]))
    inexact = b.fcmp_unordered("!=", back, x)  # NaN too: its payload stays non-zero
    bits = b.sub(b.bitcast(nearest, it), b.zext(away, it))  # one step toward zero (sign-magnitude)
    return b.bitcast(b.or_(bits, b.zext(inexact, it)), ft)


def _float_to_bfloat(b: ll.IRBuilder, x: ll.Value, ty: ll.Type) -> ll.Value:
    """Round float to bfloat to nearest even on the bits; NaNs stay (quiet) NaNs."""
    it = _like(x.type, ll.IntType(32))
    bits = b.bitcast(x, it)
    odd = b.and_(b.lshr(bits, const(it, 16)), const(it, 1))
    rounded = b.lshr(b.add(b.add(bits, const(it, 0x7FFF)), odd), const(it, 16))
    quiet = b.or_(b.lshr(bits, const(it, 16)), const(it, 0x40))
    result = b.select(b.fcmp_unordered("uno", x, x), quiet, rounded)
    return b.bitcast(b.trunc(result, _like(x.type, ll.IntType(16))), ty)


def _int_to_double_odd(b: ll.IRBuilder, method: str, x: ll.Value) -> ll.Value:
    """An int as a double: exact up to 53 bits, wider ints rounded to odd at 53 bits."""
    width = scalar_of(x.type).width
    dt = _like(x.type, F64)
    if width <= 32:
        return getattr(b, method)(x, dt)
    signed = method == "sitofp"
    magnitude = intrinsics.call(b, "llvm.abs", [x, ll.Constant(ll.IntType(1), 0)]) if signed else x
    lz = intrinsics.call(b, "llvm.ctlz", [magnitude, ll.Constant(ll.IntType(1), 0)])
    spare = const(x.type, width - 53)
    drop = b.select(b.icmp_unsigned("<", lz, spare), b.sub(spare, lz), const(x.type, 0))
    mask = b.sub(b.shl(const(x.type, 1), drop), const(x.type, 1))
    sticky = b.zext(b.icmp_unsigned("!=", b.and_(magnitude, mask), const(x.type, 0)), x.type)
    kept = b.or_(b.and_(magnitude, b.xor(mask, const(x.type, -1))), b.shl(sticky, drop))
    result = b.uitofp(kept, dt)  # at most 53 significant bits: exact
    if not signed:
        return result
    return b.select(b.icmp_signed("<", x, const(x.type, 0)), b.fneg(result), result)


#: the compiler-rt helpers LLVM calls for these conversions on x86-64: name, source, result
RUNTIME_HELPERS = (("__truncsfbf2", "float", "bfloat"), ("__truncdfbf2", "double", "bfloat"),
                   ("__truncdfhf2", "double", "half"))


def helpers_ir(triple: str, data_layout: str) -> str:
    """LLVM IR defining ``RUNTIME_HELPERS`` with the inline conversions (none calls another)."""
    types = {"float": F32, "double": F64, "half": ll.HalfType(), "bfloat": BFloatType()}
    module = ll.Module(name="tritium_cpu_helpers")
    module.triple, module.data_layout = triple, data_layout
    for name, src, dst in RUNTIME_HELPERS:
        fn = ll.Function(module, ll.FunctionType(types[dst], [types[src]]), name)
        b = ll.IRBuilder(fn.append_basic_block("entry"))
        b.ret(convert(b, "fptrunc", fn.args[0], types[dst]))
    return str(module)
