"""One element's atomic read-modify-write or compare-and-swap as LLVM IR (``tile.atomic_rmw``,
``tile.atomic_cas``), shared by the CPU's chunked and the GPUs' per-thread code generators.

Triton's ``sem`` becomes the LLVM ordering ("relaxed" is ``monotonic``; a compare-and-swap that
fails only reads, so its failure ordering drops the release part) and ``scope`` the LLVM
``syncscope`` the target names (``DeviceHooks.sync_scope``; empty: the whole system). Floats that
LLVM cannot exchange or compare on every back end are handled through their bits, and Triton's
float max/min are integer atomics on those bits: signed max (min) where the new value's sign bit
is clear, unsigned min (max) where it is set. A masked-off element touches nothing and yields 0.
"""

from __future__ import annotations

from llvmlite import ir as ll

from .types import const

ORDERING = {"acquire": "acquire", "release": "release", "acq_rel": "acq_rel", "relaxed": "monotonic"}
FAILURE_ORDERING = {"acquire": "acquire", "release": "monotonic", "acq_rel": "acquire", "relaxed": "monotonic"}
#: fmax/fmin: the integer operations for a new value with the sign bit clear, and set
_FLOAT_ORDER = {"fmax": ("max", "umin"), "fmin": ("min", "umax")}


def _ordering(sem: str, scope: str, table: dict[str, str] = ORDERING) -> str:
    # llvmlite prints the ordering right after the operands, where LLVM expects the syncscope
    return f'syncscope("{scope}") {table[sem]}' if scope else table[sem]


def _bits(t: ll.Type) -> ll.Type:
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


def rmw(b: ll.IRBuilder, kind: str, ptr: ll.Value, val: ll.Value, sem: str, scope: str,
        mask: ll.Value | None = None) -> ll.Value:
    """The old value at ``ptr`` after atomically combining it with ``val`` by ``kind`` (see
    ``tile.AtomicRMWOp``), where the i1 ``mask`` holds."""
    order = _ordering(sem, scope)
    ty = val.type

    def emit() -> ll.Value:
        if kind in _FLOAT_ORDER:
            ibits = b.bitcast(val, _bits(ty))
            negative = b.icmp_signed("<", ibits, const(ibits.type, 0))
            clear, set_ = _FLOAT_ORDER[kind]
            with b.if_else(negative) as (then, otherwise):
                with then:
                    neg_old, neg_block = b.atomic_rmw(set_, ptr, ibits, order), b.block
                with otherwise:
                    pos_old, pos_block = b.atomic_rmw(clear, ptr, ibits, order), b.block
            old = b.phi(ibits.type)
            old.add_incoming(neg_old, neg_block)
            old.add_incoming(pos_old, pos_block)
            return b.bitcast(old, ty)
        if kind == "xchg" and not isinstance(ty, ll.IntType):
            return b.bitcast(b.atomic_rmw("xchg", ptr, b.bitcast(val, _bits(ty)), order), ty)
        return b.atomic_rmw(kind, ptr, val, order)

    return _guarded(b, mask, ty, emit)


def cas(b: ll.IRBuilder, ptr: ll.Value, cmp: ll.Value, val: ll.Value, sem: str, scope: str,
        mask: ll.Value | None = None) -> ll.Value:
    """The old value at ``ptr``; ``val`` is stored there when the old value has ``cmp``'s bits."""
    ty = val.type

    def emit() -> ll.Value:
        bits = _bits(ty)
        pair = b.cmpxchg(ptr, b.bitcast(cmp, bits) if bits != ty else cmp, b.bitcast(val, bits) if bits != ty else val,
                         _ordering(sem, scope), FAILURE_ORDERING[sem])
        old = b.extract_value(pair, 0)
        return b.bitcast(old, ty) if bits != ty else old

    return _guarded(b, mask, ty, emit)
