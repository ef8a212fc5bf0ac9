"""AMD's matrix instructions for ``tl.dot`` (``DeviceHooks.warp_matrix_op``): CDNA's MFMA at 64
lanes and RDNA3's and RDNA4's WMMA at 32, declared with AMD's operand layouts as ``Fragment``s.

MFMA (AMD's matrix instruction calculator states the layouts): an ``M x M`` block (16 or 32) splits
the wavefront into ``64 / M`` groups of ``M`` lanes. Lane ``l`` holds A's row ``l % M`` and B's column
``l % M`` at ``K / (64 / M)`` consecutive K elements starting at ``(l // M)`` times that, and D's
column ``l % M`` at rows ``4 (l // M) + 8 g + i`` for its ``g``-th group of four accumulators
(``i < 4``; rows ``4 (l // 16) + i`` at M = 16).

RDNA4's WMMA (gfx12) at 32 lanes: lane ``l`` holds A's row ``l % 16`` and B's column ``l % 16`` at K
``4 (l // 16) ..`` + 3 and 8 more than those, and D's column ``l % 16`` at rows ``8 (l // 16) ..`` + 7
(AMD's matrix instruction calculator, RDNA4).

RDNA3's WMMA (gfx11) at 32 lanes wants each operand twice: lanes ``l`` and ``l + 16`` both hold A's
row ``l % 16`` (B's column) at all 16 K, and D's column ``l % 16`` at rows ``2 i + l // 16``. A
``Fragment`` has one owner per element, so the declared operand fragments split K between the
halves (lane ``l`` owns K ``8 (l // 16) ..`` + 7), and ``emit`` fetches the other half's eight
elements from lane ``l ^ 16`` (``v_permlanex16``) before the instruction.

Which forms an arch has: fp16 and bf16 everywhere; int8 into int32 (gfx90a's 4 elements a lane,
CDNA3's and CDNA4's 8); fp8 (``tl.float8e4nv``, ``tl.float8e5``) on CDNA4 alone, whose MFMA reads
OCP fp8. CDNA3's fp8 MFMA reads AMD's FNUZ formats, not Triton's: there fp8 operands widen to fp16
(exactly) and run on the fp16 MFMA.
"""

from __future__ import annotations

import dataclasses

from llvmlite import ir as ll
from tritium.codegen import intrinsics
from tritium.codegen.device import WarpMatrixOp
from tritium.layout.distributed import Fragment

I16, I32, I64 = ll.IntType(16), ll.IntType(32), ll.IntType(64)
F32 = ll.FloatType()


@dataclasses.dataclass(frozen=True)
class Form:
    """One instruction: its LLVM intrinsic, K, and the LLVM type of an A (or B) operand."""

    intrinsic: str
    k: int
    operand: ll.Type


def _vector(element: ll.Type, count: int) -> ll.Type:
    return ll.VectorType(element, count)


#: (family, operand kind, M) -> the form; families: cdna2 (gfx90a), cdna3 (gfx942), cdna4 (gfx950)
_MFMA = {
    **{(family, "fp16", 16): Form("llvm.amdgcn.mfma.f32.16x16x16f16", 16, _vector(ll.HalfType(), 4))
       for family in ("cdna2", "cdna3", "cdna4")},
    **{(family, "bf16", 16): Form("llvm.amdgcn.mfma.f32.16x16x16bf16.1k", 16, _vector(I16, 4))
       for family in ("cdna2", "cdna3", "cdna4")},
    **{(family, "fp16", 32): Form("llvm.amdgcn.mfma.f32.32x32x8f16", 8, _vector(ll.HalfType(), 4))
       for family in ("cdna2", "cdna3", "cdna4")},
    **{(family, "bf16", 32): Form("llvm.amdgcn.mfma.f32.32x32x8bf16.1k", 8, _vector(I16, 4))
       for family in ("cdna2", "cdna3", "cdna4")},
    ("cdna2", "s8", 16): Form("llvm.amdgcn.mfma.i32.16x16x16i8", 16, I32),
    ("cdna2", "s8", 32): Form("llvm.amdgcn.mfma.i32.32x32x8i8", 8, I32),
    **{(family, "s8", 16): Form("llvm.amdgcn.mfma.i32.16x16x32.i8", 32, I64) for family in ("cdna3", "cdna4")},
    **{(family, "s8", 32): Form("llvm.amdgcn.mfma.i32.32x32x16.i8", 16, I64) for family in ("cdna3", "cdna4")},
    ("cdna4", "e4m3", 16): Form("llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8", 32, I64),
    ("cdna4", "e5m2", 16): Form("llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8", 32, I64),
    ("cdna4", "e4m3", 32): Form("llvm.amdgcn.mfma.f32.32x32x16.fp8.fp8", 16, I64),
    ("cdna4", "e5m2", 32): Form("llvm.amdgcn.mfma.f32.32x32x16.bf8.bf8", 16, I64),
}
#: RDNA4's, by operand kind (the intrinsics are overloaded: mangled with the result and operand types)
_WMMA = {"fp16": Form("llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v8f16", 16, _vector(ll.HalfType(), 8)),
         "bf16": Form("llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v8i16", 16, _vector(I16, 8))}
#: RDNA3's: the same names, mangled with sixteen-element operands
_WMMA_RDNA3 = {"fp16": Form("llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16", 16, _vector(ll.HalfType(), 16)),
               "bf16": Form("llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v16i16", 16, _vector(I16, 16))}
#: bits of an operand element, by kind
_BITS = {"fp16": 16, "bf16": 16, "s8": 8, "e4m3": 8, "e5m2": 8}


def _bits(n: int) -> list[int]:
    return [1 << i for i in range(n.bit_length() - 1)]


def mfma(family: str, operand: str, accumulator: str, size: int = 16) -> WarpMatrixOp | None:
    """The MFMA of ``family`` for ``operand`` into ``accumulator`` elements on ``size x size``
    blocks (16 or 32), or None where the family has none."""
    form = _MFMA.get((family, operand, size))
    if form is None or accumulator != ("int32" if operand == "s8" else "fp32"):
        return None
    groups = 64 // size
    per_lane = form.k // groups  # K elements a lane holds of A and of B
    pack = 32 // _BITS[operand]  # K elements a 32-bit register holds
    entries = [(0, pack * r) for r in range(per_lane // pack)]
    rows = [(bit, 0) for bit in _bits(size)]
    a = Fragment(tuple(entries), tuple(rows) + tuple((0, per_lane * g) for g in _bits(groups)))
    b = Fragment(tuple((k, j) for j, k in entries), tuple((0, bit) for bit in _bits(size))
                 + tuple((per_lane * g, 0) for g in _bits(groups)))
    count = size * size // 64  # accumulators a lane holds
    c = Fragment(tuple((i % 4 + 4 * groups * (i // 4), 0) for i in range(count)),
                 tuple((0, bit) for bit in _bits(size)) + tuple((4 * g, 0) for g in _bits(groups)))
    accumulator_type = I32 if operand == "s8" else F32
    return WarpMatrixOp(m=size, n=size, k=form.k, k_pack=pack, a=a, b=b, c=c,
                        emit=_emit(form, accumulator_type, count, (I32(0), I32(0), I32(0))))


def wmma(operand: str, accumulator: str, generation: str = "rdna4") -> WarpMatrixOp | None:
    """``v_wmma_f32_16x16x16_{f16,bf16}`` of RDNA4 or RDNA3 (``generation``) at 32 lanes, or None."""
    form = (_WMMA if generation == "rdna4" else _WMMA_RDNA3).get(operand)
    if form is None or accumulator != "fp32":
        return None
    # eight K elements a lane, two a register: RDNA4's at K 0, 2, 8, 10 (+ 4 in the upper half),
    # RDNA3's at K 0, 2, 4, 6 (+ 8), whose other eight ``emit`` fetches across the halves
    entries, half = (((0, 0), (0, 2), (0, 8), (0, 10)), 4) if generation == "rdna4" else \
        (((0, 0), (0, 2), (0, 4), (0, 6)), 8)
    a = Fragment(entries, tuple((bit, 0) for bit in _bits(16)) + ((0, half),))
    b = Fragment(tuple((k, j) for j, k in entries), tuple((0, bit) for bit in _bits(16)) + ((half, 0),))
    if generation == "rdna4":
        c = Fragment(tuple((i, 0) for i in range(8)), tuple((0, bit) for bit in _bits(16)) + ((8, 0),))
        return WarpMatrixOp(m=16, n=16, k=16, k_pack=2, a=a, b=b, c=c, emit=_emit(form, F32, 8, ()))
    c = Fragment(tuple((2 * i, 0) for i in range(8)), tuple((0, bit) for bit in _bits(16)) + ((1, 0),))
    return WarpMatrixOp(m=16, n=16, k=16, k_pack=2, a=a, b=b, c=c, emit=_emit(form, F32, 8, (), _both_halves))


def _both_halves(b: ll.IRBuilder, words: list[ll.Value]) -> list[ll.Value]:
    """RDNA3's operand from the lane's half of it: the words of lane ``l ^ 16`` (``v_permlanex16``
    with the identity selection reads lane ``l % 16`` of the other half) joined with the lane's
    own in K order, the lower half's words first."""
    permute = intrinsics.declare(b.module, "llvm.amdgcn.permlanex16.i32", I32, [I32] * 4 + [ll.IntType(1)] * 2)
    false = ll.IntType(1)(0)
    other = [b.call(permute, [ll.Constant(I32, ll.Undefined), w, I32(0x76543210), I32(0xFEDCBA98), false, false])
             for w in words]
    lane = b.call(intrinsics.declare(b.module, "llvm.amdgcn.workitem.id.x", I32, []), [])
    upper = b.icmp_unsigned("!=", b.and_(lane, I32(16)), I32(0))
    return ([b.select(upper, o, w) for w, o in zip(words, other)]
            + [b.select(upper, w, o) for w, o in zip(words, other)])


def _emit(form: Form, accumulator: ll.Type, count: int, flags: tuple, widen=None):
    """The ``emit`` of a form: the lane's 32-bit registers of A and of B (``widen``ed, where given,
    to the instruction's operand) joined into the intrinsic's operand type, the accumulators into
    its vector, then ``flags`` (MFMA's cbsz, abid, blgp)."""
    def operand(b: ll.IRBuilder, frags: list[ll.Value]) -> ll.Value:
        words = [b.bitcast(f, I32) for f in frags]
        if widen is not None:
            words = widen(b, words)
        if len(words) == 1:
            return b.bitcast(words[0], form.operand)
        joined = ll.Constant(ll.VectorType(I32, len(words)), ll.Undefined)
        for i, w in enumerate(words):
            joined = b.insert_element(joined, w, I32(i))
        return b.bitcast(joined, form.operand)

    def emit(b, a_frags, b_frags, c_vals):
        c = ll.Constant(ll.VectorType(accumulator, count), ll.Undefined)
        for i, v in enumerate(c_vals):
            c = b.insert_element(c, v, I32(i))
        args = [operand(b, a_frags), operand(b, b_frags), c, *flags]
        d = b.call(intrinsics.declare(b.module, form.intrinsic, c.type, [x.type for x in args]), args)
        return [b.extract_element(d, I32(i)) for i in range(count)]

    return emit


def cdna3_matrix_op(operand: str, accumulator: str) -> WarpMatrixOp | None:
    """CDNA3's 16x16 MFMA: what the simt target emulates with
    ``TRITIUM_SIMT_MATRIX=tritium_amdgpu.matrix:cdna3_matrix_op`` (and ``TRITIUM_SIMT_WARP_SIZE=64``)."""
    return mfma("cdna3", operand, accumulator)


def cdna3_32x32_matrix_op(operand: str, accumulator: str) -> WarpMatrixOp | None:
    """CDNA3's 32x32 MFMA (``matrix_instr_nonkdim=32``), for the simt target."""
    return mfma("cdna3", operand, accumulator, 32)


def rdna4_matrix_op(operand: str, accumulator: str) -> WarpMatrixOp | None:
    """RDNA4's WMMA, for the simt target at ``TRITIUM_SIMT_WARP_SIZE=32``."""
    return wmma(operand, accumulator)


def rdna3_matrix_op(operand: str, accumulator: str) -> WarpMatrixOp | None:
    """RDNA3's WMMA as its fragments declare it (the exchange across the halves is the hardware's
    side of ``emit``), for the simt target at ``TRITIUM_SIMT_WARP_SIZE=32``."""
    return wmma(operand, accumulator, "rdna3")
