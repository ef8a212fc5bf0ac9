"""``CpuHooks``: the host CPU's part in core's whole-block code generation (``tritium.codegen.block``).

Chunks fill the host's widest vector registers; a kernel's entry runs a share of the grid on each
worker thread (``abi``); loops check the Ctrl-C flag (``signals``); math is core's vector math.
"""

from __future__ import annotations

import functools

from llvmlite import binding as llvm
from llvmlite import ir as ll
from tritium.codegen.block.vecmath import VectorMathHooks

from . import abi


@functools.cache
def host_vector_bits() -> int:
    """Width of the host's widest SIMD registers that LLVM will use: 512, 256 or 128 bits."""
    features = llvm.get_host_cpu_features()
    if features.get("avx512f"):
        return 512
    if features.get("avx2"):
        return 256
    return 128


class CpuHooks(VectorMathHooks):
    target_name = "cpu"

    def __init__(self, fp_fusion: bool = False) -> None:
        self.vector_bits = host_vector_bits()
        self.fp_flags = ("contract",) if fp_fusion else ()

    def entry(self, module: ll.Module, body: ll.Function, n_args: int, debug: bool) -> ll.Function:
        """``<kernel>_grid``, which worker threads call to claim and run programs (``abi``)."""
        return abi.emit_grid_entry(module, body, n_args, debug)

    def interrupted(self, b: ll.IRBuilder, module: ll.Module) -> ll.Value:
        return abi.interrupted(b, module)
