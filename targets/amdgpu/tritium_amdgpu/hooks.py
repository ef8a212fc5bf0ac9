"""``AmdgpuHooks``: what core's per-thread code generator emits differently for AMD GPUs.

A program is a workgroup of ``num_warps`` wavefronts of 64 lanes (CDNA) or 32 (RDNA). Indices come
from the ``llvm.amdgcn`` workitem and workgroup ids, the number of programs from the HSA dispatch
packet (the grid's size in threads, divided by the workgroup's), the barrier is ``s_barrier``
between workgroup-scope release and acquire fences, and warp shuffles are ``ds_bpermute``. Shared
memory is LDS (address space 3, 32-bit pointers). Atomics take AMD's sync scopes: Triton's "gpu" is
``agent``, "cta" ``workgroup``, "sys" the system. Math is what the AMDGPU back end lowers itself
(``SUPPORTED_MATH``), and the rest from ROCm's OCML where its device libraries were found
(``device_libs``); ``tl.device_print`` and ``tl.device_assert`` print through OCKL's hostcall printf.
Without the libraries, those fail to compile, naming the function, the type and the target, before
LLVM sees them.
"""

from __future__ import annotations

from typing import Sequence

from llvmlite import ir as ll
from tritium.codegen import intrinsics
from tritium.codegen.attributes import StringAttributes
from tritium.codegen.device import DeviceHooks, WarpMatrixOp
from tritium.codegen.math import MathUnavailable
from tritium.errors import NotImplementedYet
from tritium.codegen.types import scalar_of

from . import device_libs, matrix

I32 = ll.IntType(32)
_AXES = "xyz"
#: the HSA kernel dispatch packet's ``grid_size_x`` (u32 each axis), in bytes from its start
_GRID_SIZE = 12
#: the code object version the module asks for (5: ROCm 5.x and later load it)
CODE_OBJECT_VERSION = 500
#: Triton's atomic scope -> the AMDGPU sync scope (system: LLVM's default, "")
_SCOPES = {"gpu": "agent", "cta": "workgroup", "sys": ""}
#: math the AMDGPU back end lowers by itself (LLVM intrinsics), by MLIR ``math`` name -> the float
#: types it lowers it for; f64 ``exp``/``log``/``sin``... and ``tan``, ``tanh``, ``erf`` need a
#: device library: ROCm's OCML (``OCML``)
SUPPORTED_MATH = {
    **{fn: ("float", "half") for fn in ("exp", "exp2", "log", "log2", "log10", "sin", "cos", "rsqrt")},
    **{fn: ("float", "half", "double") for fn in ("sqrt", "floor", "ceil", "round", "roundeven", "trunc",
                                                  "absf", "fma", "copysign", "absi")},
}

#: MLIR ``math`` name -> OCML's (``__ocml_<name>_f32``, ``_f64``), for what the back end lacks
OCML = {**{fn: fn for fn in ("exp", "exp2", "log", "log2", "log10", "sin", "cos", "tan", "tanh", "erf", "rsqrt",
                              "sqrt", "erfc", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "cosh",
                              "sinh", "expm1", "log1p", "atan2")}, "powf": "pow"}
_OCML_SUFFIX = {"float": "f32", "double": "f64", "half": "f16"}
#: OCKL's printf: ``__ockl_printf_append_args`` takes up to this many i64 arguments a call
_PRINTF_ARGS = 7
I64 = ll.IntType(64)
_GENERIC = ll.PointerType()


class AmdgpuHooks(DeviceHooks):
    global_address_space = 1
    shared_address_space = 3

    def __init__(self, wave: int, fp_fusion: bool = True, shared_bytes: int = 0, matrix: str = "",
                 matrix_size: int = 16, device_library: bool = False):
        self.warp_size = wave
        self.fp_flags = ("contract",) if fp_fusion else ()
        self.shared_bytes = shared_bytes
        #: the arch's matrix instructions (``arch.Arch.matrix``) and MFMA's block size (16 or 32)
        self.matrix, self.matrix_size = matrix, matrix_size
        #: ROCm's OCML and OCKL will be linked (``device_libs.folder()`` found them)
        self.device_library = device_library

    def warp_matrix_op(self, operand: str, accumulator: str) -> WarpMatrixOp | None:
        """The arch's matrix instruction (``matrix``): CDNA's MFMA on 16x16 blocks (32x32 where
        ``matrix_size`` is 32), RDNA3's and RDNA4's WMMA."""
        if self.matrix.startswith("rdna"):
            return matrix.wmma(operand, accumulator, self.matrix)
        if self.matrix.startswith("cdna"):
            return matrix.mfma(self.matrix, operand, accumulator, self.matrix_size)
        return None

    def shared_memory(self, module: ll.Module) -> ll.Value:
        """The program's LDS as one static array of the layout stage's ``shared`` bytes: the code
        object then states its LDS, which the loader checks, and no launch has to pass it."""
        g = module.globals.get("tritium_shared")
        if g is None:
            t = ll.ArrayType(ll.IntType(8), self.shared_bytes)
            g = ll.GlobalVariable(module, t, "tritium_shared", addrspace=self.shared_address_space)
            g.linkage, g.initializer, g.align = "internal", ll.Constant(t, ll.Undefined), 16
        return g

    def pointer_bits(self, address_space: int) -> int:
        return 32 if address_space in (3, 5) else 64  # LDS and private (scratch) pointers are 32-bit

    # -- kernel and indices -------------------------------------------------------------------
    def kernel(self, module: ll.Module, name: str, params: list[ll.Type], num_threads: int) -> ll.Function:
        fn = ll.Function(module, ll.FunctionType(ll.VoidType(), params), name)
        fn.calling_convention = "amdgpu_kernel"
        fn.attributes = StringAttributes({"amdgpu-flat-work-group-size": f"1,{num_threads}"})
        self.num_threads = num_threads
        flags = module.add_named_metadata("llvm.module.flags")
        flags.add(module.add_metadata([I32(1), "amdhsa_code_object_version", I32(CODE_OBJECT_VERSION)]))
        return fn

    def thread_id(self, b: ll.IRBuilder) -> ll.Value:
        return b.call(intrinsics.declare(b.module, "llvm.amdgcn.workitem.id.x", I32, []), [])

    def program_id(self, b: ll.IRBuilder, axis: int) -> ll.Value:
        return b.call(intrinsics.declare(b.module, f"llvm.amdgcn.workgroup.id.{_AXES[axis]}", I32, []), [])

    def num_programs(self, b: ll.IRBuilder, axis: int) -> ll.Value:
        packet = b.call(intrinsics.declare(b.module, "llvm.amdgcn.dispatch.ptr", ll.PointerType(addrspace=4), []), [])
        field = b.gep(packet, [I32(_GRID_SIZE + 4 * axis)], source_etype=ll.IntType(8))
        threads = b.load(field, typ=I32, align=4)  # the grid's size along the axis, in threads
        return b.udiv(threads, I32(self.num_threads)) if axis == 0 else threads  # y and z: one thread a group

    def barrier(self, b: ll.IRBuilder) -> None:
        b.fence("release", "workgroup")
        b.call(intrinsics.declare(b.module, "llvm.amdgcn.s.barrier", ll.VoidType(), []), [])
        b.fence("acquire", "workgroup")

    def shuffle_xor(self, b: ll.IRBuilder, value: ll.Value, lane_mask: int) -> ll.Value:
        lane = b.and_(self.thread_id(b), I32(self.warp_size - 1))
        source = b.shl(b.xor(lane, I32(lane_mask)), I32(2))  # ds_bpermute addresses lanes in bytes
        return b.call(intrinsics.declare(b.module, "llvm.amdgcn.ds.bpermute", I32, [I32, I32]), [source, value])

    def sync_scope(self, scope: str) -> str:
        return _SCOPES.get(scope, "")

    # -- math ---------------------------------------------------------------------------------
    def call(self, builder: ll.IRBuilder, fn: str, args: Sequence[ll.Value]) -> ll.Value:
        element = scalar_of(args[0].type)
        kind = str(element)
        if (isinstance(element, ll.IntType) and fn == "absi") or kind in SUPPORTED_MATH.get(fn, ()):
            return super().call(builder, fn, args)
        if self.device_library and fn in OCML and kind in _OCML_SUFFIX:
            callee = intrinsics.declare(builder.module, f"__ocml_{OCML[fn]}_{_OCML_SUFFIX[kind]}", element,
                                        [element] * len(args))
            return intrinsics.per_element(builder, args, lambda b, xs: b.call(callee, xs))
        name = {"float": "fp32", "double": "fp64", "half": "fp16", "bfloat": "bf16"}.get(kind, kind)
        raise MathUnavailable(f"math function '{fn}' of {name} is not available on target amdgpu: the AMDGPU "
                              "back end does not compute it, and ROCm's device library (OCML) was not found "
                              f"({device_libs.HOW_TO_GET}); or compute it from exp2, log2, sin, cos and sqrt "
                              "of float32, or run the kernel on another target")

    def inline_asm(self, b: ll.IRBuilder, ftype: ll.FunctionType, asm: str, constraints: str,
                   args: list[ll.Value], pure: bool) -> ll.Value:
        """The user's AMDGPU assembly, as LLVM inline assembly (``$0``... name the constraints'
        operands: ``v`` a VGPR, ``s`` an SGPR); such kernels are assembled by ``toolchain.assemble``."""
        return b.call(ll.InlineAsm(ftype, asm, constraints, side_effect=not pure), args)

    # -- debugging ----------------------------------------------------------------------------
    def _require_ockl(self, what: str) -> None:
        if not self.device_library:
            raise NotImplementedYet(f"{what} on amdgpu prints through ROCm's device library (OCKL), which was not "
                                    f"found: {device_libs.HOW_TO_GET}")

    def printf(self, b: ll.IRBuilder, fmt: str, args: list[ll.Value]) -> None:
        """OCKL's printf, as clang emits it for HIP: the format string, then the arguments as i64
        (doubles by their bits) seven a call, the last call marked; the HIP runtime prints them
        from the hostcall buffer the code object then asks for."""
        self._require_ockl("tl.device_print")
        m = b.module
        desc = b.call(intrinsics.declare(m, "__ockl_printf_begin", I64, [I64]), [I64(0)])
        text = _string(b, fmt)
        append_string = intrinsics.declare(m, "__ockl_printf_append_string_n", I64, [I64, _GENERIC, I64, I32])
        desc = b.call(append_string, [desc, text, I64(len(fmt.encode()) + 1), I32(int(not args))])
        append_args = intrinsics.declare(m, "__ockl_printf_append_args", I64, [I64, I32, *[I64] * _PRINTF_ARGS, I32])
        words = [b.bitcast(a, I64) if isinstance(a.type, ll.DoubleType)
                 else b.zext(a, I64) if a.type.width < 64 else a for a in args]
        for start in range(0, len(words), _PRINTF_ARGS):
            group = words[start:start + _PRINTF_ARGS]
            last = start + _PRINTF_ARGS >= len(words)
            desc = b.call(append_args, [desc, I32(len(group)), *group, *[I64(0)] * (_PRINTF_ARGS - len(group)),
                                        I32(int(last))])

    def assert_fail(self, b: ll.IRBuilder, message: str, file: str, line: int) -> None:
        """What HIP's device ``assert`` does: print ``file:line: kernel: Device-side assertion `message'
        failed.`` (OCKL's printf), then trap, which ends the launch with an error the HIP runtime
        reports; the GPU's queue cannot be used again in this process."""
        self._require_ockl("tl.device_assert")
        self.printf(b, f"{file}:{line}: {b.function.name}: Device-side assertion `{message}' failed.\n", [])
        b.call(intrinsics.declare(b.module, "llvm.trap", ll.VoidType(), []), [])


def _string(b: ll.IRBuilder, text: str) -> ll.Value:
    """A generic pointer to ``text``, NUL-terminated, as a constant global (address space 4, AMD's
    constant memory)."""
    data = bytearray(text.encode() + b"\0")
    t = ll.ArrayType(ll.IntType(8), len(data))
    m = b.module
    g = ll.GlobalVariable(m, t, m.get_unique_name("tritium_text"), addrspace=4)
    g.linkage, g.global_constant, g.initializer = "private", True, ll.Constant(t, data)
    return b.addrspacecast(g, _GENERIC)