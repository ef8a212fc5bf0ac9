"""Host descriptors' blocks copied by the target's tensor copy engine (``DeviceHooks.tensor_copy``:
Hopper's TMA), as ``passes.tensor_copies`` and ``passes.software_pipeline`` placed them.

Each descriptor the engine copies from has its tensor map as a kernel parameter after the others
(``tensor_map_parameters``). In a ring, the slots are followed by one barrier object per slot:

- ``tile.tensor_copy_init``: thread 0 initialises them (a barrier follows, in the IR);
- ``tile.async_tensor_copy``: where its predicate holds, thread 0 arms the slot's barrier with the
  block's bytes and copies the block, one box per column block of its ``SwizzledTile``;
- ``tile.tensor_copy_wait``: every thread waits for the barrier's phase;
- ``tile.tensor_copy_done``: thread 0 ends the barrier objects.

A ``tile.descriptor_load`` kept for the engine but left outside a ring (the pipeline found its
loop did not qualify after all) copies through its own scratch, one barrier after the block, and
waits at once.
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...errors import TritiumError
from ...ir.mlir import ir
from ...passes import tensor_copies
from ..types import memory_type
from .indexing import I32

I8 = ll.IntType(8)


class TensorCopies:
    """The tensor copy ops; mixed into the walker."""

    def tensor_map_parameters(self, func_op: ir.Operation) -> list[int]:
        """The base parameter numbers of the descriptors whose tensor maps follow the kernel's
        parameters, in order (``passes.tensor_copies.tensor_maps``)."""
        bases = [m["base"] for m in tensor_copies.tensor_maps(func_op)]
        if bases and self.hooks.tensor_copy is None:
            raise TritiumError(f"kernel '{self.name}': this target has no tensor copy engine for its descriptor loads")
        return bases

    def _engine_barrier(self, op: ir.Operation, index: ll.Value | int) -> ll.Value:
        """Barrier object ``index`` of ``op``'s ring (after its slots)."""
        first = self._stages(op) * ir.IntegerAttr(op.attributes["slot_bytes"]).value
        index = I32(index) if isinstance(index, int) else index
        return self.b.gep(self.scratch(op), [self.b.add(I32(first), self.b.mul(index, I32(8)))], source_etype=I8)

    @staticmethod
    def _stages(op: ir.Operation) -> int:
        return ir.IntegerAttr(op.attributes[tensor_copies.STAGES_ATTR]).value

    def _thread0(self):
        return self.b.if_then(self.b.icmp_unsigned("==", self.index.tid, I32(0)))

    def emit_tensor_copy_init(self, op: ir.Operation) -> None:
        engine = self.hooks.tensor_copy
        with self._thread0():
            for i in range(self._stages(op)):
                engine.init(self.b, self._engine_barrier(op, i))
            engine.fence_init(self.b)

    def emit_tensor_copy_done(self, op: ir.Operation) -> None:
        with self._thread0():
            for i in range(self._stages(op)):
                self.hooks.tensor_copy.invalidate(self.b, self._engine_barrier(op, i))

    def emit_tensor_copy_wait(self, op: ir.Operation) -> None:
        view = op.opview
        self.hooks.tensor_copy.wait(self.b, self._engine_barrier(op, self.env[view.slot]), self.env[view.phase])

    def _copy_block(self, op: ir.Operation, dst: ll.Value, offsets: list[ll.Value], barrier: ll.Value) -> None:
        """Thread 0's arming of ``barrier`` and copies of the block at ``offsets`` into ``dst``."""
        engine, b = self.hooks.tensor_copy, self.b
        tile = tensor_copies.block_tile(tensor_copies.copied_type(op))
        tensor_map = self.tensor_maps[tensor_copies.base_parameter(op)]
        engine.expect(b, barrier, tile.rows * tile.cols * tile.element_bytes)
        row, col = offsets
        for j in range(tile.cols // tile.block_cols):
            at = b.gep(dst, [I32(j * tile.block_elements * tile.element_bytes)], source_etype=I8)
            engine.copy(b, at, tensor_map, [b.add(col, I32(j * tile.block_cols)), row], barrier)

    def emit_async_tensor_copy(self, op: ir.Operation) -> None:
        view = op.opview
        start = self.slot_start(op, view.slot, ir.IntegerAttr(op.attributes["slot_bytes"]).value)
        go = self.b.and_(self.env[view.pred], self.b.icmp_unsigned("==", self.index.tid, I32(0)))
        with self.b.if_then(go):
            self._copy_block(op, start, [self.env[o] for o in view.offsets], self._engine_barrier(op, self.env[view.slot]))

    def emit_descriptor_load(self, op: ir.Operation) -> None:
        """A kept descriptor load outside a ring: copy into the op's scratch and wait."""
        engine, b = self.hooks.tensor_copy, self.b
        res = op.results[0]
        tile = tensor_copies.block_tile(res.type)
        start = self.scratch(op)
        barrier = b.gep(start, [I32(tile.rows * tile.cols * tile.element_bytes)], source_etype=I8)
        with self._thread0():
            engine.init(b, barrier)
            engine.fence_init(b)
        self.hooks.barrier(b)
        with self._thread0():
            self._copy_block(op, start, [self.env[o] for o in op.opview.offsets], barrier)
        engine.wait(b, barrier, I32(0))
        t = ir.RankedTensorType(res.type)
        elem = self.lltype(t)
        mem = memory_type(elem)
        dist = self.distribution(t)
        addresses = self.swizzled_addresses(dist, list(range(dist.registers)), start, tuple(t.shape), mem)
        self.env[res] = [self.from_memory(b.load(a, typ=mem), elem) for a in addresses]
        self.hooks.barrier(b)  # every thread is past its wait and its reads
        with self._thread0():
            engine.invalidate(b, barrier)
