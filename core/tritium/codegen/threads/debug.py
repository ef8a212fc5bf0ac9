"""``tile.print`` and ``tile.assert`` through the target's ``printf`` and ``assert_fail`` hooks.

A print writes one line per element in Triton's device-side format, the one every target shares
(``tritium.runtime.debug_output``): ``pid (x, y, z) idx (i, j)<prefix><value>``. Each thread prints
the elements it holds, once per element (threads holding copies stay silent), so lines come in
no particular order, as on any GPU; a print without values is printed by thread 0. An assertion
calls ``assert_fail`` in every thread where one of its elements is false.
"""

from __future__ import annotations

import math

from llvmlite import ir as ll

from ...errors import NotImplementedYet
from ...ir.mlir import ir
from .indexing import I32

I64 = ll.IntType(64)


def value_format(t: ll.Type, signed: bool, hex: bool) -> str:
    """The printf conversion of an element of LLVM type ``t``, as ``debug_output.format_value``
    writes it (``promote`` gives the matching argument)."""
    if isinstance(t, ll.PointerType):
        return "0x%llx"
    bits = bit_width(t)
    if hex:
        digits = bits // 4
        return "0x%" + (f"0{digits}" if digits else "") + ("llx" if bits > 32 else "x")
    if not isinstance(t, ll.IntType):
        return "%f"
    if bits == 1:
        return "%d"
    return "%" + ("ll" if bits > 32 else "") + ("d" if signed else "u")


def bit_width(t: ll.Type) -> int:
    return t.width if isinstance(t, ll.IntType) else {"half": 16, "bfloat": 16, "float": 32, "double": 64}[str(t)]


class DebugOps:
    """Device printing and assertions; mixed into the walker."""

    def promote(self, value: ll.Value, signed: bool, hex: bool) -> ll.Value:
        """``value`` as a printf argument for ``value_format``: ints of 32 or 64 bits, doubles."""
        b, t = self.b, value.type
        if isinstance(t, ll.PointerType):
            return b.ptrtoint(value, I64)
        bits = bit_width(t)
        if hex and not isinstance(t, ll.IntType):
            value, t = b.bitcast(value, ll.IntType(bits)), ll.IntType(bits)
        if isinstance(t, ll.IntType):
            wide = I64 if bits > 32 else I32
            if bits == wide.width:
                return value
            return b.sext(value, wide) if signed and not hex and bits > 1 else b.zext(value, wide)
        return value if str(t) == "double" else b.fpext(value, ll.DoubleType())

    def emit_print(self, op: ir.Operation) -> None:
        view = op.opview
        flag = lambda name: bool(ir.IntegerAttr(op.attributes[name]).value)  # noqa: E731
        prefix = ir.StringAttr(view.prefix).value.replace("%", "%%")
        count = ir.IntegerAttr(op.attributes["count"]).value
        operand = ir.IntegerAttr(op.attributes["operand"]).value
        pids = [self.hooks.program_id(self.b, axis) for axis in range(3)]
        head = "pid (%d, %d, %d)"
        value = view.value
        if value is None:
            with self.b.if_then(self.index.first_thread()):
                self.printf(op, head + prefix + "\n", pids)
            return
        tag = f"(operand {operand}) " if count > 1 else ""
        fmt = value_format(self.lltype(value.type), flag("is_signed"), flag("hex"))
        if not isinstance(value.type, ir.RankedTensorType):
            with self.b.if_then(self.index.first_thread()):
                self.printf(op, f"{head} idx (){prefix}{tag}{fmt}\n",
                            pids + [self.promote(self.env[value], flag("is_signed"), flag("hex"))])
            return
        dist = self.distribution(value.type)
        index = ", ".join(f"%{math.ceil(math.log10(d))}d" if d > 1 else "%d" for d in dist.shape)
        line = f"{head} idx ({index}){prefix}{tag}{fmt}\n"
        first = self.index.first_copy(dist)
        for r, element in enumerate(self.env[value]):
            args = pids + self.index.coordinates(self.b, dist, r) + [self.promote(element, flag("is_signed"),
                                                                                   flag("hex"))]
            if first is None:
                self.printf(op, line, args)
            else:
                with self.b.if_then(first):
                    self.printf(op, line, args)

    def emit_assert(self, op: ir.Operation) -> None:
        view = op.opview
        cond = self.env[view.condition]
        ok = cond[0] if isinstance(cond, list) else cond
        for c in cond[1:] if isinstance(cond, list) else ():
            ok = self.b.and_(ok, c)
        with self.b.if_then(self.b.not_(ok), likely=False):
            self.debug_hook(op, self.hooks.assert_fail, ir.StringAttr(view.message).value,
                            ir.StringAttr(view.file).value, ir.IntegerAttr(view.line).value)

    def printf(self, op: ir.Operation, fmt: str, args: list[ll.Value]) -> None:
        self.debug_hook(op, self.hooks.printf, fmt, args)

    def debug_hook(self, op: ir.Operation, hook, *args) -> None:
        """Call a debug hook of the target; one the target lacks is reported at ``op``'s line."""
        try:
            hook(self.b, *args)
        except NotImplementedYet as e:
            raise NotImplementedYet(str(self.error(op, str(e)))) from None
