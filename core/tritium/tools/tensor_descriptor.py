"""``TensorDescriptor``: a tensor described on the host for a kernel to read and write in blocks
(Triton's ``triton.tools.tensor_descriptor``), with Triton's checks.

A kernel parameter given one is a ``tl.tensor_descriptor`` inside the kernel (``desc.load``,
``desc.store``, the atomics, ``gather``/``scatter``). It reaches the kernel as its parts, the base
pointer, the shape (int32) and the strides but the last (int64; the last is the constant 1), so
every target takes it without knowing descriptors (``runtime.descriptors``). NVIDIA GPUs run
Triton's descriptors on TMA; here they are masked loads and stores of the same blocks.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from ..errors import ArgumentError

MAX_RANK = 5
#: Triton's largest block (``TRITON_MAX_TENSOR_NUMEL``)
MAX_NUMEL = 1 << 20


@dataclasses.dataclass
class TensorDescriptor:
    """``block_shape`` blocks of the tensor at ``base`` (an array: numpy, torch, CuPy, ...) with
    ``shape`` and ``strides`` in elements; ``padding`` ("zero" or "nan") is what loads read outside it."""

    base: Any
    shape: Sequence[int]
    strides: Sequence[int]
    block_shape: Sequence[int]
    padding: str = "zero"

    def __post_init__(self):
        self.shape, self.strides = [int(s) for s in self.shape], [int(s) for s in self.strides]
        self.block_shape = list(self.block_shape)
        rank = len(self.shape)
        if len(self.strides) != rank or len(self.block_shape) != rank:
            raise ArgumentError(f"TensorDescriptor: rank mismatch: shape {self.shape}, strides {self.strides} and "
                                f"block_shape {self.block_shape} must have the same length")
        if not 1 <= rank <= MAX_RANK:
            raise ArgumentError(f"TensorDescriptor: the rank must be 1 to {MAX_RANK}, got {rank}")
        address = array_address(self.base)
        if address is not None and address % 16:
            raise ArgumentError(f"TensorDescriptor: base must be 16-byte aligned, its address is {address:#x}")
        numel = 1
        for i, d in enumerate(self.block_shape):
            if not isinstance(d, int) or isinstance(d, bool):
                raise ArgumentError(f"TensorDescriptor: block_shape element {i} must be an int, got {d!r}")
            if d <= 0 or d & (d - 1):
                raise ArgumentError(f"TensorDescriptor: block_shape element {i} must be a power of 2, got {d}")
            numel *= d
        if numel > MAX_NUMEL:
            raise ArgumentError(f"TensorDescriptor: a block of {numel} elements exceeds the largest, {MAX_NUMEL}")
        size = element_bytes(self.base)
        for s in self.strides[:-1]:
            if s * size % 16:
                raise ArgumentError(f"TensorDescriptor: strides must be 16-byte aligned: stride {s} of "
                                    f"{size}-byte elements is {s * size} bytes")
        if self.strides[-1] != 1:
            raise ArgumentError(f"TensorDescriptor: the last dimension must be contiguous (stride 1), got strides "
                                f"{self.strides}")
        if self.padding not in ("zero", "nan"):
            raise ArgumentError(f"TensorDescriptor: padding must be \"zero\" or \"nan\", got {self.padding!r}")
        if self.padding == "nan" and not _is_floating(self.base):
            raise ArgumentError("TensorDescriptor: padding \"nan\" needs a floating-point tensor, got "
                                f"{self.base.dtype}")

    @staticmethod
    def from_tensor(tensor: Any, block_shape: Sequence[int], padding: str = "zero") -> "TensorDescriptor":
        """The descriptor of the whole of ``tensor``, with its own shape and strides."""
        return TensorDescriptor(tensor, list(tensor.shape), element_strides(tensor), block_shape, padding)


def element_strides(array: Any) -> list[int]:
    """The strides of ``array`` in elements: torch's ``stride()``, or numpy's and CuPy's byte strides."""
    stride = getattr(array, "stride", None)
    if callable(stride):
        return list(stride())
    strides = getattr(array, "strides", None)
    if strides is None:
        raise ArgumentError(f"TensorDescriptor.from_tensor: {type(array).__name__} has no strides; pass an array "
                            "(numpy, torch, CuPy) or give shape and strides to TensorDescriptor")
    size = element_bytes(array)
    return [s // size for s in strides]


def element_bytes(array: Any) -> int:
    dtype = getattr(array, "dtype", None)
    size = getattr(dtype, "itemsize", None)
    if not isinstance(size, int):
        raise ArgumentError(f"TensorDescriptor: base must be an array with a dtype, got {type(array).__name__}")
    return size


def _is_floating(array: Any) -> bool:
    from ..language import dtypes as T

    t = T.from_foreign(str(array.dtype))
    return t is not None and t.is_floating()


def array_address(array: Any) -> int | None:
    """The address of ``array``'s first element where the array says it without a device call
    (torch, numpy, ``__cuda_array_interface__``); None for a torch fake tensor or another kind."""
    kind = type(array)
    if f"{kind.__module__}.{kind.__name__}" in ("torch.FakeTensor", "torch.FunctionalTensor",
                                                "torch._subclasses.fake_tensor.FakeTensor"):
        return None
    if callable(getattr(array, "data_ptr", None)):  # first: torch refuses its interface to tensors needing grad
        return int(array.data_ptr())
    for attr in ("__array_interface__", "__cuda_array_interface__"):
        iface = getattr(array, attr, None)
        if isinstance(iface, dict):
            return int(iface["data"][0])
    return None
