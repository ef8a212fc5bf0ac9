"""Block pointers: ``tl.make_block_ptr``, ``tl.advance`` and loads/stores through them (Triton's).

A block pointer is a Python-side value, not a type of the IR: it holds the base pointer and the
shape, strides and offsets as scalar tensors (int64, int64, int32, as Triton converts them) and
the static ``block_shape`` and ``order``. A load or store through it builds what already exists
on every target, a block of pointers ``base + sum_d (offset_d + arange(block_d)) * stride_d`` and,
for the dimensions in ``boundary_check``, the mask ``0 <= index < shape_d`` with the padding as
``other``. The frontend carries a block pointer through loops and ``if``s as its scalar parts
(``components`` / ``rebuild``). ``order`` only describes the memory layout; it changes no value.
"""

from __future__ import annotations

from typing import Any, Sequence

from . import dtypes as T
from . import semantic
from .core import must_use_result
from .semantic import SemanticError


def _core():
    from . import core
    return core


def _unwrap(v: Any) -> Any:
    return _core()._unwrap(v)


class block_ptr:  # noqa: N801 - a language value, spelled like tl.tensor
    """A pointer to a ``block_shape`` block of a ``shape``-sized tensor at ``base`` (``tl.make_block_ptr``)."""

    #: ``tl.load``/``tl.store`` take it (a tensor descriptor is read with its own methods)
    addressable = True

    def __init__(self, base, shape: Sequence, strides: Sequence, offsets: Sequence,
                 block_shape: tuple[int, ...], order: tuple[int, ...]):
        self.base, self.block_shape, self.order = base, block_shape, order
        self.shape, self.strides, self.offsets = list(shape), list(strides), list(offsets)

    @property
    def dtype(self) -> T.dtype:
        """The element type the block holds (int1 is read and written as int8, as in Triton)."""
        elem = self.base.dtype.element_ty
        return T.int8 if elem == T.int1 else elem

    @property
    def signature(self) -> tuple:
        """What must agree where two block pointers meet (loop iterations, ``if`` branches)."""
        return self.base.dtype, self.block_shape, self.order

    def components(self) -> list:
        """The scalar tensors a loop or an ``if`` carries."""
        return [self.base, *self.shape, *self.strides, *self.offsets]

    def rebuild(self, handles: Sequence[Any]) -> "block_ptr":
        """This block pointer with its components replaced by ``handles`` (in ``components`` order)."""
        tensor = _core().tensor
        parts = [tensor(h, c.dtype, c.shape) for h, c in zip(handles, self.components())]
        r = len(self.block_shape)
        return block_ptr(parts[0], parts[1:1 + r], parts[1 + r:1 + 2 * r], parts[1 + 2 * r:],
                         self.block_shape, self.order)

    def advance(self, offsets) -> "block_ptr":
        return advance(self, offsets)

    def __repr__(self) -> str:
        return f"block_ptr(<{list(self.block_shape)}, {self.dtype}>, order={list(self.order)})"


def _static_list(v: Any, what: str) -> list:
    v = _unwrap(v)
    items = list(v) if isinstance(v, (tuple, list)) else [v]
    out = [_unwrap(e) for e in items]
    if not all(isinstance(e, int) and not isinstance(e, bool) for e in out):
        raise SemanticError(f"tl.make_block_ptr: {what} must be constant integers (tl.constexpr), got {out!r}")
    return out


def _scalars(values: Any, wide: bool, what: str) -> list:
    """Triton's conversion of shape/strides (``wide``: int64) and offsets (int32) to scalar tensors."""
    values = _unwrap(values)
    values = list(values) if isinstance(values, (tuple, list)) else [values]
    core, out = _core(), []
    for v in (_unwrap(v) for v in values):
        if isinstance(v, core.tensor):
            if v.shape != () or not v.dtype.is_int() or v.dtype.is_bool():
                raise SemanticError(f"{what} must be scalar integers, got {v.dtype}"
                                    + (f" of shape {list(v.shape)}" if v.shape else ""))
            if wide:
                out.append(semantic.cast(v, T.int64))
            elif v.dtype != T.int32:
                raise SemanticError(f"block pointers only support 32-bit offsets, got {v.dtype}: add a "
                                    ".to(tl.int32) or use a tensor of pointers for 64-bit offsets")
            else:
                out.append(v)
        elif isinstance(v, int) and not isinstance(v, bool):
            bits = 64 if wide else 32
            if not -2**(bits - 1) <= v < 2**(bits - 1):
                raise SemanticError(f"block pointers only support {bits}-bit {what}, got {v}")
            out.append(semantic.constant(v, T.int64 if wide else T.int32))
        else:
            raise SemanticError(f"{what} must be integers or scalar integer tensors, got {v!r}")
    return out


def make_block_ptr(base, shape, strides, offsets, block_shape, order) -> block_ptr:
    """A pointer to the ``block_shape`` block at ``offsets`` of the tensor at ``base`` with ``shape``
    and ``strides`` (in elements); ``order`` lists the dimensions from fastest-varying in memory."""
    base = _unwrap(base)
    if not isinstance(base, _core().tensor) or not base.dtype.is_ptr() or base.shape != ():
        raise SemanticError("tl.make_block_ptr: base must be a scalar pointer (not a block of pointers or a "
                            f"block pointer), got {getattr(base, 'dtype', type(base).__name__)}")
    block = _static_list(block_shape, "block_shape")
    order_ = _static_list(order, "order")
    if sorted(order_) != list(range(len(order_))):
        raise SemanticError(f"tl.make_block_ptr: order must be a permutation of 0..{len(order_) - 1}, got {order_}")
    shape_, strides_, offsets_ = (_scalars(v, wide, what) for v, wide, what in (
        (shape, True, "shape"), (strides, True, "strides"), (offsets, False, "offsets")))
    lengths = {"shape": len(shape_), "strides": len(strides_), "offsets": len(offsets_), "order": len(order_)}
    if any(n != len(block) for n in lengths.values()):
        raise SemanticError("tl.make_block_ptr: shape, strides, offsets, block_shape and order must have the "
                            f"same length, got block_shape {len(block)} and "
                            + ", ".join(f"{k} {n}" for k, n in lengths.items()))
    if not block:
        raise SemanticError("tl.make_block_ptr: a block pointer needs at least one dimension")
    for s in block:
        if s <= 0 or s & (s - 1):
            raise SemanticError(f"tl.make_block_ptr: block_shape elements must be powers of two, got {block}")
    return block_ptr(base, shape_, strides_, offsets_, tuple(block), tuple(order_))


@must_use_result("tl.advance has no side effects: to move the block pointer, assign its result "
                 "(p = tl.advance(p, offsets))")
def advance(base, offsets) -> block_ptr:
    """``base`` moved by ``offsets`` elements in each dimension (a new block pointer)."""
    base = _unwrap(base)
    if not isinstance(base, block_ptr):
        raise SemanticError("tl.advance expects a block pointer (tl.make_block_ptr), got "
                            f"{getattr(base, 'dtype', type(base).__name__)}")
    deltas = _scalars(offsets, False, "offsets")
    if len(deltas) != len(base.block_shape):
        raise SemanticError(f"tl.advance: the {len(base.block_shape)}-d block pointer needs {len(base.block_shape)} "
                            f"offsets, got {len(deltas)}")
    moved = [semantic.add(o, d) for o, d in zip(base.offsets, deltas)]
    return block_ptr(base.base, base.shape, base.strides, moved, base.block_shape, base.order)


def canonical_boundary_check(boundary_check, rank: int) -> list[int]:
    """The checked dimensions, sorted; Triton's rules (in range, no duplicates)."""
    bc = _unwrap(boundary_check)
    if bc is None or (isinstance(bc, (tuple, list)) and not bc):
        return []
    dims = [_unwrap(d) for d in (bc if isinstance(bc, (tuple, list)) else [bc])]
    for d in dims:
        if not isinstance(d, int) or isinstance(d, bool) or not 0 <= d < rank:
            raise SemanticError(f"boundary_check dimension {d!r} is not a dimension of the {rank}-d block "
                                f"(0 <= dim < {rank})")
    if len(set(dims)) != len(dims):
        raise SemanticError(f"duplicate dimension in boundary_check {dims}")
    return sorted(dims)


def padding(option) -> str:
    """Triton's padding options: "" (none), "zero" or "nan"."""
    option = _unwrap(option)
    if option in (None, ""):
        return ""
    if option not in ("zero", "nan"):
        raise SemanticError(f"padding option {option!r} is not supported: use \"zero\" or \"nan\"")
    return option


def _pointers_and_mask(p: block_ptr, checked: list[int]):
    """The block of pointers the block pointer addresses and, over ``checked`` dimensions, the mask
    of the elements inside the tensor."""
    rank = len(p.block_shape)
    ptrs, mask = p.base, None
    for d, size in enumerate(p.block_shape):
        idx = semantic.add(semantic.cast(p.offsets[d], T.int64), semantic.cast(semantic.arange(0, size), T.int64))
        for axis in range(rank):
            if axis != d:
                idx = semantic.expand_dims(idx, axis)
        ptrs = semantic.add(ptrs, semantic.mul(idx, p.strides[d]))
        if d in checked:
            inside = semantic.logical("and", semantic.compare("ge", idx, 0), semantic.compare("lt", idx, p.shape[d]))
            mask = inside if mask is None else semantic.logical("and", mask, inside)
    ptrs = semantic.broadcast_to(ptrs, p.block_shape)
    return ptrs, (None if mask is None else semantic.broadcast_to(mask, p.block_shape))


def load(p: block_ptr, mask, other, boundary_check, padding_option) -> Any:
    """``tl.load`` of a block pointer: the block, padded outside the tensor in checked dimensions."""
    _addressable(p, "tl.load", "desc.load(offsets)")
    pad = padding(padding_option)
    if mask is not None or other is not None:
        raise SemanticError("mask and other cannot be given when loading through a block pointer; use "
                            "boundary_check and padding_option")
    if p.dtype.is_int() and pad == "nan":
        raise SemanticError("padding option \"nan\" is not supported for integer block pointers")
    ptrs, in_bounds = _pointers_and_mask(p, canonical_boundary_check(boundary_check, len(p.block_shape)))
    fill = None if in_bounds is None else (float("nan") if pad == "nan" else 0)
    value = semantic.load(ptrs, in_bounds, fill)
    return semantic.cast(value, T.int8) if value.dtype == T.int1 else value


def store(p: block_ptr, value, mask, boundary_check) -> None:
    """``tl.store`` through a block pointer: ``value`` (the block's shape and element type, or a
    scalar) is written where it lies inside the tensor in the checked dimensions."""
    _addressable(p, "tl.store", "desc.store(offsets, value)")
    if mask is not None:
        raise SemanticError("mask cannot be given when storing through a block pointer; use boundary_check")
    value = semantic.to_tensor(_unwrap(value), p.dtype)
    if value.shape == ():
        value = semantic.broadcast_to(value, p.block_shape)
    if value.shape != p.block_shape:
        raise SemanticError(f"block shape {list(p.block_shape)} and value shape {list(value.shape)} mismatch")
    if value.dtype != p.dtype:
        raise SemanticError(f"block element type {p.dtype} and value element type {value.dtype} mismatch; "
                            f"convert the value with .to({p.dtype})")
    ptrs, in_bounds = _pointers_and_mask(p, canonical_boundary_check(boundary_check, len(p.block_shape)))
    semantic.store(ptrs, value, in_bounds)


def _addressable(p: block_ptr, what: str, instead: str) -> None:
    if not p.addressable:
        raise SemanticError(f"{what} takes pointers and block pointers, not a tensor descriptor: use {instead}")
