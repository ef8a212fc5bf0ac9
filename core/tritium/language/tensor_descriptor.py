"""Tensor descriptors made in the kernel: ``tl.make_tensor_descriptor``, ``desc.load``/``desc.store``
and the descriptor atomics, ``tl.load_tensor_descriptor``/``tl.store_tensor_descriptor``, with
Triton 3.6's checks (1 to 5 dimensions, a last stride of 1, at least 16 bytes in a block row).

A descriptor is a block pointer without offsets (``language.block_ptr``), so the frontend carries it
through loops, ``if``s and ``@jit`` calls the same way: each access names its offsets, reads the
padding (``"zero"`` or ``"nan"``) outside the tensor in every dimension and writes only inside it.
NVIDIA GPUs run Triton's descriptors on TMA; here they are masked loads and stores of the same
blocks on every target. Descriptors passed from the host (``triton.tools.tensor_descriptor``) and
the gather/scatter of Blackwell's TMA are not supported yet.
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
        """``value`` (the block's shape and type) written at ``offsets`` where it lies inside the tensor."""
        bp.store(self._at(offsets, "desc.store"), value, None, list(range(len(self.block_shape))))

    def _atomic(self, op: str, offsets, value) -> None:
        ptrs, inside = bp._pointers_and_mask(self._at(offsets, f"desc.atomic_{op}"), list(range(len(self.block_shape))))
        getattr(atomics, f"atomic_{op}")(ptrs, value, mask=inside)

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
        from ..errors import NotImplementedYet

        raise NotImplementedYet("tensor descriptor gather (Blackwell's TMA gather) is not supported yet")

    def scatter(self, *args):
        from ..errors import NotImplementedYet

        raise NotImplementedYet("tensor descriptor scatter (Blackwell's TMA scatter) is not supported yet")

    def __repr__(self) -> str:
        return f"tensor_descriptor(<{list(self.block_shape)}, {self.dtype}>)"


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
        raise SemanticError(f"tl.make_tensor_descriptor: a block row must hold at least {MIN_ROW_BYTES} bytes, got "
                            f"{block[-1]} x {size} = {block[-1] * size} bytes; widen block_shape[-1]")
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
