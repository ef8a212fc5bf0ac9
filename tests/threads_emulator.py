"""Runs the per-thread code generator's kernels on the host, one OS thread per GPU thread.

There is no GPU here, so the generated LLVM IR is checked for what it computes by compiling it for
the host with ``HostThreadHooks``: the thread and program ids are extra kernel parameters, shared
memory is one module global, stores count the elements they write, prints go to C's printf,
failed assertions are recorded, and barriers and warp shuffles call back into Python, where every
thread of the program meets at a ``threading.Barrier`` (ctypes releases the GIL while the
compiled code runs). A small warp size keeps the thread count low while lane and warp bits are
both exercised.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir as ll

from tritium.codegen.device import DeviceHooks
from tritium.codegen.threads import generate

I32 = ll.IntType(32)
#: extra kernel parameters after the tile function's: thread id, program ids, program counts
EXTRA = 7
SHARED_BYTES = 1 << 16

_BARRIER = ctypes.CFUNCTYPE(None)
_STORED = ctypes.CFUNCTYPE(None, ctypes.c_int32)
_ASSERT = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int32)
_SHUFFLE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32)


class HostThreadHooks(DeviceHooks):
    global_address_space = 0
    shared_address_space = 0

    def __init__(self, warp_size: int):
        self.warp_size = warp_size

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
        data = bytearray(fmt.encode() + b"\0")
        text = ll.GlobalVariable(b.module, ll.ArrayType(ll.IntType(8), len(data)), b.module.get_unique_name("fmt"))
        text.initializer, text.global_constant = ll.Constant(text.value_type, data), True
        b.call(printf, [text, *args])

    def assert_fail(self, b: ll.IRBuilder, message: str, file: str, line: int) -> None:
        """Records ``(line, thread id)`` in ``failed_assertions``."""
        self._callback(b, "emulator_assert", ll.VoidType(), [ll.Constant(I32, line), self.thread_id(b)])

    def shared_memory(self, module: ll.Module) -> ll.Value:
        g = module.globals.get("tritium_shared")
        if g is None:
            g = ll.GlobalVariable(module, ll.ArrayType(ll.IntType(8), SHARED_BYTES), "tritium_shared")
            g.initializer = ll.Constant(g.value_type, None)
            g.align = 16
        return g


class Program:
    """What the emulated threads of one program share: the barrier and the shuffle exchange."""

    def __init__(self, threads: int):
        self.barrier = threading.Barrier(threads, timeout=60)
        self.exchange = [0] * threads


_current: Program | None = None
_stored_lock = threading.Lock()
#: elements stored by the kernels run so far
stored_elements = 0
#: (line, thread id) of every failed device assertion so far
failed_assertions: list[tuple[int, int]] = []


@_BARRIER
def _barrier() -> None:
    _current.barrier.wait()


@_STORED
def _stored(count: int) -> None:
    global stored_elements
    with _stored_lock:
        stored_elements += count


@_ASSERT
def _assert(line: int, tid: int) -> None:
    with _stored_lock:
        failed_assertions.append((line, tid))


@_SHUFFLE
def _shuffle(tid: int, value: int, lane_mask: int) -> int:
    _current.exchange[tid] = value
    _current.barrier.wait()
    moved = _current.exchange[tid ^ lane_mask]
    _current.barrier.wait()
    return moved


_CTYPES = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
           "i64": ctypes.c_int64, "float": ctypes.c_float, "double": ctypes.c_double, "ptr": ctypes.c_void_p}


def run(module, grid: tuple[int, ...], args: list, num_warps: int = 2, warp_size: int = 8) -> str:
    """Generate ``module`` (tile-layout stage) for the host and run it on ``args`` (numpy arrays are
    passed by address) over ``grid``; returns the LLVM IR."""
    global _current
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    tm = llvm.Target.from_default_triple().create_target_machine(  # the host's features: F16C converts halves
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=2)
    text = generate(module, HostThreadHooks(warp_size), llvm.get_default_triple(), str(tm.target_data), num_warps)
    parsed = llvm.parse_assembly(text)
    parsed.verify()
    llvm.add_symbol("emulator_barrier", ctypes.cast(_barrier, ctypes.c_void_p).value)
    llvm.add_symbol("emulator_stored", ctypes.cast(_stored, ctypes.c_void_p).value)
    llvm.add_symbol("emulator_assert", ctypes.cast(_assert, ctypes.c_void_p).value)
    llvm.add_symbol("emulator_shuffle", ctypes.cast(_shuffle, ctypes.c_void_p).value)
    engine = llvm.create_mcjit_compiler(parsed, tm)
    engine.finalize_object()
    fn = next(f for f in parsed.functions if not f.is_declaration)
    params = [_CTYPES[str(a.type).split(" ")[0]] for a in fn.arguments]
    kernel = ctypes.CFUNCTYPE(None, *params)(engine.get_function_address(fn.name))
    values = [a.ctypes.data if isinstance(a, np.ndarray) else a for a in args]
    grid = tuple(grid) + (1,) * (3 - len(grid))
    threads = num_warps * warp_size
    for pid in np.ndindex(*grid[::-1]):
        _current = Program(threads)
        workers = [threading.Thread(target=kernel, args=(*values, tid, *pid[::-1], *grid)) for tid in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    _current = None
    ctypes.CDLL(None).fflush(None)
    return text
