"""Removing needless ``tile.convert_layout`` ops (Triton's RemoveLayoutConversions, simplified).

A conversion moves data between threads through shared memory, so the layout pass inserts them
freely and this pass takes away what it can:

- a conversion to the layout its source already has is its source;
- a conversion of a conversion converts the first source;
- a conversion of a value computed only from *cheap* ops (``CHEAP``: ranges, splats, constants,
  shape ops and integer/pointer arithmetic over them) is replaced by that computation cloned in the
  destination layout: ``tl.arange(0, M)[:, None]`` builds its range directly in
  ``#tile.slice<1, P>`` instead of converting it there.

What the clones leave unused is erased, and CSE merges clones that several conversions made.
"""

from __future__ import annotations

from ..ir.mlir import ir, passmanager
from ..layout.assign import _retyped
from ..layout.distributed import Layout, Slice, encoded, layout_of_type
from ..layout.propagate import FREE, is_tensor
from .axis_info import walk

CONVERT = "tile.convert_layout"
#: ops that are cheaper to recompute in another layout than to convert (arith.* too: see _cheap)
CHEAP = FREE | {"tile.expand_dims", "tile.broadcast", "tile.addptr", CONVERT}


def remove_conversions(module: ir.Module) -> None:
    """Remove the needless conversions of ``module`` in place."""
    with module.context, ir.Location.unknown():
        orphans: list[ir.Value] = []  # sources of removed conversions: perhaps unused now
        for op in [op for op in walk(module.operation) if op.name == CONVERT]:
            _simplify(op, orphans)
        _erase_unused(module, orphans)
        passmanager.PassManager.parse("builtin.module(cse)").run(module.operation)


def _simplify(op: ir.Operation, orphans: list[ir.Value]) -> None:
    src = op.operands[0]
    while not isinstance(src.owner, ir.Block) and src.owner.name == CONVERT:  # convert(convert(x))
        orphans.append(src)
        src = src.owner.operands[0]
    op.operands[0] = src
    if src.type == op.result.type:
        replacement = src
    else:
        layout = layout_of_type(ir.RankedTensorType(op.result.type))
        if not _rebuild(src, layout, None, {}):
            return
        replacement = _rebuild(src, layout, ir.InsertionPoint(op), {})
        orphans.append(src)
    op.result.replace_all_uses_with(replacement)
    op.erase()


def _cheap(name: str) -> bool:
    return name in CHEAP or name.startswith("arith.")


def _rebuild(value: ir.Value, layout: Layout, ip: ir.InsertionPoint | None, memo: dict):
    """``value`` computed in ``layout`` by cloning its cheap producers before ``ip``; with ``ip``
    None only whether that is possible. The value itself where it already has ``layout``; None
    where it cannot be rebuilt. ``memo`` holds what was rebuilt, so shared producers clone once."""
    key = (value, layout)
    if key not in memo:
        memo[key] = _rebuild_uncached(value, layout, ip, memo)
    return memo[key]


def _rebuild_uncached(value: ir.Value, layout: Layout, ip: ir.InsertionPoint | None, memo: dict):
    t = ir.RankedTensorType(value.type)
    if t == encoded(t, layout):
        return value
    owner = value.owner
    if isinstance(owner, ir.Block) or not _cheap(owner.name):
        return None
    if owner.name == CONVERT:
        return _rebuild(owner.operands[0], layout, ip, memo)
    operands = []
    for operand, wanted in zip(owner.operands, _operand_layouts(owner, layout)):
        new = operand if wanted is None else _rebuild(operand, wanted, ip, memo)
        if new is None:
            return None
        operands.append(new)
    if ip is None:
        return True
    clone = owner.clone(ip=ip)
    for i, operand in enumerate(operands):
        clone.operands[i] = operand
    clone.results[0].set_type(encoded(t, layout))
    if clone.name == "arith.constant":
        clone.attributes["value"] = _retyped(clone.attributes["value"], clone.results[0].type)
    return clone.results[0]


def _operand_layouts(op: ir.Operation, layout: Layout) -> list[Layout | None]:
    """The layout each operand of the cheap ``op`` needs for its result to have ``layout`` (None: a
    scalar, taken as it is)."""
    if op.name == "tile.expand_dims":
        return [Slice(ir.IntegerAttr(op.attributes["axis"]).value, layout)]
    return [layout if is_tensor(v) else None for v in op.operands]


def _erase_unused(module: ir.Module, values: list[ir.Value]) -> None:
    """Erase the cheap producers of ``values`` (and theirs) that nothing uses any more."""
    cone: set[ir.Operation] = set()
    while values:
        op = values.pop().owner
        if not isinstance(op, ir.Block) and _cheap(op.name) and op not in cone:
            cone.add(op)
            values.extend(op.operands)
    changed = True
    while changed:
        changed = False
        for op in reversed(list(walk(module.operation))):  # users before producers
            if op in cone and not any(list(r.uses) for r in op.results):
                cone.discard(op)
                op.erase()
                changed = True
