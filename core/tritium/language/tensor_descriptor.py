"""Tensor descriptors made in the kernel: ``tl.make_tensor_descriptor``, ``desc.load``/``desc.store``
and the descriptor atomics, ``tl.load_tensor_descriptor``/``tl.store_tensor_descriptor``, with
Triton 3.6's checks (1 to 5 dimensions, a last stride of 1, at least 16 bytes in a block row).

A descriptor is a block pointer without offsets (``language.block_ptr``), so the frontend carries it
through loops, ``if``s and ``@jit`` calls the same way: each access names its offsets, reads the
padding (``"zero"`` or ``"nan"``) outside the tensor in every dimension and writes only inside it.
NVIDIA GPUs run Triton's descriptors on TMA; here they are masked loads and stores of the same
blocks on every target, and so are the row gathers and scatters of Blackwell's TMA
(``desc.gather``/``desc.scatter``). A descriptor made on the host (``tritium.tools.tensor_descriptor``)
arrives as a ``host_tensor_descriptor``: its parts are kernel parameters.
"""

from __future__ import annotations

from typing import Any, Sequence

from . import atomics
from . import block_ptr as bp
from . import dtypes as T
from . import semantic
from .semantic import SemanticError

MAX_RANK = 5
MIN_ROW_BYTES = 16


class tensor_descriptor(bp.block_ptr):  # noqa: N801 - a language value, spelled as Triton's
    """A ``block_shape`` window on the ``shape``-sized tensor at ``base`` (``tl.make_tensor_descriptor``)."""

    addressable = False

    def __init__(self, base, shape: Sequence, strides: Sequence, block_shape: tuple[int, ...], padding: str,
                 offsets: Sequence | None = None):
        rank = len(block_shape)
        zeros = offsets if offsets is not None else [semantic.constant(0, T.int32) for _ in range(rank)]
        super().__init__(base, shape, strides, zeros, block_shape, tuple(reversed(range(rank))))
        self.padding = padding

    @property
    def signature(self) -> tuple:
        return ("tensor_descriptor", *super().signature, self.padding)

    def rebuild(self, handles: Sequence[Any]) -> "tensor_descriptor":
        p = super().rebuild(handles)
        return tensor_descriptor(p.base, p.shape, p.strides, p.block_shape, self.padding, p.offsets)

    def advance(self, offsets):
        raise SemanticError("a tensor descriptor has no position to advance: pass the offsets to load/store")

    def _at(self, offsets, what: str) -> bp.block_ptr:
        at = bp._scalars(offsets, False, "tensor descriptor offsets")
        if len(at) != len(self.block_shape):
            raise SemanticError(f"{what}: the {len(self.block_shape)}-d descriptor needs {len(self.block_shape)} "
                                f"offsets, got {len(at)}")
        return bp.block_ptr(self.base, self.shape, self.strides, at, self.block_shape, self.order)

    def load(self, offsets):
        """The block at ``offsets``, padded outside the tensor."""
        return bp.load(self._at(offsets, "desc.load"), None, None, list(range(len(self.block_shape))), self.padding)

    def store(self, offsets, value) -> None:
        """``value`` (the block's shape, or a scalar) written at ``offsets`` where it lies inside the
        tensor, converted to the descriptor's element type first, as Triton's descriptors do (a block
        pointer's store takes only its own type)."""
        value = semantic.to_tensor(bp._unwrap(value), self.base.dtype.element_ty)
        bp.store(self._at(offsets, "desc.store"), semantic.cast(value, self.base.dtype.element_ty), None,
                 list(range(len(self.block_shape))))

    def _atomic(self, op: str, offsets, value) -> None:
        ptrs, inside = bp._pointers_and_mask(self._at(offsets, f"desc.atomic_{op}"), list(range(len(self.block_shape))))
        atomics.descriptor_reduce(op, ptrs, value, inside)

    def atomic_add(self, offsets, value) -> None:
        self._atomic("add", offsets, value)

    def atomic_min(self, offsets, value) -> None:
        self._atomic("min", offsets, value)

    def atomic_max(self, offsets, value) -> None:
        self._atomic("max", offsets, value)

    def atomic_and(self, offsets, value) -> None:
        self._atomic("and", offsets, value)

    def atomic_or(self, offsets, value) -> None:
        self._atomic("or", offsets, value)

    def atomic_xor(self, offsets, value) -> None:
        self._atomic("xor", offsets, value)

    def gather(self, *args):
        """The rows ``x_offsets`` (a 1-D int tensor) of the columns from ``y_offset`` of a 2-D
        descriptor whose block is one row: a ``[len(x_offsets), block_shape[1]]`` block, padded
        outside the tensor (Triton's ``desc.gather(x_offsets, y_offset)``)."""
        ptrs, inside = self._rows("gather", args)
        pad = float("nan") if self.padding == "nan" else 0
        value = semantic.load(ptrs, inside, pad)
        return semantic.cast(value, T.int8) if value.dtype == T.int1 else value

    def scatter(self, value, *args) -> None:
        """``value`` (``[len(x_offsets), block_shape[1]]``) written to the rows ``x_offsets`` from
        column ``y_offset`` where it lies inside the tensor (Triton's ``desc.scatter``)."""
        ptrs, inside = self._rows("scatter", args)
        value = semantic.to_tensor(bp._unwrap(value), self.dtype)
        if value.shape != ptrs.shape:
            raise SemanticError(f"desc.scatter: the value must have shape {list(ptrs.shape)} (rows x block columns), "
                                f"got {list(value.shape)}")
        if value.dtype != self.dtype:
            raise SemanticError(f"desc.scatter: the descriptor holds {self.dtype}, the value is {value.dtype}; "
                                f"convert it with .to({self.dtype})")
        semantic.store(ptrs, value, inside)

    def _rows(self, what: str, args):
        """The pointers and in-bounds mask of a gather or scatter, after Triton's checks."""
        if len(args) != 2:
            raise SemanticError(f"desc.{what} takes x_offsets and y_offset (2-D indexing), got {len(args)} indices")
        if len(self.block_shape) != 2 or self.block_shape[0] != 1:
            raise SemanticError(f"desc.{what} needs a 2-D descriptor whose block is one row, got block_shape "
                                f"{list(self.block_shape)}")
        rows = bp._unwrap(args[0])
        if not isinstance(rows, bp._core().tensor) or len(rows.shape) != 1 or not rows.dtype.is_int():
            raise SemanticError(f"desc.{what}: x_offsets must be a 1-D integer tensor, got "
                                f"{getattr(rows, 'dtype', type(rows).__name__)} of shape {list(getattr(rows, 'shape', ()))}")
        if rows.shape[0] < 8:
            raise SemanticError(f"desc.{what} must have at least 8 rows, got {rows.shape[0]}")
        min_cols = 32 // self.dtype.primitive_bitwidth * 8
        if self.block_shape[1] < min_cols:
            raise SemanticError(f"desc.{what} of {self.dtype} must have at least {min_cols} columns, got "
                                f"{self.block_shape[1]}")
        col = bp._scalars(args[1], False, f"desc.{what} y_offset")[0]
        r = semantic.expand_dims(semantic.cast(rows, T.int64), 1)
        c = semantic.expand_dims(semantic.add(semantic.cast(col, T.int64),
                                              semantic.cast(semantic.arange(0, self.block_shape[1]), T.int64)), 0)
        inside = semantic.logical("and", semantic.logical("and", semantic.compare("ge", r, 0),
                                                          semantic.compare("lt", r, self.shape[0])),
                                  semantic.logical("and", semantic.compare("ge", c, 0),
                                                   semantic.compare("lt", c, self.shape[1])))
        shape = (rows.shape[0], self.block_shape[1])
        ptrs = semantic.add(semantic.add(self.base, semantic.mul(r, self.strides[0])), semantic.mul(c, self.strides[1]))
        return semantic.broadcast_to(ptrs, shape), semantic.broadcast_to(inside, shape)

    def __repr__(self) -> str:
        return f"tensor_descriptor(<{list(self.block_shape)}, {self.dtype}>)"


class host_tensor_descriptor(tensor_descriptor):  # noqa: N801
    """A descriptor made on the host (``tritium.tools.tensor_descriptor.TensorDescriptor``): its base,
    shape (int32, as Triton passes it) and strides but the last are kernel parameters, the last
    stride is the constant 1 (the host checked it), so rows are contiguous as the layout passes
    need to vectorise them. Loops, ``if``s and ``@jit`` calls carry just those parts."""

    def __init__(self, base, shape: Sequence, strides: Sequence, block_shape: tuple[int, ...], padding: str):
        self._parts = [base, *shape, *strides]  # the runtime parts: the last stride is no part
        full = [*strides, semantic.constant(1, T.int64)]
        super().__init__(base, shape, full, block_shape, padding)

    @property
    def signature(self) -> tuple:
        return ("host", *super().signature)

    def components(self) -> list:
        return list(self._parts)

    def load(self, offsets):
        """The block at ``offsets`` as one ``tile.descriptor_load`` (a target may copy it whole),
        which holds ``tensor_descriptor.load``'s pointers and masked loads."""
        at = self._at(offsets, "desc.load")
        t = T.int8 if self.dtype == T.int1 else self.dtype  # as a block pointer loads booleans
        handle = semantic.builder().descriptor_load(self.base.handle, [o.handle for o in at.offsets], self.padding,
                                                   t, self.block_shape,
                                                   lambda: super(host_tensor_descriptor, self).load(offsets).handle)
        return bp._core().tensor(handle, t, self.block_shape)

    def rebuild(self, handles: Sequence[Any]) -> "host_tensor_descriptor":
        return host_tensor_descriptor.from_parts(
            [bp._core().tensor(h, c.dtype, c.shape) for h, c in zip(handles, self._parts)],
            self.block_shape, self.padding)

    @staticmethod
    def from_parts(parts: Sequence, block_shape: tuple[int, ...], padding: str) -> "host_tensor_descriptor":
        """The descriptor of its runtime ``parts``: base, ``rank`` shapes, ``rank - 1`` strides."""
        rank = len(block_shape)
        return host_tensor_descriptor(parts[0], parts[1:1 + rank], parts[1 + rank:], tuple(block_shape), padding)

    @staticmethod
    def parameters(element: T.dtype, rank: int) -> list:
        """Placeholders of its runtime parts (no IR values yet), in ``components`` order: what a
        kernel's signature holds for one descriptor parameter."""
        tensor = bp._core().tensor
        return [tensor(None, T.pointer_type(element), ())] + [tensor(None, T.int32, ()) for _ in range(rank)] + \
            [tensor(None, T.int64, ()) for _ in range(rank - 1)]


class host_descriptor_parameter(host_tensor_descriptor):  # noqa: N801
    """The kernel parameter a host descriptor binds to, before the kernel's function has IR values:
    the frontend makes the function's parameters from ``components`` and then ``rebuild``s it."""

    def __init__(self, element: T.dtype, block_shape: tuple[int, ...], padding: str):  # noqa: super not called
        self._parts = host_tensor_descriptor.parameters(element, len(block_shape))
        self.base, self.block_shape, self.padding = self._parts[0], tuple(block_shape), padding
        self.order = tuple(reversed(range(len(block_shape))))


def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero") -> tensor_descriptor:
    """A descriptor of the tensor at ``base`` with ``shape`` and ``strides`` (in elements; the last
    stride 1) whose accesses move ``block_shape`` blocks."""
    base = bp._unwrap(base)
    if not isinstance(base, bp._core().tensor) or not base.dtype.is_ptr() or base.shape != ():
        raise SemanticError("tl.make_tensor_descriptor: base must be a scalar pointer, got "
                            f"{getattr(base, 'dtype', type(base).__name__)}")
    block = bp._static_list(block_shape, "block_shape")
    rank = len(block)
    shape_ = bp._scalars(shape, False, "shape")
    strides_ = bp._scalars(strides, True, "strides")
    if not 1 <= rank <= MAX_RANK:
        raise SemanticError(f"tl.make_tensor_descriptor: expected 1 to {MAX_RANK} dimensions, got {rank}")
    if len(shape_) != rank or len(strides_) != rank:
        raise SemanticError(f"tl.make_tensor_descriptor: shape, strides and block_shape must have the same length, "
                            f"got {len(shape_)}, {len(strides_)} and {rank}")
    for s in block:
        if s <= 0 or s & (s - 1):
            raise SemanticError(f"tl.make_tensor_descriptor: block_shape elements must be powers of two, got {block}")
    last = bp._unwrap(strides)
    last = bp._unwrap(last[-1] if isinstance(last, (tuple, list)) else last)
    if not isinstance(last, int) or last != 1:
        shown = "a value known at run time" if isinstance(last, bp._core().tensor) else repr(last)
        raise SemanticError(f"tl.make_tensor_descriptor: the last dimension must be contiguous (stride 1, a "
                            f"constant), got {shown}")
    elem = base.dtype.element_ty
    size = max(1, elem.primitive_bitwidth // 8)
    if block[-1] * size < MIN_ROW_BYTES:
        raise SemanticError(f"tl.make_tensor_descriptor: Descriptor block shape must have at least {MIN_ROW_BYTES} "
                            f"bytes in the last dimension, got {block[-1]} x {size} = {block[-1] * size} bytes; "
                            "widen block_shape[-1]")
    pad = bp.padding(padding_option) or "zero"
    if pad == "nan" and not elem.is_floating():
        raise SemanticError(f"tl.make_tensor_descriptor: padding \"nan\" needs a floating-point tensor, got {elem}")
    shape_ = [semantic.cast(s, T.int64) for s in shape_]
    return tensor_descriptor(base, shape_, strides_, tuple(block), pad)


def load_tensor_descriptor(desc, offsets):
    """``desc.load(offsets)``."""
    return _descriptor(desc, "tl.load_tensor_descriptor").load(offsets)


def store_tensor_descriptor(desc, offsets, value) -> None:
    """``desc.store(offsets, value)``."""
    _descriptor(desc, "tl.store_tensor_descriptor").store(offsets, value)


def _descriptor(desc, what: str) -> tensor_descriptor:
    desc = bp._unwrap(desc)
    if not isinstance(desc, tensor_descriptor):
        raise SemanticError(f"{what} expects a tensor descriptor (tl.make_tensor_descriptor), got "
                            f"{getattr(desc, 'dtype', type(desc).__name__)}")
    return desc
