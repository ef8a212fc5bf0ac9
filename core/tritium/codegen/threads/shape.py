"""The re-indexing ops (``tile.reshape``, ``trans``, ``join``, ``split``, ``flip``) over threads.

A result element generally lives in another thread than its source, so the operands pass through
the op's shared-memory scratch (``tile.shared_offset``; ``layout.scratch`` sizes it): every thread
writes its registers at their row-major positions, the operands one after the other (threads
holding copies write the same values), waits at a barrier, and reads each of its result registers
at the position core's maps give (``tritium.codegen.reindex``). Rows move as vectors where the
distribution and the scratch offset allow; a reshape also reads them as vectors, since it keeps
row-major positions.

Where the layout stage gave the result a layout that keeps every element in its thread (a
``trans`` of a blocked layout, a ``join``, a ``split`` of an in-thread dimension, a ``reshape``
whose layout keeps every position's thread, a ``flip`` of an in-thread dimension: see
``layout.reindexed``), the op only renames registers and has no scratch.
"""

from __future__ import annotations

import math

from ...ir.mlir import ir
from ...layout.reindexed import register_map
from ..reindex import Reindex, value
from ..types import memory_type, vector_of


class ShapeOps:
    """Re-indexing ops; mixed into the walker."""

    def emit_reindex(self, op: ir.Operation) -> None:
        res = op.results[0]
        renamed = register_map(op)
        if renamed is not None:
            self.env[res] = [self.env[op.operands[k]][r] for k, r in renamed]
            view = self.ring_views.get(op.operands[0])
            if op.name == "tile.trans" and view is not None:  # the slot, read as the transpose it stores
                self.ring_views[res] = view
            return
        m = Reindex.of(op)
        elem = self.lltype(res.type)
        mem = memory_type(elem)
        size = self.element_bytes(mem)
        limit = self.scratch_vector(op, mem)
        base = self.scratch(op)
        b = self.b
        numel = math.prod(m.src_shape)
        for k, src in enumerate(op.operands):
            dist = self.distribution(src.type)
            values = self.env[src]
            w = self.row_vector_width(dist, limit)
            for r0 in range(0, dist.registers, w):
                position = self.index.linear_index(b, dist, r0)
                if k:
                    position = b.add(position, value(k * numel))
                address = b.gep(base, [position], source_etype=mem)
                b.store(self.to_memory(self.pack(values[r0:r0 + w])), address, align=w * size)
        self.hooks.barrier(b)
        dist = self.distribution(res.type)
        w = self.row_vector_width(dist, limit) if m.kind == "reshape" else 1
        out = []
        for r0 in range(0, dist.registers, w):
            position = value(m.scratch_index(b, self.index.coordinates(b, dist, r0)))
            loaded = b.load(b.gep(base, [position], source_etype=mem), typ=vector_of(mem, w), align=w * size)
            out += [self.from_memory(v, elem) for v in self.unpack(loaded, w)]
        self.env[res] = out
