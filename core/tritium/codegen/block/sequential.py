"""Scans (``tile.scan``) and reductions of several tensors at once in whole blocks: in order along the
axis, one position at a time.

Off the axis the work stays in SIMD chunks: along any axis but the last, each step combines whole
chunks of the last dimension; along the last axis a row is walked element by element. A scan
writes the running value at every position into its result buffers; a reduction keeps only the
last. Walking in order means the combine function need not be commutative, and the results are
those of the definition (``tritium.language.scan``), reversed scans included.
"""

from __future__ import annotations

import math as pymath

from llvmlite import ir as ll

from ...ir.mlir import ir
from ..types import vector_of
from .chunks import Index, add, counted_loop, mul, unflatten
from .evaluate import Buffer, check_chunk_width, cpu_type, is_tensor, shape_of


class Sequential:
    """``tile.scan`` and many-tensor ``tile.reduce``; mixed into the kernel code generator."""

    def emit_scan(self, op: ir.Operation) -> None:
        self.emit_sequential(op)

    def emit_sequential(self, op: ir.Operation) -> None:
        self.flush()
        b = self.b
        srcs, results = list(op.operands), list(op.results)
        scan = op.name == "tile.scan"
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        reverse = scan and ir.IntegerAttr(op.attributes["reverse"]).value != 0
        shape = shape_of(srcs[0])
        n, last = shape[axis], axis == len(shape) - 1
        w = 1 if last else check_chunk_width(srcs[0])
        accs = [self.alloca(vector_of(cpu_type(s.type.element_type), w)) for s in srcs]
        outs = [self.alloc_buffer(r.type) if is_tensor(r) else self.alloca(cpu_type(r.type)) for r in results]
        others = shape[:axis] + shape[axis + 1:]  # the positions off the axis
        rows = others if last else others[:-1]

        def at(off: tuple, k: Index) -> tuple:
            pos = (n - 1 - k if isinstance(k, int) else b.sub(ll.Constant(k.type, n - 1), k)) if reverse else k
            return off[:axis] + (pos,) + off[axis:]

        def step(off: tuple, k: Index, first: bool) -> None:
            self.push_scope()
            idx = at(off, k)
            values = [self.eval(s, idx, w).vec for s in srcs]
            if not first:
                values = self.combine_all(op, [b.load(a, typ=a.allocated_type) for a in accs], values)
            for acc, value in zip(accs, values):
                b.store(value, acc)
            if scan:
                for out, res, value in zip(outs, results, values):
                    self.store_buffer(out, res, idx, w, value)
            self.pop_scope()

        def position(off: tuple) -> None:
            step(off, 0, True)
            if n > 1:
                counted_loop(b, n - 1, lambda k: step(off, add(b, k, 1), False), name="scan" if scan else "reduce")
            if scan:
                return
            for out, res, acc in zip(outs, results, accs):
                value = b.load(acc, typ=acc.allocated_type)
                if is_tensor(res):
                    self.store_buffer(out, res, off, w, value)
                else:
                    b.store(value, out)

        def row_body(row: Index) -> None:
            lead = unflatten(b, row, rows)
            if last:
                return position(lead)
            counted_loop(b, others[-1] // w, lambda c: position(lead + (mul(b, c, w),)))

        counted_loop(b, pymath.prod(rows), row_body, name="row")
        for out, res in zip(outs, results):
            self.env[res] = Buffer(out) if is_tensor(res) else b.load(out, typ=out.allocated_type)
