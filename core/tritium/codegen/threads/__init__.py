"""Core's per-thread code generator for GPU-like targets (the ``llir`` stage of a GPU target).

``generate`` lowers a module of the ``tile-layout`` stage, where every tensor has a distributed
layout, to LLVM IR of one kernel run by ``num_warps * warp_size`` threads per program; the target
supplies its ids, barriers, shuffles, memory accesses, printing and math through ``DeviceHooks``.

What it expects of the layout stage (it reports a clear error otherwise):

- the operands of elementwise ops, ``tile.addptr``, ``tile.load`` and ``tile.store`` are
  distributed as the op's result (or stored value); ``tile.broadcast`` keeps its encoding;
  ``tile.expand_dims`` at ``axis`` reads ``#tile.slice<axis, result layout>``; ``tile.reduce``
  along ``axis`` yields ``#tile.slice<axis, source layout>`` from operands of one distribution;
  ``tile.scan`` has operands and results of one distribution in which every thread holds the whole
  scan axis; ``tile.dot`` yields its accumulator's layout (its operands may have any); layouts are
  made for this warp size and ``num_warps``;
- every op for which ``scratch_bytes`` is not 0 has a ``tile.shared_offset`` (16-byte aligned
  offsets let conversions use vector accesses). The op itself waits at a barrier between its
  writes and its reads; the stage puts a ``tile.barrier`` before an op whose scratch another op
  (or the same op, in an earlier loop iteration) may still be reading.
"""

from ...layout.scratch import scratch_bytes
from .walker import generate, generate_module

__all__ = ["generate", "generate_module", "scratch_bytes"]
