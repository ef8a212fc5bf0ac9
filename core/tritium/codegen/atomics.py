"""One element's atomic read-modify-write or compare-and-swap as LLVM IR (``tile.atomic_rmw``,
``tile.atomic_cas``), shared by the CPU's chunked and the GPUs' per-thread code generators.

The LLVM-level operations (``atomicrmw`` of one kind, ``cmpxchg`` of integers) are *primitives* a
target supplies (``DeviceHooks.atomic_rmw``/``atomic_cas``; ``host`` for the CPU), so a back end
that drops LLVM's orderings can emit its own instructions. By default Triton's ``sem`` becomes the
LLVM ordering ("relaxed" is ``monotonic``; a compare-and-swap that fails only reads, so its failure
ordering drops the release part) and ``scope`` an LLVM ``syncscope``. Floats are exchanged and
compared through their bits, and Triton's float max/min are integer atomics on those bits: signed
max (min) where the new value's sign bit is clear, unsigned min (max) where it is set; for 16-bit
floats (a tensor descriptor's reductions), which no target has 16-bit integer max/min atomics for,
a compare-and-swap loop. A masked-off element touches nothing and yields 0.
"""

from __future__ import annotations

from typing import Callable

from llvmlite import ir as ll

from .types import const

ORDERING = {"acquire": "acquire", "release": "release", "acq_rel": "acq_rel", "relaxed": "monotonic"}
FAILURE_ORDERING = {"acquire": "acquire", "release": "monotonic", "acq_rel": "acquire", "relaxed": "monotonic"}
#: fmax/fmin: the integer operations for a new value with the sign bit clear, and set
_FLOAT_ORDER = {"fmax": ("max", "umin"), "fmin": ("min", "umax")}


def _ordering(sem: str, scope: str, table: dict[str, str] = ORDERING) -> str:
    # llvmlite prints the ordering right after the operands, where LLVM expects the syncscope
    return f'syncscope("{scope}") {table[sem]}' if scope else table[sem]


def llvm_rmw(b: ll.IRBuilder, op: str, ptr: ll.Value, val: ll.Value, sem: str, syncscope: str) -> ll.Value:
    """LLVM's ``atomicrmw op`` (``xchg`` of an integer) in ``syncscope`` ("" for the system)."""
    return b.atomic_rmw(op, ptr, val, _ordering(sem, syncscope))


def llvm_cas(b: ll.IRBuilder, ptr: ll.Value, cmp: ll.Value, val: ll.Value, sem: str, syncscope: str) -> ll.Value:
    """LLVM's ``cmpxchg`` of integers in ``syncscope``: the old value."""
    pair = b.cmpxchg(ptr, cmp, val, _ordering(sem, syncscope), FAILURE_ORDERING[sem])
    return b.extract_value(pair, 0)


#: ``(b, op, ptr, val) -> old``: one LLVM-level atomicrmw (``llvm_rmw`` with the ordering bound)
Primitive = Callable[[ll.IRBuilder, str, ll.Value, ll.Value], ll.Value]
#: ``(b, ptr, cmp, val) -> old``: one compare-and-swap of integers
CasPrimitive = Callable[[ll.IRBuilder, ll.Value, ll.Value, ll.Value], ll.Value]


def host(sem: str) -> tuple[Primitive, CasPrimitive]:
    """LLVM's atomics at the system scope: what a host target, whose threads share one memory, uses."""
    return (lambda b, op, p, v: llvm_rmw(b, op, p, v, sem, ""),
            lambda b, p, c, v: llvm_cas(b, p, c, v, sem, ""))


def bits_type(t: ll.Type) -> ll.IntType:
    """The integer type of a float's bits (integers are their own)."""
    return t if isinstance(t, ll.IntType) else ll.IntType({"half": 16, "bfloat": 16, "float": 32, "double": 64}[str(t)])


def _guarded(b: ll.IRBuilder, mask: ll.Value | None, ty: ll.Type, emit) -> ll.Value:
    """``emit()`` where ``mask`` (always when None); 0 elsewhere."""
    if mask is None:
        return emit()
    before = b.block
    with b.if_then(mask):
        value = emit()
        inside = b.block
    phi = b.phi(ty)
    phi.add_incoming(value, inside)
    phi.add_incoming(const(ty, 0), before)
    return phi


def rmw(b: ll.IRBuilder, kind: str, ptr: ll.Value, val: ll.Value, primitive: Primitive,
        mask: ll.Value | None = None, cas_primitive: CasPrimitive | None = None) -> ll.Value:
    """The old value at ``ptr`` after atomically combining it with ``val`` by ``kind`` (see
    ``tile.AtomicRMWOp``), where the i1 ``mask`` holds; ``primitive`` does each LLVM-level op, and
    ``cas_primitive`` the compare-and-swaps of 16-bit float max/min."""
    ty = val.type

    def emit() -> ll.Value:
        if kind in _FLOAT_ORDER and bits_type(ty).width == 16:
            return _ordered_by_cas(b, kind, ptr, val, cas_primitive)
        if kind in _FLOAT_ORDER:
            ibits = b.bitcast(val, bits_type(ty))
            negative = b.icmp_signed("<", ibits, const(ibits.type, 0))
            clear, set_ = _FLOAT_ORDER[kind]
            with b.if_else(negative) as (then, otherwise):
                with then:
                    neg_old, neg_block = primitive(b, set_, ptr, ibits), b.block
                with otherwise:
                    pos_old, pos_block = primitive(b, clear, ptr, ibits), b.block
            old = b.phi(ibits.type)
            old.add_incoming(neg_old, neg_block)
            old.add_incoming(pos_old, pos_block)
            return b.bitcast(old, ty)
        if kind == "xchg" and not isinstance(ty, ll.IntType):
            return b.bitcast(primitive(b, "xchg", ptr, b.bitcast(val, bits_type(ty))), ty)
        return primitive(b, kind, ptr, val)

    return _guarded(b, mask, ty, emit)


def _ordered_by_cas(b: ll.IRBuilder, kind: str, ptr: ll.Value, val: ll.Value, cas_primitive: CasPrimitive) -> ll.Value:
    """``fmax``/``fmin`` of a 16-bit float as a compare-and-swap loop on its bits: the old value.
    Values compare in the order the 32- and 64-bit ones do (their bits as integers, negative values
    reversed: -0.0 < +0.0, NaNs by their sign bit)."""
    bits = bits_type(val.type)

    def key(x: ll.Value) -> ll.Value:
        negative = b.icmp_signed("<", x, const(bits, 0))
        return b.select(negative, b.and_(b.not_(x), const(bits, 0x7FFF)), b.or_(x, const(bits, 0x8000)))

    start = b.block
    first = b.load(ptr, typ=bits, align=2)
    loop, done = b.append_basic_block("atomic_order_cas"), b.append_basic_block("atomic_order_done")
    b.branch(loop)
    b.position_at_end(loop)
    old = b.phi(bits)
    old.add_incoming(first, start)
    mine = b.bitcast(val, bits)
    wins = b.icmp_unsigned(">" if kind == "fmax" else "<", key(mine), key(old))
    new = b.select(wins, mine, old)
    seen = cas_primitive(b, ptr, old, new)
    old.add_incoming(seen, b.block)
    b.cbranch(b.icmp_unsigned("==", seen, old), done, loop)
    b.position_at_end(done)
    return b.bitcast(old, val.type)


def cas(b: ll.IRBuilder, ptr: ll.Value, cmp: ll.Value, val: ll.Value, primitive: CasPrimitive,
        mask: ll.Value | None = None) -> ll.Value:
    """The old value at ``ptr``; ``val`` is stored there when the old value has ``cmp``'s bits."""
    ty = val.type
    bits = bits_type(ty)

    def emit() -> ll.Value:
        if bits == ty:
            return primitive(b, ptr, cmp, val)
        return b.bitcast(primitive(b, ptr, b.bitcast(cmp, bits), b.bitcast(val, bits)), ty)

    return _guarded(b, mask, ty, emit)
