"""``tile.map_elementwise`` (``tl.map_elementwise``) in whole blocks: a scalar loop over the elements.

The region may branch and loop per element, so it cannot be evaluated on SIMD chunks as the
elementwise ops are: the operands are written to buffers, then one loop runs the region on each
group of ``pack`` consecutive elements (scalar ops, ``scf`` control flow as anywhere else) and
writes the results to buffers of their own.
"""

from __future__ import annotations

import math as pymath

from llvmlite import ir as ll

from ...ir.mlir import ir
from ..types import memory_type
from .chunks import I32, counted_loop
from .evaluate import Buffer, cpu_type


class MapElementwise:
    """Mixed into the kernel code generator: ``emit_map_elementwise``."""

    def emit_map_elementwise(self, op: ir.Operation) -> None:
        self.flush()
        pack = ir.IntegerAttr(op.attributes["pack"]).value
        sources = [(self.private_copy(v), cpu_type(v.type.element_type)) for v in op.operands]
        results = [(self.alloc_buffer(r.type), cpu_type(r.type.element_type)) for r in op.results]
        block = op.regions[0].blocks[0]
        b = self.b

        def at(ptr: ll.Value, elem: ll.Type, index: ll.Value) -> ll.Value:
            return b.gep(ptr, [index], source_etype=memory_type(elem))

        def group(g) -> None:
            first = b.mul(g if isinstance(g, ll.Value) else ll.Constant(I32, g), ll.Constant(I32, pack))
            indices = [b.add(first, ll.Constant(I32, k)) for k in range(pack)]
            args = [self.from_memory(b.load(at(ptr, elem, i), typ=memory_type(elem)), elem)
                    for ptr, elem in sources for i in indices]
            term = self.emit_region_block(block, args)
            self.flush()
            values = [self.env[v] for v in term.operands]
            for r, (ptr, elem) in enumerate(results):
                for k, i in enumerate(indices):
                    b.store(self.to_memory(values[r * pack + k], memory_type(elem)), at(ptr, elem, i))

        counted_loop(b, pymath.prod(op.results[0].type.shape) // pack, group, name="map_elementwise")
        for r, (ptr, _) in zip(op.results, results):
            self.env[r] = Buffer(ptr)
