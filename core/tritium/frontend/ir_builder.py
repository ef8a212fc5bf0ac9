"""The builder that emits ``tile``/``arith``/``math`` ops: what language calls turn into at compile time.

It relies on the caller's MLIR insertion point and location (the AST visitor manages both) and
receives operands that ``semantic`` already promoted and broadcast.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Sequence

from ..ir import tile
from ..ir.locations import file_line_col
from ..ir.mlir import arith, ir
from ..language.dtypes import dtype

_MATH = {"exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "floor", "ceil",
         "trunc", "round", "roundeven", "absf", "absi", "erf", "fma", "copysign",
         # the C library's, for ``tl.extra.libdevice``
         "acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "cosh", "sinh", "erfc", "expm1", "log1p",
         "atan2", "powf"}
#: correctly rounded variants (``tl.sqrt_rn``, ``tl.div_rn``): the plain op marked ``tile.ieee``,
#: which tells a target that approximates the plain op (NVIDIA's sqrt/div) to round exactly
_IEEE = {"sqrt_rn": "math.sqrt", "divf_rn": "arith.divf"}


def scalar_type(t: dtype) -> ir.Type:
    """The MLIR type of one element of ``t`` (signedness lives in the ops, not the type)."""
    if t.is_ptr():
        return tile.ptr_type(scalar_type(t.element_ty), t.address_space)
    if t.is_int():
        return ir.IntegerType.get_signless(t.primitive_bitwidth)
    return {"fp16": ir.F16Type, "bf16": ir.BF16Type, "fp32": ir.F32Type, "fp64": ir.F64Type,
            "fp8e4nv": ir.Float8E4M3FNType, "fp8e5": ir.Float8E5M2Type, "fp8e4b15": ir.Float8E4M3B11FNUZType,
            "fp8e4b8": ir.Float8E4M3FNUZType, "fp8e5b16": ir.Float8E5M2FNUZType}[t.name].get()


def ir_type(t: dtype, shape: Sequence[int]) -> ir.Type:
    elem = scalar_type(t)
    return ir.RankedTensorType.get(list(shape), elem) if shape else elem


def _set_hints(op: ir.OpView, hints: dict | None) -> None:
    """Cache hints as attributes: ``tile.cache`` and ``tile.evict`` (strings), ``tile.volatile``."""
    for key, value in (hints or {}).items():
        op.operation.attributes[f"tile.{key}"] = ir.UnitAttr.get() if value is True else ir.StringAttr.get(value)


class IRBuilder:
    """Implements the builder protocol of ``tritium.language.semantic`` with MLIR ops.

    ``debug`` (the ``debug`` launch option) decides whether ``tl.device_assert`` emits anything."""

    def __init__(self, debug: bool, quiet: bool, *, call_jit: Callable, num_warps: int = 4):
        """``debug`` keeps device assertions; ``quiet`` (the interpreter only checking a kernel it
        will run) leaves ``static_print`` to the run; ``call_jit(jfn, args, kwargs)`` emits a call
        of a @jit function (the frontend's); ``num_warps`` is the launch option's."""
        self.debug, self.quiet, self.call_jit, self.num_warps = debug, quiet, call_jit, num_warps

    def python_value(self, x) -> Any:
        from ..language.semantic import SemanticError

        raise SemanticError("a tensor's value is not known at compile time; use it as the condition of "
                            "an 'if'/'while' or a range() bound directly, or tl.where for blocks")

    def constant(self, value: Any, t: dtype) -> ir.Value:
        ty = scalar_type(t)
        if t.is_floating():
            attr = ir.FloatAttr.get(ty, float(value))
        else:
            v = int(value)
            if t.is_int_unsigned() and v >= 2 ** (t.primitive_bitwidth - 1):
                v -= 2 ** t.primitive_bitwidth  # MLIR integer attributes are two's complement
            attr = ir.IntegerAttr.get(ty, v)
        return arith.ConstantOp(ty, attr).result

    def splat(self, h, t: dtype, shape) -> ir.Value:
        return tile.SplatOp(h, res=ir_type(t, shape)).res

    def broadcast(self, h, t: dtype, src_shape, shape) -> ir.Value:
        return tile.BroadcastOp(h, res=ir_type(t, shape)).res

    def expand_dims(self, h, t: dtype, axis: int, shape) -> ir.Value:
        return tile.ExpandDimsOp(h, tile.i32_attr(axis), res=ir_type(t, shape)).res

    def reshape(self, h, t: dtype, src_shape, shape) -> ir.Value:
        return tile.ReshapeOp(h, res=ir_type(t, shape)).res

    def trans(self, h, t: dtype, order, shape) -> ir.Value:
        return tile.TransOp(h, tile.i32_array(order), res=ir_type(t, shape)).res

    def join(self, a, b, t: dtype, shape) -> ir.Value:
        return tile.JoinOp(a, b, res=ir_type(t, shape)).res

    def split(self, h, t: dtype, part: int, shape) -> ir.Value:
        return tile.SplitOp(h, tile.i32_attr(part), res=ir_type(t, shape)).res

    def flip(self, h, t: dtype, axis: int, shape) -> ir.Value:
        return tile.FlipOp(h, tile.i32_attr(axis), res=ir_type(t, shape)).res

    def gather(self, src, index, axis: int, t: dtype, shape) -> ir.Value:
        return tile.GatherOp(src, index, tile.i32_attr(axis), ir_type(t, shape)).res

    def sort(self, h, t: dtype, dim: int, descending: int, k: int, shape,
             network: Callable[[ir.Value], ir.Value]) -> ir.Value:
        """``tile.sort`` of ``h`` (``t`` elements) into a ``shape`` result; ``network(src)`` emits the
        region that computes it with other ops."""
        op = tile.SortOp(h, tile.i32_attr(dim), tile.i32_attr(descending), tile.i32_attr(k),
                         tile.i32_attr(int(t.is_int_unsigned())), ir_type(t, shape))
        block = op.network.blocks.append(h.type)
        with ir.InsertionPoint(block):
            tile.reduce_return([network(block.arguments[0])])
        return op.res

    def descriptor_load(self, base, offsets: Sequence[ir.Value], padding: str, t: dtype, shape,
                        decompose: Callable[[], ir.Value]) -> ir.Value:
        """``tile.descriptor_load`` of the host descriptor at ``base`` at ``offsets``, a ``shape``
        block of ``t``; ``decompose()`` emits the region that reads it with pointers."""
        op = tile.DescriptorLoadOp(base, list(offsets), ir.StringAttr.get(padding), ir_type(t, shape))
        with ir.InsertionPoint(op.decomposition.blocks.append()):
            tile.reduce_return([decompose()])
        return op.res

    def arith(self, op: str, operands: Sequence[ir.Value], t: dtype, shape) -> ir.Value:
        if op in _IEEE:
            return ir.Operation.create(_IEEE[op], results=[ir_type(t, shape)], operands=list(operands),
                                       attributes={"tile.ieee": ir.UnitAttr.get()}).result
        name = f"math.{op}" if op in _MATH else f"arith.{op}"
        return ir.Operation.create(name, results=[ir_type(t, shape)], operands=list(operands)).result

    def cmp(self, kind: str, pred: str, a, b, t: dtype, shape) -> ir.Value:
        if kind == "f":
            return arith.cmpf(getattr(arith.CmpFPredicate, pred.upper()), a, b)
        return arith.cmpi(getattr(arith.CmpIPredicate, pred), a, b)

    def cast(self, op: str, h, src: dtype, dst: dtype, shape, toward_zero: bool = False) -> ir.Value:
        if op == "ptr_cast":
            return tile.PtrCastOp(h, res=ir_type(dst, shape)).res
        attrs = {"tile.rtz": ir.UnitAttr.get()} if toward_zero else {}
        if src.is_fp8() or dst.is_fp8():  # LLVM has no fp8 types: the conversion carries the format
            attrs["tile.fp8"] = ir.StringAttr.get((src if src.is_fp8() else dst).name)
        return ir.Operation.create(f"arith.{op}", results=[ir_type(dst, shape)], operands=[h], attributes=attrs).result

    def retype(self, h, src: dtype, dst: dtype, shape) -> ir.Value:
        return h  # MLIR integers are signless

    def select(self, c, a, b, t: dtype, shape) -> ir.Value:
        return arith.SelectOp(c, a, b).result

    def program_id(self, axis: int) -> ir.Value:
        return tile.ProgramIdOp(tile.i32_attr(axis), res=ir.IntegerType.get_signless(32)).res

    def num_programs(self, axis: int) -> ir.Value:
        return tile.NumProgramsOp(tile.i32_attr(axis), res=ir.IntegerType.get_signless(32)).res

    def hint(self, h: ir.Value, field: str, values: Sequence[int]) -> None:
        """Record ``tl.multiple_of``/``max_contiguous``/``max_constancy`` as the attribute
        ``tile.<field>`` (one value per dimension) of the op defining ``h``, or of the kernel
        argument ``h``, or as ``tile.iv_<field>`` of the loop whose induction variable ``h`` is,
        for the axis analysis."""
        from ..language.semantic import SemanticError

        attr = ir.DenseI32ArrayAttr.get(list(values))
        owner = h.owner
        if not isinstance(owner, ir.Block):
            owner.attributes[f"tile.{field}"] = attr
            return
        fn = owner.owner.operation
        if fn.name == "scf.for" and h.arg_number == 0:  # the induction variable (tutorial 06's start_n)
            fn.attributes[f"tile.iv_{field}"] = attr
            return
        if fn.name != "func.func":
            raise SemanticError("a hint on a loop-carried value is not supported; hint the value "
                                "where it is computed")
        if "sym_visibility" in fn.attributes and ir.StringAttr(fn.attributes["sym_visibility"]).value == "private":
            raise SemanticError("a hint on a parameter of a @jit helper is lost when the helper is inlined; "
                                "hint the value in the kernel that passes it, or where it is computed")
        n = len(owner.arguments)
        old = list(ir.ArrayAttr(fn.attributes["arg_attrs"])) if "arg_attrs" in fn.attributes else []
        dicts = [{a.name: a.attr for a in ir.DictAttr(d)} for d in old] + [{} for _ in range(n - len(old))]
        dicts[h.arg_number][f"tile.{field}"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), values[0])
        fn.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in dicts])

    def make_range(self, start: int, end: int) -> ir.Value:
        ty = ir.RankedTensorType.get([end - start], ir.IntegerType.get_signless(32))
        return tile.MakeRangeOp(tile.i32_attr(start), tile.i32_attr(end), res=ty).res

    def addptr(self, p, off, t: dtype, shape) -> ir.Value:
        return tile.AddPtrOp(p, off, res=ir_type(t, shape)).res

    def dot(self, a, b, c, operand: dtype, t: dtype, shape, input_precision: str,
            max_num_imprecise_acc: int) -> ir.Value:
        return tile.DotOp(a, b, c, ir.StringAttr.get(input_precision), tile.i32_attr(max_num_imprecise_acc),
                          res=ir_type(t, shape)).res

    def load(self, p, mask, other, t: dtype, shape, hints: dict | None = None) -> ir.Value:
        op = tile.LoadOp(p, mask=mask, other=other, res=ir_type(t, shape))
        _set_hints(op, hints)
        return op.res

    def store(self, p, value, mask, shape, hints: dict | None = None) -> None:
        _set_hints(tile.StoreOp(p, value, mask=mask), hints)

    def atomic_rmw(self, kind: str, p, val, mask, t: dtype, shape, sem: str, scope: str) -> ir.Value:
        s = ir.StringAttr.get
        return tile.AtomicRMWOp(p, val, s(kind), s(sem), s(scope), mask=mask, res=ir_type(t, shape)).res

    def atomic_cas(self, p, cmp, val, t: dtype, shape, sem: str, scope: str) -> ir.Value:
        return tile.AtomicCASOp(p, cmp, val, ir.StringAttr.get(sem), ir.StringAttr.get(scope),
                                res=ir_type(t, shape)).res

    def barrier(self) -> None:
        tile.BarrierOp()

    def map_elementwise(self, hs: Sequence[ir.Value], arg_types: Sequence[dtype], shape, pack: int,
                        body: Callable) -> tuple[list[ir.Value], list[dtype]]:
        """``tile.map_elementwise`` of ``hs``; ``body(scalars)`` emits the region's body on its block
        arguments and returns the scalars to return and the result dtypes. The body is traced in a
        scratch op first, as the result types are known only after it."""
        if len(hs) > tile.MAX_OPERANDS:
            from ..errors import NotImplementedYet

            raise NotImplementedYet(f"tl.map_elementwise of more than {tile.MAX_OPERANDS} tensors is not supported yet")
        scratch = tile.combining_op(tile.MapElementwiseOp, hs, [], pack=tile.i32_attr(pack))
        block = scratch.combine.blocks.append(*[scalar_type(t) for t in arg_types for _ in range(pack)])
        with ir.InsertionPoint(block):
            outs, types = body(list(block.arguments))
            if len(outs) > tile.MAX_OPERANDS:
                from ..errors import NotImplementedYet

                raise NotImplementedYet(f"tl.map_elementwise returning more than {tile.MAX_OPERANDS} scalars per "
                                        f"call (results x pack) is not supported yet")
            tile.reduce_return(outs)
        op = tile.combining_op(tile.MapElementwiseOp, hs, [ir_type(t, shape) for t in types],
                               pack=tile.i32_attr(pack))
        block.append_to(op.combine)
        scratch.operation.erase()
        return list(op.operation.results), types

    def inline_asm(self, asm: str, constraints: str, hs: Sequence[ir.Value], arg_types: Sequence[dtype],
                   ts: Sequence[dtype], shape, is_pure: bool, pack: int) -> list[ir.Value]:
        """``tile.inline_asm`` of the operands ``hs`` (one shape) giving results of dtypes ``ts``."""
        if max(len(hs), len(ts)) > tile.MAX_OPERANDS:
            from ..errors import NotImplementedYet

            raise NotImplementedYet(f"tl.inline_asm_elementwise with more than {tile.MAX_OPERANDS} arguments or "
                                    f"results is not supported yet")
        op = tile.combining_op(tile.InlineAsmOp, hs, [ir_type(t, shape) for t in ts], asm=ir.StringAttr.get(asm),
                               constraints=ir.StringAttr.get(constraints), is_pure=tile.i32_attr(int(is_pure)),
                               pack=tile.i32_attr(pack))
        return list(op.operation.results)

    def reduce(self, hs: Sequence[ir.Value], ts: Sequence[dtype], axis: int, src_shape, shape,
               combine: Callable) -> list[ir.Value]:
        """``tile.reduce`` of the tensors ``hs`` (of dtypes ``ts``) along ``axis``; ``combine(as, bs)``
        emits the combine region's body on lists of scalars and returns the combined ones."""
        op = self._combining(tile.ReduceOp, hs, ts, shape, axis=tile.i32_attr(axis))
        self._combine_region(op, ts, combine)
        return list(op.operation.results)

    def scan(self, hs: Sequence[ir.Value], ts: Sequence[dtype], axis: int, shape, reverse: bool,
             combine: Callable) -> list[ir.Value]:
        """``tile.scan`` of the tensors ``hs`` along ``axis`` (``combine`` as in ``reduce``)."""
        op = self._combining(tile.ScanOp, hs, ts, shape, axis=tile.i32_attr(axis), reverse=tile.i32_attr(int(reverse)))
        self._combine_region(op, ts, combine)
        return list(op.operation.results)

    @staticmethod
    def _combining(cls, hs, ts: Sequence[dtype], shape, **attrs):
        if len(hs) > tile.MAX_OPERANDS:
            from ..errors import NotImplementedYet

            raise NotImplementedYet(f"reducing or scanning more than {tile.MAX_OPERANDS} tensors at once is not "
                                    f"supported yet (got {len(hs)})")
        return tile.combining_op(cls, hs, [ir_type(t, shape) for t in ts], **attrs)

    def _combine_region(self, op, ts: Sequence[dtype], combine: Callable) -> None:
        elems = [scalar_type(t) for t in ts]
        block = op.combine.blocks.append(*elems, *elems)
        n = len(elems)
        with ir.InsertionPoint(block):
            args = list(block.arguments)
            tile.reduce_return(combine(args[:n], args[n:]))

    def device_print(self, prefix: str, hex: bool, handles, types: Sequence[dtype], shapes) -> None:
        if not handles:
            tile.PrintOp(ir.StringAttr.get(prefix), tile.i32_attr(hex), tile.i32_attr(0), tile.i32_attr(0),
                         tile.i32_attr(0))
        for i, (h, t) in enumerate(zip(handles, types)):
            tile.PrintOp(ir.StringAttr.get(prefix), tile.i32_attr(hex), tile.i32_attr(t.is_int_signed()),
                         tile.i32_attr(i), tile.i32_attr(len(handles)), value=h)

    def static_print(self, text: str) -> None:
        if not self.quiet:
            print(text, file=sys.stdout)  # at compile time, as Triton does

    def device_assert(self, cond, shape, message: str) -> None:
        file, line = _current_file_line()
        tile.AssertOp(cond, ir.StringAttr.get(message), ir.StringAttr.get(file), tile.i32_attr(line))


def _current_file_line() -> tuple[str, int]:
    """File and line of the current MLIR location (the frontend sets it for every statement)."""
    found = file_line_col(ir.Location.current)
    return (found[0], found[1]) if found is not None else ("", 0)
