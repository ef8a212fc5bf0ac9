"""Core's whole-block code generator (``tritium.codegen.block``) serves any target through
``BlockHooks``, not only the cpu: a target written here, whose entry runs one program a call and
whose loops check nothing, compiles kernels with it; the host JIT-compiles the result and the
numbers match numpy."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from llvmlite import binding as llvm
from llvmlite import ir as ll
from tritium.codegen.block.kernel import generate
from tritium.codegen.block.layout import assign_layouts
from tritium.codegen.block.vecmath import VectorMathHooks
from tritium.errors import TritiumError
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.runtime.compiler import compile_specialized

from .kernels.basic import add_kernel
from .kernels.frontend_only import FrontendOnly

I32 = ll.IntType(32)


class OneProgramHooks(VectorMathHooks):
    """128-bit vectors; ``<kernel>_program(args..., pid)`` runs one program of a 1-D grid of ``n``."""

    vector_bits = 128
    target_name = "one-program"

    def __init__(self, programs: int):
        self.programs = programs

    def entry(self, module: ll.Module, body: ll.Function, n_args: int, debug: bool) -> ll.Function:
        params = list(body.function_type.args[:n_args]) + [I32]
        fn = ll.Function(module, ll.FunctionType(ll.VoidType(), params), f"{body.name}_program")
        b = ll.IRBuilder(fn.append_basic_block())
        one, zero = I32(1), I32(0)
        b.call(body, [*fn.args[:n_args], fn.args[n_args], zero, zero, I32(self.programs), one, one])
        b.ret_void()
        return fn


def _llir(kernel, signature, constants, hooks) -> str:
    asm = compile_specialized(kernel, FrontendOnly(), signature, constants, {}, {}).asm
    with tile.context():
        module = ir.Module.parse(asm["tile-opt"])
        assign_layouts(module, hooks.vector_bits)
        return generate(module, hooks, llvm.get_process_triple())


def test_another_target_compiles_and_runs_kernels_with_the_block_generator():
    n, block = 1000, 256
    programs = -(-n // block)
    text = _llir(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                 {"BLOCK": block}, OneProgramHooks(programs))
    assert "<4 x float>" in text  # chunks of the hooks' 128-bit vectors
    assert "tritium_cpu" not in text and "interrupt" not in text  # nothing of the cpu's ABI
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = llvm.parse_assembly(text)
    module.verify()
    engine = llvm.create_mcjit_compiler(module, llvm.Target.from_default_triple().create_target_machine())
    engine.finalize_object()
    run = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 3, ctypes.c_int32, ctypes.c_int32)(
        engine.get_function_address("add_kernel_program"))
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(n + 8, np.nan, np.float32)  # past n: untouched
    for pid in range(programs):
        run(x.ctypes.data, y.ctypes.data, out.ctypes.data, n, pid)
    np.testing.assert_array_equal(out[:n], x + y)
    assert np.isnan(out[n:]).all()


def test_what_the_block_generator_cannot_compile_names_the_target():
    with pytest.raises(TritiumError, match="the one-program target does not support op arith.ceildivsi yet"):
        with tile.context():
            module = ir.Module.parse("""
                module {
                  func.func public @bad(%n: i32) {
                    %c = arith.ceildivsi %n, %n : i32
                    return
                  }
                }""")
            generate(module, OneProgramHooks(1))


class ContextReadingHooks(OneProgramHooks):
    """Reads the kernel context in the entry: the generator set it for this kernel."""

    def entry(self, module: ll.Module, body: ll.Function, n_args: int, debug: bool) -> ll.Function:
        k = self.kernel
        assert (k.name, k.function, k.num_warps, k.debug) == ("add_kernel", body, 1, False)
        assert k.args == tuple(body.args[:n_args]) and len(k.args) == 4
        assert k.program_id(None, 2) is body.args[n_args + 2]  # the body's parameter: no code needed
        return super().entry(module, body, n_args, debug)


def test_hooks_read_the_kernel_context_and_targets_may_edit_the_module():
    from tritium.codegen.attributes import StringAttributes
    from tritium.codegen.block.kernel import generate_module

    asm = compile_specialized(add_kernel, FrontendOnly(), {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32",
                                                           "n": "i32"}, {"BLOCK": 64}, {}, {}).asm
    with tile.context():
        module = ir.Module.parse(asm["tile-opt"])
        assign_layouts(module, 128)
        llmod = generate_module(module, ContextReadingHooks(1), llvm.get_process_triple())
    llmod.get_global("add_kernel_program").attributes = StringAttributes({"target-features": "+sse2"})
    assert '"target-features"="+sse2"' in str(llmod)
