"""``CpuHooks``: the host CPU's part in core's whole-block code generation (``tritium.codegen.block``).

Chunks fill the host's widest vector registers; a kernel's entry runs a share of the grid on each
worker thread (``abi``); loops check the Ctrl-C flag (``signals``); math is core's vector math, which
scales by powers of two with ``vscalefps`` on AVX-512.
"""

from __future__ import annotations

import functools
from typing import Callable

from llvmlite import binding as llvm
from llvmlite import ir as ll
from tritium.codegen import intrinsics
from tritium.codegen.block.vecmath import VectorMathHooks

from . import abi


#: AVX-512's ``vscalefps`` (``x * 2**floor(n)``, rounded once) by vector width: intrinsic, mask type
#: and whether it takes a rounding mode; the narrower ones need AVX512VL
_SCALEF = {16: ("llvm.x86.avx512.mask.scalef.ps.512", ll.IntType(16), True),
           8: ("llvm.x86.avx512.mask.scalef.ps.256", ll.IntType(8), False),
           4: ("llvm.x86.avx512.mask.scalef.ps.128", ll.IntType(8), False)}
_CURRENT_ROUNDING = 4


@functools.cache
def host_features() -> dict[str, bool]:
    """The host CPU's features as LLVM reports them (a call of over 100 us, so asked once)."""
    return dict(llvm.get_host_cpu_features())


@functools.cache
def host_vector_bits() -> int:
    """Width of the host's widest SIMD registers that LLVM will use: 512, 256 or 128 bits."""
    features = host_features()
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

    def ldexp(self, ty: ll.Type) -> Callable[[ll.IRBuilder, ll.Value, ll.Value], ll.Value] | None:
        """``vscalefps`` on an AVX-512 host, for f32 vectors of 16 lanes (8 and 4 with AVX512VL)."""
        if not (isinstance(ty, ll.VectorType) and isinstance(ty.element, ll.FloatType) and ty.count in _SCALEF):
            return None
        features = host_features()
        if not features.get("avx512f") or (ty.count < 16 and not features.get("avx512vl")):
            return None
        name, mask, rounding = _SCALEF[ty.count]
        extra = [ll.Constant(mask, -1)] + ([ll.Constant(ll.IntType(32), _CURRENT_ROUNDING)] if rounding else [])

        def scale(b: ll.IRBuilder, x: ll.Value, n: ll.Value) -> ll.Value:
            fn = intrinsics.declare(b.module, name, ty, [ty, ty, ty] + [c.type for c in extra])
            return b.call(fn, [x, n, x] + extra)
        return scale

    def interrupted(self, b: ll.IRBuilder, module: ll.Module) -> ll.Value:
        return abi.interrupted(b, module)
