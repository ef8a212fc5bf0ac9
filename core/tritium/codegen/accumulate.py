"""The pieces of a matrix product that CPU and GPU lowerings of ``tile.dot`` share: exact widening
of operands, one multiply-add, and a counted loop that keeps its accumulators in phis.

An fp16 accumulator (``out_dtype=tl.float16``) is summed as a tensor core sums it (mma m16n8k16 with
an f16 accumulator): the products of each K-step of ``K_STEP`` are added in fp32 and the
accumulator is rounded to fp16 once per step, not after every product (which loses several times
the precision Triton's tests allow over K = 64).
"""

from __future__ import annotations

from typing import Callable

from llvmlite import ir as ll

from . import intrinsics
from .types import scalar_of

I32 = ll.IntType(32)
K_STEP = 16  # the K of one tensor-core step (mma m16n8k16)


def widen(b: ll.IRBuilder, value: ll.Value, t: ll.Type, hooks=None) -> ll.Value:
    """An operand (scalar or vector) in the accumulator's type ``t``: exact for every pair ``tl.dot``
    allows (fp16/bf16 into fp32, int8 into int32); floats through ``hooks.convert`` where given."""
    if value.type == t:
        return value
    if isinstance(scalar_of(t), ll.IntType):
        return b.sext(value, t)
    return b.fpext(value, t) if hooks is None else hooks.convert(b, "fpext", value, t)


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


def sum_type(acc_t: ll.Type) -> ll.Type:
    """The type products are summed in for an accumulator of type ``acc_t`` (scalar or vector):
    fp32 for fp16, else ``acc_t`` itself."""
    if not isinstance(scalar_of(acc_t), ll.HalfType):
        return acc_t
    return ll.VectorType(ll.FloatType(), acc_t.count) if isinstance(acc_t, ll.VectorType) else ll.FloatType()


def k_loop(b: ll.IRBuilder, n: int, init: list[ll.Value],
           body: Callable[[ll.Value, list[ll.Value]], list[ll.Value]], name: str = "dot.k") -> list[ll.Value]:
    """``phi_loop`` over the ``n`` k's of a product whose accumulators ``init`` are returned in their
    own type; ``body`` gets and returns them in ``sum_type`` (widen its operands to it). An fp16
    accumulator is rounded to fp16 after every ``K_STEP`` k's and after the last one."""
    narrow = init[0].type if init else None
    if narrow is None or sum_type(narrow) == narrow:
        return phi_loop(b, n, init, body, name)
    wide = sum_type(narrow)

    def step(i: ll.Value, values: list[ll.Value]) -> list[ll.Value]:
        values = body(i, values)
        end_of_step = b.or_(b.icmp_unsigned("==", b.urem(i, ll.Constant(I32, K_STEP)), ll.Constant(I32, K_STEP - 1)),
                            b.icmp_unsigned("==", i, ll.Constant(I32, n - 1)))
        return [b.select(end_of_step, b.fpext(b.fptrunc(v, narrow), wide), v) for v in values]

    return [b.fptrunc(v, narrow) for v in phi_loop(b, n, [b.fpext(v, wide) for v in init], step, name)]
