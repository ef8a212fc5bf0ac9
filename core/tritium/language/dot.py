"""``tl.dot``: the matrix product of two blocks, with Triton 3.6's signature and typing rules.

Types (as Triton): both operands have one dtype among int8, fp16, bf16, fp32 and fp64 (uint8 is
refused as Triton refuses it), or are both fp8 (tl.float8e4nv/tl.float8e5, which may differ; they
multiply as their exact fp16 values, and sum as fp16 operands do). int8 gives int32; fp32 and bf16 give fp32 whatever ``out_dtype``
says; fp64 gives fp64; fp16 and fp8 give ``out_dtype`` (fp16 or fp32). ``out_dtype=tl.bfloat16`` is
refused. An accumulator ``acc`` has the result's shape and dtype, which must also be ``out_dtype``.

Shapes: 2-D ``[M, K] x [K, N]``, or batched ``[..., M, K] x [..., K, N]`` with the same leading
dimensions (their products at once: more than one leading dimension is one batch of all of them,
reshaped back); M and N
at least 1, K at least 16 (32 for 8-bit operands), the NVIDIA backend's minimum, applied on every
target so that a kernel that runs on one runs on all.

``input_precision`` ("tf32" by default, as on NVIDIA GPUs; "ieee", "tf32x3", "bf16x3", "bf16x6")
says how a matrix instruction may take fp32 operands. Where a target's instruction runs the
product (nvptx, sm_80 on), "tf32" rounds them to tf32, and "tf32x3", "bf16x3" and "bf16x6" split
them into narrow parts whose products sum to nearly the fp32 product (``layout.split_products``);
"ieee" is exact. Elsewhere (cpu, the interpreter, shapes no instruction takes) every precision
computes the exact fp32 products with fused multiply-adds, at least as accurate as each of them.
``max_num_imprecise_acc`` only concerns fp8 operands on Hopper: it is checked and recorded, and
fp8 products accumulate in full fp32 precision.
"""

from __future__ import annotations

from . import dtypes as T
from . import semantic
from .core import _unwrap, tensor

#: Triton's names of the input precisions NVIDIA targets accept (``allowed_dot_input_precisions``)
INPUT_PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")
DEFAULT_INPUT_PRECISION = "tf32"
OPERAND_DTYPES = (T.int8, T.uint8, T.float16, T.bfloat16, T.float32, T.float64)


#: the ``input_precision`` of a product of fp32 operands whose values all fit ``dtype`` exactly
EXACT_IN = "exact-{}"


def dot(input, other, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None,
        out_dtype=T.float32, _exact_in: T.dtype | None = None) -> tensor:
    """``input @ other`` (+ ``acc``): see the module docstring for the types and shapes allowed.
    ``_exact_in`` (the language's own products, ``tl.dot_scaled``): fp32 operands whose values the
    narrower float type holds exactly, which a matrix instruction of that type may take as they are."""
    input_precision, allow_tf32 = _unwrap(input_precision), _unwrap(allow_tf32)
    if input_precision is not None and allow_tf32 is not None:
        raise semantic.SemanticError("tl.dot: only one of input_precision and allow_tf32 can be specified")
    if input_precision is None:
        input_precision = DEFAULT_INPUT_PRECISION if allow_tf32 is not False else "ieee"
    if not isinstance(input_precision, str) or input_precision.lower() not in INPUT_PRECISIONS:
        raise semantic.SemanticError(f"tl.dot: input_precision must be one of {', '.join(INPUT_PRECISIONS)}; "
                                     f"got {input_precision!r}")
    a, b = (semantic.to_tensor(_unwrap(x)) for x in (input, other))
    if len(a.shape) > 3 and len(a.shape) == len(b.shape) and a.shape[:-2] == b.shape[:-2]:
        return _batches(a, b, acc, input_precision, max_num_imprecise_acc, out_dtype)
    fp8 = a.dtype.is_fp8() and b.dtype.is_fp8()
    if fp8:  # every fp8 value is exact in fp16: the products are too
        imprecise, k = _unwrap(max_num_imprecise_acc), a.shape[-1] if a.shape else 0
        if isinstance(imprecise, int) and imprecise > k:
            raise semantic.SemanticError(f"max_num_imprecise_acc ({imprecise}) must be <= K ({k})")
        a, b = semantic.cast(a, T.float16), semantic.cast(b, T.float16)
    out_dtype, acc = _unwrap(out_dtype), _unwrap(acc)
    result_dtype, shape = _result(a, b, out_dtype, 8 if fp8 else 0)
    if acc is None:
        c = semantic.full(shape, 0, result_dtype)
    else:
        c = semantic.to_tensor(acc)
        if c.shape != shape or c.dtype != result_dtype or c.dtype != out_dtype:
            raise semantic.SemanticError(
                f"tl.dot: the accumulator must be a {list(shape)} block of {result_dtype} (the result type) and "
                f"out_dtype must say so; got a {list(c.shape)} block of {c.dtype} with out_dtype={out_dtype}")
    imprecise = _unwrap(max_num_imprecise_acc)
    if imprecise is not None and (not isinstance(imprecise, int) or imprecise < 0):
        raise semantic.SemanticError(f"tl.dot: max_num_imprecise_acc must be a non-negative integer, got {imprecise!r}")
    precision = EXACT_IN.format(_exact_in.name) if _exact_in is not None else input_precision.lower()
    handle = semantic.builder().dot(a.handle, b.handle, c.handle, a.dtype, result_dtype, shape, precision,
                                    imprecise or 0)
    return tensor(handle, result_dtype, shape)


def _batches(a: tensor, b: tensor, acc, input_precision, max_num_imprecise_acc, out_dtype) -> tensor:
    """The product of operands with several leading (batch) dimensions: one 3-D product over all of
    them, reshaped back."""
    from .shape import _reshape

    batch, count = a.shape[:-2], 1
    for d in batch:
        count *= d
    flat = [_reshape(x, (count, *x.shape[-2:]), "tl.dot") for x in (a, b)]
    acc = _unwrap(acc)
    if acc is not None:
        acc = semantic.to_tensor(acc)
        acc = _reshape(acc, (count, *acc.shape[len(batch):]), "tl.dot") if acc.shape[:len(batch)] == batch else acc
    product = dot(*flat, acc, input_precision=input_precision, max_num_imprecise_acc=max_num_imprecise_acc,
                  out_dtype=out_dtype)
    return _reshape(product, (*batch, *product.shape[1:]), "tl.dot")  # (the language's products are 2-D or 3-D)


def _result(a: tensor, b: tensor, out_dtype, operand_bits: int = 0) -> tuple[T.dtype, tuple[int, ...]]:
    """The result's dtype and shape (Triton's rules; see the module docstring); ``operand_bits``: the
    operands' width before fp8 ones were widened to fp16 (K's minimum depends on it)."""
    if not a.shape or not b.shape:
        raise semantic.SemanticError("tl.dot: both operands must be blocks (not scalars)")
    if not len(a.shape) == len(b.shape) >= 2:
        raise semantic.SemanticError(f"tl.dot: both operands must be 2-D, or both batched with the same rank; got "
                                     f"shapes {list(a.shape)} and {list(b.shape)}")
    if not isinstance(out_dtype, T.dtype) or out_dtype.is_ptr():
        raise semantic.SemanticError(f"tl.dot: out_dtype must be a dtype such as tl.float32, got {out_dtype!r}")
    for x in (a, b):
        if x.dtype not in OPERAND_DTYPES:
            raise semantic.SemanticError(f"tl.dot: unsupported operand dtype {x.dtype} (int8, float16, bfloat16, "
                                         f"float32 or float64)")
    if a.dtype != b.dtype:
        raise semantic.SemanticError(f"tl.dot: both operands must have the same dtype, got {a.dtype} and {b.dtype}; "
                                     f"convert one with .to()")
    batch, (m, k), (k2, n) = a.shape[:-2], a.shape[-2:], b.shape[-2:]
    if k != k2 or batch != b.shape[:-2]:
        raise semantic.SemanticError(f"tl.dot: shapes {list(a.shape)} and {list(b.shape)} do not fit a matrix product "
                                     f"(the first's last dimension must equal the second's second-to-last, and "
                                     f"batches must agree)")
    shape = batch + (m, n)
    operand_bits = operand_bits or a.dtype.primitive_bitwidth
    min_k = 32 if operand_bits == 8 else 16
    if k < min_k:
        raise semantic.SemanticError(f"tl.dot: Input shapes should have M >= 1, N >= 1 and K >= {min_k} for "
                                     f"{operand_bits}-bit operands; K (the shared dimension) is {k}: pad the blocks "
                                     "and mask the loads")
    if a.dtype.is_int():
        if a.dtype != T.int8:
            raise semantic.SemanticError(f"tl.dot: integer operands must be int8, got {a.dtype}")
        return T.int32, shape
    if out_dtype == T.bfloat16:
        raise semantic.SemanticError("tl.dot: out_dtype=bfloat16 is unsupported; use out_dtype=float32/float16 "
                                     "and cast the result with .to(tl.bfloat16)")
    if a.dtype in (T.float32, T.bfloat16):
        return T.float32, shape
    if a.dtype == T.float64:
        return T.float64, shape
    if out_dtype not in (T.float16, T.float32):
        raise semantic.SemanticError(f"tl.dot: float16 operands give float16 or float32 (out_dtype), not {out_dtype}")
    return out_dtype, shape
