"""``AmdgpuHooks``: what core's per-thread code generator emits differently for AMD GPUs.

A program is a workgroup of ``num_warps`` wavefronts of 64 lanes (CDNA) or 32 (RDNA). Indices come
from the ``llvm.amdgcn`` workitem and workgroup ids, the number of programs from the HSA dispatch
packet (the grid's size in threads, divided by the workgroup's), the barrier is ``s_barrier``
between workgroup-scope release and acquire fences, and warp shuffles are ``ds_bpermute``. Shared
memory is LDS (address space 3, 32-bit pointers). Atomics take AMD's sync scopes: Triton's "gpu" is
``agent``, "cta" ``workgroup``, "sys" the system. Math is what the AMDGPU back end lowers itself
(``SUPPORTED_MATH``); anything else fails to compile, naming the function, the type and the target,
before LLVM sees it.
"""

from __future__ import annotations

from typing import Sequence

from llvmlite import ir as ll
from tritium.codegen import intrinsics
from tritium.codegen.attributes import StringAttributes
from tritium.codegen.device import DeviceHooks, WarpMatrixOp
from tritium.codegen.math import MathUnavailable
from tritium.codegen.types import scalar_of
from tritium.layout.distributed import Fragment

I16, I32 = ll.IntType(16), ll.IntType(32)
_AXES = "xyz"
#: the HSA kernel dispatch packet's ``grid_size_x`` (u32 each axis), in bytes from its start
_GRID_SIZE = 12
#: the code object version the module asks for (5: ROCm 5.x and later load it)
CODE_OBJECT_VERSION = 500
#: Triton's atomic scope -> the AMDGPU sync scope (system: LLVM's default, "")
_SCOPES = {"gpu": "agent", "cta": "workgroup", "sys": ""}
#: math the AMDGPU back end lowers by itself (LLVM intrinsics), by MLIR ``math`` name -> the float
#: types it lowers it for; f64 ``exp``/``log``/``sin``... and ``tan``, ``tanh``, ``erf`` need a
#: device library (ROCm's OCML), which this target does not link yet
SUPPORTED_MATH = {
    **{fn: ("float", "half") for fn in ("exp", "exp2", "log", "log2", "log10", "sin", "cos", "rsqrt")},
    **{fn: ("float", "half", "double") for fn in ("sqrt", "floor", "ceil", "round", "roundeven", "trunc",
                                                  "absf", "fma", "copysign", "absi")},
}


#: the lanes' 6 bits: 4 step along M (A) or N (B, D), 2 along K (A, B) or M (D), by 4
_ROWS16 = ((1, 0), (2, 0), (4, 0), (8, 0))
_COLS16 = ((0, 1), (0, 2), (0, 4), (0, 8))
MFMA_A = Fragment(((0, 0), (0, 2)), _ROWS16 + ((0, 4), (0, 8)))
MFMA_B = Fragment(((0, 0), (2, 0)), _COLS16 + ((4, 0), (8, 0)))
MFMA_C = Fragment(((0, 0), (1, 0), (2, 0), (3, 0)), _COLS16 + ((4, 0), (8, 0)))
#: operand kind -> the MFMA intrinsic and the element type of its operand vectors
MFMA = {"fp16": ("llvm.amdgcn.mfma.f32.16x16x16f16", ll.HalfType()),
        "bf16": ("llvm.amdgcn.mfma.f32.16x16x16bf16.1k", I16)}


class AmdgpuHooks(DeviceHooks):
    global_address_space = 1
    shared_address_space = 3

    def __init__(self, wave: int, fp_fusion: bool = True, shared_bytes: int = 0, matrix_cores: bool = False):
        self.warp_size = wave
        self.fp_flags = ("contract",) if fp_fusion else ()
        self.shared_bytes = shared_bytes
        self.matrix_cores = matrix_cores

    def warp_matrix_op(self, operand: str, accumulator: str) -> WarpMatrixOp | None:
        """CDNA's ``v_mfma_f32_16x16x16_{f16,bf16}`` (a 64-lane wavefront, ``MFMA_16X16``), with
        AMD's operand layout: lane ``l`` holds A's row ``l % 16`` at K ``4 (l // 16) ..`` + 3, B's
        column ``l % 16`` at the same K rows, and D's column ``l % 16`` at rows ``4 (l // 16) ..`` + 3.
        Two 32-bit registers of A and of B a lane, four fp32 accumulators."""
        if not self.matrix_cores or operand not in MFMA or accumulator != "fp32":
            return None
        name, element = MFMA[operand]

        def emit(b, a_frags, b_frags, c_vals):
            def four(frags):  # two <2 x half> registers -> the <4 x ...> the intrinsic takes
                joined = b.shuffle_vector(frags[0], frags[1], ll.Constant(ll.VectorType(I32, 4), [0, 1, 2, 3]))
                return b.bitcast(joined, ll.VectorType(element, 4))
            c = ll.Constant(ll.VectorType(ll.FloatType(), 4), ll.Undefined)
            for i, v in enumerate(c_vals):
                c = b.insert_element(c, v, I32(i))
            args = [four(a_frags), four(b_frags), c, I32(0), I32(0), I32(0)]
            d = b.call(intrinsics.declare(b.module, name, c.type, [x.type for x in args]), args)
            return [b.extract_element(d, I32(i)) for i in range(4)]

        return WarpMatrixOp(m=16, n=16, k=16, k_pack=2, emit=emit, a=MFMA_A, b=MFMA_B, c=MFMA_C)

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
        if isinstance(element, ll.IntType) and fn == "absi":
            return super().call(builder, fn, args)
        kind = str(element)
        if kind not in SUPPORTED_MATH.get(fn, ()):
            name = {"float": "fp32", "double": "fp64", "half": "fp16", "bfloat": "bf16"}.get(kind, kind)
            raise MathUnavailable(f"math function '{fn}' of {name} is not available on target amdgpu: the AMDGPU "
                                  "back end does not compute it, and tritium does not link ROCm's device library "
                                  "(OCML) yet; compute it from exp2, log2, sin, cos and sqrt of float32, or run "
                                  "the kernel on another target")
        return super().call(builder, fn, args)


def cdna_matrix_op(operand: str, accumulator: str) -> WarpMatrixOp | None:
    """CDNA's matrix instruction for ``tl.dot`` of ``operand`` into ``accumulator`` elements: what the
    simt target emulates with ``TRITIUM_SIMT_MATRIX=tritium_amdgpu.hooks:cdna_matrix_op``."""
    return AmdgpuHooks(64, matrix_cores=True).warp_matrix_op(operand, accumulator)
