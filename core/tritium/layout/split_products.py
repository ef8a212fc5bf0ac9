"""fp32 products at ``input_precision`` "tf32x3", "bf16x3" and "bf16x6" as sums of narrower
products that a target's matrix instruction runs (Triton's ``F32DotTC``).

Each operand splits into parts whose sum is it: for tf32, ``hi`` (the value rounded to tf32, to
nearest, ties away) and ``lo = x - hi``; for bf16, ``hi = bf16(x)``, ``mid = bf16(x - hi)`` (and for
"bf16x6" ``lo = bf16(x - hi - mid)``). The product is then the sum of the part products that
matter, small ones first, from zero: tf32x3 and bf16x3 add ``lo·hi + hi·lo`` (``mid`` for bf16),
bf16x6 ``mid·mid + lo·hi + hi·lo + mid·hi + hi·mid``. Where that sum is NaN (an operand holds an
infinity, whose small part is ``inf - inf``), it counts as zero, so that ``hi·hi``, added last,
decides; then the accumulator is added.

Only where the target's matrix instruction takes the narrow product; elsewhere the product stays
one fp32 product, computed exactly (as every precision is on targets without one).
"""

from __future__ import annotations

from ..ir import tile
from ..ir.mlir import arith, ir
from ..passes.analysis import is_zero
from ..passes.axis_info import walk
from .matrix import MatrixUnit, mma_layout

#: per precision: the narrow kind, how many parts an operand splits into, and which products of
#: (A part, B part) are summed before ``hi·hi`` (0 is ``hi``), smallest first
SPLITS = {
    "tf32x3": ("tf32", 2, ((1, 0), (0, 1))),
    "bf16x3": ("bf16", 2, ((1, 0), (0, 1))),
    "bf16x6": ("bf16", 3, ((1, 1), (2, 0), (0, 2), (1, 0), (0, 1))),
}
#: tf32 keeps fp32's top 19 bits: adding half of the dropped part's range before masking it off
#: rounds the magnitude to nearest, ties away from zero
_TF32_HALF, _TF32_MASK = 0x1000, -0x2000


def split_products(module: ir.Module, matrix_unit: MatrixUnit | None, num_warps: int) -> None:
    """Rewrite every fp32 ``tile.dot`` at a split precision that ``matrix_unit`` can run (see the
    module docstring), in place; call inside the module's context."""
    if matrix_unit is None:
        return
    for op in [op for op in walk(module.operation) if op.name == "tile.dot"]:
        precision = ir.StringAttr(op.attributes["input_precision"]).value
        types = [ir.RankedTensorType(v.type) for v in op.operands[:2]]
        if precision not in SPLITS or any(str(t.element_type) != "f32" or t.rank != 2 for t in types):
            continue
        _Split(op, *SPLITS[precision]).rewrite(matrix_unit, num_warps)


class _Split:
    """The rewrite of one product ``op``; the ops it makes are kept until it knows they run."""

    def __init__(self, op: ir.Operation, kind: str, parts: int, small: tuple[tuple[int, int], ...]):
        self.op, self.kind, self.parts, self.small = op, kind, parts, small
        self.made: list[ir.Operation] = []
        self.ip = ir.InsertionPoint(op)
        self.loc = op.location

    def make(self, op):
        op = op.operation if hasattr(op, "operation") else op
        self.made.append(op)
        return op.results[0]

    def scalar(self, value) -> ir.Value:
        return self.make(arith.ConstantOp(value.type, value, loc=self.loc, ip=self.ip))

    def splat(self, attr, like: ir.RankedTensorType) -> ir.Value:
        return self.make(tile.SplatOp(self.scalar(attr), res=like, loc=self.loc, ip=self.ip))

    def retyped(self, value: ir.Value, element: ir.Type) -> ir.RankedTensorType:
        return ir.RankedTensorType.get(ir.RankedTensorType(value.type).shape, element)

    def split(self, x: ir.Value) -> list[ir.Value]:
        """The parts of ``x``, ``hi`` first, as the narrow products' operands."""
        loc, ip = self.loc, self.ip
        if self.kind == "tf32":
            i32 = ir.IntegerType.get_signless(32)
            bits = self.make(arith.BitcastOp(self.retyped(x, i32), x, loc=loc, ip=ip))
            half = self.splat(ir.IntegerAttr.get(i32, _TF32_HALF), bits.type)
            mask = self.splat(ir.IntegerAttr.get(i32, _TF32_MASK), bits.type)
            rounded = self.make(arith.AndIOp(self.make(arith.AddIOp(bits, half, loc=loc, ip=ip)), mask, loc=loc, ip=ip))
            hi = self.make(arith.BitcastOp(x.type, rounded, loc=loc, ip=ip))
            return [hi, self.make(arith.SubFOp(x, hi, loc=loc, ip=ip))]
        bf16 = self.retyped(x, ir.BF16Type.get())
        parts, rest = [], x
        for i in range(self.parts):
            part = self.make(arith.TruncFOp(bf16, rest, loc=loc, ip=ip))
            parts.append(part)
            if i + 1 < self.parts:
                rest = self.make(arith.SubFOp(rest, self.make(arith.ExtFOp(x.type, part, loc=loc, ip=ip)),
                                              loc=loc, ip=ip))
        return parts

    def dot(self, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
        narrow = "tf32" if self.kind == "tf32" else "ieee"  # bf16 operands: the precision is moot
        return self.make(tile.DotOp(a, b, c, ir.StringAttr.get(narrow), self.op.attributes["max_num_imprecise_acc"],
                                    res=c.type, loc=self.loc, ip=self.ip))

    def rewrite(self, matrix_unit: MatrixUnit, num_warps: int) -> None:
        op, loc, ip = self.op, self.loc, self.ip
        a, b = self.split(op.operands[0]), self.split(op.operands[1])
        result_type = ir.RankedTensorType(op.results[0].type)
        zero = self.splat(ir.FloatAttr.get(result_type.element_type, 0.0), result_type)
        acc = zero
        for i, j in self.small:
            acc = self.dot(a[i], b[j], acc)
        if mma_layout(acc.owner.operation, matrix_unit, num_warps) is None:  # the instruction does not take it
            for made in reversed(self.made):
                made.erase()
            return
        nan = self.make(arith.CmpFOp(arith.CmpFPredicate.UNO, acc, acc, loc=loc, ip=ip))
        acc = self.make(arith.SelectOp(nan, zero, acc, loc=loc, ip=ip))
        total = self.dot(a[0], b[0], acc)
        if not is_zero(op.operands[2]):
            total = self.make(arith.AddFOp(total, op.operands[2], loc=loc, ip=ip))
        op.results[0].replace_all_uses_with(total)
        op.erase()
