"""Lower the ops that carry their own decomposition: inline it, or keep the op for a target that
lowers it itself.

``tile.sort`` (``tl.sort``, ``tl.topk``) holds the language's bitonic network, and
``tile.descriptor_load`` (``desc.load`` of a host tensor descriptor) the pointers and masked loads
that read its block. Those decompositions run on every target, but a target may have better:
a bitonic network is straight-line code over every element a worker holds, once per round, so on
a GPU its code grows with the block times the rounds (GPUs sort large blocks in shared memory,
``codegen.threads.blockwide``); and Hopper copies a descriptor's block with one instruction. So
each target's layout stage decides per op: ``native(op)`` true keeps the op with its region
emptied, for the target's own lowering; false inlines the decomposition in its place.
"""

from __future__ import annotations

from typing import Callable

from ..ir.mlir import ir, passmanager
from .axis_info import walk

#: the ops whose last region is their decomposition
DECOMPOSED = ("tile.sort", "tile.descriptor_load")
#: upstream passes run after inlining: the inlined ops are merged with the body's equal ones and
#: hoisted out of loops they do not vary in
AFTER_INLINING = ("cse", "loop-invariant-code-motion", "cse")


def lower_decomposed(module: ir.Module, native: Callable[[ir.Operation], bool] = lambda op: False) -> None:
    """Inline the decomposition of every op of ``module`` that ``native`` does not keep; empty the
    region of those it keeps (in place)."""
    inlined = False
    with module.context, ir.Location.unknown():
        for op in [op for op in walk(module.operation) if op.name in DECOMPOSED]:
            if native(op):
                kept = ir.Operation.create(op.name, results=[r.type for r in op.results], operands=list(op.operands),
                                           attributes={name: op.attributes[name] for name in op.attributes}, regions=1,
                                           loc=op.location, ip=ir.InsertionPoint(op))
                op.results[0].replace_all_uses_with(kept.results[0])
            else:
                _inline(op)
                inlined = True
            op.erase()
        if inlined:  # what ``tile-opt`` did for the body, for the inlined ops (a loop's invariant addresses)
            passmanager.PassManager.parse(f"builtin.module({','.join(AFTER_INLINING)})").run(module.operation)


def _inline(op: ir.Operation) -> None:
    """Move the decomposition's ops before ``op`` (its block's arguments are ``op``'s operands) and
    give its result to ``op``'s users."""
    block = op.regions[0].blocks[0]
    for argument, operand in zip(block.arguments, op.operands):
        argument.replace_all_uses_with(operand)
    body = [inner.operation for inner in block.operations]
    for inner in body[:-1]:
        inner.move_before(op)
    op.results[0].replace_all_uses_with(body[-1].operands[0])
