"""Removing needless ``tile.convert_layout`` ops (Triton's RemoveLayoutConversions, simplified).

A conversion moves data between threads through shared memory, so the layout pass inserts them
freely and this pass takes away what it can:

- a conversion to the layout its source already has is its source;
- a conversion of a conversion converts the first source;
- a loop that yields a conversion carries the converted value's layout instead, when its init
  can be rebuilt in it; and a loop whose body converts a carried value to one layout, and
  otherwise only updates it with cheap ops, carries that layout (a matmul's operand pointers);
- a conversion whose only user narrows the elements (``arith.truncf``, ``arith.trunci``) moves
  below it, so fewer bytes pass through shared memory (a product's fp32 result converted as fp16);
- a conversion of a value computed only from *cheap* ops (``CHEAP``: ranges, splats, constants,
  shape ops and integer/pointer arithmetic over them) is replaced by that computation cloned in the
  destination layout: ``tl.arange(0, M)[:, None]`` builds its range directly in
  ``#tile.slice<1, P>`` instead of converting it there.

What the clones leave unused is erased, and CSE merges clones that several conversions made.
"""

from __future__ import annotations

from ..ir import tile
from ..ir.mlir import ir, passmanager
from ..layout.assign import retyped
from ..layout.distributed import Layout, Slice, encoded, layout_of_type
from ..layout.propagate import FREE, is_tensor
from .axis_info import walk

CONVERT = "tile.convert_layout"
#: rounds of carrying layouts through loops (each may let the next loop, or an enclosing one, carry)
MAX_ROUNDS = 4
#: ops that are cheaper to recompute in another layout than to convert (arith.* too: see _cheap)
CHEAP = FREE | {"tile.expand_dims", "tile.broadcast", "tile.addptr", CONVERT}


def remove_conversions(module: ir.Module) -> None:
    """Remove the needless conversions of ``module`` in place."""
    with module.context, ir.Location.unknown():
        for op in _conversions(module):
            _simplify(op)
        loops = [op for op in walk(module.operation) if op.name == "scf.for"]
        for _ in range(MAX_ROUNDS):  # a loop carrying another layout changes what the next loop gets
            if not any([_carry_yielded_layout(loop) | _carry_converted_argument(loop) for loop in loops]):
                break
            for op in _conversions(module):
                _simplify(op)
        for op in _conversions(module):
            _sink_below_narrowing(op)
        _erase_unused(module)
        passmanager.PassManager.parse("builtin.module(cse)").run(module.operation)


def _conversions(module: ir.Module) -> list[ir.Operation]:
    return [op for op in walk(module.operation) if op.name == CONVERT]


def _carry_yielded_layout(loop: ir.Operation) -> bool:
    """Where an ``scf.for`` yields a conversion of ``v`` and its init can be rebuilt in ``v``'s
    layout, carry that layout instead: init, block argument, yield and result take it, and the
    argument's and the result's users get conversions back (which the next round of
    simplification folds into the conversions they feed). An accumulator of row maxima so stays
    in the reduction's slice layout through the loop. Return whether anything changed."""
    body = loop.regions[0].blocks[0]
    yield_op = body.operations[len(body.operations) - 1].operation
    changed = False
    for i, yielded in enumerate(yield_op.operands):
        if isinstance(yielded.owner, ir.Block) or yielded.owner.name != CONVERT:
            continue
        value = yielded.owner.operands[0]
        layout = layout_of_type(ir.RankedTensorType(value.type))
        init = loop.operands[3 + i]
        if not _rebuild(init, layout, None, {}):
            continue
        arg, result, old = body.arguments[1 + i], loop.results[i], yielded.type
        loop.operands[3 + i] = _rebuild(init, layout, ir.InsertionPoint(loop), {})
        yield_op.operands[i] = value
        arg.set_type(value.type)
        result.set_type(value.type)
        for carried, ip in ((arg, ir.InsertionPoint.at_block_begin(body)), (result, ir.InsertionPoint.after(loop))):
            back = tile.ConvertLayoutOp(carried, old, loc=loop.location, ip=ip)
            carried.replace_all_uses_except(back.res, back.operation)
        changed = True
    return changed


def _carry_converted_argument(loop: ir.Operation) -> bool:
    """Where every use of a carried value in an ``scf.for`` converts it to one layout or is a cheap
    op (its update), and its init and what the loop yields for it can be rebuilt in that layout,
    carry that layout: the pointers of a load that has a layout of its own (``choose.operand_layouts``)
    advance in it, instead of being converted every iteration. Return whether anything changed."""
    body = loop.regions[0].blocks[0]
    yield_op = body.operations[len(body.operations) - 1].operation
    changed = False
    for i, arg in enumerate(list(body.arguments)[1:]):
        if not is_tensor(arg):
            continue
        users = [u.owner.operation if hasattr(u.owner, "operation") else u.owner for u in arg.uses]
        layouts = {str(u.result.type): u.result.type for u in users if u.name == CONVERT}
        if len(layouts) != 1 or not all(u.name == CONVERT or _cheap(u.name) for u in users):
            continue
        old, new = arg.type, ir.RankedTensorType(next(iter(layouts.values())))
        layout, init = layout_of_type(new), loop.operands[3 + i]
        if not _rebuild(init, layout, None, {}):
            continue
        arg.set_type(encoded(ir.RankedTensorType(old), layout))
        back = tile.ConvertLayoutOp(arg, old, loc=loop.location, ip=ir.InsertionPoint.at_block_begin(body))
        arg.replace_all_uses_except(back.res, back.operation)
        if not _rebuild(yield_op.operands[i], layout, None, {}):  # the update is not cheap: undo
            back.res.replace_all_uses_with(arg)
            back.operation.erase()
            arg.set_type(old)
            continue
        yield_op.operands[i] = _rebuild(yield_op.operands[i], layout, ir.InsertionPoint(yield_op), {})
        loop.operands[3 + i] = _rebuild(init, layout, ir.InsertionPoint(loop), {})
        result = loop.results[i]
        result.set_type(arg.type)
        after = tile.ConvertLayoutOp(result, old, loc=loop.location, ip=ir.InsertionPoint.after(loop))
        result.replace_all_uses_except(after.res, after.operation)
        changed = True
    return changed


#: elementwise ops that make each element narrower: a conversion is cheaper after them
NARROWING = frozenset({"arith.truncf", "arith.trunci"})


def _sink_below_narrowing(op: ir.Operation) -> None:
    """``narrow(convert(x))`` as ``convert(narrow(x))``."""
    uses = list(op.result.uses)
    if len(uses) != 1:
        return
    user = uses[0].owner
    user = user.operation if hasattr(user, "operation") else user
    if user.name not in NARROWING or len(user.operands) != 1:
        return
    src = op.operands[0]
    narrowed = user.clone(ip=ir.InsertionPoint(user))
    narrowed.operands[0] = src
    t = ir.RankedTensorType(user.results[0].type)
    narrowed.results[0].set_type(encoded(t, layout_of_type(ir.RankedTensorType(src.type))))
    moved = tile.ConvertLayoutOp(narrowed.results[0], t, loc=op.location, ip=ir.InsertionPoint(user))
    user.results[0].replace_all_uses_with(moved.res)
    user.erase()
    op.erase()


def _simplify(op: ir.Operation) -> None:
    src = op.operands[0]
    while not isinstance(src.owner, ir.Block) and src.owner.name == CONVERT:  # convert(convert(x))
        src = src.owner.operands[0]
    op.operands[0] = src
    if src.type == op.result.type:
        replacement = src
    else:
        layout = layout_of_type(ir.RankedTensorType(op.result.type))
        if not _rebuild(src, layout, None, {}):
            return
        replacement = _rebuild(src, layout, ir.InsertionPoint(op), {})
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
        clone.attributes["value"] = retyped(clone.attributes["value"], clone.results[0].type)
    return clone.results[0]


def _operand_layouts(op: ir.Operation, layout: Layout) -> list[Layout | None]:
    """The layout each operand of the cheap ``op`` needs for its result to have ``layout`` (None: a
    scalar, taken as it is)."""
    if op.name == "tile.expand_dims":
        return [Slice(ir.IntegerAttr(op.attributes["axis"]).value, layout)]
    return [layout if is_tensor(v) else None for v in op.operands]


def _erase_unused(module: ir.Module) -> None:
    """Erase the cheap ops (conversions included) that nothing uses: what conversions and
    rebuilding left behind. Users go before their producers, so chains go in one sweep."""
    changed = True
    while changed:
        changed = False
        for op in reversed(list(walk(module.operation))):
            if _cheap(op.name) and not op.regions and op.results and not any(list(r.uses) for r in op.results):
                op.erase()
                changed = True
