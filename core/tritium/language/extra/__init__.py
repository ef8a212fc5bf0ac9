"""``tl.extra``: Triton's namespace of vendor libraries. ``tl.extra.libdevice`` (also spelt
``tl.extra.cuda.libdevice``, ``from tritium.language.extra import libdevice``) has the libdevice
functions that every tritium target computes; see ``libdevice``."""

from . import cuda, libdevice

__all__ = ["cuda", "libdevice"]
