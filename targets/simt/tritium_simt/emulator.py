"""Runs the per-thread code generator's kernels on the host, one OS thread per GPU thread.

A GPU target's kernels cannot run where there is no GPU, so what core's per-thread code generator
computes is checked by compiling the same tile-layout modules for the host with ``HostThreadHooks``:
the thread and program ids are extra kernel parameters, shared memory is one module global, stores
count the elements they write, prints go to C's printf, failed assertions are recorded, and
barriers and warp shuffles call back into Python, where every thread of the program meets at a
``threading.Barrier`` (ctypes releases the GIL while the compiled code runs). Any warp size runs:
a small one keeps unit tests fast while lane and warp bits are both exercised, AMD's 64 and 32
check its wavefronts' layouts. ``run`` runs a module (the unit tests); the ``simt`` target
(``tritium_simt.target``) runs whole kernels, the conformance suite among them.
"""

from __future__ import annotations

import ctypes
import dataclasses
import threading
from typing import Any, Callable

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir as ll

from tritium.codegen.block import conversions
from tritium.codegen.device import DeviceHooks, WarpMatrixOp
from tritium.codegen.threads import generate

I32 = ll.IntType(32)
#: extra kernel parameters after the tile function's: thread id, program ids, program counts
EXTRA = 7
SHARED_BYTES = 1 << 16

_BARRIER = ctypes.CFUNCTYPE(None)
_STORED = ctypes.CFUNCTYPE(None, ctypes.c_int32)
_ASSERT = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int32, ctypes.c_char_p, ctypes.c_char_p)
_SHUFFLE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32)
_I32P, _F32P = ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_float)
_MMA = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int32, _I32P, _I32P, _F32P, _F32P)
_LOAD = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, _I32P)
#: operand kinds of the emulated matrix instruction, as the callback's code
_KINDS = {"fp16": 0, "bf16": 1, "tf32": 2, "e4m3": 3, "e5m2": 4, "s8": 5}


def _text(module: ll.Module, text: str) -> ll.Value:
    """A NUL-terminated constant string in ``module``."""
    data = bytearray(text.encode() + b"\0")
    g = ll.GlobalVariable(module, ll.ArrayType(ll.IntType(8), len(data)), module.get_unique_name("text"))
    g.initializer, g.global_constant = ll.Constant(g.value_type, data), True
    return g


class HostThreadHooks(DeviceHooks):
    global_address_space = 0
    shared_address_space = 0

    def __init__(self, warp_size: int, matrix: WarpMatrixOp | Callable | None = None):
        self.warp_size = warp_size
        self.matrix = matrix

    def convert(self, builder: ll.IRBuilder, method: str, value: ll.Value, ty: ll.Type) -> ll.Value:
        """The host's conversions as the whole-block targets emit them (rounding on the bits): LLVM
        would use the host's bf16 instruction where it has one, and AVX512-BF16's flushes subnormals
        to zero, which a GPU's conversion does not."""
        return conversions.convert(builder, method, value, ty)

    def warp_matrix_op(self, operand: str, accumulator: str) -> WarpMatrixOp | None:
        """``matrix`` (a target's declaration of its instruction: the tile, the K elements a 32-bit
        register packs and the fragments; its ``emit`` is not used; or a target's
        ``warp_matrix_op(operand, accumulator)`` giving them) run by the Python callback
        ``_mma``: the warp's lanes meet there, and each gets its fragment of ``A @ B + C``, computed
        in float64 from every lane's fragments. Where the declaration has a ``load`` (``ldmatrix``;
        32-lane warps), ``_load`` emulates it; fp16, bf16, tf32 and fp8 operands into fp32."""
        spec = declared(self.matrix, operand, accumulator)
        if spec is None or operand not in _KINDS or accumulator != ("int32" if operand == "s8" else "fp32"):
            return None
        f32 = ll.FloatType()

        def emit(b, a_frags, b_frags, c_vals):
            arrays = []
            for values, elem in ((a_frags, I32), (b_frags, I32), (c_vals, f32), (c_vals, f32)):
                array = b.alloca(ll.ArrayType(elem, len(values)))
                arrays.append(array)
                for i, v in enumerate(values):
                    b.store(b.bitcast(v, elem), b.gep(array, [ll.Constant(I32, 0), ll.Constant(I32, i)]))
            self._callback(b, "emulator_mma", ll.VoidType(), [self.thread_id(b), ll.Constant(I32, _KINDS[operand]),
                                                                *[b.bitcast(x, ll.PointerType()) for x in arrays]])
            d = arrays[3]  # int32 accumulators pass through as the bits of fp32 ones
            return [b.bitcast(b.load(b.gep(d, [ll.Constant(I32, 0), ll.Constant(I32, i)])), c_vals[0].type)
                    for i in range(len(c_vals))]

        def load(b, address, count, transposed):
            out = b.alloca(ll.ArrayType(I32, count))
            self._callback(b, "emulator_load", ll.VoidType(), [
                self.thread_id(b), b.bitcast(address, ll.PointerType()), ll.Constant(I32, count),
                ll.Constant(I32, int(transposed)), b.bitcast(out, ll.PointerType())])
            return [b.load(b.gep(out, [ll.Constant(I32, 0), ll.Constant(I32, i)])) for i in range(count)]

        return dataclasses.replace(spec, emit=emit, load=load if spec.load is not None else None)

    def kernel(self, module: ll.Module, name: str, params: list[ll.Type], num_threads: int) -> ll.Function:
        return ll.Function(module, ll.FunctionType(ll.VoidType(), params + [I32] * EXTRA), name)

    def _extra(self, b: ll.IRBuilder, i: int) -> ll.Value:
        return b.function.args[len(b.function.args) - EXTRA + i]

    def thread_id(self, b: ll.IRBuilder) -> ll.Value:
        return self._extra(b, 0)

    def program_id(self, b: ll.IRBuilder, axis: int) -> ll.Value:
        return self._extra(b, 1 + axis)

    def num_programs(self, b: ll.IRBuilder, axis: int) -> ll.Value:
        return self._extra(b, 4 + axis)

    def _callback(self, b: ll.IRBuilder, name: str, ret: ll.Type, args: list[ll.Value]) -> ll.Value:
        fn = b.module.globals.get(name) or ll.Function(b.module, ll.FunctionType(ret, [a.type for a in args]), name)
        return b.call(fn, args)

    def barrier(self, b: ll.IRBuilder) -> None:
        self._callback(b, "emulator_barrier", ll.VoidType(), [])

    def shuffle_xor(self, b: ll.IRBuilder, value: ll.Value, lane_mask: int) -> ll.Value:
        return self._callback(b, "emulator_shuffle", I32, [self.thread_id(b), value, ll.Constant(I32, lane_mask)])

    def store(self, b: ll.IRBuilder, ptr: ll.Value, value: ll.Value, mask: ll.Value | None, align: int,
              hints=None) -> None:
        """Store, and count the elements stored (``stored_elements``)."""
        super().store(b, ptr, value, mask, align)
        width = ll.Constant(I32, value.type.count if isinstance(value.type, ll.VectorType) else 1)
        count = width if mask is None else b.mul(b.zext(mask, I32), width)
        self._callback(b, "emulator_stored", ll.VoidType(), [count])

    def printf(self, b: ll.IRBuilder, fmt: str, args: list[ll.Value]) -> None:
        """C's printf of the host (its output is flushed by ``run``)."""
        printf = b.module.globals.get("printf") or ll.Function(
            b.module, ll.FunctionType(I32, [ll.PointerType()], var_arg=True), "printf")
        b.call(printf, [_text(b.module, fmt), *args])

    def assert_fail(self, b: ll.IRBuilder, message: str, file: str, line: int) -> None:
        """Records ``(line, thread id, message, file)`` in ``failed_assertions``."""
        self._callback(b, "emulator_assert", ll.VoidType(), [ll.Constant(I32, line), self.thread_id(b),
                                                             _text(b.module, message), _text(b.module, file)])

    def shared_memory(self, module: ll.Module) -> ll.Value:
        g = module.globals.get("tritium_shared")
        if g is None:
            g = ll.GlobalVariable(module, ll.ArrayType(ll.IntType(8), SHARED_BYTES), "tritium_shared")
            g.initializer = ll.Constant(g.value_type, None)
            g.align = 16
        return g


class Program:
    """What the emulated threads of one program share: the barrier and the shuffle exchange."""

    def __init__(self, threads: int, warp_size: int, matrix: WarpMatrixOp | None, truth: tuple | None):
        self.barrier = threading.Barrier(threads, timeout=60)
        self.exchange = [0] * threads
        self.warp_size, self.matrix, self.truth = warp_size, matrix, truth
        self.fragments: list = [None] * threads


_current: Program | None = None
_stored_lock = threading.Lock()
#: elements stored by the kernels run so far
stored_elements = 0
#: (line, thread id, message, file) of every failed device assertion so far
failed_assertions: list[tuple[int, int, str, str]] = []
#: (thread id, count) of every emulated block load one of whose blocks has shared-memory bank conflicts
conflicting_loads: list[tuple[int, int]] = []


@_BARRIER
def _barrier() -> None:
    _current.barrier.wait()


@_STORED
def _stored(count: int) -> None:
    global stored_elements
    with _stored_lock:
        stored_elements += count


@_ASSERT
def _assert(line: int, tid: int, message: bytes, file: bytes) -> None:
    with _stored_lock:
        failed_assertions.append((line, tid, message.decode(errors="replace"), file.decode(errors="replace")))


@_SHUFFLE
def _shuffle(tid: int, value: int, lane_mask: int) -> int:
    _current.exchange[tid] = value
    _current.barrier.wait()
    moved = _current.exchange[tid ^ lane_mask]
    _current.barrier.wait()
    return moved


def fp8_values(bits: np.ndarray, fmt: str) -> np.ndarray:
    """The float64 values of fp8 bit patterns (``fmt`` "e4m3": OCP's e4m3fn, bias 7, no infinities;
    "e5m2": bias 15, IEEE-like)."""
    bits = bits.astype(np.int64)
    mbits, bias = (3, 7) if fmt == "e4m3" else (2, 15)
    sign = np.where(bits & 0x80, -1.0, 1.0)
    exp, man = (bits >> mbits) & (0x7F >> mbits), bits & ((1 << mbits) - 1)
    normal = (1 + man / (1 << mbits)) * np.exp2(exp.astype(np.float64) - bias)
    value = np.where(exp == 0, man / (1 << mbits) * 2.0 ** (1 - bias), normal)
    top = 0x7F >> mbits
    special = (exp == top) & ((man == (1 << mbits) - 1) if fmt == "e4m3" else True)
    return np.where(special, np.nan, sign * value)


def _operands(bits: np.ndarray, kind: int) -> np.ndarray:
    """The operands in 32-bit registers (two 16-bit ones, four fp8 ones, or one fp32 rounded to
    tf32 to nearest, ties away, as a converting tensor core takes it), in order, as float64."""
    if kind == _KINDS["tf32"]:
        return ((bits.astype(np.uint32) + 0x1000) & 0xFFFFE000).view(np.float32).astype(np.float64)
    if kind in (_KINDS["e4m3"], _KINDS["e5m2"]):
        return fp8_values(bits.astype(np.uint32).view(np.uint8), "e4m3" if kind == _KINDS["e4m3"] else "e5m2")
    if kind == _KINDS["s8"]:
        return bits.astype(np.uint32).view(np.int8).astype(np.float64)
    halves = bits.astype(np.uint32).view(np.uint16)
    if kind == _KINDS["fp16"]:
        return halves.view(np.float16).astype(np.float64)
    return (halves.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def declared(matrix: WarpMatrixOp | Callable | None, operand: str, accumulator: str) -> WarpMatrixOp | None:
    """The instruction ``matrix`` declares for ``operand`` into ``accumulator`` elements."""
    return matrix(operand, accumulator) if callable(matrix) else matrix


@_MMA
def _mma(tid: int, kind: int, a_ptr, b_ptr, c_ptr, d_ptr) -> None:
    operand = next(name for name, code in _KINDS.items() if code == kind)
    p = _current
    spec = declared(p.matrix, operand, "int32" if operand == "s8" else "fp32")
    pack = spec.k_pack
    frag_a, frag_b, frag_c = p.truth or (spec.a, spec.b, spec.c)
    take = lambda ptr, n: np.ctypeslib.as_array(ptr, (n,)).copy()  # noqa: E731
    p.fragments[tid] = (take(a_ptr, len(spec.a.entries)), take(b_ptr, len(spec.b.entries)),
                        take(c_ptr, len(spec.c.entries)))
    p.barrier.wait()
    lane, first = tid % p.warp_size, tid - tid % p.warp_size
    a, b, c = np.zeros((spec.m, spec.k)), np.zeros((spec.k, spec.n)), np.zeros((spec.m, spec.n))
    for other in range(p.warp_size):
        fa, fb, fc = p.fragments[first + other]
        for e, values in enumerate(_operands(fa, kind).reshape(-1, pack)):
            row, col = frag_a.coordinates(other, e)
            a[row, col:col + pack] = values
        for e, values in enumerate(_operands(fb, kind).reshape(-1, pack)):
            row, col = frag_b.coordinates(other, e)
            b[row:row + pack, col] = values
        for e, value in enumerate(fc.view(np.int32) if kind == _KINDS["s8"] else fc):
            c[frag_c.coordinates(other, e)] = value
    with np.errstate(invalid="ignore"):  # infinities times zero, as the instruction gives NaN
        d = a @ b + c
    for e in range(len(spec.c.entries)):
        value = d[frag_c.coordinates(lane, e)]
        d_ptr[e] = np.array(value, np.int32).view(np.float32) if kind == _KINDS["s8"] else value
    p.barrier.wait()


@_LOAD
def _load(tid: int, address: int, count: int, transposed: int, out) -> None:
    """``ldmatrix.m8n8.x{count}[.trans].b16`` as the PTX ISA states it: lane ``i`` of the warp gives
    the address of row ``i % 8`` of block ``i // 8``; lane ``4g + t`` gets, of each block, the
    16-bit elements at (row g, columns 2t, 2t + 1), or transposed at (rows 2t, 2t + 1, column g)."""
    p = _current
    p.exchange[tid] = address
    p.barrier.wait()
    lane, first = tid % p.warp_size, tid - tid % p.warp_size
    if lane < count and len({p.exchange[first + 8 * lane + r] >> 4 & 7 for r in range(8)}) < 8:
        with _stored_lock:  # the block's 8 rows do not lie in 8 different 16-byte bank groups
            conflicting_loads.append((tid, count))
    g, t = lane >> 2, lane % 4
    half = lambda row, col: ctypes.c_uint16.from_address(p.exchange[first + row] + 2 * col).value  # noqa: E731
    for j in range(count):
        if transposed:
            lo, hi = half(8 * j + 2 * t, g), half(8 * j + 2 * t + 1, g)
        else:
            lo, hi = half(8 * j + g, 2 * t), half(8 * j + g, 2 * t + 1)
        out[j] = lo | hi << 16
    p.barrier.wait()


_CTYPES = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
           "i64": ctypes.c_int64, "float": ctypes.c_float, "double": ctypes.c_double, "ptr": ctypes.c_void_p}


def run(module, grid: tuple[int, ...], args: list, num_warps: int = 2, warp_size: int = 8,
        matrix: WarpMatrixOp | None = None, truth: tuple | None = None) -> str:
    """Generate ``module`` (tile-layout stage) for the host and run it on ``args`` (numpy arrays are
    passed by address) over ``grid``, with ``matrix`` as the emulated matrix instruction; returns
    the LLVM IR. ``truth``, where given, is what the hardware does instead of what ``matrix``
    declares: ``(a, b, c)`` objects whose ``coordinates(lane, entry)`` the emulated instruction
    reads and writes by, so that a target's declared fragments are checked against an independent
    statement of its instruction."""
    text = generate(module, HostThreadHooks(warp_size, matrix), llvm.get_default_triple(),
                    str(host_machine().target_data), num_warps)
    kernel = load(llvm.parse_assembly(text))
    launch(kernel, grid, [a.ctypes.data if isinstance(a, np.ndarray) else a for a in args], num_warps * warp_size,
           warp_size, matrix, truth)
    return text


def host_machine() -> llvm.TargetMachine:
    """A target machine for this host (its features: F16C converts halves)."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=2, codemodel="large")


class Kernel:
    """A loaded kernel: its engine (which owns the code) and a ctypes function of its parameters."""

    def __init__(self, engine: llvm.ExecutionEngine, function: Any):
        self.engine, self.function = engine, function


def load(module: llvm.ModuleRef) -> Kernel:
    """JIT-compile the one kernel of ``module`` (LLVM IR of ``HostThreadHooks``) into this process."""
    module.verify()
    for name, callback in (("emulator_barrier", _barrier), ("emulator_stored", _stored), ("emulator_assert", _assert),
                           ("emulator_shuffle", _shuffle), ("emulator_mma", _mma), ("emulator_load", _load)):
        llvm.add_symbol(name, ctypes.cast(callback, ctypes.c_void_p).value)
    engine = llvm.create_mcjit_compiler(module, host_machine())
    engine.finalize_object()
    fn = next(f for f in module.functions if not f.is_declaration)
    params = [_CTYPES[str(a.type).split(" ")[0]] for a in fn.arguments]
    return Kernel(engine, ctypes.CFUNCTYPE(None, *params)(engine.get_function_address(fn.name)))


_LAUNCH = threading.Lock()  # one emulated program at a time: the callbacks share ``_current``


def launch(kernel: Kernel, grid: tuple[int, ...], values: list, threads: int, warp_size: int,
           matrix: WarpMatrixOp | None = None, truth: tuple | None = None) -> None:
    """Run ``kernel`` on ``values`` (addresses and numbers) over ``grid``: each program on
    ``threads`` OS threads, one per GPU thread, the programs one after another."""
    global _current
    grid = tuple(grid) + (1,) * (3 - len(grid))
    with _LAUNCH:
        for pid in np.ndindex(*grid[::-1]):
            _current = Program(threads, warp_size, matrix, truth)
            workers = [threading.Thread(target=kernel.function, args=(*values, tid, *pid[::-1], *grid))
                       for tid in range(threads)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
        _current = None
        ctypes.CDLL(None).fflush(None)


_CTYPES = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
           "i64": ctypes.c_int64, "half": ctypes.c_uint16, "bfloat": ctypes.c_uint16, "float": ctypes.c_float,
           "double": ctypes.c_double, "ptr": ctypes.c_void_p}
