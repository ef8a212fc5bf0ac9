"""The AMDGPU compiler half: the ``tile-layout``, ``llir``, ``amdgcn`` and ``hsaco`` stages.

``tile-layout`` and ``llir`` are core's GPU layout pass and per-thread code generator with
``AmdgpuHooks`` at the arch's wavefront size; ``amdgcn`` optimises at -O3 (without the vectorizers:
one lane per thread) and prints the arch's assembly, ``hsaco`` emits the object of the same
optimised module and links it with ``ld.lld`` into a code object, whose metadata note gives the
registers, spills and LDS the metadata reports. ROCm's OCML and OCKL are linked into kernels that
call them (``device_libs``), before optimisation. LLVM runs in a worker process
(``tritium.passes.llvm_worker``), so an LLVM abort is a ``CompilationError``.
"""

from __future__ import annotations

import functools
import re
import threading

from llvmlite import binding as llvm
from tritium.errors import OutOfResources
from tritium.passes import llvm_worker
from tritium.passes.llvm_worker import OPT_LEVEL

from . import arch as archs
from . import code_object, device_libs, toolchain

TRIPLE = "amdgcn-amd-amdhsa"
_LLVM = threading.Lock()  # llvmlite target machines are not thread-safe


@functools.cache
def target_machine(arch: str) -> llvm.TargetMachine:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=arch, opt=OPT_LEVEL, reloc="pic")


@functools.cache
def datalayout(arch: str) -> str:
    return str(target_machine(arch).target_data)


def hooks_for(ctx, shared_bytes: int = 0):
    from .hooks import AmdgpuHooks

    arch = ctx.target.arch(ctx.options)
    return AmdgpuHooks(arch.wave, fp_fusion=ctx.options.enable_fp_fusion, shared_bytes=shared_bytes,
                       matrix=arch.matrix, matrix_size=ctx.options.matrix_instr_nonkdim or 16,
                       device_library=device_libs.folder() is not None)


def tile_layout(module, ctx):
    """Core's GPU layouts for the arch's wavefronts, ``tl.dot`` on its matrix cores where it has them,
    pipelines as deep as ``num_stages`` asks where their rings fit the arch's LDS (shallower where not)."""
    from tritium.passes.gpu_layout import layout_stage  # imports the MLIR bindings: only when compiling

    arch = ctx.target.arch(ctx.options)
    return layout_stage(hooks_for(ctx), max_shared=arch.lds)(module, ctx)


def llir(module, ctx) -> str:
    """Core's per-thread code generator with the AMDGPU hooks: one ``amdgpu_kernel`` function."""
    from tritium.codegen.threads import generate

    arch = ctx.target.arch(ctx.options)
    ctx.metadata.update(arch=arch.name, wavefront_size=arch.wave)
    shared = ctx.metadata.get("shared", 0)
    if shared > arch.lds:
        raise OutOfResources(shared, arch.lds, "shared memory", ctx.signature.name)
    return generate(module, hooks_for(ctx, shared), TRIPLE, datalayout(arch.name), ctx.options.num_warps,
                    ctx.options.debug)


_OCKL = re.compile(r'@"?__ockl_')


def needs_assembler(llir_text: str) -> bool:
    """Whether the module, with the device library functions it calls, holds inline assembly, whose
    object llvmlite cannot emit (``toolchain.assemble``)."""
    return bool(toolchain.INLINE_ASSEMBLY.search(llir_text)) or (bool(_OCKL.search(llir_text)) and
                                                                  device_libs.has_assembly())


@functools.lru_cache(maxsize=8)
def machine_code(llir_text: str, arch: str, kernel: str) -> tuple[str, bytes]:
    """The arch's assembly and object of the LLVM IR, with the device library functions it calls,
    optimised once for both (one lane per thread: nothing to vectorize)."""
    with _LLVM:
        tm = target_machine(arch)  # made here, so every worker (and later compile) has it
    link_libraries = functools.partial(device_libs.link, arch=arch, wave=archs.check_arch(arch).wave)
    if needs_assembler(llir_text):
        (assembly,) = llvm_worker.machine_code(llir_text, tm, kernel, "amdgcn", vectorize=False,
                                               prepare=link_libraries)
        return assembly, toolchain.assemble(assembly, arch, kernel)
    return llvm_worker.machine_code(llir_text, tm, kernel, "amdgcn", vectorize=False, outputs=("assembly", "object"),
                                    prepare=link_libraries)


def amdgcn(llir_text: str, ctx) -> str:
    arch = ctx.metadata.setdefault("arch", ctx.target.arch(ctx.options).name)
    return machine_code(llir_text, arch, ctx.signature.name)[0]


def hsaco(_assembly: str, ctx) -> bytes:
    """The code object: the object of the ``llir`` stage's module linked by ``ld.lld``; its metadata
    note's registers, spills and LDS go into the compile metadata."""
    arch = ctx.metadata.setdefault("arch", ctx.target.arch(ctx.options).name)
    ctx.metadata.setdefault("num_warps", ctx.options.num_warps)
    ctx.metadata.setdefault("shared", 0)
    name = ctx.signature.name
    binary = toolchain.link(machine_code(ctx.outputs["llir"], arch, name)[1], name)
    ctx.metadata.update(code_object.resources(binary, name))
    ctx.metadata["binary_format"] = "hsaco"
    return binary
