"""Kernels that use Python debugging features the interpreter supports."""

import tritium
import tritium.language as tl


@tritium.jit
def print_kernel(x_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK))
    print("pid", pid, x)
