"""Atomic memory operations: ``tl.atomic_add`` ... ``tl.atomic_xchg`` and ``tl.atomic_cas``.

Triton's names, signatures and typing rules (its ``semantic.py``): each returns the values held at
``pointer`` before the operation; ``val`` (and ``mask``) broadcast with the pointers and ``val``
converts to the pointed-to type. ``sem`` is the memory ordering ("acq_rel" by default, "acquire",
"release", "relaxed"), ``scope`` which threads it synchronises with ("gpu" by default, "cta",
"sys"); a target honours them as far as it can. Every read-modify-write needs elements of 32 or 64
bits, except ``atomic_add``, which also takes fp16 and bf16; ``atomic_cas`` takes 16, 32 and 64
bits. Float ``atomic_max``/``atomic_min`` (fp32 and fp64 only) order values as Triton does, by
integer atomics on the bit pattern split by sign: -0.0 < +0.0, a NaN with the sign bit clear is
above everything and one with it set below everything. Where ``mask`` is false nothing is touched
and the returned value is 0.
"""

from __future__ import annotations

from . import dtypes as T
from . import semantic
from .elementwise_fns import refuse_writes_in_map
from .semantic import SemanticError

#: Triton's ``sem`` strings (None means "acq_rel")
SEMANTICS = ("acquire", "release", "acq_rel", "relaxed")
#: Triton's ``scope`` strings (None means "gpu")
SCOPES = ("gpu", "cta", "sys")


def _unwrap(v):
    from .core import constexpr

    return v.value if isinstance(v, constexpr) else v


def _option(name: str, value, allowed: tuple[str, ...], default: str, what: str) -> str:
    value = _unwrap(value)
    if value is None:
        return default
    if not isinstance(value, str) or value not in allowed:
        shown = ", ".join(f'"{a}"' for a in allowed)
        raise SemanticError(f"{what}: {name} must be one of {shown} (None means \"{default}\"), got {value!r}")
    return value


def _element(ptr, what: str) -> T.dtype:
    core = semantic._core()
    if not isinstance(ptr, core.tensor) or not ptr.dtype.is_ptr():
        raise SemanticError(f"{what} expects a pointer (or a block of pointers) as its first argument, got "
                            f"{getattr(ptr, 'dtype', type(ptr).__name__)}")
    semantic.refuse_const(ptr, what)
    elem = ptr.dtype.element_ty
    if elem.is_ptr():
        raise SemanticError(f"{what} on pointers to pointers is not supported; use 64-bit integers")
    return elem


def _rmw(op: str, pointer, val, mask, sem, scope, what: str | None = None, halves: bool = False):
    """Type-check (Triton's ``atom_red_typechecking_impl``), broadcast and emit one ``op``;
    ``halves``: 16-bit floats take min and max too (a tensor descriptor's reductions)."""
    what = what or f"tl.atomic_{op}"
    refuse_writes_in_map(what)
    elem = _element(pointer, what)
    if elem in (T.float16, T.bfloat16) and op != "add" and not (halves and op in ("min", "max")):
        raise SemanticError(f"{what} does not support {elem} (only tl.atomic_add does); use float32")
    if elem.is_bool() or (elem.is_int() and elem.primitive_bitwidth < 32) or elem.is_fp8():
        raise SemanticError(f"{what} does not support {elem}: atomics need 32- or 64-bit elements (or 16-bit "
                            "floats for tl.atomic_add)")
    if op in ("and", "or", "xor") and elem.is_floating():
        raise SemanticError(f"{what} needs integer elements, got {elem}")
    sem = _option("sem", sem, SEMANTICS, "acq_rel", what)
    scope = _option("scope", scope, SCOPES, "gpu", what)
    val = semantic.to_tensor(_unwrap(val), elem)
    operands = [pointer, val]
    if _unwrap(mask) is not None:
        operands.append(semantic._bool_mask(_unwrap(mask), what))
    shape: tuple[int, ...] = ()
    for o in operands:
        shape = semantic.broadcast_shapes(shape, o.shape)
    ptr, val = (semantic.broadcast_to(o, shape) for o in (pointer, semantic.cast(val, elem)))
    m = semantic.broadcast_to(operands[2], shape).handle if len(operands) > 2 else None
    kind = _KINDS[op](elem)
    h = semantic.builder().atomic_rmw(kind, ptr.handle, val.handle, m, elem, shape, sem, scope)
    return semantic._core().tensor(h, elem, shape)


def _ordered(op: str):
    """The kind of ``op`` ("max" or "min"): signed, unsigned (``u`` prefix) or float (``f`` prefix)."""
    def kind(t: T.dtype) -> str:
        if t.is_floating():
            if t not in (T.float16, T.bfloat16, T.float32, T.float64):
                raise SemanticError(f"tl.atomic_{op} of {t} is not supported; use float32 or float64")
            return "f" + op
        return ("u" + op) if t.is_int_unsigned() else op
    return kind


#: the ``tile.atomic_rmw`` kind of each builtin, by element type
_KINDS = {
    "add": lambda t: "fadd" if t.is_floating() else "add",
    "max": _ordered("max"),
    "min": _ordered("min"),
    "and": lambda t: "and",
    "or": lambda t: "or",
    "xor": lambda t: "xor",
    "xchg": lambda t: "xchg",
}


def _builtin(op: str, doc: str):
    def fn(pointer, val, mask=None, sem=None, scope=None):
        return _rmw(op, pointer, val, mask, sem, scope)
    fn.__name__ = fn.__qualname__ = f"atomic_{op}"
    fn.__doc__ = f"Atomically {doc} at ``pointer`` where ``mask``; returns the old values."
    return fn


def descriptor_reduce(op: str, pointers, value, mask) -> None:
    """A tensor descriptor's ``atomic_<op>`` of a block (Triton's ``descriptor_reduce``), with the
    element types Triton's take where the hardware reduces blocks itself (Hopper's tensor memory
    accelerator), on every target: add of 32- and 64-bit integers and of 16- and 32-bit floats; min
    and max of 32- and 64-bit integers and of 16-bit floats (not of fp32 or fp64); and, or, xor of
    32- and 64-bit integers."""
    what = f"desc.atomic_{op}"
    elem = _element(pointers, what)
    allowed = {"add": (T.float16, T.bfloat16, T.float32), "min": (T.float16, T.bfloat16),
               "max": (T.float16, T.bfloat16)}.get(op, ())
    if elem.is_floating() and elem not in allowed:
        raise SemanticError(f"{what} does not support {elem}, as in Triton; "
                            f"it takes {', '.join(map(str, allowed)) or 'integers only'}")
    _rmw(op, pointers, value, mask, None, None, what=what, halves=True)


atomic_add = _builtin("add", "add ``val``")
atomic_max = _builtin("max", "store the maximum of the old value and ``val``")
atomic_min = _builtin("min", "store the minimum of the old value and ``val``")
atomic_and = _builtin("and", "store the bitwise and of the old value and ``val``")
atomic_or = _builtin("or", "store the bitwise or of the old value and ``val``")
atomic_xor = _builtin("xor", "store the bitwise xor of the old value and ``val``")
atomic_xchg = _builtin("xchg", "store ``val``")


def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    """Atomically store ``val`` at ``pointer`` where the value there equals ``cmp`` (bit for bit);
    returns the old values. ``cmp`` and ``val`` take the pointed-to type (Python numbers weakly)."""
    what = "tl.atomic_cas"
    refuse_writes_in_map(what)
    elem = _element(pointer, what)
    if elem.primitive_bitwidth not in (16, 32, 64) or elem.is_bool():
        raise SemanticError(f"{what} supports 16-, 32- and 64-bit elements only, got {elem}")
    sem = _option("sem", sem, SEMANTICS, "acq_rel", what)
    scope = _option("scope", scope, SCOPES, "gpu", what)
    cmp, val = (semantic.to_tensor(_unwrap(v), elem) for v in (cmp, val))
    for name, v in (("cmp", cmp), ("val", val)):
        if v.dtype != elem:
            raise SemanticError(f"{what}: {name} is {v.dtype} but the pointer points to {elem}; "
                                f"convert it with .to({elem})")
    shape: tuple[int, ...] = ()
    for o in (pointer, cmp, val):
        shape = semantic.broadcast_shapes(shape, o.shape)
    ptr, cmp, val = (semantic.broadcast_to(o, shape) for o in (pointer, cmp, val))
    h = semantic.builder().atomic_cas(ptr.handle, cmp.handle, val.handle, elem, shape, sem, scope)
    return semantic._core().tensor(h, elem, shape)
