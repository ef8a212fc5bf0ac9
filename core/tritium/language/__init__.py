"""``tritium.language`` (import as ``tl``): the kernel language, spelled as Triton spells it."""

from .core import (
    NOT_YET, abs, arange, broadcast_to, cdiv, ceil, constexpr, cos, exp, exp2, expand_dims, floor, full,
    load, log, log2, max, max_constancy, max_contiguous, maximum, min, minimum, multiple_of, num_programs,
    program_id, range, rsqrt, sin, sqrt, static_assert, static_range, store, sum, tensor, where, zeros,
)
from .core import (PropagateNan, clamp, condition, const, debug_barrier, device_assert, device_print, reduce,
                   static_print, xor_sum, zeros_like)
from .tuples import slice, tuple  # noqa: A004 - Triton's names
from .reductions import argmax, argmin, reduce_or
from .scan import associative_scan, cumprod, cumsum
from . import extra, math, target_info
from .functions import add, assume, broadcast, cast, item, mul, sub
from .atomics import (atomic_add, atomic_and, atomic_cas, atomic_max, atomic_min, atomic_or, atomic_xchg,
                      atomic_xor)
from .dot import dot
from .dot_scaled import dot_scaled
from .tensor_descriptor import (load_tensor_descriptor, make_tensor_descriptor, store_tensor_descriptor,
                                tensor_descriptor)
from .elementwise_fns import inline_asm_elementwise, map_elementwise
from .block_ptr import advance, make_block_ptr
from .sorting import bitonic_merge, gather, histogram, sort, topk
from .math import div_rn, erf, fdiv, fma, sqrt_rn, umulhi
from .standard import sigmoid, softmax, swizzle2d
from .shape import (TRITON_MAX_TENSOR_NUMEL, cat, flip, interleave, join, permute, ravel, reshape, split, trans,
                    view)
from .random import (pair_uniform_to_normal, philox, philox_impl, rand, rand4x, randint, randint4x, randn, randn4x,
                     uint_to_uniform_float)
from .dtypes import (
    bfloat16, block_type, constexpr_type, dtype, float8e4b8, float8e4b15, float8e4nv, float8e5, float8e5b16, float16, float32, float64, int1,
    int8, int16, int32, int64, pi32_t, pointer_type, str_to_ty, uint8, uint16, uint32, uint64, void,
)

float = float32  # noqa: A001 - the spellings tl.float / tl.double are Triton's too
double = float64

__all__ = [
    "add", "assume", "broadcast", "cast", "extra", "mul", "sub", "target_info",
    "abs", "arange", "bfloat16", "broadcast_to", "cdiv", "ceil", "constexpr", "cos", "double", "dtype",
    "exp", "exp2", "expand_dims", "float", "float16", "float32", "float64", "floor", "full", "int1",
    "int8", "int16", "int32", "int64", "load", "log", "log2", "max", "maximum", "min", "minimum",
    "max_constancy", "max_contiguous", "multiple_of", "num_programs", "pointer_type", "program_id", "range",
    "rsqrt", "sin", "sqrt", "static_assert", "static_range", "store", "sum", "tensor", "uint8", "uint16",
    "uint32", "uint64", "where", "zeros",
    "float8e4b8", "float8e4b15", "float8e4nv", "float8e5", "float8e5b16",
    "device_assert", "device_print", "static_print",
    "PropagateNan", "clamp", "div_rn", "erf", "fdiv", "fma", "math", "sigmoid", "softmax", "sqrt_rn", "umulhi",
    "debug_barrier", "reduce", "swizzle2d", "xor_sum", "zeros_like",
    "pair_uniform_to_normal", "philox", "philox_impl", "rand", "rand4x", "randint", "randint4x", "randn", "randn4x",
    "uint_to_uniform_float",
    "TRITON_MAX_TENSOR_NUMEL", "cat", "flip", "interleave", "join", "permute", "ravel", "reshape", "split",
    "trans", "view",
    "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_xchg", "atomic_xor",
    "argmax", "argmin", "associative_scan", "cumprod", "cumsum", "reduce_or",
    "dot", "dot_scaled", "load_tensor_descriptor", "make_tensor_descriptor", "store_tensor_descriptor",
    "tensor_descriptor", "inline_asm_elementwise", "map_elementwise", "advance", "make_block_ptr",
    "bitonic_merge", "gather", "histogram", "sort", "topk",
    "block_type", "condition", "const", "constexpr_type", "pi32_t", "slice", "str_to_ty", "tuple", "void",
]


#: the builtins that are also methods of tensors, as in Triton (``x.sum(axis=0)``, ``x.exp()``)
MEMBER_FUNCTIONS = ("abs", "advance", "cast", "item", "argmax", "argmin", "associative_scan", "atomic_add", "atomic_and", "atomic_cas",
                    "atomic_max", "atomic_min", "atomic_or", "atomic_xchg", "atomic_xor", "broadcast_to", "cdiv",
                    "ceil", "cos", "cumprod", "cumsum", "div_rn", "erf", "exp", "exp2", "expand_dims", "fdiv", "flip",
                    "floor", "fma", "log", "log2", "max", "min", "permute", "ravel", "reduce", "reduce_or", "reshape",
                    "rsqrt", "sigmoid", "sin", "softmax", "split", "sqrt", "sqrt_rn", "sum", "trans", "umulhi", "view",
                    "xor_sum",
                    "gather", "histogram", "sort")


for _name in MEMBER_FUNCTIONS:  # a plain function on a class binds the tensor as its first argument
    setattr(tensor, _name, globals()[_name])
del _name


def __getattr__(name: str):
    from ..errors import NotImplementedYet

    if name in NOT_YET:
        raise NotImplementedYet(f"tl.{name} is a Triton builtin that tritium does not implement yet")
    raise AttributeError(f"module 'tritium.language' has no attribute '{name}'")
