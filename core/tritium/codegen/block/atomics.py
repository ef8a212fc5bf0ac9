"""``tile.atomic_rmw`` and ``tile.atomic_cas`` in whole blocks: LLVM ``atomicrmw``/``cmpxchg``, one element
at a time, because the programs of a launch may run on several threads at once (the cpu's do).

An atomic is ordered with the program's other memory operations: the pending group is flushed
before it, and a tensor atomic is a loop of its own (an ``AtomicRoot``) whose old values go to a
stack buffer, flushed at once, so later ops read them from there. Within a program the elements
go in row-major order, as in the interpreter. The scope is not needed here: every CPU thread
shares one memory, so the default (system) scope is used.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from llvmlite import ir as ll

from ...ir.mlir import ir
from .. import atomics
from .chunks import I32, Chunk, Index
from .evaluate import Buffer, is_tensor

#: the ops this module lowers
ATOMIC_OPS = frozenset({"tile.atomic_rmw", "tile.atomic_cas"})


@dataclasses.dataclass
class AtomicRoot:
    """A tensor atomic: each chunk's old values go to ``buffer``."""

    op: ir.Operation
    buffer: ll.Value

    def emit(self, cg, idx, w, chunk_no) -> None:
        res = self.op.results[0]
        cg.store_buffer(self.buffer, res, idx, w, cg.atomic_chunk(self.op, idx, w))

    def finish_row(self, cg, row) -> None:
        pass

    def finish(self, cg) -> None:
        cg.env[self.op.results[0]] = Buffer(self.buffer)


class Atomics:
    """Mixed into the kernel code generator."""

    def emit_atomic(self, op: ir.Operation) -> None:
        self.flush()
        res = op.results[0]
        if not is_tensor(res):
            self.env[res] = self.atomic_chunk(op, (), 1)
            return
        self.add_root(AtomicRoot(op, self.alloc_buffer(res.type)), res)
        self.flush()

    def atomic_chunk(self, op: ir.Operation, idx: Sequence[Index], w: int) -> ll.Value:
        """The old values of the ``w`` elements of ``op`` at ``idx``, done lane after lane."""
        view, b = op.opview, self.b
        primitive, cas_primitive = atomics.host(ir.StringAttr(op.attributes["sem"]).value)
        ptr = self.eval(view.ptr, idx, w)
        mask = self.eval(view.mask, idx, w) if op.name == "tile.atomic_rmw" and view.mask is not None else None
        mask = self.guard(op, view.ptr, ptr, mask, self.pointee(view.ptr), w, idx)
        if op.name == "tile.atomic_rmw":
            kind = ir.StringAttr(op.attributes["kind"]).value
            values = [self.eval(view.val, idx, w)]

            def one(p, m, v):
                return atomics.rmw(b, kind, p, v, primitive, m, cas_primitive)
        else:
            values = [self.eval(view.cmp, idx, w), self.eval(view.val, idx, w)]

            def one(p, m, c, v):
                return atomics.cas(b, p, c, v, cas_primitive, m)
        columns = [self._lanes(c, w) for c in [ptr] + values]
        masks = self._lanes(mask, w) if mask is not None else [None] * w
        olds = [one(p, m, *vs) for p, m, *vs in zip(columns[0], masks, *columns[1:])]
        if w == 1:
            return olds[0]
        vec = ll.Constant(ll.VectorType(olds[0].type, w), ll.Undefined)
        for k, old in enumerate(olds):
            vec = b.insert_element(vec, old, ll.Constant(I32, k))
        return vec

    def _lanes(self, chunk: Chunk, w: int) -> list[ll.Value]:
        if chunk.uniform is not None:
            return [chunk.uniform] * w
        if w == 1:
            return [chunk.vec]
        return [self.b.extract_element(chunk.vec, ll.Constant(I32, k)) for k in range(w)]
