"""Which ``tile.dot`` runs on a target's warp-level matrix instruction, in which layouts.

A target offers its instruction through ``DeviceHooks.warp_matrix_op`` (``MatrixUnit``): NVIDIA's
``mma``, AMD's MFMA. A ``tile.dot`` of 2-D fp16, bf16, fp8 (or tf32) operands into fp32, or int8
ones into int32, whose extents the instruction's tiles divide, with enough tiles for every warp,
gets the accumulator layout ``Mma`` for its accumulator and result: the instruction then reads
and writes the accumulator in the registers where the previous one left it, and a loop carries it
there (``layout.propagate``, ``passes.convert_layout``). Elementwise ops, broadcasts and row
reductions run on it like on any distributed layout; only the epilogue converts it.

The operands' fragments are distributions too (``operand_distribution``: Triton's dot-operand
layouts): which ``(row, k)`` of A and ``(k, col)`` of B each register of a lane holds for its
warp's tiles, one K step of the instruction at a time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

from ..ir.mlir import arith, ir
from ..passes.axis_info import walk
from .distributed import Distribution, Mma, distribute

if TYPE_CHECKING:
    from ..codegen.device import WarpMatrixOp

#: ``DeviceHooks.warp_matrix_op``: the instruction for (operand, accumulator) kinds, or None
MatrixUnit = Callable[[str, str], Optional["WarpMatrixOp"]]
#: operand element types the matrix path takes, by their name in ``warp_matrix_op``; fp32 operands
#: only at ``input_precision="tf32"`` (Triton's default), rounded to tf32 as tensor cores take them;
#: fp8 ones where ``narrow_fp8_operands`` gave the product its fp8 operands back
OPERAND_KINDS = {"f16": "fp16", "bf16": "bf16", "f32": "tf32", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2", "i8": "s8"}
#: the accumulator kind of each result element type, by its name in ``warp_matrix_op``
ACCUMULATOR_KINDS = {"f32": "fp32", "i32": "int32", "f16": "fp16"}


def operand_kind(op: ir.Operation) -> str | None:
    """The ``warp_matrix_op`` operand kind of a ``tile.dot``, or None where none applies."""
    kind = OPERAND_KINDS.get(str(ir.RankedTensorType(op.operands[0].type).element_type))
    if kind == "tf32" and ir.StringAttr(op.attributes["input_precision"]).value != "tf32":
        return None  # "ieee" is exact; "tf32x3" is nearly exact: both stay FMA products
    return kind


def matrix_unit_candidate(op: ir.Operation) -> bool:
    """A ``tile.dot`` that a target's warp-level matrix instruction may run: 2-D, fp16, bf16 or fp8
    (or fp32 at tf32 precision) operands of one type into fp32 (fp16 ones into fp16 too), or int8
    into int32, every extent a multiple of 16."""
    a, b = (ir.RankedTensorType(v.type) for v in op.operands[:2])
    res = ir.RankedTensorType(op.results[0].type)
    kind = operand_kind(op)
    return (a.rank == 2 and a.element_type == b.element_type and kind is not None
            and str(res.element_type) in (("i32",) if kind == "s8" else ("f32", "f16") if kind == "fp16" else ("f32",))
            and all(x % 16 == 0 for x in (*a.shape, b.shape[1])))


def instruction(op: ir.Operation, matrix_unit: MatrixUnit) -> "WarpMatrixOp | None":
    """The target's instruction for the candidate ``op``, or None."""
    return matrix_unit(operand_kind(op), ACCUMULATOR_KINDS[str(ir.RankedTensorType(op.results[0].type).element_type)])


def warp_grid(tiles_m: int, tiles_n: int, warps: int, mma: "WarpMatrixOp") -> tuple[int, int] | None:
    """``(WM, WN)``: how the warps split the tiles (each warp an equal share), the split that reads
    the fewest operand fragments per K step; None when no split divides the tiles evenly."""
    best = None
    for wm in range(1, warps + 1):
        wn = warps // wm
        if wm * wn != warps or tiles_m % wm or tiles_n % wn:
            continue
        reads = tiles_m // wm * len(mma.a.entries) + tiles_n // wn * len(mma.b.entries)
        if best is None or reads < best[0]:
            best = (reads, wm, wn)
    return best[1:] if best else None


def mma_layout(op: ir.Operation, matrix_unit: MatrixUnit | None, num_warps: int, a_layout=None,
               b_layout=None) -> Mma | None:
    """The accumulator layout of ``op`` on the target's matrix instruction; None where the FMA path
    runs it (no instruction, extents the tiles do not divide, too few tiles for the warps).

    Products a warpgroup instruction (``WarpMatrixOp.group``) can run, and chained products
    (attention's ``p @ v`` of ``p = softmax(q @ k^T)``), split the warps along M only, each warp
    holding whole rows: the group instruction's layout (``codegen.threads.warpgroup_matrix``), and
    the first of chained products then holds in every lane the second's A fragments (``chained``),
    which it reads from registers. ``a_layout`` and ``b_layout`` are the layouts A and B arrive in:
    a group instruction that reads only K-major operands (``WarpgroupMatrixOp.mn_major`` false) is
    chosen only where they arrive as they will be stored, along K."""
    if matrix_unit is None or op.name != "tile.dot" or not matrix_unit_candidate(op):
        return None
    mma = instruction(op, matrix_unit)
    if mma is None:
        return None
    (m, k), n = ir.RankedTensorType(op.operands[0].type).shape, ir.RankedTensorType(op.operands[1].type).shape[1]
    if m % mma.m or n % mma.n or k % mma.k:
        return None
    rows_only = (num_warps, 1) if (m // mma.m) % num_warps == 0 else None
    group = (mma.group is not None and num_warps % mma.group.warps == 0  # the group instruction's layout
             and (mma.group.mn_major or _k_major(op, (a_layout, b_layout))))
    if rows_only and (group or chained(op) or (isinstance(a_layout, Mma) and a_layout.warps_per_cta == rows_only)):
        return Mma((mma.m, mma.n), rows_only, mma.c)
    grid = warp_grid(m // mma.m, n // mma.n, num_warps, mma)
    return Mma((mma.m, mma.n), grid, mma.c) if grid else None


def _k_major(op: ir.Operation, layouts) -> bool:
    """Whether the product's operands arriving in ``layouts`` (None: not known yet) are stored with
    their rows along K (``codegen.threads.warp_matrix.stored_transposed``): A's threads hold runs
    along K, B's down it. A in the accumulator layout comes from registers."""
    for which, layout in enumerate(layouts):
        if layout is None or isinstance(layout, Mma):
            continue
        shape = tuple(ir.RankedTensorType(op.operands[which].type).shape)
        if distribute(layout, shape).contiguous_dim != 1 - which:
            return False
    return True


def narrow_fp8_operands(module: ir.Module, matrix_unit: MatrixUnit | None, num_warps: int) -> None:
    """``tl.dot`` of fp8 operands multiplies their exact fp16 values (``language.dot`` widens them):
    where the target's matrix instruction takes the fp8 format itself and lays the product out, the
    product gets its fp8 operands back (widenings left unused go), so they are copied and read at
    one byte an element."""
    if matrix_unit is None:
        return
    for op in walk(module.operation):
        if op.name != "tile.dot":
            continue
        widened = [v.owner for v in op.operands[:2] if not isinstance(v.owner, ir.Block)]
        if len(widened) != 2 or any(w.name != "arith.extf" for w in widened):
            continue
        narrow = [w.operands[0] for w in widened]
        a, b = (str(ir.RankedTensorType(v.type).element_type) for v in narrow)
        if a != b or not a.startswith("f8"):
            continue
        wide = list(op.operands[:2])
        op.operands[0], op.operands[1] = narrow
        if mma_layout(op, matrix_unit, num_warps) is None:  # the instruction does not take it: as it was
            op.operands[0], op.operands[1] = wide
            continue
        for w in {id(w): w for w in widened}.values():
            if not any(True for _ in w.results[0].uses):
                w.erase()


def narrow_exact_operands(module: ir.Module, matrix_unit: MatrixUnit | None, num_warps: int) -> None:
    """A product of fp32 operands whose values a narrower float type holds exactly (``input_precision``
    ``exact-bf16``: ``tl.dot_scaled``'s decoded operands) takes them in that type where the target's
    matrix instruction runs it, with the same products; elsewhere it stays an fp32 product."""
    if matrix_unit is None:
        return
    for op in [op for op in walk(module.operation) if op.name == "tile.dot"]:
        precision = ir.StringAttr(op.attributes["input_precision"]).value
        if not precision.startswith("exact-") or precision[len("exact-"):] not in _NARROW:
            continue
        narrow_type = _NARROW[precision[len("exact-"):]]()
        wide = list(op.operands[:2])
        if any(str(ir.RankedTensorType(v.type).element_type) != "f32" for v in wide):
            continue
        ip = ir.InsertionPoint(op)
        casts = [arith.TruncFOp(ir.RankedTensorType.get(ir.RankedTensorType(v.type).shape, narrow_type), v,
                                loc=op.location, ip=ip) for v in wide]
        op.operands[0], op.operands[1] = (c.result for c in casts)
        if mma_layout(op, matrix_unit, num_warps) is None:  # the instruction does not take it: as it was
            op.operands[0], op.operands[1] = wide
            for c in casts:
                c.operation.erase()


#: the narrower types of ``exact-<type>`` products
_NARROW = {"bf16": ir.BF16Type.get, "fp16": ir.F16Type.get}


#: ops through which a product's result may reach another product's A elementwise
_ELEMENTWISE_PREFIXES = ("arith.", "math.")


def chained(op: ir.Operation) -> bool:
    """Whether ``op``'s result reaches operand A of another ``tile.dot`` through elementwise ops
    (a row-wise softmax, a cast), every use of it on the way an elementwise op or that product."""
    work, seen = [op.results[0]], set()
    while work:
        value = work.pop()
        for use in value.uses:
            user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if user.name == "tile.dot" and use.operand_number == 0:
                return True
            if user.name.startswith(_ELEMENTWISE_PREFIXES) and user not in seen:
                seen.add(user)
                work.extend(user.results)
    return False


def operand_distribution(layout: Mma, mma: "WarpMatrixOp", operand: int, shape: tuple[int, int]) -> Distribution:
    """Where a lane's fragments of operand ``operand`` (0: A ``[M, K]``, 1: B ``[K, N]``) lie for
    one K step of the instruction, for a result of ``layout``: one register per fragment entry
    (the first of ``k_pack`` consecutive K elements) of each of the warp's tiles, tile by tile.
    Warps in one row of the warp grid hold copies of A, warps in one column copies of B."""
    (wm, wn), (m, n) = layout.warps_per_cta, layout.instr
    frag = mma.a if operand == 0 else mma.b
    log = lambda x: x.bit_length() - 1  # noqa: E731
    if operand == 0:
        tiles = shape[0] // (m * wm)
        registers = [(t * m * wm + r, c) for t in range(tiles) for r, c in frag.entries]
        warp_bases = [(0, 0)] * log(wn) + [(m << bit, 0) for bit in range(log(wm))]
    else:
        tiles = shape[1] // (n * wn)
        registers = [(r, t * n * wn + c) for t in range(tiles) for r, c in frag.entries]
        warp_bases = [(0, n << bit) for bit in range(log(wn))] + [(0, 0)] * log(wm)
    return Distribution(tuple(shape), tuple(registers), frag.lanes, tuple(warp_bases), None)
