"""Lower ``tile.sort``: inline its network, or keep the op for a target that sorts in place.

``tl.sort`` and ``tl.topk`` emit one ``tile.sort`` whose region holds the language's bitonic
network (``language.sorting``). That network is straight-line code over every element a worker
holds, once per round of compare-and-swap: right for small blocks and for targets whose code
handles whole vectors (cpu), but on a GPU its per-thread code grows with the block times the
rounds. So each target's layout stage decides per op: ``native(op)`` true keeps ``tile.sort``
with its region emptied, for the target's own lowering (GPU targets: a loop over the rounds in
shared memory, ``codegen.threads.blockwide``); false inlines the network in its place.
"""

from __future__ import annotations

from typing import Callable

from ..ir import tile
from ..ir.mlir import ir
from .axis_info import walk


def lower_sorts(module: ir.Module, native: Callable[[ir.Operation], bool] = lambda op: False) -> None:
    """Inline the network of every ``tile.sort`` of ``module`` that ``native`` does not keep; empty
    the region of those it keeps (in place)."""
    with module.context, ir.Location.unknown():
        for op in [op for op in walk(module.operation) if op.name == "tile.sort"]:
            if native(op):
                kept = tile.SortOp(op.operands[0], *(op.attributes[a] for a in ("dim", "descending", "k", "unsigned")),
                                   op.results[0].type, loc=op.location, ip=ir.InsertionPoint(op))
                op.results[0].replace_all_uses_with(kept.res)
            else:
                _inline(op)
            op.erase()


def _inline(op: ir.Operation) -> None:
    """Move the network's ops before ``op`` and give its result to ``op``'s users."""
    block = op.regions[0].blocks[0]
    block.arguments[0].replace_all_uses_with(op.operands[0])
    body = [inner.operation for inner in block.operations]
    for inner in body[:-1]:
        inner.move_before(op)
    op.results[0].replace_all_uses_with(body[-1].operands[0])

