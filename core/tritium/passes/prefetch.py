"""Prefetching the lines a program will store, on whole-block targets (``tile.prefetch {write}``).

A store to a line the core does not hold first fetches the line for ownership. A row kernel
(softmax, layer norm) computes its row, then stores it in one loop: the fetches go out only as
that loop reaches each line, and the stores queue behind them. This pass asks for the lines
earlier, so that they arrive while the program computes. For each store of a tensor whose pointers
are contiguous runs (a row, not a scatter) and can be recomputed from cheap ops (integer and
pointer arithmetic, ranges, splats, shape ops), a ``tile.prefetch {write}`` of the same pointers
goes right after

- the first costly float op (an ``exp``, a division) of the stored tensor's shape before the store
  in its block: the loop that computes it fetches the lines; else
- the first load of that shape before the store in its block: the fetches go out with the reads.

Measured on a 16-core Xeon (softmax and layer norm, 4096x1024 fp32, alternating in one run), this
took 15-20% off both. A prefetch never faults and changes no result.
"""

from __future__ import annotations

from ..codegen.elementwise import EXPENSIVE
from ..codegen.types import element_type
from ..ir import tile
from ..ir.mlir import ir
from .axis_info import AxisInfo, analyze, walk

#: ops whose clone costs a few scalar or vector integer instructions
RECOMPUTED = frozenset({"tile.addptr", "tile.splat", "tile.broadcast", "tile.expand_dims", "tile.make_range",
                        "tile.reshape", "arith.constant"})


def prefetch_stores(module: ir.Module) -> None:
    """Insert the write prefetches of the module's tensor stores in place (see the module docstring)."""
    with module.context, ir.Location.unknown():
        axis = analyze(module)
        for store in [op for op in walk(module.operation) if op.name == "tile.store"]:
            ptr = store.operands[0]
            if not isinstance(ptr.type, ir.RankedTensorType) or not _contiguous(axis.get(ptr)):
                continue
            ops = [op.operation for op in store.block.operations]
            before = ops[:ops.index(store)]
            shaped = [op for op in before if _shaped_like(op, ptr)]
            at = next((op for op in shaped if op.name in EXPENSIVE and _floats(op)), None) or \
                next((op for op in shaped if op.name == "tile.load"), None)
            if at is None:
                continue
            later = set(before[before.index(at) + 1:])
            if not _recomputable(ptr, later):
                continue
            ip = ir.InsertionPoint.after(at)
            with ip, store.location:
                tile.PrefetchOp(_recompute(ptr, later, {}, ip), ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1))


def _contiguous(info: AxisInfo | None) -> bool:
    return info is not None and info.contiguity[-1] > 1


def _shaped_like(op: ir.Operation, ptr: ir.Value) -> bool:
    """Whether ``op`` computes a tensor of the stored one's shape (so its loop is the store's size)."""
    return len(op.results) == 1 and isinstance(op.results[0].type, ir.RankedTensorType) and \
        ir.RankedTensorType(op.results[0].type).shape == ir.RankedTensorType(ptr.type).shape


def _floats(op: ir.Operation) -> bool:
    return isinstance(element_type(op.results[0].type), ir.FloatType)


def _recomputable(value: ir.Value, later: set) -> bool:
    """Whether ``value`` is defined before the insertion point or can be recomputed there: ``later``
    holds the ops of its block between the insertion point and the store."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation not in later:
        return True
    if owner.name not in RECOMPUTED and not (owner.name.startswith("arith.") and _integer(value)):
        return False
    return all(_recomputable(o, later) for o in owner.operands)


def _integer(value: ir.Value) -> bool:
    return isinstance(element_type(value.type), (ir.IntegerType, ir.IndexType))


def _recompute(value: ir.Value, later: set, memo: dict, ip: ir.InsertionPoint) -> ir.Value:
    """``value``, cloned at the insertion point where it is defined after it."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation not in later:
        return value
    if value not in memo:
        operands = [_recompute(o, later, memo, ip) for o in owner.operands]
        clone = owner.operation.clone(ip=ip)
        for i, operand in enumerate(operands):
            clone.operands[i] = operand
        memo[value] = clone.results[0]
    return memo[value]
