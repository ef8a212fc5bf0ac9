"""A kernel taking host tensor descriptors (tests/test_host_descriptor.py; the nvptx launch-path tests)."""

import tritium
import tritium.language as tl


@tritium.jit
def scale_kernel(src, dst, factor, BM: tl.constexpr, BN: tl.constexpr):
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    dst.store([om, on], src.load([om, on]) * factor)
