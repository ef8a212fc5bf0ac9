"""``tile.load`` and ``tile.store`` over a thread's registers, as vector accesses where possible.

A thread's consecutive registers that are consecutive elements along the distribution's
contiguous dimension are read or written as one vector of up to 16 bytes, as far as the axis-info
analysis allows: the pointers must be contiguous and aligned for the whole vector, and the mask
constant over it (so the vector's mask is its first element's). Stores of tensors whose layout
gives several threads the same elements are done by the first of those threads only; scalar
stores by thread 0, as in Triton. Booleans are bytes in memory.
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...ir import tile
from ...ir.mlir import ir
from ...layout.distributed import Distribution
from ...passes.axis_info import AxisInfo
from ..runs import widest_run
from ..types import const, memory_type, size_in_bytes, vector_of
from .indexing import I32

#: the widest access one thread makes
MAX_VECTOR_BYTES = 16


def vector_width(dist: Distribution, limit: int) -> int:
    """The widest power of two ``w <= limit`` such that every ``w`` consecutive registers of a
    thread (from a multiple of ``w``) are ``w`` consecutive, ``w``-aligned elements along the
    contiguous dimension, whatever the thread."""
    c = dist.contiguous_dim
    if c is None:
        return 1
    w = 1
    while w * 2 <= limit:
        w *= 2
    offsets = dist.register_offsets
    while w > 1:
        threads_aligned = all(basis[c] % w == 0 for basis in dist.lane_bases + dist.warp_bases)
        runs = len(offsets) % w == 0 and all(
            offsets[r0][c] % w == 0 and all(
                offsets[r0 + k] == offsets[r0][:c] + (offsets[r0][c] + k,) + offsets[r0][c + 1:] for k in range(w))
            for r0 in range(0, len(offsets), w))
        if threads_aligned and runs:
            return w
        w //= 2
    return 1


class Memory:
    """Loads and stores; mixed into the walker."""

    def pointee_type(self, ptr: ir.Value) -> ll.Type:
        t = ptr.type.element_type if isinstance(ptr.type, ir.RankedTensorType) else ptr.type
        return self.lltype(tile.pointee(t))

    def element_bytes(self, t: ll.Type) -> int:
        return size_in_bytes(t, self.hooks.pointer_bits)

    def access_width(self, ptr: ir.Value, mask: ir.Value | None, dist: Distribution, elem: ll.Type) -> int:
        """Registers per access of a tensor load or store (see the module docstring)."""
        c = dist.contiguous_dim
        if c is None or isinstance(elem, ll.PointerType):
            return 1
        size = self.element_bytes(elem)
        info: AxisInfo | None = self.axis.get(ptr)
        if info is None:
            return 1
        limit = widest_run(info, c, size, MAX_VECTOR_BYTES)
        if mask is not None:
            mask_info = self.axis.get(mask)
            limit = min(limit, mask_info.constancy[c] if mask_info is not None else 1)
        return vector_width(dist, max(1, limit))

    def from_memory(self, value: ll.Value, elem: ll.Type) -> ll.Value:
        """A value read from memory as ``elem`` (booleans are bytes there)."""
        if elem == ll.IntType(1):
            return self.b.icmp_unsigned("!=", value, const(value.type, 0))
        return value

    def to_memory(self, value: ll.Value) -> ll.Value:
        """``value`` as memory holds it (booleans widen to bytes)."""
        t = value.type.element if isinstance(value.type, ll.VectorType) else value.type
        if t == ll.IntType(1):
            width = value.type.count if isinstance(value.type, ll.VectorType) else 1
            return self.b.zext(value, vector_of(ll.IntType(8), width))
        return value

    def pack(self, values: list[ll.Value]) -> ll.Value:
        """One LLVM vector of ``values`` (the value itself when there is one)."""
        if len(values) == 1:
            return values[0]
        vec = ll.Constant(ll.VectorType(values[0].type, len(values)), ll.Undefined)
        for k, v in enumerate(values):
            vec = self.b.insert_element(vec, v, ll.Constant(I32, k))
        return vec

    def unpack(self, vec: ll.Value, width: int) -> list[ll.Value]:
        if width == 1:
            return [vec]
        return [self.b.extract_element(vec, ll.Constant(I32, k)) for k in range(width)]

    def emit_load(self, op: ir.Operation) -> None:
        view = op.opview
        res = op.results[0]
        elem = self.pointee_type(view.ptr)
        mem = memory_type(elem)
        ptrs, mask, other = self.env[view.ptr], self.optional(view.mask), self.optional(view.other)
        hints = memory_hints(op)
        if not isinstance(ptrs, list):
            value = self.hooks.load(self.b, ptrs, mem, mask, self.to_memory(other) if other is not None else None,
                                    self.element_bytes(mem), hints)
            self.env[res] = self.from_memory(value, elem)
            return
        dist = self.operands_distribution(op, res.type, view.ptr, view.mask, view.other)
        w = self.access_width(view.ptr, view.mask, dist, elem)
        values = []
        for r0 in range(0, dist.registers, w):
            fallback = self.to_memory(self.pack(other[r0:r0 + w])) if other is not None else None
            vec = self.hooks.load(self.b, ptrs[r0], vector_of(mem, w), mask[r0] if mask is not None else None,
                                  fallback, w * self.element_bytes(mem), hints)
            values += [self.from_memory(v, elem) for v in self.unpack(vec, w)]
        self.env[res] = values

    def emit_store(self, op: ir.Operation) -> None:
        view = op.opview
        elem = self.pointee_type(view.ptr)
        ptrs, values, mask = self.env[view.ptr], self.env[view.value], self.optional(view.mask)
        hints = memory_hints(op)
        if not isinstance(ptrs, list):
            only = self.index.first_thread()
            self.hooks.store(self.b, ptrs, self.to_memory(values), only if mask is None else self.b.and_(mask, only),
                             self.element_bytes(memory_type(elem)), hints)
            return
        dist = self.operands_distribution(op, view.value.type, view.ptr, view.mask)
        first = self.index.first_copy(dist)
        w = self.access_width(view.ptr, view.mask, dist, elem)
        for r0 in range(0, dist.registers, w):
            m = mask[r0] if mask is not None else None
            if first is not None:
                m = first if m is None else self.b.and_(m, first)
            self.hooks.store(self.b, ptrs[r0], self.to_memory(self.pack(values[r0:r0 + w])), m,
                             w * self.element_bytes(memory_type(elem)), hints)

    def operands_distribution(self, op: ir.Operation, t: ir.Type, *operands: ir.Value | None) -> Distribution:
        """The distribution of ``t``, which the (present) ``operands`` must share."""
        for o in operands:
            if o is not None:
                self.same_distribution(op, o.type, t)
        return self.distribution(t)

    def optional(self, value: ir.Value | None):
        """The lowering of an optional operand (None when absent)."""
        return None if value is None else self.env[value]


def memory_hints(op: ir.Operation) -> dict:
    """The cache hints of a ``tile.load``/``tile.store`` (``tile.cache``, ``tile.evict``,
    ``tile.volatile`` attributes) as ``DeviceHooks.load``/``store`` take them."""
    hints: dict = {}
    for key in ("cache", "evict"):
        if f"tile.{key}" in op.attributes:
            hints[key] = ir.StringAttr(op.attributes[f"tile.{key}"]).value
    if "tile.volatile" in op.attributes:
        hints["volatile"] = True
    return hints
