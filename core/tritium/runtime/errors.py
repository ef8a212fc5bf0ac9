"""``tritium.runtime.errors``: where Triton keeps ``OutOfResources`` (``triton.runtime.errors``)."""

from ..errors import OutOfResources, TritonError

__all__ = ["OutOfResources", "TritonError"]
