"""Target-neutral rewrites of ``tile`` IR that MLIR's own passes do not know (Triton's combines).

- ``acc + tl.dot(a, b)`` (either order; ``arith.addf`` or ``arith.addi``), where the product's own
  accumulator is zero and its result has no other use, is ``tl.dot(a, b, acc)``: a loop then
  carries ``acc`` through the product, which a matrix instruction keeps in its registers, instead
  of adding a second tile of results to it. As in Triton, for floats too (the product's sum then
  starts from ``acc`` instead of adding it last) and not for fp8's imprecise accumulation.
"""

from __future__ import annotations

from ..ir import tile
from ..ir.mlir import ir
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
