"""The re-indexing ops (``tile.reshape``, ``trans``, ``join``, ``split``, ``flip``) chunk by chunk.

A chunk of the result is assembled from *pieces*: runs of its lanes whose sources are consecutive
elements along one operand's last dimension (reversed for a ``flip`` of the last dimension), each
evaluated as one chunk of the operand at the position core's maps (``tritium.codegen.reindex``)
give. Where the last dimension keeps its meaning (a ``trans`` that leaves it in place, a ``flip``
of another dimension, a ``reshape`` that keeps whole rows) the piece is the whole chunk and stays
one vector; elsewhere pieces are single lanes, inserted one by one. The code generator keeps an
operand that depends on a load (or is costly) in a buffer, so re-indexed reads come from memory
written before any store of the same loop (``kernel.plan_buffers``).
"""

from __future__ import annotations

from typing import Sequence

from llvmlite import ir as ll

from ...ir.mlir import ir
from ..reindex import Reindex, add
from .chunks import I32, Chunk, Index, as_value


def _run(m: Reindex, w: int) -> tuple[int, bool]:
    """Lanes per piece of a ``w``-lane chunk, and whether each piece is reversed."""
    last = len(m.res_shape) - 1
    if m.kind == "reshape":
        return min(w, m.src_shape[-1]), False
    if m.kind == "trans":
        return (w, False) if m.order[-1] == last else (1, False)
    if m.kind == "flip":
        return w, m.axis == last
    return 1, False  # split: the source's last index is the part, whatever the lane


def evaluate(ev, op: ir.Operation, idx: Sequence[Index], w: int) -> Chunk:
    """The chunk of ``op``'s result at ``idx`` (``ev``: the ``ChunkEvaluator``)."""
    m = Reindex.of(op)
    b = ev.b
    if m.kind == "join":
        return _join(ev, op, idx, w)
    run, reverse = _run(m, w)
    pieces = []
    for j in range(w // run):
        first = j * run + (run - 1 if reverse else 0)  # the lane holding the piece's first source element
        _, src = m.source(b, tuple(idx[:-1]) + (add(b, idx[-1], first),))
        if m.kind == "reshape" and run == m.src_shape[-1]:
            src = src[:-1] + (0,)  # the piece is a whole source row: known at compile time
        piece = ev.eval(op.operands[0], src, run)
        pieces.append(_reversed(b, piece) if reverse else piece)
    return _concat(b, pieces)


def _join(ev, op, idx: Sequence[Index], w: int) -> Chunk:
    """Lane ``k`` of the last dimension (of size 2) comes from operand ``k``."""
    b, lead = ev.b, tuple(idx[:-1])
    if w == 2:  # a chunk starts at a multiple of its width: lanes 0 and 1
        return _concat(b, [ev.eval(o, lead, 1) for o in op.operands])
    if isinstance(idx[-1], int):
        return ev.eval(op.operands[idx[-1]], lead, 1)
    lhs, rhs = (ev.eval(o, lead, 1) for o in op.operands)
    first = b.icmp_unsigned("==", idx[-1], ll.Constant(I32, 0))
    value = b.select(first, lhs.vec, rhs.vec)
    return Chunk(value, 1, uniform=value)


def _reversed(b: ll.IRBuilder, chunk: Chunk) -> Chunk:
    if chunk.uniform is not None or chunk.width == 1:
        return chunk
    w = chunk.width
    mask = ll.Constant(ll.VectorType(I32, w), list(range(w - 1, -1, -1)))
    return Chunk(b.shuffle_vector(chunk.vec, ll.Constant(chunk.vec.type, ll.Undefined), mask), w)


def _concat(b: ll.IRBuilder, pieces: list[Chunk]) -> Chunk:
    """One chunk of the pieces' lanes in order (pieces of one width)."""
    if len(pieces) == 1:
        return pieces[0]
    width = pieces[0].width
    if width == 1:
        vty = ll.VectorType(pieces[0].vec.type, len(pieces))
        vec = ll.Constant(vty, ll.Undefined)
        for k, piece in enumerate(pieces):
            vec = b.insert_element(vec, piece.vec, as_value(k))
        return Chunk(vec, len(pieces))
    vecs = [p.vec for p in pieces]
    while len(vecs) > 1:  # pairwise: a shuffle of two equal vectors doubles the width
        n = vecs[0].type.count
        mask = ll.Constant(ll.VectorType(I32, 2 * n), list(range(2 * n)))
        vecs = [b.shuffle_vector(vecs[k], vecs[k + 1], mask) for k in range(0, len(vecs), 2)]
    return Chunk(vecs[0], width * len(pieces))
