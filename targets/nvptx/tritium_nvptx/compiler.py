"""The NVPTX compiler half: the ``tile-layout``, ``llir``, ``ptx`` and ``cubin`` stages.

``tile-layout`` and ``llir`` are core's GPU layout pass and per-thread code generator with the
NVPTX hooks; ``ptx`` links libdevice when the kernel calls it, optimises at -O3 without the
vectorizers (SIMT code gains nothing from them) and emits PTX for the arch with llvmlite, in a worker
process (``tritium.passes.llvm_worker``); ``cubin`` assembles it with ptxas and records registers
and spills, or, without ptxas, passes the PTX on for the driver's JIT (``metadata["binary_format"] == "ptx"``).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import tempfile
import threading

from llvmlite import binding as llvm
from tritium.errors import TritiumError
from tritium.passes.llvm_worker import OPT_LEVEL, link_bitcode, machine_code
from tritium.runtime.compile_lock import COMPILE_LOCK

from . import toolchain

TRIPLE = "nvptx64-nvidia-cuda"
_LLVM = threading.Lock()  # llvmlite modules and target machines are not thread-safe


@functools.cache
def target_machine(arch: str, ptx: int) -> llvm.TargetMachine:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=arch, features=f"+ptx{ptx}", opt=OPT_LEVEL)


@functools.cache
def datalayout() -> str:
    """The NVPTX data layout (the same for every arch)."""
    return str(target_machine("sm_80", 70).target_data)


def tile_layout(module, ctx):
    """Core's GPU layouts for 32-thread warps, ``tl.dot`` on the arch's tensor cores where it can,
    host descriptors' blocks copied by TMA on sm_90 on: encodings, layout conversions, shared
    memory, barriers."""
    from tritium.passes.gpu_layout import layout_stage  # imports the MLIR bindings: only when compiling

    from .hooks import NvptxHooks

    hooks = NvptxHooks(arch=ctx.target.arch(ctx.options))
    return layout_stage(hooks)(module, ctx)


def llir(module, ctx) -> str:
    """Core's per-thread code generator with the NVPTX hooks: one ``ptx_kernel`` function."""
    from tritium.codegen.threads import generate

    from .hooks import NvptxHooks

    hooks = NvptxHooks(fp_fusion=ctx.options.enable_fp_fusion, arch=ctx.target.arch(ctx.options),
                       ftz=ctx.options.enable_reflect_ftz, maxnreg=ctx.options.maxnreg)
    return generate(module, hooks, TRIPLE, datalayout(), ctx.options.num_warps, ctx.options.debug)


def ptx(llir_text: str, ctx) -> str:
    """Link libdevice if the kernel calls it, optimise at -O3 and emit PTX for the options' arch (in a
    worker process: an LLVM abort is a ``CompilationError``)."""
    target = ctx.target
    arch = target.arch(ctx.options)
    version = target.ptx_version(arch)
    _launch_metadata(llir_text, ctx)
    ctx.metadata.update(arch=arch, ptx_version=f"{version // 10}.{version % 10}")
    with _LLVM:
        tm = target_machine(arch, version)  # made here, so every worker (and later compile) has it
    # not under _LLVM: the worker lets other threads compile while it waits (``runtime.compile_lock``);
    # one lane per thread: nothing to vectorize
    return machine_code(llir_text, tm, ctx.signature.name, "ptx", vectorize=False, prepare=link_libdevice)[0]


def _launch_metadata(llir_text: str, ctx) -> None:
    """What the launcher needs when the stages that record it did not run (a given ``llir`` text):
    the block size from the options; the shared-memory size cannot be recovered from LLVM IR."""
    ctx.metadata.setdefault("num_warps", ctx.options.num_warps)
    if "shared" not in ctx.metadata:
        if "@tritium_shared" in llir_text:
            raise TritiumError(f"kernel {ctx.signature.name}: the LLVM IR uses shared memory, whose size the "
                               "tile-layout stage records; start from the tile-layout stage (or an earlier one)")
        ctx.metadata["shared"] = 0


def link_libdevice(module: llvm.ModuleRef) -> None:
    """Link the libdevice functions ``module`` declares (``__nv_*``) into it (``link_bitcode``)."""
    wanted = [f.name for f in module.functions if f.is_declaration and f.name.startswith("__nv_")]
    if wanted:
        link_bitcode(module, _libdevice_bitcode(toolchain.require_libdevice(wanted)), "__nv_")


@functools.cache
def _libdevice_bitcode(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


_PTXAS_INFO = {"registers": r"Used (\d+) registers", "spills": r"(\d+) bytes spill stores",
               "spill_loads": r"(\d+) bytes spill loads", "static_shared": r"(\d+) bytes smem"}


def cubin(ptx_text: str, ctx) -> bytes:
    """Assemble the PTX with ptxas (registers and spills into the metadata); without ptxas, the PTX
    itself, for the driver to JIT-compile at load."""
    arch = ctx.metadata.setdefault("arch", ctx.target.arch(ctx.options))  # a given PTX text: from the options
    _launch_metadata("", ctx)
    path = ctx.target.assembler(arch)
    if path is None:
        ctx.metadata["binary_format"] = "ptx"
        return ptx_text.encode()
    with tempfile.TemporaryDirectory(prefix="tritium-nvptx-") as tmp:
        src, out = os.path.join(tmp, "kernel.ptx"), os.path.join(tmp, "kernel.cubin")
        with open(src, "w") as f:
            f.write(ptx_text)
        with COMPILE_LOCK.waiting():  # other threads compile while ptxas works
            run = subprocess.run([path, f"-arch={arch}", "-v", "-O3", src, "-o", out], capture_output=True, text=True)
        if run.returncode != 0:
            raise TritiumError(f"ptxas ({path}) rejected the PTX of kernel {ctx.signature.name} for {arch}:\n"
                               f"{run.stderr.strip() or run.stdout.strip()}")
        with open(out, "rb") as f:
            binary = f.read()
    info = run.stdout + run.stderr
    for key, pattern in _PTXAS_INFO.items():
        m = re.search(pattern, info)
        ctx.metadata[key] = int(m[1]) if m else 0
    ctx.metadata["binary_format"] = "cubin"
    return binary
