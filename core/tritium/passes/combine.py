"""Target-neutral rewrites of ``tile`` IR that MLIR's own passes do not know (Triton's combines).

- ``acc + tl.dot(a, b)`` (either order; ``arith.addf`` or ``arith.addi``), where the product's own
  accumulator is zero and its result has no other use, is ``tl.dot(a, b, acc)``: a loop then
  carries ``acc`` through the product, which a matrix instruction keeps in its registers, instead
  of adding a second tile of results to it. As in Triton, for floats too (the product's sum then
  starts from ``acc`` instead of adding it last) and not for fp8's imprecise accumulation.
- ``tl.arange(s, e).reshape(d0, d1, ...)`` is ``s + sum_i arange(0, d_i) * stride_i``, each range
  expanded and broadcast to the shape: the same values, from ops that a layout conversion rebuilds
  in place (``passes.convert_layout``), where the reshape of a range would pass whole tensors, of
  the pointers computed from it too, through shared memory (Triton's test_chained_reductions
  asked for 256 KiB).
"""

from __future__ import annotations

import math

from ..ir import tile
from ..ir.mlir import arith, ir
from .analysis import is_zero
from .axis_info import walk

_ADDS = ("arith.addf", "arith.addi")


def fold_dot_accumulation(module: ir.Module) -> None:
    """Rewrite ``acc + dot(a, b, 0)`` into ``dot(a, b, acc)`` in place (see the module docstring)."""
    with module.context, ir.Location.unknown():
        for add in [op for op in walk(module.operation) if op.name in _ADDS]:
            for i in (0, 1):
                product, other = add.operands[i], add.operands[1 - i]
                dot = product.owner
                if (isinstance(dot, ir.Block) or dot.name != "tile.dot" or not is_zero(dot.operands[2])
                        or len(list(product.uses)) != 1 or other.type != product.type
                        or ir.IntegerAttr(dot.attributes["max_num_imprecise_acc"]).value != 0):
                    continue
                folded = tile.DotOp(dot.operands[0], dot.operands[1], other, dot.attributes["input_precision"],
                                    dot.attributes["max_num_imprecise_acc"], res=product.type,
                                    loc=add.location, ip=ir.InsertionPoint(add))
                add.results[0].replace_all_uses_with(folded.res)
                add.erase()
                dot.erase()
                break


def expand_reshaped_ranges(module: ir.Module) -> None:
    """Rewrite each ``reshape(make_range(s, e))`` of rank 2 or more into ranges per dimension
    (see the module docstring), in place."""
    with module.context, ir.Location.unknown():
        for reshape in [op for op in walk(module.operation) if op.name == "tile.reshape"]:
            source = reshape.operands[0].owner
            result = ir.RankedTensorType(reshape.results[0].type)
            if isinstance(source, ir.Block) or source.name != "tile.make_range" or result.rank < 2:
                continue
            with ir.InsertionPoint(reshape), reshape.location:
                start = ir.IntegerAttr(source.attributes["start"]).value
                reshape.results[0].replace_all_uses_with(_range_sum(result, start))
            reshape.erase()


def _range_sum(result: ir.RankedTensorType, start: int) -> ir.Value:
    """``start`` plus, per dimension of ``result``'s shape, a range along it times its row-major stride."""
    shape, i32 = list(result.shape), result.element_type

    def splat(value: int) -> ir.Value:
        return arith.ConstantOp(result, ir.DenseElementsAttr.get_splat(result, ir.IntegerAttr.get(i32, value))).result

    total = splat(start) if start or all(extent == 1 for extent in shape) else None
    for axis, extent in enumerate(shape):
        if extent == 1:
            continue
        value = tile.MakeRangeOp(tile.i32_attr(0), tile.i32_attr(extent),
                                 res=ir.RankedTensorType.get([extent], i32)).res
        placed = [extent]
        for at in [0] * axis + list(range(axis + 1, len(shape))):  # unit dimensions before, then after it
            placed.insert(at, 1)
            value = tile.ExpandDimsOp(value, tile.i32_attr(at), res=ir.RankedTensorType.get(placed, i32)).res
        value = tile.BroadcastOp(value, res=result).res
        stride = math.prod(shape[axis + 1:])
        if stride != 1:
            value = arith.MulIOp(value, splat(stride)).result
        total = value if total is None else arith.AddIOp(total, value).result
    return total
