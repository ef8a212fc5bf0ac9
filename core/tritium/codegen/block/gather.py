"""``tile.gather`` on the host: a read of the source by index, whose code grows with the chunk width,
never with the block.

The source is held whole in a buffer (its own when it has one, else a copy written where the
gather runs: ``Dots.private_copy``), so every element of it is there before any is read. The
result is a root of its own (``GatherRoot``) over the index's shape: each chunk evaluates its
index chunk and reads its lanes from the buffer at their own coordinates with the axis' one
replaced by the index (one ``llvm.masked.gather``, or one load for a one-lane chunk), into the
result's buffer. The position read is the index masked to the axis (a power of 2), so no read
leaves the buffer; an index outside ``[0, n)`` yields 0, as the op defines (``tl.gather`` passes
indices already reduced modulo ``n``).
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from llvmlite import ir as ll

from ...ir.mlir import ir
from .. import intrinsics
from ..types import const, memory_type, size_in_bytes, vector_of
from .chunks import I32, Index, as_value, iota, linear_offset, splat
from .evaluate import Buffer, cpu_type, shape_of


@dataclasses.dataclass
class GatherRoot:
    """The chunks of a ``tile.gather``, read from the source's buffer at ``src`` into ``out``."""

    op: ir.Operation
    src: ll.Value
    out: ll.Value

    def emit(self, cg, idx, w, chunk_no) -> None:
        cg.store_buffer(self.out, self.op.results[0], idx, w, cg.gathered(self.op, self.src, idx, w))

    def finish_row(self, cg, row) -> None:
        pass

    def finish(self, cg) -> None:
        cg.env[self.op.results[0]] = Buffer(self.out)


class Gathers:
    """``tile.gather``; mixed into the kernel code generator (uses ``Dots.private_copy``)."""

    def emit_gather(self, op: ir.Operation) -> None:
        src, res = op.operands[0], op.results[0]
        if src in self.pending:  # kept, written by the pending group: read its buffer once written
            self.flush()
        root = GatherRoot(op, self.private_copy(src), self.alloc_buffer(res.type))
        self.add_root(root, res)
        self.pending_results.add(res)

    def gathered(self, op: ir.Operation, src_ptr: ll.Value, idx: Sequence[Index], w: int) -> ll.Value:
        """The ``w`` lanes of ``op``'s result at ``idx``."""
        src, index, res = op.operands[0], op.operands[1], op.results[0]
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        shape = shape_of(src)
        n, last = shape[axis], len(shape) - 1
        b = self.b
        position = self.eval(index, idx, w).vec
        if (position.type.element if w > 1 else position.type).width < 32:  # signed, as arith's index casts
            position = b.sext(position, vector_of(I32, w))
        inside = b.icmp_unsigned("<", position, const(position.type, n))
        if position.type != vector_of(I32, w):
            position = b.trunc(position, vector_of(I32, w))
        position = b.and_(position, const(position.type, n - 1))
        stride = linear_offset(b, [1 if d == axis else 0 for d in range(len(shape))], shape)
        base = linear_offset(b, [0 if d == axis else i for d, i in enumerate(idx)], shape)
        offset = b.mul(position, const(position.type, stride)) if stride != 1 else position
        if w > 1:
            lanes = splat(b, as_value(base), w)
            offset = b.add(offset, b.add(lanes, iota(I32, w)) if axis != last else lanes)
        else:
            offset = b.add(offset, as_value(base))
        elem = cpu_type(res.type.element_type)
        mem = memory_type(elem)
        align = size_in_bytes(mem)
        if w == 1:
            value = b.load(b.gep(src_ptr, [offset], source_etype=mem), typ=mem, align=align)
        else:
            ptrs = b.gep(splat(b, src_ptr, w), [offset], source_etype=mem)
            ptrs.type = ll.VectorType(src_ptr.type, w)
            vty = vector_of(mem, w)
            every = const(ll.VectorType(ll.IntType(1), w), 1)
            value = intrinsics.call_aligned(b, "llvm.masked.gather", [ptrs, every, ll.Constant(vty, None)], vty,
                                            [vty, ptrs.type], align)
        value = self.from_memory(value, elem)
        return b.select(inside, value, ll.Constant(value.type, None))  # None: zero
