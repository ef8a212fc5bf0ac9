"""``tile.atomic_rmw`` and ``tile.atomic_cas`` over a thread's registers.

Every element is updated once: where a layout gives several threads the same element, only the
first of them (``Indexing.first_copy``, the rule stores follow) does the atomic, and a scalar
atomic is done by thread 0, as in Triton. When the old values are used and other threads hold
them too (``layout.scratch.shares_old_values``), the threads that did the atomics leave them in
the op's shared-memory scratch, row-major, and after a barrier every holder reads its own: all
threads of a program see the same old value of an element. The atomics themselves are LLVM's
(``tritium.codegen.atomics``) or the target's (``DeviceHooks.atomic_rmw``/``atomic_cas``).
"""

from __future__ import annotations

import functools

from llvmlite import ir as ll

from ...ir.mlir import ir
from ...layout.scratch import shares_old_values
from .. import atomics
from ..types import memory_type
from .indexing import I32


class Atomics:
    """Atomics; mixed into the walker."""

    def emit_atomic(self, op: ir.Operation) -> None:
        view, b = op.opview, self.b
        res = op.results[0]
        sem, scope = (ir.StringAttr(op.attributes[k]).value for k in ("sem", "scope"))
        if op.name == "tile.atomic_rmw":
            kind = ir.StringAttr(op.attributes["kind"]).value
            operands, mask_value = [view.ptr, view.val], view.mask
            primitive = functools.partial(self.hooks.atomic_rmw, sem=sem, scope=scope)
            ordering = functools.partial(self.hooks.atomic_cas, sem=sem, scope=scope)

            def one(m, p, v):
                return atomics.rmw(b, kind, p, v, primitive, m, ordering)
        else:
            operands, mask_value = [view.ptr, view.cmp, view.val], None
            cas_primitive = functools.partial(self.hooks.atomic_cas, sem=sem, scope=scope)

            def one(m, p, c, v):
                return atomics.cas(b, p, c, v, cas_primitive, m)

        tensor = isinstance(res.type, ir.RankedTensorType)
        if tensor:
            dist = self.operands_distribution(op, res.type, *operands, mask_value)
            only, registers = self.index.first_copy(dist), dist.registers
        else:
            dist, only, registers = None, self.index.first_thread(), 1

        def per_register(value: ir.Value) -> list:
            return self.env[value] if tensor else [self.env[value]]

        columns = [per_register(o) for o in operands]
        masks = per_register(mask_value) if mask_value is not None else [None] * registers
        olds = []
        for r in range(registers):
            m = masks[r]
            if only is not None:
                m = only if m is None else b.and_(m, only)
            olds.append(one(m, *(c[r] for c in columns)))
        if shares_old_values(op):
            olds = self.share(op, olds, only, dist)
        self.env[res] = olds if tensor else olds[0]

    def share(self, op: ir.Operation, olds: list[ll.Value], only: ll.Value, dist) -> list[ll.Value]:
        """Every holder's copy of the old values that the threads where ``only`` holds computed
        (through the op's scratch: written, a barrier, read)."""
        b = self.b
        elem = memory_type(olds[0].type)
        base = self.scratch(op)
        slots = [self.index.linear_index(b, dist, r) if dist is not None else ll.Constant(I32, 0)
                 for r in range(len(olds))]
        at = [b.gep(base, [s], source_etype=elem) for s in slots]
        align = self.element_bytes(elem)
        with b.if_then(only):
            for old, ptr in zip(olds, at):
                b.store(old, ptr, align=align)
        self.hooks.barrier(b)
        return [b.load(ptr, typ=elem, align=align) for ptr in at]
