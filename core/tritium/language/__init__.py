"""``tritium.language`` (import as ``tl``): the kernel language, spelled as Triton spells it."""

from .core import (
    abs, arange, broadcast_to, cdiv, ceil, constexpr, cos, exp, exp2, expand_dims, floor, full, load,
    log, log2, max, maximum, min, minimum, num_programs, program_id, range, rsqrt, sin, sqrt, store,
    sum, tensor, where, zeros,
)
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
    "num_programs", "pointer_type", "program_id", "range", "rsqrt", "sin", "sqrt", "store", "sum",
    "tensor", "uint8", "uint16", "uint32", "uint64", "where", "zeros",
]
