"""Give every ranked tensor type in a ``tile`` module an encoding: the core of ``tile-layout``.

A target decides *which* layout a tensor gets (a function of its type); this walk applies that
choice everywhere a type is written: op results, block arguments, dense constants and function
signatures.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..ir.mlir import ir

Encoder = Callable[[ir.RankedTensorType], ir.Attribute]


def assign_encodings(module: ir.Module, encode: Encoder) -> ir.Module:
    """Encode every tensor type without an encoding with ``encode(type)``, in place; verify."""
    with module.context, ir.Location.unknown():
        _region_tree(module.operation, encode)
        module.operation.verify()
    return module


def _with_encoding(t: ir.Type, encode: Encoder) -> ir.Type:
    if not isinstance(t, ir.RankedTensorType) or t.encoding is not None:
        return t
    return ir.RankedTensorType.get(list(t.shape), t.element_type, encode(t))


def _region_tree(op: ir.Operation, encode: Encoder) -> None:
    for region in op.regions:
        for block in region.blocks:
            for arg in block.arguments:
                arg.set_type(_with_encoding(arg.type, encode))
            for inner in block.operations:
                inner = inner.operation
                for res in inner.results:
                    res.set_type(_with_encoding(res.type, encode))
                if inner.name == "arith.constant" and isinstance(inner.results[0].type, ir.RankedTensorType):
                    inner.attributes["value"] = retyped(inner.attributes["value"], inner.results[0].type)
                _region_tree(inner, encode)
                if inner.name == "func.func":
                    _function_type(inner, encode)


def retyped(value: ir.Attribute, t: ir.RankedTensorType) -> ir.Attribute:
    """A dense constant's value with the (encoded) type of its result, as arith.constant requires."""
    dense = ir.DenseElementsAttr(value)
    if dense.is_splat:
        return ir.DenseElementsAttr.get_splat(t, dense.get_splat_value())
    return ir.DenseElementsAttr.get(np.array(dense), type=t)


def _function_type(fn: ir.Operation, encode: Encoder) -> None:
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    new = ir.FunctionType.get([_with_encoding(t, encode) for t in ftype.inputs],
                              [_with_encoding(t, encode) for t in ftype.results])
    fn.attributes["function_type"] = ir.TypeAttr.get(new)
