"""The wasm target's compiler stages: ``llir`` (core's whole-block generator, 128-bit SIMD
chunks), ``wasm-obj`` (llvmlite's WebAssembly back end) and ``wasm`` (linked by zig's ``wasm-ld``).

A kernel ``k`` exports ``k_grid(args, nx, ny, nz)``: it reads the arguments from 8-byte slots at
``args`` (``tritium.runtime.native_launch.slots``; pointers are 32-bit addresses in the module's
own memory) and runs every program of the grid, x fastest. In debug mode the debug area
(``tritium.codegen.block.debug_area``) follows the slots.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import tempfile

from llvmlite import binding as llvm
from llvmlite import ir as ll
from tritium.codegen.block.conversions import bfloat_bits_to_float
from tritium.codegen.block.vecmath import VectorMathHooks
from tritium.codegen.types import const, scalar_of
from tritium.errors import TritiumError
from tritium.passes.llvm_worker import optimize, run_isolated

TRIPLE = "wasm32-unknown-unknown"
I32 = ll.IntType(32)
#: bytes of the stack the programs' blocks live on (zig's default is 1 MiB)
STACK_BYTES = 8 << 20


@functools.cache
def target_machine() -> llvm.TargetMachine:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm.Target.from_triple(TRIPLE).create_target_machine(
        cpu="generic", features="+simd128,+nontrapping-fptoint,+sign-ext,+bulk-memory", opt=3, reloc="static")


class WasmHooks(VectorMathHooks):
    """wasm's part in whole-block code generation: 128-bit vectors and a grid-running entry."""

    vector_bits = 128
    target_name = "wasm"
    bf16_arithmetic = False  # LLVM's wasm back end cannot select it: core computes it in fp32

    def entry(self, module: ll.Module, body: ll.Function, n_args: int, debug: bool) -> ll.Function:
        fn = ll.Function(module, ll.FunctionType(ll.VoidType(), [ll.PointerType(), I32, I32, I32]),
                         f"{body.name}_grid")
        slots, nx, ny, nz = fn.args
        b = ll.IRBuilder(fn.append_basic_block("entry"))
        args = []
        for i, t in enumerate(body.function_type.args[:n_args]):
            slot = b.gep(slots, [I32(8 * i)], source_etype=ll.IntType(8))
            args.append(b.trunc(b.load(slot, typ=ll.IntType(8)), t) if t == ll.IntType(1) else b.load(slot, typ=t))
        if debug:
            args.append(b.gep(slots, [I32(8 * n_args)], source_etype=ll.IntType(8)))
        with _loop(b, nz) as z, _loop(b, ny) as y, _loop(b, nx) as x:
            b.call(body, args[:n_args] + [x, y, z, nx, ny, nz] + args[n_args:])
        b.ret_void()
        return fn

    def convert(self, b: ll.IRBuilder, method: str, value: ll.Value, ty: ll.Type) -> ll.Value:
        """Halves and bfloats widen on their bits: LLVM's wasm back end cannot select bfloat
        extensions, and passes some half loads to compiler-rt's ``__extendhfsf2`` as i64, which
        wasmtime refuses. A half's magnitude bits moved into a float's place, times 2^112, are its
        value (subnormals included); infinities and NaNs get float's top exponent."""
        element = scalar_of(value.type)
        if method != "fpext" or str(element) not in ("half", "bfloat"):
            return super().convert(b, method, value, ty)
        count = value.type.count if isinstance(value.type, ll.VectorType) else None
        like = (lambda t: ll.VectorType(t, count)) if count else (lambda t: t)  # noqa: E731
        if str(element) == "bfloat":
            wide = bfloat_bits_to_float(b, value)
        else:
            i32 = like(I32)
            bits = b.zext(b.bitcast(value, like(ll.IntType(16))), i32)
            magnitude = b.and_(bits, const(i32, 0x7FFF))
            scaled = b.fmul(b.bitcast(b.shl(magnitude, const(i32, 13)), like(ll.FloatType())),
                            const(like(ll.FloatType()), 2.0 ** 112))
            special = b.icmp_unsigned(">=", magnitude, const(i32, 0x7C00))
            top = b.or_(b.shl(magnitude, const(i32, 13)), const(i32, 0x7F800000))
            sign = b.shl(b.and_(bits, const(i32, 0x8000)), const(i32, 16))
            wide = b.bitcast(b.or_(b.select(special, top, b.bitcast(scaled, i32)), sign), like(ll.FloatType()))
        return wide if scalar_of(ty) == ll.FloatType() else b.fpext(wide, ty)

    def compare(self, b: ll.IRBuilder, op: str, ordered: bool, x: ll.Value, y: ll.Value) -> ll.Value:
        """Half compares on their bits: LLVM's wasm back end never finishes vectors of half
        compares, and LLVM folds compares of halves widened to float back into them. A half's
        magnitude bits, negated when its sign is set, order as its value does (both zeros at 0)."""
        if scalar_of(x.type) != ll.HalfType():
            return super().compare(b, op, ordered, x, y)
        wide = ll.VectorType(I32, x.type.count) if isinstance(x.type, ll.VectorType) else I32

        def key_and_nan(v: ll.Value) -> tuple[ll.Value, ll.Value]:
            bits = b.zext(b.bitcast(v, ll.VectorType(ll.IntType(16), v.type.count)
                                    if isinstance(v.type, ll.VectorType) else ll.IntType(16)), wide)
            magnitude = b.and_(bits, const(wide, 0x7FFF))
            negative = b.icmp_unsigned("!=", b.and_(bits, const(wide, 0x8000)), const(wide, 0))
            key = b.select(negative, b.sub(const(wide, 0), magnitude), magnitude)
            return key, b.icmp_unsigned(">", magnitude, const(wide, 0x7C00))

        (kx, nx), (ky, ny) = key_and_nan(x), key_and_nan(y)
        unordered = b.or_(nx, ny)
        if op in ("ord", "uno"):
            return b.not_(unordered) if op == "ord" else unordered
        holds = b.icmp_signed(op, kx, ky)
        return b.and_(b.not_(unordered), holds) if ordered else b.or_(unordered, holds)


class _loop:
    """``with _loop(b, n) as i:`` the body for i in 0 .. n - 1."""

    def __init__(self, b: ll.IRBuilder, n: ll.Value):
        self.b, self.n = b, n

    def __enter__(self) -> ll.Value:
        b = self.b
        self.before = b.block
        self.head, self.body, self.after = (b.append_basic_block(n) for n in ("head", "body", "after"))
        b.branch(self.head)
        b.position_at_end(self.head)
        self.i = b.phi(I32)
        self.i.add_incoming(I32(0), self.before)
        b.cbranch(b.icmp_signed("<", self.i, self.n), self.body, self.after)
        b.position_at_end(self.body)
        return self.i

    def __exit__(self, *exc) -> None:
        b = self.b
        self.i.add_incoming(b.add(self.i, I32(1)), b.block)
        b.branch(self.head)
        b.position_at_end(self.after)


def llir(module, ctx) -> str:
    from tritium.codegen.block.kernel import generate  # the MLIR bindings: only when compiling

    return generate(module, WasmHooks(), TRIPLE, str(target_machine().target_data), debug=ctx.options.debug)


def wasm_obj(text: str, ctx) -> bytes:
    """Optimise, rewrite the shifts LLVM's wasm back end gets wrong (``_widen_constant_shifts``),
    emit the object: in a worker, so an LLVM abort is a located error."""
    def emit(safe: bool) -> bytes:
        module = llvm.parse_assembly(text)
        module.verify()
        optimize(module, target_machine(), vectorize=True, safe=safe)
        return target_machine().emit_object(llvm.parse_assembly(_widen_constant_shifts(str(module))))

    return run_isolated(ctx.signature.name, "wasm-obj", emit)


_NAME = r'%(?:"[^"]+"|[-\w.$]+)'
#: ``lshr`` of a negative narrow constant by a narrow vector
_CONSTANT_LSHR = re.compile(rf'({_NAME}) = lshr <(\d+) x i(8|16)> splat \(i\3 (-\d+)\), ({_NAME})')


def _widen_constant_shifts(text: str) -> str:
    """``lshr <N x i8|i16> splat (C), %x`` with a negative C, as i32 lanes: LLVM's wasm back end
    unrolls it with C sign-extended into the i32 it shifts, and the lane's result takes the sign's
    ones (200 >> 1 in uint8 gives 228)."""
    def widened(m: re.Match) -> str:
        name, lanes, bits, value, amount = m.groups()
        fresh = (lambda tag: f'%"{name[2:-1]}.{tag}"' if name.startswith('%"') else f"{name}.{tag}")  # noqa: E731
        narrow, wide = f"<{lanes} x i{bits}>", f"<{lanes} x i32>"
        return (f"{fresh('z')} = zext {narrow} {amount} to {wide}\n"
                f"  {fresh('w')} = lshr {wide} splat (i32 {int(value) % (1 << int(bits))}), {fresh('z')}\n"
                f"  {name} = trunc {wide} {fresh('w')} to {narrow}")

    return _CONSTANT_LSHR.sub(widened, text)


def wasm(obj: bytes, ctx) -> bytes:
    """The linked module: its memory imported (the launcher makes it), every function and global
    the kernel defines exported, compiler-rt's helpers and its math linked in; math it lacks
    (``erff``...) stays an import the runtime provides (``runtime.MATH``)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "kernel.o"), os.path.join(tmp, "kernel.wasm")
        with open(src, "wb") as f:
            f.write(obj)
        command = [*zig(), "build-exe", src, "-target", "wasm32-freestanding", "-fno-entry", "-rdynamic",
                   "--import-memory", "--import-symbols", "--export=__heap_base", "--stack", str(STACK_BYTES), "-O", "ReleaseFast",
                   "--cache-dir", os.path.join(tmp, "cache"), f"-femit-bin={out}"]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise TritiumError(f"linking kernel '{ctx.signature.name}' for wasm failed: {done.stderr.strip()}")
        with open(out, "rb") as f:
            return f.read()


@functools.cache
def zig() -> tuple[str, ...]:
    """The zig that links: ``TRITIUM_ZIG``, else the pip ``ziglang`` wheel's."""
    if os.environ.get("TRITIUM_ZIG"):
        return (os.environ["TRITIUM_ZIG"],)
    try:
        import ziglang  # noqa: F401
    except ImportError:
        raise TritiumError("the wasm target links with zig: pip install ziglang, or set TRITIUM_ZIG to a zig "
                           "executable") from None
    return (sys.executable, "-m", "ziglang")
