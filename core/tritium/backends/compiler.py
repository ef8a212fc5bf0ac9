"""``GPUTarget`` where Triton's code imports it from (``triton.backends.compiler``)."""

from ..target import GPUTarget

__all__ = ["GPUTarget"]
