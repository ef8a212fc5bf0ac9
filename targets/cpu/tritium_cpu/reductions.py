"""Reductions (``tile.reduce``) on the CPU: vector accumulators and shuffle-tree combines.

Along the last axis a reduction is a *root* of a group loop (``ReduceRoot``): each row accumulates
its chunks in one vector, then combines the lanes pairwise. Along another axis whole chunks
accumulate vertically in a loop of their own. The combine region is applied to vectors and
scalars alike through the shared elementwise emitters.
"""

from __future__ import annotations

import dataclasses
import math as pymath

from llvmlite import ir as ll
from tritium.codegen import elementwise
from tritium.codegen.types import const, memory_type, vector_of
from tritium.errors import TritiumError
from tritium.ir.mlir import ir

from .chunks import I32, Index, add, as_value, counted_loop, mul, unflatten
from .sequential import Sequential
from .evaluate import Buffer, check_chunk_width, cpu_type, is_tensor, scalar_constant, shape_of


def read(b: ll.IRBuilder, slot: ll.AllocaInstr) -> ll.Value:
    """Load what a stack slot holds (slots are opaque pointers that remember their type)."""
    return b.load(slot, typ=slot.allocated_type)


def unsupported(name: str) -> TritiumError:
    return TritiumError(f"the cpu target does not support op {name} yet")


@dataclasses.dataclass
class ReduceRoot:
    """A ``tile.reduce`` along the last axis: a vector accumulator per row, combined horizontally
    at the row's end into one element of the result (a buffer, or a scalar for 1-D sources)."""

    op: ir.Operation
    acc: ll.Value
    out: ll.Value  # result buffer, or a scalar slot

    def emit(self, cg, idx, w, chunk_no) -> None:
        chunk = cg.eval(self.op.operands[0], idx, w).vec
        b = cg.b
        if isinstance(chunk_no, int):
            b.store(chunk, self.acc)
            return
        combined = cg.combine(self.op, read(b, self.acc), chunk)
        b.store(b.select(b.icmp_unsigned("==", chunk_no, ll.Constant(I32, 0)), chunk, combined), self.acc)

    def finish_row(self, cg, row) -> None:
        value = cg.horizontal(self.op, read(cg.b, self.acc))
        result = self.op.results[0]
        if is_tensor(result):  # rows are the result's flat positions
            mem = memory_type(value.type)
            cg.b.store(cg.to_memory(value, mem), cg.b.gep(self.out, [as_value(row)], source_etype=mem))
        else:
            cg.b.store(value, self.out)

    def finish(self, cg) -> None:
        result = self.op.results[0]
        cg.env[result] = Buffer(self.out) if is_tensor(result) else read(cg.b, self.out)


class Reductions(Sequential):
    """``tile.reduce`` lowering; mixed into the kernel code generator."""

    def emit_reduce(self, op: ir.Operation) -> None:
        if len(op.operands) > 1:  # several tensors at once: in order, one position at a time
            return self.emit_sequential(op)
        src, res = op.operands[0], op.results[0]
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        rank = len(shape_of(src))
        if axis == rank - 1:
            w = check_chunk_width(src)
            elem = cpu_type(src.type.element_type)
            acc = self.alloca(vector_of(elem, w))
            out = self.alloc_buffer(res.type) if is_tensor(res) else self.alloca(elem)
            self.add_root(ReduceRoot(op, acc, out), src)
            self.pending_results.add(res)
        else:
            self.flush()
            self.emit_reduce_inner_axis(op, axis)

    def emit_reduce_inner_axis(self, op: ir.Operation, axis: int) -> None:
        """Reduce along a dimension other than the last: whole chunks accumulate vertically."""
        src, res = op.operands[0], op.results[0]
        src_shape, res_shape = shape_of(src), shape_of(res)
        w = check_chunk_width(src)
        acc = self.alloca(vector_of(cpu_type(src.type.element_type), w))
        out = self.alloc_buffer(res.type)
        b = self.b

        def at(ridx: tuple, k: Index) -> tuple:
            return ridx[:axis] + (k,) + ridx[axis:]

        def row_body(row: Index) -> None:
            lead_idx = unflatten(b, row, res_shape[:-1])

            def chunk_body(c: Index) -> None:
                ridx = lead_idx + (mul(b, c, w),)
                self.push_scope()
                b.store(self.eval(src, at(ridx, 0), w).vec, acc)
                self.pop_scope()

                def step(k: Index) -> None:
                    self.push_scope()
                    b.store(self.combine(op, read(b, acc), self.eval(src, at(ridx, add(b, k, 1)), w).vec), acc)
                    self.pop_scope()

                if src_shape[axis] > 1:
                    counted_loop(b, src_shape[axis] - 1, step, name="reduce")
                self.store_buffer(out, res, ridx, w, read(b, acc))

            counted_loop(b, res_shape[-1] // w, chunk_body)

        counted_loop(b, pymath.prod(res_shape[:-1]), row_body, name="row")
        self.env[res] = Buffer(out)

    def combine(self, op: ir.Operation, x: ll.Value, y: ll.Value) -> ll.Value:
        """Apply a one-tensor reduction's scalar combine region to two scalars or vectors of one width."""
        return self.combine_all(op, [x], [y])[0]

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
                raise unsupported(f"{inner.name} (in a reduction)")
        raise TritiumError("reduction region without tile.reduce_return")

    def horizontal(self, op: ir.Operation, acc: ll.Value) -> ll.Value:
        """Combine the lanes of ``acc`` pairwise (a shuffle tree) down to one scalar."""
        b = self.b
        width = acc.type.count if isinstance(acc.type, ll.VectorType) else 1
        undef = ll.Constant(acc.type, ll.Undefined) if width > 1 else None
        while width > 1:
            half = width // 2
            if half == 1:
                lo = b.extract_element(acc, ll.Constant(I32, 0))
                hi = b.extract_element(acc, ll.Constant(I32, 1))
            else:
                lo = b.shuffle_vector(acc, undef, ll.Constant(ll.VectorType(I32, half), list(range(half))))
                hi = b.shuffle_vector(acc, undef, ll.Constant(ll.VectorType(I32, half), list(range(half, width))))
            acc = self.combine(op, lo, hi)
            width = half
            undef = ll.Constant(acc.type, ll.Undefined) if width > 1 else None
        return acc
