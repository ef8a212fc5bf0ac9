"""Reductions (``tile.reduce``) in whole blocks: vector accumulators and shuffle-tree combines.

Along the last axis a reduction is a *root* of a group loop (``ReduceRoot``): each row accumulates
its chunks in one vector per reduced tensor, then combines the lanes pairwise. Along another axis
whole chunks accumulate vertically in a loop of their own (``sequential``). The combine region is
applied to vectors and scalars alike through the shared elementwise emitters.
"""

from __future__ import annotations

import dataclasses

from llvmlite import ir as ll

from ...errors import TritiumError
from ...ir.mlir import ir
from .. import elementwise
from ..types import const, memory_type, vector_of
from .chunks import I32, as_value
from .evaluate import Buffer, check_chunk_width, cpu_type, is_tensor, scalar_constant, shape_of
from .sequential import Sequential


def read(b: ll.IRBuilder, slot: ll.AllocaInstr) -> ll.Value:
    """Load what a stack slot holds (slots are opaque pointers that remember their type)."""
    return b.load(slot, typ=slot.allocated_type)


def unsupported(name: str, target: str) -> TritiumError:
    return TritiumError(f"the {target} target does not support op {name} yet")


#: independent accumulators per reduced tensor: each chunk's combine waits only for the chunk
#: CHAINS before it, so the combines' latency overlaps (one chain made a 1024-wide sum wait 64 times)
CHAINS = 4


@dataclasses.dataclass
class ReduceRoot:
    """A ``tile.reduce`` along the last axis: per row, ``chains`` vector accumulators per reduced
    tensor, chunk ``c`` going to chain ``c % chains``, combined pairwise at the row's end and then
    horizontally into one element of each result (a buffer, or a scalar for 1-D sources).

    The chains rotate through their slots (the newest last), so one loop body serves every chunk
    and LLVM's registers, not our indexing, keep them apart.

    ``sources`` reduces other tensors than the op's operands with its combine region; with
    ``accumulate``, each (scalar) result is combined into its slot instead of written there, and
    the op's results are left alone (a loop's summed accumulator: ``control_flow``)."""

    op: ir.Operation
    accs: list[list[ll.Value]]  # per reduced tensor, one slot per chain
    outs: list[ll.Value]  # result buffers, or scalar slots
    sources: list[ir.Value] | None = None
    accumulate: bool = False

    def emit(self, cg, idx, w, chunk_no) -> None:
        chunks = [cg.eval(src, idx, w).vec for src in self.sources or self.op.operands]
        b = cg.b
        chains = len(self.accs[0])
        if isinstance(chunk_no, int):  # the only chunk
            for chunk, slots in zip(chunks, self.accs):
                b.store(chunk, slots[-1])
            return
        oldest = [read(b, slots[0]) for slots in self.accs]
        for slots in self.accs:
            for older, newer in zip(slots, slots[1:]):
                b.store(read(b, newer), older)
        combined = cg.combine_all(self.op, oldest, chunks)
        first = b.icmp_unsigned("<", chunk_no, ll.Constant(I32, chains))
        for chunk, value, slots in zip(chunks, combined, self.accs):
            b.store(b.select(first, chunk, value), slots[-1])

    def finish_row(self, cg, row) -> None:
        chains = [[read(cg.b, slot) for slot in slots] for slots in self.accs]  # per tensor, per chain
        while len(chains[0]) > 1:  # chains are a power of two: (c0 + c1) + (c2 + c3)
            pairs = [cg.combine_all(self.op, [c[k] for c in chains], [c[k + 1] for c in chains])
                     for k in range(0, len(chains[0]), 2)]
            chains = [list(per_tensor) for per_tensor in zip(*pairs)]
        values = cg.horizontal(self.op, [c[0] for c in chains])
        if self.accumulate:
            values = cg.combine_all(self.op, [read(cg.b, out) for out in self.outs], values)
            for out, value in zip(self.outs, values):
                cg.b.store(value, out)
            return
        for result, out, value in zip(self.op.results, self.outs, values):
            if is_tensor(result):  # rows are the result's flat positions
                mem = memory_type(value.type)
                cg.b.store(cg.to_memory(value, mem), cg.b.gep(out, [as_value(row)], source_etype=mem))
            else:
                cg.b.store(value, out)

    def finish(self, cg) -> None:
        if self.accumulate:
            return
        for result, out in zip(self.op.results, self.outs):
            cg.env[result] = Buffer(out) if is_tensor(result) else read(cg.b, out)


class Reductions(Sequential):
    """``tile.reduce`` lowering; mixed into the kernel code generator. Along another axis than the
    last, whole chunks accumulate vertically (``Sequential``)."""

    @staticmethod
    def along_last_axis(op: ir.Operation) -> bool:
        """Whether ``tile.reduce`` ``op`` is a root of a group loop: it then reads each chunk of its
        source in the loop that computes it, so it joins the group that writes its source."""
        return ir.IntegerAttr(op.attributes["axis"]).value == len(shape_of(op.operands[0])) - 1

    def emit_reduce(self, op: ir.Operation) -> None:
        srcs, results = list(op.operands), list(op.results)
        if results[0] in self.summed:  # the loop before carried this sum (``control_flow``)
            self.env[results[0]] = read(self.b, self.summed.pop(results[0]))
            return
        if not self.along_last_axis(op):
            self.emit_sequential(op)
            return
        elems = [cpu_type(src.type.element_type) for src in srcs]
        accs = [self.chain_slots(src) for src in srcs]
        outs = [self.alloc_buffer(res.type) if is_tensor(res) else self.alloca(elem)
                for res, elem in zip(results, elems)]
        self.add_root(ReduceRoot(op, accs, outs), srcs[0])
        self.pending_results.update(results)

    def chain_slots(self, src: ir.Value) -> list[ll.Value]:
        """The accumulator slots of ``ReduceRoot``'s chains for reducing ``src`` along its last axis."""
        w = check_chunk_width(src)
        chains = min(CHAINS, shape_of(src)[-1] // w)  # both powers of two
        return [self.alloca(vector_of(cpu_type(src.type.element_type), w)) for _ in range(chains)]

    def combine_all(self, op: ir.Operation, xs: list[ll.Value], ys: list[ll.Value]) -> list[ll.Value]:
        """Apply a ``tile.reduce``/``tile.scan`` combine region to the values of each side (scalars
        or vectors of one width, one per combined tensor)."""
        block = op.regions[0].blocks[0]
        width = xs[0].type.count if isinstance(xs[0].type, ll.VectorType) else 1
        vals: dict[ir.Value, ll.Value] = dict(zip(block.arguments, [*xs, *ys]))

        def get(v: ir.Value) -> ll.Value:
            return vals[v] if v in vals else self.eval(v, (), width).vec

        for inner in block.operations:
            inner = inner.operation
            if inner.name == "tile.reduce_return":
                return [get(o) for o in inner.operands]
            res = inner.results[0]
            if inner.name == "arith.constant":
                vals[res] = const(vector_of(cpu_type(res.type), width),
                                  scalar_constant(inner.attributes["value"], res.type).constant)
            elif inner.name in elementwise.EMITTERS:
                attrs = {k: inner.attributes[k] for k in inner.attributes}
                vals[res] = elementwise.emit(self.b, inner.name, [get(o) for o in inner.operands],
                                             vector_of(cpu_type(res.type), width), attrs, self.hooks)
            else:
                raise unsupported(f"{inner.name} (in a reduction)", self.hooks.target_name)
        raise TritiumError("reduction region without tile.reduce_return")

    def horizontal(self, op: ir.Operation, accs: list[ll.Value]) -> list[ll.Value]:
        """Combine the lanes of the accumulators ``accs`` (one per reduced tensor) pairwise, the
        lower half on the left (a shuffle tree), down to one scalar each."""
        b = self.b
        width = accs[0].type.count if isinstance(accs[0].type, ll.VectorType) else 1
        while width > 1:
            half = width // 2
            if half == 1:
                lo = [b.extract_element(acc, ll.Constant(I32, 0)) for acc in accs]
                hi = [b.extract_element(acc, ll.Constant(I32, 1)) for acc in accs]
            else:
                lo, hi = ([b.shuffle_vector(acc, ll.Constant(acc.type, ll.Undefined),
                                            ll.Constant(ll.VectorType(I32, half), list(range(k, k + half))))
                           for acc in accs] for k in (0, half))
            accs = self.combine_all(op, lo, hi)
            width = half
        return accs
