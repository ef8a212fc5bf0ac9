"""``BlockHooks``: what the whole-block code generator asks of its target.

The generator (``kernel.KernelCodegen``) writes one program as one sequential function over SIMD
chunks (see the package's docstring). It needs three things the target decides: how wide its
vector registers are, the exported entry that runs the program body over a grid, and whether
loops should check for an interruption. Math and float conversions come from ``MathHooks``
(``vecmath.VectorMathHooks`` computes exp and log in vector code). Printing and assertions call
two external functions the target's runtime provides (``PRINT_SYMBOL``, ``ASSERT_SYMBOL``, with
the C signatures given below).
"""

from __future__ import annotations

from llvmlite import ir as ll

from ..math import MathHooks

#: ``print(prefix, type, shape, values, hex, operand, count, x, y, z)``, which the target's runtime
#: provides: the elements at ``values`` (row-major) of operand ``operand`` of ``count``; ``type`` is
#: its signature spelling (``i32``), ``shape`` ``d0,d1`` (empty for a scalar); ``values`` is null
#: when there is nothing to print. Strings are NUL-terminated, the rest i32.
PRINT_SYMBOL = "tritium_print"
#: ``assert(kernel, file, line, message, shape, x, y, z, index)``: element ``index`` (i64,
#: row-major) of the condition of shape ``shape`` failed in program (x, y, z); the runtime reports
#: it and stops the launch
ASSERT_SYMBOL = "tritium_assert"
#: a global the code generator defines in kernels that print or assert
MARKER_SYMBOL = "tritium_debug_ops"


class BlockHooks(MathHooks):
    """A target's part in whole-block code generation; subclass per target."""

    #: bits of the vector registers a chunk fills (512 for AVX-512, 128 for NEON or wasm SIMD128)
    vector_bits: int = 128
    #: the target's name, in errors about what it cannot compile
    target_name: str = "whole-block"

    def entry(self, module: ll.Module, body: ll.Function, n_args: int, debug: bool) -> ll.Function:
        """Emit the function the target's runtime calls to run ``body``, the program of one
        kernel: ``body(*args, pid_x, pid_y, pid_z, nprog_x, nprog_y, nprog_z[, debug_area])`` with
        ``n_args`` kernel arguments first (``debug``: the debug area pointer last, see
        ``debug_area``). The cpu's runs a share of the grid on each worker thread."""
        raise NotImplementedError

    def interrupted(self, b: ll.IRBuilder, module: ll.Module) -> ll.Value | None:
        """An i1 that is true when the launch should stop (Ctrl-C on the host): the program then
        returns at the next loop iteration. None (the default): loops do not check."""
        return None
