"""Code generation of ``tile.print`` and ``tile.assert``: calls of two functions the target's runtime
provides (``hooks.PRINT_SYMBOL``, ``hooks.ASSERT_SYMBOL``; the cpu's call back into Python).

Both ops are roots that see every store before them (the pending group is flushed first). Each
tensor operand is written row-major to a stack buffer, which the callback reads; an assertion
scans its condition in the kernel and calls back only for the first false element, then ends the
program (the callback stops the grid).
"""

from __future__ import annotations

import math

from llvmlite import ir as ll

from ...errors import TritiumError
from ...ir import tile
from ...ir.mlir import ir
from ..types import memory_type
from .chunks import I32, as_value, counted_loop
from .evaluate import cpu_type, is_tensor, shape_of
from .hooks import ASSERT_SYMBOL, MARKER_SYMBOL, PRINT_SYMBOL
from .roots import MaterializeRoot

PTR = ll.PointerType()
I64 = ll.IntType(64)



class DebugOps:
    """Mixed into the kernel code generator (``kernel.KernelCodegen``)."""

    def emit_print(self, op: ir.Operation) -> None:
        self.flush()
        view = op.opview
        attr = lambda name: ll.Constant(I32, ir.IntegerAttr(op.attributes[name]).value)  # noqa: E731
        v = view.value
        if v is None:
            type_code, shape, data = "", "", ll.Constant(PTR, None)
        else:
            type_code, shape = _type_code(v, bool(ir.IntegerAttr(view.is_signed).value)), _shape_text(v)
            data = self._spill(v)
        fn = self._external(PRINT_SYMBOL, [PTR, PTR, PTR, PTR] + [I32] * 6)
        self.b.call(fn, [self._cstring(ir.StringAttr(view.prefix).value), self._cstring(type_code),
                         self._cstring(shape), data, attr("hex"), attr("operand"), attr("count"), *self.pids])

    def emit_assert(self, op: ir.Operation) -> None:
        self.flush()
        view, b = op.opview, self.b
        cond = view.condition
        if is_tensor(cond):
            n = math.prod(shape_of(cond))
            buf = self._spill(cond)
            first = self.alloca(I64)
            b.store(ll.Constant(I64, n), first)

            def scan(i) -> None:  # first = the lowest i with a false element
                ok = b.load(b.gep(buf, [as_value(i)], source_etype=ll.IntType(8)), typ=ll.IntType(8))
                current = b.load(first, typ=I64)
                hit = b.and_(b.icmp_unsigned("==", ok, ll.Constant(ll.IntType(8), 0)),
                             b.icmp_unsigned("==", current, ll.Constant(I64, n)))
                b.store(b.select(hit, b.zext(as_value(i), I64), current), first)

            counted_loop(b, n, scan, name="assert")
            index = b.load(first, typ=I64)
            failed = b.icmp_unsigned("<", index, ll.Constant(I64, n))
        else:
            index, failed = ll.Constant(I64, 0), b.not_(self.env[cond])
        shape = _shape_text(cond)
        fn = self._external(ASSERT_SYMBOL, [PTR, PTR, I32, PTR, PTR, I32, I32, I32, I64])
        with b.if_then(failed, likely=False):
            b.call(fn, [self._cstring(self.kernel_name), self._cstring(ir.StringAttr(view.file).value),
                        ll.Constant(I32, ir.IntegerAttr(view.line).value),
                        self._cstring(ir.StringAttr(view.message).value), self._cstring(shape), *self.pids, index])
            b.ret_void()  # this program stops here

    # -- helpers ---------------------------------------------------------------------------------
    def _spill(self, v: ir.Value) -> ll.Value:
        """Memory holding ``v``'s elements, row-major (booleans as bytes)."""
        if is_tensor(v):
            buf = self.alloc_buffer(v.type)
            self.add_root(MaterializeRoot(v, buf), v)
            self.flush()
            return buf
        mem = memory_type(cpu_type(v.type))
        slot = self.alloca(mem)
        self.b.store(self.to_memory(self.env[v], mem), slot)
        return slot

    def _external(self, name: str, params: list[ll.Type]) -> ll.Function:
        if MARKER_SYMBOL not in self.module.globals:
            marker = ll.GlobalVariable(self.module, ll.IntType(8), MARKER_SYMBOL)
            marker.initializer, marker.global_constant = ll.Constant(ll.IntType(8), 1), True
        fn = self.module.globals.get(name)
        return fn if fn is not None else ll.Function(self.module, ll.FunctionType(ll.VoidType(), params), name)

    def _cstring(self, text: str) -> ll.Value:
        data = bytearray(text.encode() + b"\0")
        ty = ll.ArrayType(ll.IntType(8), len(data))
        g = ll.GlobalVariable(self.module, ty, self.module.get_unique_name("debug_str"))
        g.global_constant, g.linkage, g.initializer = True, "internal", ll.Constant(ty, data)
        return g


def _shape_text(v: ir.Value) -> str:
    return ",".join(str(d) for d in shape_of(v)) if is_tensor(v) else ""


def _type_code(v: ir.Value, signed: bool) -> str:
    """The signature spelling (``i32``, ``u8``, ``fp16``, ``*i8``) of ``v``'s element type."""
    t = v.type.element_type if is_tensor(v) else v.type
    if tile.is_ptr(t):
        return "*i8"
    if isinstance(t, ir.IntegerType):
        return f"i{t.width}" if signed or t.width == 1 else f"u{t.width}"
    for cls, code in ((ir.F16Type, "fp16"), (ir.BF16Type, "bf16"), (ir.F32Type, "fp32"), (ir.F64Type, "fp64")):
        if isinstance(t, cls):
            return code
    raise TritiumError(f"tile.print of {t} is not supported by the whole-block code generator")
