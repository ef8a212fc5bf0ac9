"""``tile.inline_asm`` (``tl.inline_asm_elementwise``) over each thread's registers.

Triton's conventions, which a user's constraint string is written against: the thread's registers
go to the assembly ``pack`` at a time (the last group padded with undefined values); within a
group, an operand or result narrower than 32 bits travels as vectors of ``32 / bits`` elements
(at most ``pack``), one per register, wider ones as one register per element. The outputs come
first (all registers of result 0, then of result 1, ...), then the inputs, in operand order;
several output registers come back as one struct. The target emits the call
(``DeviceHooks.inline_asm``) or says it cannot run foreign assembly.
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...ir.mlir import ir
from ...language.elementwise_fns import WHAT


def _bits(t: ll.Type) -> int:
    if isinstance(t, ll.IntType):
        return t.width
    if isinstance(t, ll.HalfType) or str(t) == "bfloat":
        return 16
    if isinstance(t, ll.FloatType):
        return 32
    return 64  # doubles and pointers


def per_register(t: ll.Type, pack: int) -> int:
    """How many elements of type ``t`` share one asm register when ``pack`` go per call."""
    bits = _bits(t)
    return min(32 // bits, pack) if bits < 32 else 1


def _group_types(t: ll.Type, pack: int) -> list[ll.Type]:
    """The asm registers of ``pack`` elements of type ``t``."""
    n = per_register(t, pack)
    if n == 1:
        return [t] * pack
    return [ll.VectorType(t, n)] * (pack // n)


class InlineAsm:
    """Walker mixin: ``tile.inline_asm``."""

    def emit_inline_asm(self, op: ir.Operation) -> None:
        attrs = op.attributes
        asm, constraints = (ir.StringAttr(attrs[k]).value for k in ("asm", "constraints"))
        pack, pure = ir.IntegerAttr(attrs["pack"]).value, bool(ir.IntegerAttr(attrs["is_pure"]).value)
        results = list(op.results)
        in_types = [self.lltype(v.type) for v in op.operands]
        out_types = [self.lltype(r.type) for r in results]
        values = [self.env[v] for v in op.operands]
        tensor = isinstance(results[0].type, ir.RankedTensorType)
        count = self.registers(results[0].type) if tensor else 1
        regs = [v if tensor else [v] for v in values]
        for t in in_types + out_types:
            if pack % per_register(t, pack):
                raise self.error(op, f"{WHAT}: pack={pack} does not fill whole 32-bit registers of {t} "
                                     f"({per_register(t, pack)} per register)")
        ret = [r for t in out_types for r in _group_types(t, pack)]
        ret_type = ret[0] if len(ret) == 1 else ll.LiteralStructType(ret)
        arg_types = [r for t in in_types for r in _group_types(t, pack)]
        ftype = ll.FunctionType(ret_type, arg_types)
        outs: list[list[ll.Value]] = [[] for _ in results]
        for start in range(0, count, pack):
            args = []
            for elems, t in zip(regs, in_types):
                group = [elems[i] if i < count else ll.Constant(t, ll.Undefined) for i in range(start, start + pack)]
                args += self._packed(group, t, pack)
            call = self.hooks.inline_asm(self.b, ftype, asm, constraints, args, pure)
            if call is None:
                raise self.error(op, f"{WHAT} is not supported on this target: it cannot run foreign assembly")
            parts = [call] if len(ret) == 1 else [self.b.extract_value(call, i) for i in range(len(ret))]
            for k, t in enumerate(out_types):
                n = len(_group_types(t, pack))
                mine, parts = parts[:n], parts[n:]
                outs[k] += self._unpacked(mine, t, pack)
        for res, vals in zip(results, outs):
            self.env[res] = vals[:count] if tensor else vals[0]

    def _packed(self, group: list[ll.Value], t: ll.Type, pack: int) -> list[ll.Value]:
        n = per_register(t, pack)
        if n == 1:
            return group
        regs = []
        for start in range(0, pack, n):
            vec = ll.Constant(ll.VectorType(t, n), ll.Undefined)
            for k in range(n):
                vec = self.b.insert_element(vec, group[start + k], ll.Constant(ll.IntType(32), k))
            regs.append(vec)
        return regs

    def _unpacked(self, regs: list[ll.Value], t: ll.Type, pack: int) -> list[ll.Value]:
        n = per_register(t, pack)
        if n == 1:
            return regs
        return [self.b.extract_element(r, ll.Constant(ll.IntType(32), k)) for r in regs for k in range(n)]
