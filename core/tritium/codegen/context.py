"""``KernelContext``: what a target's hooks may read about the kernel being generated.

Both generators set it as ``hooks.kernel`` before they emit a kernel's body, so a hook reaches the
kernel's arguments, its program ids and its options without digging them out of the IR builder.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from llvmlite import ir as ll


@dataclasses.dataclass(frozen=True)
class KernelContext:
    #: the kernel's name
    name: str
    #: the LLVM function being emitted: the kernel (per-thread generator) or the internal program
    #: body that the target's entry calls (whole-block generator)
    function: ll.Function
    #: the kernel's arguments as LLVM values, in its signature's order (constexprs excluded)
    args: tuple[ll.Value, ...]
    #: the compile options the generator was given
    num_warps: int
    debug: bool
    #: ``program_id(b, axis)``: the program's id along ``axis`` (0, 1, 2) as an i32 at ``b``
    program_id: Callable[[ll.IRBuilder, int], ll.Value]
