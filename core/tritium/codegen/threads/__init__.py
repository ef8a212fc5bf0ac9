"""Core's per-thread code generator for GPU-like targets (the ``llir`` stage of a GPU target).

``generate`` lowers a module of the ``tile-layout`` stage, where every tensor has a distributed
layout, to LLVM IR of one kernel run by ``num_warps * warp_size`` threads per program; the target
supplies its ids, barriers, shuffles, memory accesses and math through ``DeviceHooks``.
``scratch_bytes`` says how much shared memory an op uses, for the layout stage to allocate.
"""

from .scratch import scratch_bytes
from .walker import generate

__all__ = ["generate", "scratch_bytes"]
