"""The software pipeline's ops (``passes.software_pipeline``): copies into a ring of shared-memory
slots, their groups and waits, and reads of a slot.

A slot holds one tensor as a product's operands are stored (``codegen.threads.warp_matrix``):
row-major, or its transpose where its threads hold runs down the columns, with the rows' 16-byte
chunks swizzled. ``tile.async_copy`` moves each thread's runs of
consecutive elements (the widest the pointers' alignment and the mask allow, as a load would) with
``DeviceHooks.async_copy``; ``tile.local_load`` reads a slot into its result's registers and also
remembers where the slot is (``ring_views``), so that a product reads its operand's fragments from
there directly (the registers then go unused, and LLVM drops their loads).
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...ir.mlir import ir
from ..types import memory_type, vector_of
from .indexing import I32
from .warp_matrix import storage


class Rings:
    """The ring ops; mixed into the walker."""

    def slot_start(self, op: ir.Operation, slot: ir.Value, slot_bytes: int) -> ll.Value:
        """A pointer to the first byte of slot ``slot`` of ``op``'s ring."""
        return self.b.gep(self.scratch(op), [self.b.mul(self.env[slot], I32(slot_bytes))], source_etype=ll.IntType(8))

    def emit_async_copy(self, op: ir.Operation) -> None:
        view = op.opview
        t = ir.RankedTensorType(view.ptr.type)
        elem = self.pointee_type(view.ptr)
        mem = memory_type(elem)
        dist = self.operands_distribution(op, t, view.ptr, view.mask)
        w = self.access_width(view.ptr, view.mask, dist, elem)
        stored, _ = storage(dist)
        start = self.slot_start(op, view.slot, ir.IntegerAttr(op.attributes["slot_bytes"]).value)
        ptrs, mask = self.env[view.ptr], self.env[view.mask]
        runs = list(range(0, dist.registers, w))
        for r0, dst in zip(runs, self.swizzled_addresses(stored, runs, start, stored.shape, mem)):
            self.hooks.async_copy(self.b, dst, ptrs[r0], vector_of(mem, w), mask[r0])

    def emit_async_commit(self, op: ir.Operation) -> None:
        self.hooks.async_commit(self.b)

    def emit_async_wait(self, op: ir.Operation) -> None:
        self.hooks.async_wait(self.b, ir.IntegerAttr(op.attributes["pending"]).value)
        self.hooks.barrier(self.b)

    def emit_local_load(self, op: ir.Operation) -> None:
        res = op.results[0]
        t = ir.RankedTensorType(res.type)
        elem = self.lltype(t)
        mem = memory_type(elem)
        dist, _ = storage(self.distribution(t))
        start = self.slot_start(op, op.opview.slot, ir.IntegerAttr(op.attributes["slot_bytes"]).value)
        self.ring_views[res] = start
        addresses = self.swizzled_addresses(dist, list(range(dist.registers)), start, dist.shape, mem)
        self.env[res] = [self.from_memory(self.b.load(a, typ=mem), elem) for a in addresses]
