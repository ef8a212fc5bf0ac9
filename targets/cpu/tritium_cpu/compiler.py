"""The CPU compiler half: host target machine and the ``llir``, ``asm`` and ``obj`` stages."""

from __future__ import annotations

import contextlib
import functools
import sys
import threading

from llvmlite import binding as llvm
from tritium.passes.llvm_worker import OPT_LEVEL
from tritium.passes.llvm_worker import machine_code as machine_code_of

_LLVM = threading.Lock()  # the shared machine and LLVM's options are made by one thread at a time


def new_host_target_machine() -> llvm.TargetMachine:
    """A target machine for this host's CPU and features (kernels JIT-load in this process).

    An MCJIT engine takes ownership of (and frees) the machine it is given: each engine needs its
    own; compilation shares ``host_target_machine()``. The code model is large: the JIT puts code
    wherever the process has room, which in a large process (torch and CUDA loaded) can be more
    than 2 GB from the symbols it calls, beyond the small model's 32-bit offsets (LLVM's runtime
    linker then aborts the process).
    """
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                        features=llvm.get_host_cpu_features().flatten(),
                                        opt=OPT_LEVEL, reloc="pic", codemodel="large")


host_target_machine = functools.cache(new_host_target_machine)


@functools.cache
def _llvm_options() -> None:
    """Process-wide LLVM options, set once (LLVM counts each occurrence of an option).

    The CRC recogniser of loop-idiom (LLVM 21+) walks xor/select recurrences without memoising and
    takes exponential time on the xor networks of ``tl.sort`` (a sort of 64 elements at 8 lanes:
    minutes); no kernel has a bitwise CRC loop worth rewriting into a table lookup.
    """
    llvm.set_option("tritium", "--disable-loop-idiom-hashrecognize")


@functools.cache
def host_triple_and_layout() -> tuple[str, str]:
    """Triple and data layout written into the LLVM IR text, so a dumped ``.ll`` is self-contained."""
    return llvm.get_process_triple(), str(host_target_machine().target_data)


@functools.lru_cache(maxsize=8)
def machine_code(llir: str, kernel: str) -> tuple[str, bytes]:
    """Host assembly and object of LLVM IR text, optimised at -O3 once for both, in a worker process
    (``tritium.passes.llvm_worker``: an LLVM abort is a ``CompilationError``)."""
    with _LLVM:
        tm = host_target_machine()  # made here, so every worker (and later compile) has it
        _llvm_options()
    return machine_code_of(llir, tm, kernel, "asm", vectorize=True, outputs=("assembly", "object"))


def llir(module, ctx) -> str:
    """Lower tile IR with CPU layouts to LLVM IR with core's whole-block generator (SIMD chunk loops,
    kernel entry ``<name>_grid``)."""
    from tritium.codegen.block.kernel import generate  # imports the MLIR bindings: only when compiling

    from .hooks import CpuHooks

    with deep_recursion(CODEGEN_RECURSION):
        return generate(module, CpuHooks(fp_fusion=ctx.options.enable_fp_fusion), *host_triple_and_layout(),
                        debug=ctx.options.debug)


#: how deep the code generator's expression evaluation may recurse: a sort's network over a block
#: of Triton's largest size nests a few thousand operations (Python's default is 1000)
CODEGEN_RECURSION = 50_000


@contextlib.contextmanager
def deep_recursion(limit: int):
    """Python's recursion limit raised to at least ``limit`` while the body runs."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


def asm(llir_text: str, ctx) -> str:
    """Optimise the LLVM IR at -O3 and print host assembly (the worker lets other threads compile
    while it waits: not under ``_LLVM``)."""
    return machine_code(llir_text, ctx.signature.name)[0]


def obj(_assembly: str, ctx) -> bytes:
    """Compile the ``llir`` stage's LLVM IR (optimised once, shared with ``asm``) to a host object."""
    return machine_code(ctx.outputs["llir"], ctx.signature.name)[1]
