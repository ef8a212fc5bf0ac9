"""The CPU kernel ABI, shared by the code generator (which emits it) and the driver (which calls it).

A compiled kernel ``k`` exports one function::

    void k_grid(const uint8_t *args, int32_t nx, int32_t ny, int32_t nz, int32_t *counter, int32_t batch)

``args`` holds the runtime arguments in 8-byte slots (each value little-endian at the start of its
slot; pointers as addresses, ``i1`` as a byte, ``bf16`` as its 16 bits). Every worker thread calls
``k_grid`` with the same arguments; each repeatedly claims the next program id with an atomic
increment of ``*counter`` (zero at launch) until the grid is exhausted, so load balances itself.
Each claim takes ``batch`` consecutive programs: an atomic increment is a full memory fence on
x86, and a fence per small program stalls the store stream of memory-bound kernels.
Program ids run x fastest, then y, then z.
"""

from __future__ import annotations

import struct

from llvmlite import ir as ll

from tritium.errors import TritiumError

SLOT_BYTES = 8
I32 = ll.IntType(32)

#: struct format of one scalar argument, by Triton type name
SCALAR_FORMATS = {
    "i1": "?", "i8": "b", "u8": "B", "i16": "h", "u16": "H", "i32": "i", "u32": "I", "i64": "q",
    "u64": "Q", "fp16": "e", "bf16": "H", "fp32": "f", "fp64": "d",
}


def entry_name(kernel: str) -> str:
    return f"{kernel}_grid"


def slot_struct(arg_types: tuple[str, ...]) -> struct.Struct:
    """The packed layout of ``args`` for a kernel with these Triton argument types."""
    fmt = "<"
    for t in arg_types:
        code = "Q" if t.startswith("*") else SCALAR_FORMATS.get(t)
        if code is None:
            raise TritiumError(f"the cpu target does not support arguments of type {t} yet")
        fmt += code + f"{SLOT_BYTES - struct.calcsize('<' + code)}x"
    return struct.Struct(fmt)


def emit_grid_entry(module: ll.Module, body: ll.Function, n_args: int) -> ll.Function:
    """Define ``<kernel>_grid``: unpack the argument slots, then run programs until none is left.

    ``body`` takes the kernel's arguments followed by pid x, y, z and grid sizes x, y, z (i32).
    """
    ptr = ll.PointerType()
    fn = ll.Function(module, ll.FunctionType(ll.VoidType(), [ptr, I32, I32, I32, ptr, I32]),
                     entry_name(body.name))
    args_ptr, nx, ny, nz, counter, batch = fn.args
    b = ll.IRBuilder(fn.append_basic_block("entry"))
    args = []
    for i, t in enumerate(body.function_type.args[:n_args]):
        slot = b.gep(args_ptr, [ll.Constant(ll.IntType(64), i * SLOT_BYTES)], source_etype=ll.IntType(8))
        if t == ll.IntType(1):
            args.append(b.trunc(b.load(slot, typ=ll.IntType(8)), t))
        else:
            args.append(b.load(slot, typ=t))
    total = b.mul(b.mul(nx, ny), nz)
    claim = fn.append_basic_block("claim")
    claimed = fn.append_basic_block("claimed")
    run = fn.append_basic_block("run")
    done = fn.append_basic_block("done")
    b.branch(claim)
    b.position_at_end(claim)
    first = b.atomic_rmw("add", counter, batch, "monotonic")
    b.cbranch(b.icmp_unsigned(">=", first, total), done, claimed)
    b.position_at_end(claimed)
    room = b.sub(total, first)
    last = b.add(first, b.select(b.icmp_unsigned("<", batch, room), batch, room))
    b.branch(run)
    b.position_at_end(run)
    pid = b.phi(I32)
    pid.add_incoming(first, claimed)
    x = b.urem(pid, nx)
    rest = b.udiv(pid, nx)
    y = b.urem(rest, ny)
    z = b.udiv(rest, ny)
    b.call(body, args + [x, y, z, nx, ny, nz])
    following = b.add(pid, ll.Constant(I32, 1))
    pid.add_incoming(following, b.block)
    b.cbranch(b.icmp_unsigned("<", following, last), run, claim)
    b.position_at_end(done)
    b.ret_void()
    return fn


def trampolines_ir(x86: bool) -> str:
    """LLVM IR of the two functions the thread pool calls (same arguments as ``<kernel>_grid`` plus
    ``grid`` and ``pending``): ``tritium_cpu_run`` runs the grid entry then decrements ``*pending``;
    ``tritium_cpu_run_and_wait`` (the launching thread) runs it too, then spins until
    ``*pending`` is zero. Waiting natively spares a wake-up through Python (tens of microseconds)."""
    pause = "call void @llvm.x86.sse2.pause()" if x86 else ""
    declare = "declare void @llvm.x86.sse2.pause()" if x86 else ""
    params = "ptr %grid, ptr %args, i32 %nx, i32 %ny, i32 %nz, ptr %counter, i32 %batch, ptr %pending"
    call = "call void %grid(ptr %args, i32 %nx, i32 %ny, i32 %nz, ptr %counter, i32 %batch)"
    return f"""
{declare}
define void @tritium_cpu_run({params}) {{
  {call}
  atomicrmw sub ptr %pending, i32 1 release
  ret void
}}
define void @tritium_cpu_run_and_wait({params}) {{
entry:
  {call}
  br label %wait
wait:
  %left = load atomic i32, ptr %pending acquire, align 4
  %done = icmp eq i32 %left, 0
  br i1 %done, label %exit, label %spin
spin:
  {pause}
  br label %wait
exit:
  ret void
}}
"""
