"""Declaring and calling overloaded LLVM intrinsics (``llvm.exp.v16f32``) from llvmlite."""

from __future__ import annotations

from typing import Sequence

from llvmlite import ir as ll


def mangle(t: ll.Type) -> str:
    """The type suffix LLVM uses in overloaded intrinsic names."""
    if isinstance(t, ll.VectorType):
        return f"v{t.count}{mangle(t.element)}"
    if isinstance(t, ll.IntType):
        return f"i{t.width}"
    if isinstance(t, ll.PointerType):
        return f"p{t.addrspace}"
    return t.intrinsic_name


def declare(module: ll.Module, name: str, ret: ll.Type, args: Sequence[ll.Type],
            overloads: Sequence[ll.Type] = ()) -> ll.Function:
    """The intrinsic ``name`` specialised to ``overloads``, declared once per module."""
    full = ".".join([name, *(mangle(t) for t in overloads)])
    existing = module.globals.get(full)
    if existing is not None:
        return existing
    return ll.Function(module, ll.FunctionType(ret, list(args)), full)


def call(builder: ll.IRBuilder, name: str, args: Sequence[ll.Value], ret: ll.Type | None = None,
         overloads: Sequence[ll.Type] | None = None) -> ll.Value:
    """Call an intrinsic overloaded on its result type (by default the first argument's type)."""
    ret = args[0].type if ret is None else ret
    fn = declare(builder.module, name, ret, [a.type for a in args], [ret] if overloads is None else overloads)
    return builder.call(fn, list(args))


def call_aligned(builder: ll.IRBuilder, name: str, args: Sequence[ll.Value], ret: ll.Type,
                 overloads: Sequence[ll.Type], align: int, pointer_arg: int = 0) -> ll.Value:
    """Call a memory intrinsic (masked load/store, gather/scatter) whose pointer carries ``align``."""
    fn = declare(builder.module, name, ret, [a.type for a in args], overloads)
    inst = builder.call(fn, list(args), arg_attrs={pointer_arg: ()})
    inst.arg_attributes[pointer_arg].align = align
    return inst


def per_element(b: ll.IRBuilder, args: Sequence[ll.Value], scalar) -> ll.Value:
    """``scalar(b, scalar_args)`` on scalars, or element by element on vectors (for functions that
    exist only for scalars: a C library's, a device library's, one PTX instruction)."""
    ty = args[0].type
    if not isinstance(ty, ll.VectorType):
        return scalar(b, list(args))
    out = ll.Constant(ty, None)
    for i in range(ty.count):
        index = ll.Constant(ll.IntType(32), i)
        out = b.insert_element(out, scalar(b, [b.extract_element(a, index) for a in args]), index)
    return out
