"""``tl.extra.cuda``: ``libdevice`` under the name Triton's CUDA backend gives it."""

from . import libdevice

__all__ = ["libdevice"]
