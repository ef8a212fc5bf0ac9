"""Math functions behind a hook object, so each target picks its implementations.

The default lowers to LLVM intrinsics (``llvm.exp.*``), which every backend accepts but which the
x86 backend scalarises into libm calls; a target substitutes vector code or a device library by
subclassing ``MathHooks`` and overriding ``call`` for the functions it cares about.
"""

from __future__ import annotations

from typing import Sequence

from llvmlite import ir as ll

from ..errors import TritiumError
from . import intrinsics
from .types import const, scalar_of

#: MLIR ``math`` op name -> LLVM intrinsic of the same meaning
INTRINSICS = {
    "exp": "llvm.exp", "exp2": "llvm.exp2", "log": "llvm.log", "log2": "llvm.log2",
    "log10": "llvm.log10", "sqrt": "llvm.sqrt", "sin": "llvm.sin", "cos": "llvm.cos",
    "tan": "llvm.tan", "tanh": "llvm.tanh", "floor": "llvm.floor", "ceil": "llvm.ceil",
    "round": "llvm.round", "roundeven": "llvm.roundeven", "trunc": "llvm.trunc",
    "absf": "llvm.fabs", "fma": "llvm.fma", "copysign": "llvm.copysign",
}

#: functions without an LLVM intrinsic that every back end lowers: the C library's (``erff`` for
#: f32), called per element; a GPU target maps them to its device library (libdevice, OCML)
LIBM = {"erf": "erf", "erfc": "erfc", "acos": "acos", "acosh": "acosh", "asin": "asin", "asinh": "asinh",
        "atan": "atan", "atanh": "atanh", "cbrt": "cbrt", "cosh": "cosh", "sinh": "sinh", "expm1": "expm1",
        "log1p": "log1p", "atan2": "atan2", "powf": "pow"}

#: functions computed in f32 when the argument is f16/bf16 (as Triton does; fma too, so that no
#: target needs a half-precision FMA: the f32 product of halves is exact)
TRANSCENDENTAL = frozenset({"exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "sin", "cos",
                            "tan", "tanh", "fma", *LIBM})


class MathUnavailable(TritiumError):
    """A math function a target cannot compute for a type (``MathHooks.call`` raises it): the code
    generator reports it at the kernel's source line, before LLVM could abort or leave an undefined
    symbol."""


class MathHooks:
    """Emits ``math`` dialect functions on scalars or vectors; override ``call`` per target. The
    base of both generators' hooks (``device.DeviceHooks``, ``block.hooks.BlockHooks``)."""

    #: the kernel being generated (``codegen.context.KernelContext``: its name, LLVM function,
    #: arguments, program ids and options), set by the generator before it emits the kernel's body
    kernel = None

    #: LLVM fast-math flags on every float add, subtract and multiply: a GPU target gives
    #: ``("contract",)`` so that ``a * b + c`` becomes one FMA (Triton's ``enable_fp_fusion``)
    fp_flags: tuple[str, ...] = ()

    #: whether the back end computes bf16 arithmetic (``fadd bfloat``, ...); a target whose LLVM back
    #: end cannot select it (wasm) says False, and float arithmetic on bf16 is then computed in fp32
    #: and rounded back, through ``convert`` (the same results: fp32 holds over twice bf16's precision)
    bf16_arithmetic: bool = True

    def divide(self, builder: ll.IRBuilder, x: ll.Value, y: ll.Value) -> ll.Value:
        """``x / y`` of floats (``arith.divf``); a target may use an approximation where Triton does
        (NVIDIA's ``div.full.f32``)."""
        return builder.fdiv(x, y)

    def remainder(self, builder: ll.IRBuilder, x: ll.Value, y: ll.Value) -> ll.Value:
        """``fmod(x, y)`` of floats (``arith.remf``: Python's ``%`` on floats, ``libdevice.fmod``),
        exact. LLVM's ``frem`` is, where the back end calls ``fmod`` or computes it exactly; a target
        whose back end expands it with a rounded quotient (NVPTX) computes it another way."""
        return builder.frem(x, y)

    def call(self, builder: ll.IRBuilder, fn: str, args: Sequence[ll.Value]) -> ll.Value:
        """``fn`` (an MLIR ``math`` op name without the prefix) applied to ``args``; raise
        ``MathUnavailable`` for a function the target cannot compute for the arguments' type."""
        if fn == "rsqrt":
            return builder.fdiv(const(args[0].type, 1.0), intrinsics.call(builder, "llvm.sqrt", args))
        if fn == "absi":
            return intrinsics.call(builder, "llvm.abs", [args[0], ll.Constant(ll.IntType(1), 0)])
        if fn in LIBM:
            element = scalar_of(args[0].type)
            name = LIBM[fn] + ("f" if isinstance(element, ll.FloatType) else "")
            callee = intrinsics.declare(builder.module, name, element, [element] * len(args))
            return intrinsics.per_element(builder, args, lambda b, xs: b.call(callee, xs))
        name = INTRINSICS.get(fn)
        if name is None:
            raise MathUnavailable(f"math function '{fn}' is not supported yet")
        return intrinsics.call(builder, name, args)

    def convert(self, builder: ll.IRBuilder, method: str, value: ll.Value, ty: ll.Type) -> ll.Value:
        """A float conversion (``fptrunc``, ``fpext``, ``sitofp`` or ``uitofp``, the IRBuilder method) of
        ``value`` to ``ty``. A target whose backend would call a runtime helper for some pairs lowers
        those itself."""
        return getattr(builder, method)(value, ty)

    def compare(self, builder: ll.IRBuilder, op: str, ordered: bool, x: ll.Value, y: ll.Value) -> ll.Value:
        """``arith.cmpf``: the ordered (or unordered) comparison ``op`` (LLVM's ``fcmp`` spelling:
        ``"=="``, ``"<"``, ``"ord"``, ...) of floats. A target whose back end mishandles some types'
        compares lowers those itself."""
        return (builder.fcmp_ordered if ordered else builder.fcmp_unordered)(op, x, y)

