"""Minimal NVPTX ``DeviceHooks`` for testing core's per-thread code generator without a GPU (the
nvptx target has the real ones): nvvm special registers, the CTA barrier, butterfly shuffles and
``ex2.approx`` for ``exp``."""

from __future__ import annotations

import math
from typing import Sequence

from llvmlite import binding as llvm
from llvmlite import ir as ll

from tritium.codegen import intrinsics
from tritium.codegen.device import DeviceHooks

I32 = ll.IntType(32)
TRIPLE = "nvptx64-nvidia-cuda"


class NvptxTestHooks(DeviceHooks):
    warp_size = 32

    def kernel(self, module: ll.Module, name: str, params: list[ll.Type], num_threads: int) -> ll.Function:
        fn = ll.Function(module, ll.FunctionType(ll.VoidType(), params), name)
        fn.calling_convention = "ptx_kernel"
        return fn

    def _sreg(self, b: ll.IRBuilder, name: str) -> ll.Value:
        return intrinsics.call(b, f"llvm.nvvm.read.ptx.sreg.{name}", [], ret=I32, overloads=[])

    def thread_id(self, b: ll.IRBuilder) -> ll.Value:
        return self._sreg(b, "tid.x")

    def program_id(self, b: ll.IRBuilder, axis: int) -> ll.Value:
        return self._sreg(b, "ctaid." + "xyz"[axis])

    def num_programs(self, b: ll.IRBuilder, axis: int) -> ll.Value:
        return self._sreg(b, "nctaid." + "xyz"[axis])

    def barrier(self, b: ll.IRBuilder) -> None:
        intrinsics.call(b, "llvm.nvvm.barrier.cta.sync.aligned.all", [ll.Constant(I32, 0)], ret=ll.VoidType(),
                        overloads=[])

    def shuffle_xor(self, b: ll.IRBuilder, value: ll.Value, lane_mask: int) -> ll.Value:
        args = [ll.Constant(I32, -1), value, ll.Constant(I32, lane_mask), ll.Constant(I32, 0x1F)]
        return intrinsics.call(b, "llvm.nvvm.shfl.sync.bfly.i32", args, ret=I32, overloads=[])

    def call(self, builder: ll.IRBuilder, fn: str, args: Sequence[ll.Value]) -> ll.Value:
        if fn == "exp" and str(args[0].type) == "float":
            scaled = builder.fmul(args[0], ll.Constant(ll.FloatType(), 1 / math.log(2)))
            return intrinsics.call(builder, "llvm.nvvm.ex2.approx.f", [scaled], overloads=[])
        return super().call(builder, fn, args)


def target_machine() -> llvm.TargetMachine:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm.Target.from_triple(TRIPLE).create_target_machine(cpu="sm_90", features="+ptx84", opt=3)


def to_ptx(llvm_ir: str) -> str:
    """Parse, verify, optimise and compile LLVM IR to PTX."""
    module = llvm.parse_assembly(llvm_ir)
    module.verify()
    tm = target_machine()
    passes = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=3))
    passes.getModulePassManager().run(module, passes)
    return tm.emit_assembly(module)
