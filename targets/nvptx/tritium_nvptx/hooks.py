"""``NvptxHooks``: what core's per-thread code generator emits differently for NVIDIA GPUs.

Indices come from the ``nvvm`` special registers, the barrier is ``bar.sync 0``, reductions shuffle
with ``shfl.sync.bfly`` over the full warp, and the kernel uses the ``ptx_kernel`` calling
convention with ``.maxntid`` set so ptxas knows the block size (and ``.maxnreg`` where a launch
asks for it). Masked loads and stores of up to 16 bytes are single predicated
``ld.global``/``st.global`` instructions (inline PTX, as Triton emits them), not branches. Math,
as Triton does it: ``exp``/``exp2`` of f32 use ``ex2.approx(.ftz).f32``,
``sqrt``/``rsqrt`` of f32 ``sqrt``/``rsqrt.approx.ftz.f32``, f32 division ``div.full.f32``, and
float adds and multiplies may fuse into FMAs (``enable_fp_fusion``); the functions LLVM cannot
lower for NVPTX call NVIDIA's libdevice (``__nv_*``), linked in by the ``ptx`` stage.
Atomics are inline ``atom.{sem}.{scope}.global`` instructions (LLVM's NVPTX back end would drop
their ordering and scope). ``tl.device_print`` calls CUDA's ``vprintf`` and a failed ``tl.device_assert`` calls
``__assertfail``, as nvcc's ``printf`` and ``assert`` do: the device prints both (to standard
output, when the host next synchronises) and the failed assertion ends the launch with
CUDA_ERROR_ASSERT.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping, Sequence

from llvmlite import ir as ll
from tritium.codegen.attributes import StringAttributes
from tritium.codegen import intrinsics
from tritium.codegen.device import DeviceHooks, WarpMatrixOp
from tritium.layout.distributed import Fragment
from tritium.codegen.types import const, scalar_of, size_in_bytes

from . import tma
from .wgmma import warpgroup_op

I1, I8, I32, I64 = ll.IntType(1), ll.IntType(8), ll.IntType(32), ll.IntType(64)
GENERIC = ll.PointerType()  # a pointer in the generic address space, what CUDA's C functions take
LOG2E = 1.4426950408889634
FULL_MASK = -1  # every lane of the warp takes part in a shuffle
#: the ``c`` operand of shfl.sync.bfly: clamp 31, segment mask 0 (the whole warp)
_BFLY_CLAMP = 0x1F
_AXES = "xyz"
#: math functions taken from libdevice: MLIR ``math`` name -> libdevice name (``f`` suffix for f32)
LIBDEVICE = {"exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "log10": "log10", "sin": "sin",
             "cos": "cos", "tan": "tan", "tanh": "tanh", "rsqrt": "rsqrt", "erf": "erf", "erfc": "erfc",
             "acos": "acos", "acosh": "acosh", "asin": "asin", "asinh": "asinh", "atan": "atan", "atanh": "atanh",
             "cbrt": "cbrt", "cosh": "cosh", "sinh": "sinh", "expm1": "expm1", "log1p": "log1p", "atan2": "atan2",
             "powf": "pow"}
#: f32 functions computed with ``ex2.approx``, as Triton does: ``exp`` as ``ex2.approx.f32`` of
#: x * log2(e); ``exp2`` as libdevice's ``exp2f`` with denormals flushed (Triton's ``__CUDA_FTZ``,
#: the ``enable_reflect_ftz`` option), ``ex2.approx.ftz.f32``, which saves the two multiplies and the
#: compare that keep subnormal results (attention's softmax runs one per score); without it
#: ``ex2.approx.f32``
_EX2 = {"exp": (LOG2E, "ex2.approx.f32"), "exp2": (None, "ex2.approx.ftz.f32")}
#: f32 functions with a one-instruction PTX approximation that Triton uses for them
_APPROX = {"sqrt": "sqrt.approx.ftz.f32", "rsqrt": "rsqrt.approx.ftz.f32"}
#: the PTX register constraint and width of an inline-asm word
_WORDS = {16: ("h", "b16"), 32: ("r", "b32"), 64: ("l", "b64")}


class NvptxHooks(DeviceHooks):
    warp_size = 32
    global_address_space = 1
    shared_address_space = 3

    def __init__(self, fp_fusion: bool = True, arch: str = "sm_90", ftz: bool = True, maxnreg: int | None = None):
        self.maxnreg = maxnreg
        self.fp_flags = ("contract",) if fp_fusion else ()
        self.ex2 = _EX2 if ftz else {**_EX2, "exp2": (None, "ex2.approx.f32")}
        self.arch = int(re.match(r"sm_(\d+)", arch).group(1))
        self.warpgroups = arch == "sm_90a"  # wgmma is sm_90a's alone
        self.tensor_copy = tma.tensor_copy() if self.arch >= 90 else None

    # -- kernel and indices -------------------------------------------------------------------
    def kernel(self, module: ll.Module, name: str, params: list[ll.Type], num_threads: int) -> ll.Function:
        fn = ll.Function(module, ll.FunctionType(ll.VoidType(), params), name)
        fn.calling_convention = "ptx_kernel"
        limits = {"nvvm.maxntid": str(num_threads)}
        if self.maxnreg is not None:
            limits["nvvm.maxnreg"] = str(self.maxnreg)
        fn.attributes = StringAttributes(limits)
        return fn

    @staticmethod
    def _sreg(b: ll.IRBuilder, register: str) -> ll.Value:
        return b.call(intrinsics.declare(b.module, f"llvm.nvvm.read.ptx.sreg.{register}", I32, []), [])

    def thread_id(self, b: ll.IRBuilder) -> ll.Value:
        return self._sreg(b, "tid.x")

    def program_id(self, b: ll.IRBuilder, axis: int) -> ll.Value:
        return self._sreg(b, f"ctaid.{_AXES[axis]}")

    def num_programs(self, b: ll.IRBuilder, axis: int) -> ll.Value:
        return self._sreg(b, f"nctaid.{_AXES[axis]}")

    def barrier(self, b: ll.IRBuilder) -> None:
        # LLVM 22's name for bar.sync 0 (``llvm.nvvm.barrier0`` is upgraded to it)
        b.call(intrinsics.declare(b.module, "llvm.nvvm.barrier.cta.sync.aligned.all", ll.VoidType(), [I32]),
               [ll.Constant(I32, 0)])

    def shuffle_xor(self, b: ll.IRBuilder, value: ll.Value, lane_mask: int) -> ll.Value:
        fn = intrinsics.declare(b.module, "llvm.nvvm.shfl.sync.bfly.i32", I32, [I32, I32, I32, I32])
        return b.call(fn, [ll.Constant(I32, FULL_MASK), value, ll.Constant(I32, lane_mask),
                           ll.Constant(I32, _BFLY_CLAMP)])

    # -- debugging -----------------------------------------------------------------------------
    def printf(self, b: ll.IRBuilder, fmt: str, args: list[ll.Value]) -> None:
        """``vprintf(format, arguments)``: the arguments packed in a local buffer, each at its size's
        alignment (a struct of i32, i64 and double under the NVPTX data layout), as nvcc and clang pass
        them; no buffer (null) without arguments."""
        vprintf = intrinsics.declare(b.module, "vprintf", I32, [GENERIC, GENERIC])
        buffer: ll.Value = ll.Constant(GENERIC, None)
        if args:
            struct = ll.LiteralStructType([a.type for a in args])
            buffer = _arguments_buffer(b, struct)
            for i, a in enumerate(args):
                at = b.gep(buffer, [ll.Constant(I32, 0), ll.Constant(I32, i)], inbounds=True, source_etype=struct)
                b.store(a, at)
        b.call(vprintf, [_string(b, fmt), buffer])

    def assert_fail(self, b: ll.IRBuilder, message: str, file: str, line: int) -> None:
        """``__assertfail(message, file, line, function, char_size)``, what CUDA's ``assert`` calls: the
        device prints ``file:line: kernel: block: [..], thread: [..] Assertion `message` failed.`` and the
        launch ends with CUDA_ERROR_ASSERT. It is not declared ``noreturn`` (clang dropped that: it
        trips a ptxas bug in code with barriers), so the code after it stays well formed."""
        fn = intrinsics.declare(b.module, "__assertfail", ll.VoidType(), [GENERIC, GENERIC, I32, GENERIC, I64])
        b.call(fn, [_string(b, message), _string(b, file), ll.Constant(I32, line), _string(b, b.function.name),
                    ll.Constant(I64, 1)])

    # -- memory -------------------------------------------------------------------------------
    def load(self, b: ll.IRBuilder, ptr: ll.Value, ty: ll.Type, mask: ll.Value | None, other: ll.Value | None,
             align: int, hints: Mapping[str, Any] | None = None) -> ll.Value:
        """Masked or hinted loads of 16-bit and wider elements are one predicated ``ld.global`` with
        the cache hints as PTX qualifiers; the rest are LLVM loads (hints dropped)."""
        words = _words(ty, align)
        if (mask is None and not hints) or words is None:
            return super().load(b, ptr, ty, mask, other, align)
        mask = mask if mask is not None else ll.Constant(I1, 1)
        n, bits = words
        reg, kind = _WORDS[bits]
        word = ll.IntType(bits)
        fallback = _split(b, other if other is not None else ll.Constant(ty, None), n, word)
        outs = ", ".join(f"${i}" for i in range(n))
        moves = "".join(f"mov.{kind} ${i}, ${n + 2 + i};\n\t" for i in range(n))
        vec = f".v{n}" if n > 1 else ""
        outs = f"{{{outs}}}" if n > 1 else outs
        text = f"{moves}@${n + 1} {_qualified('ld', hints)}{vec}.{kind} {outs}, [${n}];"
        constraints = ",".join([f"={reg}"] * n + ["l", "b"] + [reg] * n)
        result_ty = ll.LiteralStructType([word] * n) if n > 1 else word
        asm = ll.InlineAsm(ll.FunctionType(result_ty, [ptr.type, I1] + [word] * n), text, constraints,
                           side_effect=True)
        loaded = b.call(asm, [ptr, mask, *fallback])
        parts = [b.extract_value(loaded, i) for i in range(n)] if n > 1 else [loaded]
        return _join(b, parts, ty)

    def store(self, b: ll.IRBuilder, ptr: ll.Value, value: ll.Value, mask: ll.Value | None, align: int,
              hints: Mapping[str, Any] | None = None) -> None:
        """As ``load``: one predicated ``st.global`` with the cache hints where it can."""
        words = _words(value.type, align)
        if (mask is None and not hints) or words is None:
            super().store(b, ptr, value, mask, align)
            return
        mask = mask if mask is not None else ll.Constant(I1, 1)
        n, bits = words
        reg, kind = _WORDS[bits]
        parts = _split(b, value, n, ll.IntType(bits))
        vec = f".v{n}" if n > 1 else ""
        operands = "{" + ", ".join(f"${i + 2}" for i in range(n)) + "}" if n > 1 else "$2"
        asm = ll.InlineAsm(ll.FunctionType(ll.VoidType(), [ptr.type, I1] + [ll.IntType(bits)] * n),
                           f"@$1 {_qualified('st', hints)}{vec}.{kind} [$0], {operands};",
                           ",".join(["l", "b"] + [reg] * n),
                           side_effect=True)
        b.call(asm, [ptr, mask, *parts])

    def inline_asm(self, b: ll.IRBuilder, ftype: ll.FunctionType, asm: str, constraints: str,
                   args: list[ll.Value], pure: bool) -> ll.Value:
        """The user's PTX, as LLVM inline assembly (``$0``... name the constraints' operands)."""
        return b.call(ll.InlineAsm(ftype, asm, constraints, side_effect=not pure), args)

    # -- tensor cores -------------------------------------------------------------------------
    def warp_matrix_op(self, operand: str, accumulator: str) -> WarpMatrixOp | None:
        """``mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}`` (sm_80 on), with the PTX ISA's
        fragment layout: lane ``4 * g + t`` holds A's rows g and g + 8 at K columns 2t, 2t + 1 and
        2t + 8, 2t + 9; B's column g at K rows 2t, 2t + 1 and 2t + 8, 2t + 9; C's rows g and g + 8 at
        columns 2t and 2t + 1. Fragments load with ``ldmatrix`` (``.trans`` for B). fp32 operands
        (``"tf32"``) run ``m16n8k8.tf32``: one K element a register, A's at K columns t and t + 4, B's
        at K rows t and t + 4, each rounded to tf32 first. fp8 ones (``"e4m3"``, ``"e5m2"``, sm_89 on)
        run ``m16n8k32``: four K elements a register, at 4t .. 4t + 3 and 16 on, as int8 ones
        (``"s8"``) into int32 accumulators do. On sm_90a every kind also has Hopper's warpgroup
        instruction (``wgmma``). fp16 operands into an fp16 accumulator (``out_dtype=tl.float16``) run
        ``m16n8k16.f16.f16.f16.f16``, its accumulator two halves a register, without ``wgmma``."""
        kinds = {"fp16": "f16", "bf16": "bf16", "tf32": "tf32", "e4m3": "e4m3", "e5m2": "e5m2", "s8": "s8"}
        if operand == "fp16" and accumulator == "fp16" and self.arch >= 80:
            return dataclasses.replace(self.warp_matrix_op("fp16", "fp32"), emit=_mma_f16_accumulator, group=None)
        if (operand not in kinds or accumulator != ("int32" if operand == "s8" else "fp32")
                or self.arch < (89 if operand in ("e4m3", "e5m2") else 80)):
            return None
        kind = kinds[operand]
        f32 = ll.FloatType()
        acc, acc_kind, reg = (I32, "s32", "r") if operand == "s8" else (f32, "f32", "f")
        step = {"tf32": 1, "e4m3": 4, "e5m2": 4, "s8": 4}.get(operand, 2)  # the K elements of one 32-bit register
        k = 8 * step
        t_bits, g_bits = ((0, step), (0, 2 * step)), ((1, 0), (2, 0), (4, 0))  # lane 4g + t: (row, col) per bit

        def to_register(b, v):
            if operand != "tf32":
                return b.bitcast(v, I32)
            # tf32 rounds to nearest (ties away), as Triton converts: the instruction would truncate
            return b.call(ll.InlineAsm(ll.FunctionType(I32, [f32]), "cvt.rna.tf32.f32 $0, $1;", "=r,f"), [v])

        def emit(b, a_frags, b_frags, c_vals):
            regs = [to_register(b, v) for v in a_frags + b_frags]
            ftype = ll.FunctionType(ll.LiteralStructType([acc] * 4), [I32] * 6 + [acc] * 4)
            asm = (f"mma.sync.aligned.m16n8k{k}.row.col.{acc_kind}.{kind}.{kind}.{acc_kind} "
                   "{$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};")
            d = b.call(ll.InlineAsm(ftype, asm, ",".join([f"={reg}"] * 4 + ["r"] * 6 + [reg] * 4)),
                       regs + list(c_vals))
            return [b.extract_value(d, i) for i in range(4)]

        def load(b, address, count, transposed):
            # the NVVM intrinsic, not inline assembly: LLVM must see that it reads shared memory, or it
            # merges two products' loads from the same scratch and moves them across barriers
            name = f"llvm.nvvm.ldmatrix.sync.aligned.m8n8.x{count}{'.trans' if transposed else ''}.b16"
            ret = ll.LiteralStructType([I32] * count) if count > 1 else I32
            got = b.call(intrinsics.declare(b.module, name, ret, [address.type]), [address])
            return [b.extract_value(got, i) for i in range(count)] if count > 1 else [got]

        half = k // 2  # the second half of K: a2, a3 and b1
        group = warpgroup_op(kind, k) if self.warpgroups else None
        return WarpMatrixOp(m=16, n=8, k=k, k_pack=step, emit=emit, load=load, group=group,
                            a=Fragment(((0, 0), (8, 0), (0, half), (8, half)), t_bits + g_bits),
                            b=Fragment(((0, 0), (half, 0)), tuple((c, r) for r, c in t_bits + g_bits)),
                            c=Fragment(((0, 0), (0, 1), (8, 0), (8, 1)), ((0, 2), (0, 4)) + g_bits))

    # -- asynchronous copies (software pipelining) ---------------------------------------------
    def async_copy(self, b: ll.IRBuilder, dst: ll.Value, src: ll.Value, ty: ll.Type, mask: ll.Value) -> None:
        """``cp.async`` (sm_80 on) of 4, 8 or 16 bytes (``.cg``, past L1, for 16), zero-filled where
        ``mask`` is false (a source size of 0 reads nothing); other sizes copy at once."""
        count, elem = (ty.count, ty.element) if isinstance(ty, ll.VectorType) else (1, ty)
        size = count * size_in_bytes(elem, self.pointer_bits)
        if self.arch < 80 or size not in (4, 8, 16):
            return super().async_copy(b, dst, src, ty, mask)
        asm = f"cp.async.{'cg' if size == 16 else 'ca'}.shared.global [$0], [$1], {size}, $2;"
        ftype = ll.FunctionType(ll.VoidType(), [dst.type, src.type, I32])
        b.call(ll.InlineAsm(ftype, asm, "l,l,r,~{memory}", side_effect=True),
               [dst, src, b.select(mask, I32(size), I32(0))])

    def async_commit(self, b: ll.IRBuilder) -> None:
        if self.arch >= 80:
            b.call(ll.InlineAsm(ll.FunctionType(ll.VoidType(), []), "cp.async.commit_group;", "~{memory}",
                                side_effect=True), [])

    def async_wait(self, b: ll.IRBuilder, pending: int) -> None:
        if self.arch >= 80:
            b.call(ll.InlineAsm(ll.FunctionType(ll.VoidType(), []), f"cp.async.wait_group {pending};", "~{memory}",
                                side_effect=True), [])

    # -- atomics ------------------------------------------------------------------------------
    def atomic_rmw(self, b: ll.IRBuilder, op: str, ptr: ll.Value, val: ll.Value, sem: str, scope: str) -> ll.Value:
        """``atom.global.{scope}.{sem}.{op}.{type}`` as inline PTX: LLVM 22's NVPTX back end drops the
        ordering and scope of an ``atomicrmw``, which a lock's acquire and release need. PTX takes the
        qualifiers in any order; they come in Triton's, which its tests look for."""
        ptx_op, kind = _ATOM_OPS[op]
        element = str(val.type)
        if op == "fadd" and element == "bfloat" and self.arch < 90:  # atom.add.bf16 is sm_90's
            return self._add_by_cas(b, ptr, val, sem, scope)
        if op == "fadd":
            suffix = {"half": "noftz.f16", "bfloat": "noftz.bf16", "float": "f32", "double": "f64"}[element]
        else:
            suffix = f"{kind}{val.type.width}"
        return _atom(b, f"atom.global.{_SCOPES[scope]}.{sem}.{ptx_op}.{suffix}", ptr, [val])

    def atomic_cas(self, b: ll.IRBuilder, ptr: ll.Value, cmp: ll.Value, val: ll.Value, sem: str,
                   scope: str, order: str = "atom.global.{sem}.{scope}") -> ll.Value:
        """``atom.global.{sem}.{scope}.cas``: the qualifiers in Triton's order (``order``)."""
        return _atom(b, order.format(sem=sem, scope=_SCOPES[scope]) + f".cas.b{val.type.width}", ptr, [cmp, val])

    def _add_by_cas(self, b: ll.IRBuilder, ptr: ll.Value, val: ll.Value, sem: str, scope: str) -> ll.Value:
        """``*ptr += val`` as a compare-and-swap loop on the bits: the old value."""
        bits = ll.IntType(val.type.width if isinstance(val.type, ll.IntType) else 16)
        start = b.block
        first = b.load(ptr, typ=bits, align=2)
        loop = b.append_basic_block("atomic_add_cas")
        done = b.append_basic_block("atomic_add_done")
        b.branch(loop)
        b.position_at_end(loop)
        old = b.phi(bits)
        old.add_incoming(first, start)
        new = b.bitcast(b.fadd(b.bitcast(old, val.type), val), bits)
        seen = self.atomic_cas(b, ptr, old, new, sem, scope, order="atom.{sem}.{scope}.global")  # (Triton's order)
        old.add_incoming(seen, b.block)
        b.cbranch(b.icmp_unsigned("==", seen, old), done, loop)
        b.position_at_end(done)
        return b.bitcast(old, val.type)

    # -- math ---------------------------------------------------------------------------------
    def divide(self, builder: ll.IRBuilder, x: ll.Value, y: ll.Value) -> ll.Value:
        if isinstance(scalar_of(x.type), ll.FloatType):
            return intrinsics.per_element(builder, [x, y], lambda b, xs: _f32_asm(b, "div.full.f32 $0, $1, $2;", xs))
        return super().divide(builder, x, y)

    def remainder(self, builder: ll.IRBuilder, x: ll.Value, y: ll.Value) -> ll.Value:
        """libdevice's ``fmod`` (exact): LLVM's NVPTX back end expands ``frem`` as ``x - y * trunc(x /
        y)``, whose rounded quotient is wrong once ``x / y`` passes 2**24 (2**53 for fp64)."""
        element = scalar_of(x.type)
        if not isinstance(element, (ll.FloatType, ll.DoubleType)):
            return super().remainder(builder, x, y)
        name = "__nv_fmodf" if isinstance(element, ll.FloatType) else "__nv_fmod"
        callee = intrinsics.declare(builder.module, name, element, [element, element])
        return intrinsics.per_element(builder, [x, y], lambda b, xs: b.call(callee, xs))

    def call(self, builder: ll.IRBuilder, fn: str, args: Sequence[ll.Value]) -> ll.Value:
        element = scalar_of(args[0].type)
        if fn in self.ex2 and isinstance(element, ll.FloatType):
            return intrinsics.per_element(builder, args, lambda b, xs: _ex2_approx(b, xs[0], *self.ex2[fn]))
        if fn in _APPROX and isinstance(element, ll.FloatType):
            return intrinsics.per_element(builder, args, lambda b, xs: _f32_asm(b, f"{_APPROX[fn]} $0, $1;", xs))
        if fn in LIBDEVICE and isinstance(element, (ll.FloatType, ll.DoubleType)):
            name = f"__nv_{LIBDEVICE[fn]}" + ("f" if isinstance(element, ll.FloatType) else "")
            callee = intrinsics.declare(builder.module, name, element, [element] * len(args))
            return intrinsics.per_element(builder, args, lambda b, xs: b.call(callee, xs))
        return super().call(builder, fn, args)


#: name prefixes of the format and message strings and of vprintf's argument buffers
_STRING, _PRINTF_ARGS = "tritium.str", "printf.args"
#: the name of the block holding vprintf's argument buffers
_LOCALS = "locals"


def _string(b: ll.IRBuilder, text: str) -> ll.Value:
    """A generic pointer to ``text``, NUL-terminated, a private constant in global memory (one per
    distinct text in the module)."""
    data = bytearray(text.encode() + b"\0")
    initializer = ll.Constant(ll.ArrayType(I8, len(data)), data)
    module = b.module
    found = next((g for g in module.global_values if isinstance(g, ll.GlobalVariable)
                  and g.name.startswith(_STRING) and str(g.initializer) == str(initializer)), None)
    if found is None:
        found = ll.GlobalVariable(module, initializer.type, module.get_unique_name(_STRING), addrspace=1)
        found.initializer, found.global_constant, found.linkage = initializer, True, "private"
        found.unnamed_addr = True
        found.type = ll.PointerType(addrspace=1)  # opaque, as LLVM's IR has it
    return b.addrspacecast(found, GENERIC)


def _arguments_buffer(b: ll.IRBuilder, ty: ll.Type) -> ll.Value:
    """vprintf's arguments buffer of type ``ty`` on the stack, allocated once per function (prints in
    loops reuse it) in a block of its own that becomes the function's entry, so that no builder
    positioned in the code generator's blocks moves."""
    fn = b.function
    first = fn.blocks[0]
    if first.name != _LOCALS:
        start = first
        first = fn.insert_basic_block(0, _LOCALS)
        ll.IRBuilder(first).branch(start)
    for inst in first.instructions:
        if isinstance(inst, ll.AllocaInstr) and inst.name.startswith(_PRINTF_ARGS) and inst.allocated_type == ty:
            return inst
    at = ll.IRBuilder(first)
    at.position_before(first.terminator)
    slot = at.alloca(ty, name=_PRINTF_ARGS)
    slot.type = GENERIC  # opaque, as LLVM's IR has it
    return slot


def _mma_f16_accumulator(b: ll.IRBuilder, a_frags: list[ll.Value], b_frags: list[ll.Value],
                         c_vals: list[ll.Value]) -> list[ll.Value]:
    """``mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16``: C and D are two registers of two
    halves each (elements 0, 1 and 2, 3 of the fragment)."""
    pair = ll.VectorType(ll.HalfType(), 2)

    def packed(x: ll.Value, y: ll.Value) -> ll.Value:
        v = b.insert_element(ll.Constant(pair, ll.Undefined), x, I32(0))
        return b.bitcast(b.insert_element(v, y, I32(1)), I32)

    regs = [b.bitcast(v, I32) for v in a_frags + b_frags] + [packed(*c_vals[0:2]), packed(*c_vals[2:4])]
    asm = ("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 "
           "{$0,$1}, {$2,$3,$4,$5}, {$6,$7}, {$8,$9};")
    d = b.call(ll.InlineAsm(ll.FunctionType(ll.LiteralStructType([I32, I32]), [I32] * 8), asm,
                            ",".join(["=r"] * 2 + ["r"] * 8)), regs)
    out = []
    for i in range(2):
        halves = b.bitcast(b.extract_value(d, i), pair)
        out += [b.extract_element(halves, I32(0)), b.extract_element(halves, I32(1))]
    return out


def _ex2_approx(b: ll.IRBuilder, x: ll.Value, scale: float | None, instruction: str) -> ll.Value:
    if scale is not None:
        x = b.fmul(x, const(x.type, scale))
    return _f32_asm(b, f"{instruction} $0, $1;", [x])


def _f32_asm(b: ll.IRBuilder, text: str, args: Sequence[ll.Value]) -> ll.Value:
    """One PTX instruction on f32 scalars (``$0`` the result, ``$1``... the arguments)."""
    f32 = ll.FloatType()
    asm = ll.InlineAsm(ll.FunctionType(f32, [f32] * len(args)), text, ",".join(["=f"] + ["f"] * len(args)))
    return b.call(asm, list(args))


#: LLVM atomicrmw operation -> (PTX atom operation, integer type letter)
_ATOM_OPS = {"add": ("add", "u"), "fadd": ("add", ""), "max": ("max", "s"), "umax": ("max", "u"),
             "min": ("min", "s"), "umin": ("min", "u"), "and": ("and", "b"), "or": ("or", "b"),
             "xor": ("xor", "b"), "xchg": ("exch", "b")}
#: Triton's atomic scopes as PTX scopes
_SCOPES = {"gpu": "gpu", "cta": "cta", "sys": "sys"}
#: the inline-asm register class of a scalar LLVM type
_CONSTRAINTS = {"i16": "h", "half": "h", "bfloat": "h", "i32": "r", "float": "f", "i64": "l", "double": "d"}


def _atom(b: ll.IRBuilder, instruction: str, ptr: ll.Value, args: list[ll.Value]) -> ll.Value:
    """One ``atom`` instruction on global memory; 16-bit floats travel as their bits (``h``)."""
    ty = args[0].type
    carried = ll.IntType(16) if str(ty) in ("half", "bfloat") else ty
    reg = _CONSTRAINTS[str(ty)]
    operands = ", ".join(f"${i + 2}" for i in range(len(args)))
    text = f"{instruction} $0, [$1], {operands};"
    asm = ll.InlineAsm(ll.FunctionType(carried, [ptr.type] + [carried] * len(args)), text,
                       ",".join([f"={reg}", "l"] + [reg] * len(args) + ["~{memory}"]), side_effect=True)
    old = b.call(asm, [ptr] + [b.bitcast(a, carried) if carried != ty else a for a in args])
    return b.bitcast(old, ty) if carried != ty else old


def _qualified(instruction: str, hints: Mapping[str, Any] | None) -> str:
    """``ld.global``/``st.global`` with Triton's cache hints as PTX spells them: ``volatile``, else
    the cache operator (``.cg``, ...), else the L1 eviction priority."""
    hints = hints or {}
    if hints.get("volatile"):
        return f"{instruction}.volatile.global"
    if hints.get("cache"):
        return f"{instruction}.global{hints['cache']}"
    if hints.get("evict"):
        return f"{instruction}.global.L1::{hints['evict']}"
    return f"{instruction}.global"


def _words(ty: ll.Type, align: int) -> tuple[int, int] | None:
    """``(count, bits)`` of the 1, 2 or 4 PTX words one predicated instruction moves ``ty`` in, or None
    for what the default branch handles (i1/i8 elements, pointers, misaligned or wider values)."""
    element = scalar_of(ty)
    if isinstance(element, ll.IntType):
        ebits = element.width
    elif isinstance(element, (ll.HalfType, ll.FloatType, ll.DoubleType)) or str(element) == "bfloat":
        ebits = {"half": 16, "bfloat": 16, "float": 32, "double": 64}[str(element)]
    else:
        return None
    total = ebits * (ty.count if isinstance(ty, ll.VectorType) else 1)
    if ebits < 16 or total // 8 > align or total not in (16, 32, 64, 128):
        return None
    bits = 64 if ebits == 64 else (16 if total == 16 else 32)
    return total // bits, bits


def _split(b: ll.IRBuilder, value: ll.Value, n: int, word: ll.IntType) -> list[ll.Value]:
    """``value`` as ``n`` integer words (its bits, in memory order)."""
    if n == 1:
        return [b.bitcast(value, word)]
    words = b.bitcast(value, ll.VectorType(word, n))
    return [b.extract_element(words, ll.Constant(I32, i)) for i in range(n)]


def _join(b: ll.IRBuilder, parts: list[ll.Value], ty: ll.Type) -> ll.Value:
    if len(parts) == 1:
        return b.bitcast(parts[0], ty)
    vec = ll.Constant(ll.VectorType(parts[0].type, len(parts)), None)
    for i, p in enumerate(parts):
        vec = b.insert_element(vec, p, ll.Constant(I32, i))
    return b.bitcast(vec, ty)
