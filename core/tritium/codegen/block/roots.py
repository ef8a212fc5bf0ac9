"""Roots: what a group loop computes for each chunk of its shape.

A root has ``emit`` (once per chunk, at its index), ``finish_row`` (after each row of chunks) and
``finish`` (after the loop). Reductions along the last axis are roots too (``reductions``).
"""

from __future__ import annotations

import dataclasses

from llvmlite import ir as ll

from ...ir.mlir import ir
from .. import intrinsics
from .evaluate import Buffer


@dataclasses.dataclass
class MaterializeRoot:
    """Write ``value``'s chunks to the buffer at ``ptr``: a kept tensor (which is read from there
    afterwards) or a copy into a carried one."""

    value: ir.Value
    ptr: ll.Value
    kept: bool = False

    def emit(self, cg, idx, w, chunk_no) -> None:
        cg.store_buffer(self.ptr, self.value, idx, w, cg.eval(self.value, idx, w).vec)

    def finish_row(self, cg, row) -> None:
        pass

    def finish(self, cg) -> None:
        if self.kept:
            cg.env[self.value] = Buffer(self.ptr)


@dataclasses.dataclass
class StoreRoot:
    """A ``tile.store`` of a tensor."""

    op: ir.Operation

    def emit(self, cg, idx, w, chunk_no) -> None:
        view = self.op.opview
        mem = cg.pointee(view.ptr)
        value = cg.to_memory(cg.eval(view.value, idx, w).vec, mem)
        mask = cg.eval(view.mask, idx, w) if view.mask is not None else None
        ptr = cg.eval(view.ptr, idx, w)
        mask = cg.guard(self.op, view.ptr, ptr, mask, mem, w, idx)
        cg.store_through(ptr, value, mask, mem, w, (view.ptr, idx))

    def finish_row(self, cg, row) -> None:
        pass

    def finish(self, cg) -> None:
        pass


@dataclasses.dataclass
class PrefetchRoot:
    """A ``tile.prefetch``: the first address of each chunk, which on a host with 64-byte lines and
    512-bit vectors is each line of a contiguous run (``passes.prefetch`` prefetches only those)."""

    op: ir.Operation

    def emit(self, cg, idx, w, chunk_no) -> None:
        ptr = self.op.operands[0]
        first = cg.first_lane(ptr, idx, cg.eval(ptr, idx, w))
        write = ir.IntegerAttr(self.op.attributes["write"]).value
        rw, locality, data = (ll.Constant(ll.IntType(32), v) for v in (write, 3, 1))  # to L1, data cache
        intrinsics.call(cg.b, "llvm.prefetch", [first, rw, locality, data], ret=ll.VoidType(), overloads=[first.type])

    def finish_row(self, cg, row) -> None:
        pass

    def finish(self, cg) -> None:
        pass


@dataclasses.dataclass
class Group:
    """Roots of one shape, computed together in one loop nest over chunks of ``width``."""

    shape: tuple[int, ...]
    width: int
    roots: list = dataclasses.field(default_factory=list)
