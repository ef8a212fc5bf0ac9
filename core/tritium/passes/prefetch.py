"""Prefetching the next program's rows on whole-block targets (``tile.prefetch``).

A program of a row kernel (softmax, layer norm: one row a program) reads its row, computes, then
writes: on a many-core host the read waits on memory while the core could compute. Programs run in
order of their ids on each worker thread (they are claimed in batches of consecutive ids), so the
next program's row is the data to fetch while this one computes. After each load of a tensor whose
pointers depend on ``tl.program_id(0)``, this pass inserts a ``tile.prefetch`` of the same pointers
computed for ``program_id(0) + 1``, where they can be recomputed from cheap ops (integer and pointer
arithmetic, ranges, splats, shape ops; values that do not depend on the program id are taken as
they are). Pointers carried by a loop, or loaded from memory, are left alone.
"""

from __future__ import annotations

from ..ir import tile
from ..ir.mlir import arith, ir
from .axis_info import walk

#: ops whose clone, for the next program, costs a few scalar or vector integer instructions
RECOMPUTED = frozenset({"tile.addptr", "tile.splat", "tile.broadcast", "tile.expand_dims", "tile.make_range",
                        "tile.reshape", "arith.constant"})


def prefetch_next_program(module: ir.Module) -> None:
    """Insert the prefetches of the next program's loads in place (see the module docstring)."""
    with module.context, ir.Location.unknown():
        pids = [op for op in walk(module.operation)
                if op.name == "tile.program_id" and ir.IntegerAttr(op.attributes["axis"]).value == 0]
        if not pids:
            return
        depends = _dependents([pid.results[0] for pid in pids], module)
        for load in [op for op in walk(module.operation) if op.name == "tile.load"]:
            ptr = load.operands[0]
            if ptr not in depends or not isinstance(ptr.type, ir.RankedTensorType) or not _recomputable(ptr, depends):
                continue
            ip = ir.InsertionPoint.after(load)
            with ip, load.location:
                tile.PrefetchOp(_next(ptr, depends, {}, ip))


def _dependents(roots: list[ir.Value], module: ir.Module) -> set:
    """The values computed from ``roots`` (in program order, so one sweep finds them; a loop's
    carried values count where their initial value does)."""
    seen = set(roots)
    for op in walk(module.operation):
        if any(o in seen for o in op.operands):
            seen.update(op.results)
            if op.name == "scf.for":  # the carried values: block arguments after the induction variable
                body = op.regions[0].blocks[0]
                for init, arg in zip(list(op.operands)[3:], list(body.arguments)[1:]):
                    if init in seen:
                        seen.add(arg)
    return seen


def _recomputable(value: ir.Value, depends: set) -> bool:
    if value not in depends:
        return True
    owner = value.owner
    if isinstance(owner, ir.Block):
        return False  # a block argument that depends on the program: carried by a loop
    if owner.name == "tile.program_id":
        return True
    if owner.name not in RECOMPUTED and not (owner.name.startswith("arith.") and _integer(value)):
        return False
    return all(_recomputable(o, depends) for o in owner.operands)


def _integer(value: ir.Value) -> bool:
    t = value.type
    element = ir.RankedTensorType(t).element_type if isinstance(t, ir.RankedTensorType) else t
    return isinstance(element, ir.IntegerType) or isinstance(element, ir.IndexType)


def _next(value: ir.Value, depends: set, memo: dict, ip: ir.InsertionPoint) -> ir.Value:
    """``value`` computed for the next program, cloned at the insertion point."""
    if value not in depends:
        return value
    if value in memo:
        return memo[value]
    owner = value.owner
    if owner.name == "tile.program_id":
        one = arith.ConstantOp(value.type, ir.IntegerAttr.get(value.type, 1)).result
        result = arith.AddIOp(value, one).result
    else:
        operands = [_next(o, depends, memo, ip) for o in owner.operands]
        clone = owner.clone(ip=ip)
        for i, operand in enumerate(operands):
            clone.operands[i] = operand
        result = clone.results[0]
    memo[value] = result
    return result
