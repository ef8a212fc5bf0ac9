"""Raise the language's one-hot ``tl.histogram`` to ``tile.histogram`` for the GPU layout stage.

The language writes it as a comparison of every value with every bin and a sum over them
(``language.sorting``), which every target runs; but a GPU's per-thread code then holds
``values x bins`` elements: its size grows with the square of the block. The raised op goes
through shared memory instead (``codegen.threads.blockwide``), with code that grows with the
elements each thread holds. (``tl.gather`` needs no raising: the language emits ``tile.gather``.)

The pattern, up to broadcasts, operand order and casts of the bin range:
``reduce(add, extui(expand_dims(X, 1) == range(bins) along 1 [and expand_dims(M, 1)]), axis=0)``
is ``histogram(X [, mask=M])``. Anything else is left as it is (it stays right, only larger). The
ops the match leaves unused are removed.
"""

from __future__ import annotations

from ..ir import tile
from ..ir.mlir import arith, ir
from .axis_info import walk

#: casts that keep the values of a non-negative range
_WIDENING = ("arith.extsi", "arith.extui", "arith.index_cast")
#: integer extensions of a compared value that a raised op takes on its unexpanded operand
_EXTENSIONS = {"arith.extsi": arith.ExtSIOp, "arith.extui": arith.ExtUIOp}
#: ops a match may leave unused; they have no side effects
_REMOVABLE = ("arith.", "tile.broadcast", "tile.expand_dims", "tile.splat", "tile.make_range")


def raise_blockwide(module: ir.Module) -> None:
    """Replace the one-hot histograms of ``module`` (a ``tile-opt`` module, in place)."""
    with module.context, ir.Location.unknown():
        for op in [op for op in walk(module.operation) if op.name == "tile.reduce"]:
            _raise(op)
        _remove_unused(module)


def _raise(op: ir.Operation) -> None:
    """Replace the reduction ``op`` by the histogram it computes, if it is the pattern."""
    if len(op.operands) != 1 or _combine(op) != "arith.addi":
        return
    new = _histogram(op, ir.IntegerAttr(op.attributes["axis"]).value)
    if new is not None:
        op.results[0].replace_all_uses_with(new)
        op.erase()


def _combine(op: ir.Operation) -> str | None:
    """The name of the reduction's combine op when it is one op of its two arguments."""
    block = op.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    if len(ops) == 2 and len(block.arguments) == 2 and set(ops[0].operands) == set(block.arguments) \
            and list(ops[1].operands) == [ops[0].result]:
        return ops[0].name
    return None


def _histogram(op: ir.Operation, axis: int) -> ir.Value | None:
    """``tile.histogram`` for a sum along 0 of one-hot matches (and a mask), else None."""
    ext = _owner(op.operands[0], "arith.extui")
    if axis != 0 or ext is None or len(_shape(ext.result)) != 2:
        return None
    hit, mask = ext.operands[0], None
    both = _owner(hit, "arith.andi")
    if both is not None:
        for a, b in (tuple(both.operands), tuple(both.operands)[::-1]):
            mask = _expanded(b, 1)
            if mask is not None and _owner(a, "arith.cmpi") is not None:
                hit = a
                break
        else:
            return None
    n, bins = ir.RankedTensorType(op.operands[0].type).shape
    values = _compared_with_range(hit, 1, bins)
    if values is None or _shape(values) != [n] or (mask is not None and _shape(mask) != [n]):
        return None  # a value broadcast along the counted dimension counts several times
    with ir.InsertionPoint(op):
        return tile.HistogramOp(values, mask=mask, res=op.results[0].type, loc=op.location).res


def _compared_with_range(cond: ir.Value, dim: int, n: int) -> ir.Value | None:
    """``X`` where ``cond`` is ``expand_dims(X, dim) == range(0, n)`` along ``dim`` (either order);
    a sign or zero extension of the expanded ``X`` (a narrow integer compared with the i32 range)
    is made on ``X`` instead, before ``cond``."""
    cmp = _owner(cond, "arith.cmpi")
    if cmp is None or ir.IntegerAttr(cmp.attributes["predicate"]).value != 0:  # 0: eq
        return None
    for a, b in (tuple(cmp.operands), tuple(cmp.operands)[::-1]):
        if not _is_range(b, dim, n):
            continue
        x = _expanded(a, dim)
        if x is not None:
            return x
        inner = _unbroadcast(a)
        cast = next((c for c in (_owner(inner, name) for name in _EXTENSIONS) if c is not None), None)
        x = _expanded(cast.operands[0], dim) if cast is not None else None
        if x is not None:
            elem = ir.RankedTensorType(cast.results[0].type).element_type
            with ir.InsertionPoint(cmp):
                return _EXTENSIONS[cast.name](ir.RankedTensorType.get(ir.RankedTensorType(x.type).shape, elem), x,
                                              loc=cast.location).result
    return None


def _owner(value: ir.Value, name: str) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    owner = owner.operation if hasattr(owner, "operation") else owner
    return owner if owner.name == name else None


def _unbroadcast(value: ir.Value) -> ir.Value:
    b = _owner(value, "tile.broadcast")
    return b.operands[0] if b is not None else value


def _expanded(value: ir.Value, dim: int) -> ir.Value | None:
    """``X`` where ``value`` is ``X`` with a dimension inserted at ``dim`` (and broadcast)."""
    e = _owner(_unbroadcast(value), "tile.expand_dims")
    return e.operands[0] if e is not None and ir.IntegerAttr(e.attributes["axis"]).value == dim else None


def _is_range(value: ir.Value, dim: int, n: int) -> bool:
    """``value`` is ``range(0, n)`` along ``dim``, of size 1 elsewhere before broadcasting."""
    value = _unbroadcast(value)
    shape = ir.RankedTensorType(value.type).shape if _is_tensor(value) else None
    if shape is None or shape[dim] != n or any(s != 1 for d, s in enumerate(shape) if d != dim):
        return False
    while True:
        owner = value.owner
        if isinstance(owner, ir.Block):
            return False
        name = owner.name
        if name == "tile.make_range":
            return (ir.IntegerAttr(owner.attributes["start"]).value == 0
                    and ir.IntegerAttr(owner.attributes["end"]).value == n)
        if name not in ("tile.expand_dims", "tile.broadcast") + _WIDENING:
            return False
        value = owner.operands[0]


def _shape(value: ir.Value) -> list[int] | None:
    return list(ir.RankedTensorType(value.type).shape) if _is_tensor(value) else None


def _is_tensor(value: ir.Value) -> bool:
    return isinstance(value.type, ir.RankedTensorType)


def _remove_unused(module: ir.Module) -> None:
    """Erase side-effect-free ops whose results nothing uses, until none is left."""
    while True:
        dead = [op for op in walk(module.operation)
                if op.name.startswith(_REMOVABLE) and op.results and
                all(not any(True for _ in r.uses) for r in op.results)]
        if not dead:
            return
        for op in reversed(dead):
            op.erase()
