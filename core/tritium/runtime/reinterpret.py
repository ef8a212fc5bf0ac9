"""``tritium.reinterpret``: an array seen as holding another element type, as Triton's
``triton.reinterpret`` does, for element types that numpy and torch lack (``tl.float8e4nv`` bits in
a ``uint8`` array) or to read one type's bits as another's."""

from __future__ import annotations

from typing import Any


class TensorWrapper:
    """``base`` with element type ``dtype`` (a tritium dtype); everything else is ``base``'s. The
    methods that make a new array of the same kind (``new_empty``, ``clone``, ``to``, ``cpu``) wrap
    it alike, as Triton's do, so the copy keeps the element type."""

    def __init__(self, base: Any, dtype: Any):
        self.base, self.dtype = base, dtype

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    def new_empty(self, *sizes: Any, **kwargs: Any) -> "TensorWrapper":
        return TensorWrapper(self.base.new_empty(*sizes, **kwargs), self.dtype)

    def clone(self) -> "TensorWrapper":
        return TensorWrapper(self.base.clone(), self.dtype)

    def to(self, *args: Any, **kwargs: Any) -> "TensorWrapper":
        return TensorWrapper(self.base.to(*args, **kwargs), self.dtype)

    def cpu(self) -> "TensorWrapper":
        return TensorWrapper(self.base.cpu(), self.dtype)

    def copy_(self, other: Any) -> "TensorWrapper":
        self.base.copy_(other.base if isinstance(other, TensorWrapper) else other)
        return self

    def __repr__(self) -> str:
        return f"TensorWrapper[{self.dtype}]({self.base!r})"


def reinterpret(tensor: Any, dtype: Any) -> Any:
    """``tensor`` (a torch tensor, numpy array or another wrapper) seen as holding ``dtype``
    elements (a tritium dtype, or a torch or numpy one, as Triton's tests pass): kernels see
    pointers to ``dtype``. Reinterpreting a wrapper back to its array's own type gives the array."""
    from ..language.dtypes import dtype as tl_dtype
    from ..language.dtypes import from_foreign

    if not isinstance(dtype, tl_dtype):
        if isinstance(dtype, type) and dtype.__module__ == "numpy":  # np.int8
            found = from_foreign(dtype.__name__)
        else:  # np.dtype("int8"), torch.int8
            found = from_foreign(str(dtype)) if "dtype" in type(dtype).__name__.lower() else None
        if found is None:
            raise TypeError(f"reinterpret takes a dtype such as tl.float8e5 or torch.int8, not {dtype!r}")
        dtype = found
    if isinstance(tensor, TensorWrapper):
        tensor = tensor.base
    if not (hasattr(tensor, "data_ptr") or hasattr(tensor, "__array_interface__")
            or hasattr(tensor, "__cuda_array_interface__")):
        raise TypeError(f"reinterpret takes an array (a torch tensor or numpy array), not {type(tensor).__name__}")
    same = str(getattr(tensor, "dtype", "")).rsplit(".", 1)[-1] in (dtype.name, repr(dtype)[3:])
    return tensor if same else TensorWrapper(tensor, dtype)
