"""The pieces of a matrix product that CPU and GPU lowerings of ``tile.dot`` share: exact widening
of operands, one multiply-add, and a counted loop that keeps its accumulators in phis."""

from __future__ import annotations

from typing import Callable

from llvmlite import ir as ll

from . import intrinsics
from .types import scalar_of

I32 = ll.IntType(32)


def widen(b: ll.IRBuilder, value: ll.Value, t: ll.Type) -> ll.Value:
    """An operand (scalar or vector) in the accumulator's type ``t``: exact for every pair ``tl.dot``
    allows (fp16/bf16 into fp32, int8 into int32)."""
    if value.type == t:
        return value
    if isinstance(scalar_of(t), ll.IntType):
        return b.sext(value, t)
    return b.fpext(value, t)


def multiply_add(b: ll.IRBuilder, x: ll.Value, y: ll.Value, acc: ll.Value) -> ll.Value:
    """``x * y + acc``: ``llvm.fmuladd`` for floats (fused where the hardware has FMA), wrapping
    integer arithmetic otherwise."""
    if isinstance(scalar_of(acc.type), ll.IntType):
        return b.add(b.mul(x, y), acc)
    return intrinsics.call(b, "llvm.fmuladd", [x, y, acc])


def phi_loop(b: ll.IRBuilder, n: int, init: list[ll.Value],
             body: Callable[[ll.Value, list[ll.Value]], list[ll.Value]], name: str = "dot.k") -> list[ll.Value]:
    """``for i in range(n): values = body(i, values)`` (``n`` >= 1) with ``values`` in phis, so they
    stay in registers; returns the final values."""
    pre = b.block
    header = b.append_basic_block(name)
    b.branch(header)
    b.position_at_end(header)
    i = b.phi(I32, name=f"{name}.i")
    i.add_incoming(ll.Constant(I32, 0), pre)
    phis = []
    for value in init:
        phi = b.phi(value.type)
        phi.add_incoming(value, pre)
        phis.append(phi)
    values = body(i, phis)
    nxt = b.add(i, ll.Constant(I32, 1))
    i.add_incoming(nxt, b.block)
    for phi, value in zip(phis, values):
        phi.add_incoming(value, b.block)
    done = b.append_basic_block(f"{name}.end")
    b.cbranch(b.icmp_unsigned("==", nxt, ll.Constant(I32, n)), done, header)
    b.position_at_end(done)
    return values
