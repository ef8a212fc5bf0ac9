"""``tritium.language`` (import as ``tl``): the kernel language, spelled as Triton spells it."""

from .core import (
    NOT_YET, abs, arange, broadcast_to, cdiv, ceil, constexpr, cos, exp, exp2, expand_dims, floor, full,
    load, log, log2, max, max_constancy, max_contiguous, maximum, min, minimum, multiple_of, num_programs,
    program_id, range, rsqrt, sin, sqrt, static_assert, static_range, store, sum, tensor, where, zeros,
)
from .core import (PropagateNan, clamp, debug_barrier, device_assert, device_print, reduce, static_print,
                   xor_sum, zeros_like)
from . import math
from .dot import dot
from .math import div_rn, erf, fdiv, fma, sqrt_rn, umulhi
from .standard import sigmoid, softmax, swizzle2d
from .random import (pair_uniform_to_normal, philox, rand, rand4x, randint, randint4x, randn, randn4x,
                     uint_to_uniform_float)
from .dtypes import (
    bfloat16, dtype, float16, float32, float64, int1, int8, int16, int32, int64, pointer_type, uint8,
    uint16, uint32, uint64,
)

float = float32  # noqa: A001 - the spellings tl.float / tl.double are Triton's too
double = float64

__all__ = [
    "abs", "arange", "bfloat16", "broadcast_to", "cdiv", "ceil", "constexpr", "cos", "double", "dtype",
    "exp", "exp2", "expand_dims", "float", "float16", "float32", "float64", "floor", "full", "int1",
    "int8", "int16", "int32", "int64", "load", "log", "log2", "max", "maximum", "min", "minimum",
    "max_constancy", "max_contiguous", "multiple_of", "num_programs", "pointer_type", "program_id", "range",
    "rsqrt", "sin", "sqrt", "static_assert", "static_range", "store", "sum", "tensor", "uint8", "uint16",
    "uint32", "uint64", "where", "zeros",
    "device_assert", "device_print", "static_print",
    "PropagateNan", "clamp", "div_rn", "erf", "fdiv", "fma", "math", "sigmoid", "softmax", "sqrt_rn", "umulhi",
    "debug_barrier", "reduce", "swizzle2d", "xor_sum", "zeros_like",
    "pair_uniform_to_normal", "philox", "rand", "rand4x", "randint", "randint4x", "randn", "randn4x",
    "uint_to_uniform_float",
    "dot",
]


#: the builtins that are also methods of tensors, as in Triton (``x.sum(axis=0)``, ``x.exp()``)
MEMBER_FUNCTIONS = ("abs", "broadcast_to", "cdiv", "ceil", "cos", "div_rn", "erf", "exp", "exp2", "expand_dims",
                    "fdiv", "floor", "fma", "log", "log2", "max", "min", "reduce", "rsqrt", "sigmoid", "sin",
                    "softmax", "sqrt", "sqrt_rn", "sum", "umulhi", "xor_sum")


for _name in MEMBER_FUNCTIONS:  # a plain function on a class binds the tensor as its first argument
    setattr(tensor, _name, globals()[_name])
del _name


def __getattr__(name: str):
    from ..errors import NotImplementedYet

    if name in NOT_YET:
        raise NotImplementedYet(f"tl.{name} is a Triton builtin that tritium does not implement yet")
    raise AttributeError(f"module 'tritium.language' has no attribute '{name}'")
