"""Facts about a ``tile`` module that the runtime needs, recorded in the compile metadata."""

from __future__ import annotations

from ..ir.mlir import ir

#: ops whose first operand is the pointer their result derives from
_POINTER_PASSTHROUGH = {"tile.addptr", "tile.splat", "tile.broadcast", "tile.expand_dims",
                        "tile.convert_layout"}


#: ops that write memory through their first operand
WRITES = ("tile.store", "tile.atomic_rmw", "tile.atomic_cas")


def stored_arguments(module: ir.Module, kernel: str) -> list[int] | None:
    """Indices of the kernel's arguments that ``tile.store`` or an atomic writes through, or None
    when some such pointer cannot be traced back to arguments (then any pointer may be written)."""
    fn = next(op for op in module.body.operations
              if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == kernel)
    args = list(fn.regions[0].blocks[0].arguments)
    written: set[int] = set()
    for store in (op for name in WRITES for op in _ops_named(fn.operation, name)):
        sources = pointer_sources(store.operands[0], args)
        if sources is None:
            return None
        written |= sources
    return sorted(written)


def _ops_named(op: ir.Operation, name: str):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                if inner.operation.name == name:
                    yield inner.operation
                yield from _ops_named(inner.operation, name)


def pointer_sources(value: ir.Value, args: list[ir.Value], seen: set | None = None) -> set[int] | None:
    """Indices of ``args`` that pointer ``value`` may point into; None when it cannot be traced."""
    seen = set() if seen is None else seen
    if value in seen:
        return set()  # already being traced (a loop-carried cycle)
    seen.add(value)
    for i, a in enumerate(args):
        if value == a:
            return {i}
    owner = value.owner
    if isinstance(owner, ir.Block):  # a loop's region argument: its init and what each iteration yields
        loop = owner.owner
        if loop.name != "scf.for" or value.arg_number == 0:
            return None
        return _loop_value(loop, owner, value.arg_number - 1, args, seen)
    op = owner.operation
    if op.name in _POINTER_PASSTHROUGH:
        return pointer_sources(op.operands[0], args, seen)
    if op.name == "arith.select":
        return _union(pointer_sources(op.operands[1], args, seen), pointer_sources(op.operands[2], args, seen))
    if op.name == "scf.for":
        return _loop_value(op, op.regions[0].blocks[0], value.result_number, args, seen)
    return None


def _loop_value(loop: ir.Operation, body: ir.Block, i: int, args, seen) -> set[int] | None:
    init = loop.operands[3 + i]
    yielded = body.operations[len(body.operations) - 1].operands[i]
    return _union(pointer_sources(init, args, seen), pointer_sources(yielded, args, seen))


def _union(a: set[int] | None, b: set[int] | None) -> set[int] | None:
    return None if a is None or b is None else a | b


def is_zero(value: ir.Value) -> bool:
    """A constant (or a splat of one) all of whose elements are 0."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return False
    if owner.name == "tile.splat":
        return is_zero(owner.operands[0])
    if owner.name != "arith.constant":
        return False
    attr = owner.attributes["value"]
    if not isinstance(attr, (ir.IntegerAttr, ir.FloatAttr)):
        dense = ir.DenseElementsAttr(attr)
        if not dense.is_splat:
            return False
        attr = dense.get_splat_value()
    return attr.value == 0  # an IntegerAttr or a FloatAttr
