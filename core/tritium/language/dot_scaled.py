"""``tl.dot_scaled``: the product of two blocks in microscaling (MX) formats, with Triton 3.6's
signature and checks.

Each operand is in a format: ``"e2m1"`` (fp4, two values packed in each uint8: the lower index in
the low nibble, along K, or along M (N) when ``lhs_k_pack`` (``rhs_k_pack``) is False),
``"e4m3"``, ``"e5m2"`` (fp8, as ``tl.float8e4nv``/``tl.float8e5`` or their uint8 bits), ``"bf16"``
or ``"fp16"`` (or their uint16 bits). A scale is None or a uint8 block of e8m0 exponents, one per
32 consecutive K elements: ``[M, K // 32]`` for ``lhs`` (``[M, K]``), ``[N, K // 32]`` for ``rhs``
(``[K, N]``); each element of a group is multiplied by ``2 ** (scale - 127)`` (255 is NaN).
Batched operands (``[B, M, K]`` and ``[B, K, N]``, as Triton allows) take batched scales
(``[B, M, K // 32]`` and ``[B, N, K // 32]``) and give ``[B, M, N]``.

Lowering: written in the language, so every target runs it. The operands are decoded to fp32,
where each value of these formats times its scale is exact. Where an operand is fp16, both are cast
to fp16, as Triton's GPUs without MX tensor cores upcast (a scaled value beyond fp16's range is
infinite, on every target). Otherwise they stay fp32, and the product is marked as taking values
that bf16 holds exactly (its exponents are fp32's; only the values below 2**-133 that a subnormal
e4m3 times the smallest scale makes are not): a target with a bf16 matrix instruction runs it there
(``layout.matrix.narrow_exact_operands``), the others multiply in fp32, with the same products.
``tl.dot`` accumulates in fp32. ``fast_math`` (Triton's leave to skip NaN handling) changes nothing
here.
"""

from __future__ import annotations

from typing import Any

from . import dtypes as T
from . import semantic
from .core import _unwrap, tensor
from .dot import dot
from .semantic import SemanticError
from .shape import _permute, _reshape, join

#: format -> the dtype its values have (None: e2m1, packed in uint8) and the unsigned type of its bits
FORMATS = {"e2m1": (None, T.uint8), "e4m3": (T.float8e4nv, T.uint8), "e5m2": (T.float8e5, T.uint8),
           "bf16": (T.bfloat16, T.uint16), "fp16": (T.float16, T.uint16)}
GROUP = 32  # K elements per e8m0 scale
OUT_DTYPES = (T.float32, T.float16, T.bfloat16)


def dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None, fast_math=False,
               lhs_k_pack=True, rhs_k_pack=True, out_dtype=T.float32) -> tensor:
    """``(lhs * 2**(lhs_scale - 127)) @ (rhs * 2**(rhs_scale - 127))`` (+ ``acc``) in ``out_dtype``:
    see the module docstring for the formats and shapes."""
    lhs_format, rhs_format = _format(lhs_format, "lhs"), _format(rhs_format, "rhs")
    lhs_k_pack, rhs_k_pack = bool(_unwrap(lhs_k_pack)), bool(_unwrap(rhs_k_pack))
    for k_pack, fmt, side in ((lhs_k_pack, lhs_format, "lhs"), (rhs_k_pack, rhs_format, "rhs")):
        if not k_pack and fmt != "e2m1":
            raise SemanticError(f"tl.dot_scaled: only e2m1 (mxfp4) operands can be packed along a dimension "
                                f"other than K; {side} is {fmt} with {side}_k_pack=False")
    a = _values(lhs, lhs_format, packed_last=lhs_k_pack, what="lhs")  # K is lhs's last dimension
    b = _values(rhs, rhs_format, packed_last=not rhs_k_pack, what="rhs")
    if len(a.shape) != len(b.shape) or a.shape[:-2] != b.shape[:-2]:
        raise SemanticError(f"tl.dot_scaled: both operands must be 2-D, or 3-D with one batch size; got lhs "
                            f"{list(a.shape)} and rhs {list(b.shape)}")
    batch = a.shape[:-2]
    (m, k), (k_rhs, n) = a.shape[-2:], b.shape[-2:]
    if k != k_rhs:
        raise SemanticError(f"tl.dot_scaled: the reduction dimensions hold different numbers of elements: lhs {k} "
                            f"(from {list(_unwrap(lhs).shape)} {lhs_format}), rhs {k_rhs} "
                            f"(from {list(_unwrap(rhs).shape)} {rhs_format})")
    if _unwrap(lhs_scale) is not None:
        a = semantic.mul(a, _scales(lhs_scale, batch, m, k, "lhs_scale", "M"))
    if _unwrap(rhs_scale) is not None:
        b = semantic.mul(b, _swap_last(_scales(rhs_scale, batch, n, k, "rhs_scale", "N")))
    out_dtype = _unwrap(out_dtype)
    if out_dtype not in OUT_DTYPES:
        raise SemanticError(f"tl.dot_scaled: out_dtype must be one of {', '.join(map(str, OUT_DTYPES))}, got {out_dtype}")
    acc = _unwrap(acc)
    if acc is not None:
        acc = semantic.to_tensor(acc)
        if acc.shape != (*batch, m, n) or acc.dtype != out_dtype:
            raise SemanticError(f"tl.dot_scaled: the accumulator must be a {[*batch, m, n]} block of {out_dtype} "
                                f"(out_dtype); got a {list(acc.shape)} block of {acc.dtype}")
        acc = semantic.cast(acc, T.float32)
    if "fp16" in (lhs_format, rhs_format):
        product = dot(semantic.cast(a, T.float16), semantic.cast(b, T.float16), acc, out_dtype=T.float32)
    else:
        product = dot(a, b, acc, out_dtype=T.float32, _exact_in=T.bfloat16)
    return product if out_dtype == T.float32 else semantic.cast(product, out_dtype)


def _format(fmt: Any, side: str) -> str:
    fmt = _unwrap(fmt)
    if fmt not in FORMATS:
        raise SemanticError(f"tl.dot_scaled: {side}_format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    return fmt


def _swap_last(x: tensor) -> tensor:
    rank = len(x.shape)
    return _permute(x, (*range(rank - 2), rank - 1, rank - 2), "tl.dot_scaled")


def _values(x: Any, fmt: str, packed_last: bool, what: str) -> tensor:
    """The operand's values as an fp32 block (e2m1 unpacked along the last dimension when
    ``packed_last``, else along the one before)."""
    x = semantic.to_tensor(_unwrap(x))
    if len(x.shape) not in (2, 3):
        raise SemanticError(f"tl.dot_scaled: {what} must be a 2-D block (or 3-D, batched), got shape {list(x.shape)}")
    dtype, bits = FORMATS[fmt]
    if dtype is None:
        if x.dtype != T.uint8:
            raise SemanticError(f"tl.dot_scaled: e2m1 {what} comes packed two values to a uint8; got {x.dtype}")
        return _unpack_e2m1(x, packed_last)
    if x.dtype == bits and fmt == "bf16":  # the high half of an fp32 (no bf16 block needed on any target)
        return semantic.cast(semantic.shift("shl", semantic.cast(x, T.uint32), 16), T.float32, bitcast=True)
    if x.dtype == bits:
        x = semantic.cast(x, dtype, bitcast=True)
    elif x.dtype != dtype:
        raise SemanticError(f"tl.dot_scaled: a {fmt} {what} is a block of {dtype} or of its {bits} bits; got {x.dtype}")
    return semantic.cast(x, T.float32)


def _unpack_e2m1(x: tensor, packed_last: bool) -> tensor:
    """fp4 e2m1 pairs (low nibble first) as fp32, the pairs laid out along the last dimension
    (``packed_last``) or the one before."""
    lo = _e2m1_to_fp32(semantic.bitwise("and", x, 0xF))
    hi = _e2m1_to_fp32(semantic.shift("shr", x, 4))
    *batch, rows, cols = x.shape
    pairs = join(lo, hi)  # [..., rows, cols, 2]
    if packed_last:
        return _reshape(pairs, (*batch, rows, 2 * cols), "tl.dot_scaled")
    b = len(batch)
    pairs = _permute(pairs, (*range(b), b, b + 2, b + 1), "tl.dot_scaled")  # [..., rows, 2, cols]
    return _reshape(pairs, (*batch, 2 * rows, cols), "tl.dot_scaled")


def _e2m1_to_fp32(nibble: tensor) -> tensor:
    """A sign bit, two exponent bits (bias 1) and a mantissa bit, as fp32 bits built from them:
    magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6."""
    v = semantic.cast(nibble, T.uint32)
    sign = semantic.shift("shl", semantic.shift("shr", v, 3), 31)
    exponent = semantic.bitwise("and", semantic.shift("shr", v, 1), 3)
    mantissa = semantic.bitwise("and", v, 1)
    normal = semantic.bitwise("or", semantic.shift("shl", semantic.add(exponent, 126), 23),
                              semantic.shift("shl", mantissa, 22))
    subnormal = semantic.mul(mantissa, 0x3F000000)  # 0.5 or 0
    magnitude = semantic.where(semantic.compare("eq", exponent, 0), subnormal, normal)
    return semantic.cast(semantic.bitwise("or", sign, magnitude), T.float32, bitcast=True)


def _scales(s: Any, batch: tuple, rows: int, k: int, what: str, dim: str) -> tensor:
    """The e8m0 ``[..., rows, k // 32]`` scales as an fp32 ``[..., rows, k]`` block of factors
    ``2 ** (s - 127)``."""
    s = semantic.to_tensor(_unwrap(s))
    if s.dtype == T.uint8 and not k % GROUP and s.shape != (*batch, rows, k // GROUP):  # in Triton's words
        raise SemanticError(f"{what} must be a tensor of shape {[*batch, rows, k // GROUP]}. "
                            f"Got {[str(d) for d in s.shape]}")
    if s.dtype != T.uint8 or s.shape != (*batch, rows, k // GROUP) or k % GROUP:
        names = "B, " * len(batch) + f"{dim}, K // {GROUP}"
        raise SemanticError(f"tl.dot_scaled: {what} must be a [{names}] = {[*batch, rows, k // GROUP]} block of "
                            f"uint8 e8m0 exponents (K = {k}, a multiple of {GROUP}); got a {list(s.shape)} block "
                            f"of {s.dtype}")
    v = semantic.cast(s, T.uint32)
    bits = semantic.where(semantic.compare("eq", v, 0), 0x00400000, semantic.shift("shl", v, 23))  # 2**-127: subnormal
    bits = semantic.where(semantic.compare("eq", v, 255), 0x7FC00000, bits)  # NaN
    factors = semantic.cast(bits, T.float32, bitcast=True)
    groups = semantic.broadcast_to(semantic.expand_dims(factors, len(batch) + 2), (*batch, rows, k // GROUP, GROUP))
    return _reshape(groups, (*batch, rows, k), "tl.dot_scaled")
