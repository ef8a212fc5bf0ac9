"""Raise the language's one-hot ``tl.gather`` and ``tl.histogram`` to ``tile.gather`` and
``tile.histogram`` for the GPU layout stage.

The language writes both as comparisons of every element with every position (or bin) and a
reduction over them (``language.sorting``), which every target runs; but a GPU's per-thread code
then holds ``index x positions`` (``values x bins``) elements: its size grows with the square of
the block. The raised ops go through shared memory instead (``codegen.threads.blockwide``), with
code that grows with the elements each thread holds.

The patterns, up to broadcasts, operand order and casts of the position ranges:

- ``reduce(or, select(expand_dims(P, k) == range(n) along k, expand_dims(V, k - 1), 0), axis=k)``
  is ``gather(V, P, axis=k - 1)``, since a position outside ``[0, n)`` selects nothing (0);
- ``reduce(add, extui(expand_dims(X, 1) == range(bins) along 1 [and expand_dims(M, 1)]), axis=0)``
  is ``histogram(X [, mask=M])``.

Anything else is left as it is (it stays right, only larger). The ops the match leaves unused
are removed.
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
    """Replace the one-hot gathers and histograms of ``module`` (a ``tile-opt`` module, in place)."""
    with module.context, ir.Location.unknown():
        for op in [op for op in walk(module.operation) if op.name == "tile.reduce"]:
            _raise(op)
        _remove_unused(module)


def _raise(op: ir.Operation) -> None:
    """Replace the reduction ``op`` by the op it computes, if it is one of the patterns."""
    if len(op.operands) != 1:
        return
    combine = _combine(op)
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    if combine == "arith.ori":
        new = _gather(op, axis)
    elif combine == "arith.addi":
        new = _histogram(op, axis)
    else:
        return
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


def _gather(op: ir.Operation, k: int) -> ir.Value | None:
    """``tile.gather`` for an or-reduction along ``k`` of a one-hot select, else None."""
    select = _owner(op.operands[0], "arith.select")
    if k < 1 or select is None or not _is_zero(select.operands[2]):
        return None
    cond, values = select.operands[0], select.operands[1]
    n = ir.RankedTensorType(values.type).shape[k]
    position = _compared_with_range(cond, k, n)
    source = _expanded(values, k - 1)
    shape = list(ir.RankedTensorType(op.results[0].type).shape)
    if position is None or source is None or _shape(position) != shape or \
            _shape(source) != shape[:k - 1] + [n] + shape[k:]:  # not broadcast along another dimension
        return None
    with ir.InsertionPoint(op):
        return tile.GatherOp(source, position, tile.i32_attr(k - 1), op.results[0].type, loc=op.location).res


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


def _is_zero(value: ir.Value) -> bool:
    value = _unbroadcast(value)
    splat = _owner(value, "tile.splat")
    if splat is not None:
        value = splat.operands[0]
    const = _owner(value, "arith.constant")
    if const is None:
        return False
    attr = const.attributes["value"]
    if isinstance(attr, ir.IntegerAttr):
        return attr.value == 0
    dense = ir.DenseElementsAttr(attr) if _is_tensor(value) else None
    return dense is not None and dense.is_splat and ir.IntegerAttr(dense.get_splat_value()).value == 0


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
