"""Debug mode's checks in the generated code: every load and store checked against the memory of
the pointer arguments (the layout the launcher fills is ``debug_area``).

Each access computes the addresses it touches (a vector access: the run from its first lane, so a
contiguity hint that does not hold is checked, not trusted); active lanes outside the span of the
argument the pointer derives from (traced through the IR; all pointer arguments when it cannot be traced) are
masked off, so the access never faults, and the first such access of the launch (an atomic claim
of the report) records its site, program id, argument and lane offsets.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from llvmlite import ir as ll

from ...errors import TritiumError
from ...ir.locations import file_line_col
from ...ir.mlir import ir
from ...passes.analysis import pointer_sources
from .. import intrinsics
from ..types import const, size_in_bytes
from .chunks import I32, Chunk, Index, iota, splat
from .debug_area import HEADER, MAX_LANES, SPAN_BYTES, sites_symbol

I64, I8 = ll.IntType(64), ll.IntType(8)


def sites_constant(module: ll.Module, kernel: str, sites: list) -> None:
    """The sites' JSON as a global the launcher reads back (``sites_symbol``)."""
    data = json.dumps(sites).encode() + b"\0"
    g = ll.GlobalVariable(module, ll.ArrayType(I8, len(data)), sites_symbol(kernel))
    g.initializer = ll.Constant(ll.ArrayType(I8, len(data)), bytearray(data))
    g.global_constant = True


def _site(op: ir.Operation, what: str) -> list:
    found = file_line_col(op.location)
    if found is None:
        return ["", 0, 0, what]
    file, line, col = found
    return [file, line, col - 1, what]


class BoundsChecks:
    """Mixed into the kernel code generator: ``guard`` masks off out-of-bounds lanes and reports."""

    b: ll.IRBuilder
    pids: Sequence[ll.Value]
    vector_access: Any  # ``ChunkEvaluator.vector_access``

    def setup_bounds(self, debug_area: ll.Value | None, builder: ll.IRBuilder, args: list[ir.Value],
                     params: Sequence[ll.Value]) -> None:
        """Load the spans in the entry block (``debug_area`` None: debug mode is off)."""
        self.debug_area, self.sites, self.ir_args = debug_area, [], args
        if debug_area is None:
            return
        self.spans = {}
        for i, a in enumerate(args):
            if isinstance(a.type, ir.RankedTensorType) or not str(a.type).startswith("!tile.ptr"):
                continue
            lo = builder.load(builder.gep(debug_area, [const(I64, i * SPAN_BYTES)], source_etype=I8), typ=I64)
            hi = builder.load(builder.gep(debug_area, [const(I64, i * SPAN_BYTES + 8)], source_etype=I8), typ=I64)
            self.spans[i] = (lo, hi)
        self.report = builder.gep(debug_area, [const(I64, len(args) * SPAN_BYTES)], source_etype=I8)

    def guard(self, op: ir.Operation, ptr_value: ir.Value, ptr: Chunk, mask: Chunk | None, mem: ll.Type,
              w: int, idx: Sequence[Index] = ()) -> Chunk | None:
        """``mask`` with the lanes outside their argument's memory turned off (debug mode only);
        ``idx`` is the chunk's position (see ``ChunkEvaluator.vector_access``)."""
        if self.debug_area is None:
            return mask
        b = self.b
        vi64 = ll.VectorType(I64, w) if w > 1 else I64
        lanes = ptr.vec
        vector = self.vector_access((ptr_value, idx), ptr, mem, w) if w > 1 else None
        if vector is not None:
            lanes = b.gep(vector[0], [iota(I32, w)], source_etype=mem)
            lanes.type = ll.VectorType(vector[0].type, w)  # llvmlite types a vector GEP as a scalar
        addr = b.ptrtoint(lanes, vi64)
        size = size_in_bytes(mem)
        end = b.add(addr, const(vi64, size))
        traced = pointer_sources(ptr_value, self.ir_args)
        candidates = sorted(traced) if traced else sorted(self.spans)
        ok = const(ll.VectorType(ll.IntType(1), w) if w > 1 else ll.IntType(1), 0)
        for i in candidates:
            lo, hi = (_splat(b, v, w) for v in self.spans[i])
            inside = b.and_(b.icmp_unsigned(">=", addr, lo), b.icmp_unsigned("<=", end, hi))
            ok = b.or_(ok, inside)
        active = mask.vec if mask is not None else const(ok.type, 1)
        if mask is not None and w > 1 and mask.vec.type != ok.type:  # a uniform scalar mask
            active = _splat(b, mask.vec, w)
        bad = b.and_(active, b.xor(ok, const(ok.type, 1)))
        any_bad = intrinsics.call(b, "llvm.vector.reduce.or", [bad], ll.IntType(1), [bad.type]) if w > 1 else bad
        arg = candidates[0] if traced is not None and len(candidates) == 1 else -1
        with b.if_then(any_bad, likely=False):
            self._record(op, arg, addr, bad, size, w)
        allowed = b.and_(active, ok)
        return Chunk(allowed, w, uniform=allowed if w == 1 else None)

    def _record(self, op: ir.Operation, arg: int, addr: ll.Value, bad: ll.Value, size: int, w: int) -> None:
        b = self.b
        if w > MAX_LANES:
            raise TritiumError(f"debug mode checks chunks of at most {MAX_LANES} lanes, not {w}")
        site = len(self.sites)
        self.sites.append(_site(op, "load" if op.name == "tile.load" else "store"))
        claimed = b.cmpxchg(self.report, const(I64, 0), const(I64, 1), "monotonic", "monotonic")
        with b.if_then(b.extract_value(claimed, 1)):
            values = [const(I64, site), const(I64, arg), *(b.sext(p, I64) for p in self.pids), const(I64, w)]
            for k, v in enumerate(values, start=1):
                b.store(v, b.gep(self.report, [const(I64, 8 * k)], source_etype=I8))
            offsets = addr
            if arg >= 0:
                lo = _splat(b, self.spans[arg][0], w)
                offsets = b.sdiv(b.sub(addr, lo), const(addr.type, size))
            b.store(offsets, b.gep(self.report, [const(I64, HEADER.size)], source_etype=I8), align=1)
            flags = b.zext(bad, ll.VectorType(I8, w) if w > 1 else I8)
            b.store(flags, b.gep(self.report, [const(I64, HEADER.size + MAX_LANES * 8)], source_etype=I8), align=1)


def _splat(b: ll.IRBuilder, scalar: ll.Value, w: int) -> ll.Value:
    return splat(b, scalar, w) if w > 1 and not isinstance(scalar.type, ll.VectorType) else scalar
