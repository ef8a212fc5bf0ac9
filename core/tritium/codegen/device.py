"""What a GPU-like target tells core's per-thread code generator (``tritium.codegen.threads``).

Core lowers a kernel whose tensors have distributed layouts (``tritium.layout.distributed``) to
one LLVM function run by ``num_warps * warp_size`` threads per program. Everything that differs
between GPUs goes through a ``DeviceHooks`` object: the NVPTX and AMDGPU targets subclass it and
override the indexing registers, the barrier, warp shuffles, the kernel's calling convention,
device printing and assertions, and the math library (``MathHooks``). The defaults use only
target-independent LLVM IR (printing and assertions have none: they say they are not there), so a
vendor overrides what its back end needs and nothing else.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

from llvmlite import ir as ll

from ..errors import NotImplementedYet
from ..layout.distributed import Fragment
from ..layout.swizzle import SwizzledTile
from . import atomics
from .math import MathHooks
from .types import size_in_bytes

I32 = ll.IntType(32)

#: the conformance cases a target on the per-thread generator declares as gaps (its plugin's
#: ``tritium_conformance_expectations``): debug mode checks pointer bounds only in the whole-block
#: generator and the interpreter
UNCHECKED_BOUNDS_GAPS = {
    "debug-bounds-*-outside": "debug mode does not check pointer bounds in core's per-thread code generator, "
                              "which GPU targets use: run the kernel on the interpreter or cpu target to find the "
                              "access (or under compute-sanitizer on NVIDIA GPUs)"}


@dataclasses.dataclass(frozen=True)
class WarpMatrixOp:
    """A warp-wide matrix multiply-accumulate instruction (NVIDIA's ``mma``, AMD's MFMA): the warp
    computes ``D[m, n] = A[m, k] @ B[k, n] + C[m, n]`` with each lane holding fragments of A, B
    and C/D. The fragments (``layout.distributed.Fragment``, linear over the lane's bits) give:

    - ``a``: ``(row, k)`` of the first of ``k_pack`` consecutive K elements of A per entry;
    - ``b``: ``(k, col)`` of the first of ``k_pack`` consecutive K elements of B per entry;
    - ``c``: ``(row, col)`` of each accumulator element (the layout ``Mma`` of ``tl.dot``'s result).

    ``emit(b, a, b_, c)`` runs the instruction on the lane's fragments (``a``/``b_``: vectors of
    ``k_pack`` operand elements, ``c``: accumulator scalars) and returns D's scalars.

    ``load``, where the target has one (NVIDIA's ``ldmatrix``), is a warp's collective read of
    ``count`` (1, 2 or 4) blocks of 8 rows of 16 bytes from shared memory:
    ``load(b, address, count, transposed)``, where lane ``i`` gives the address of row ``i % 8``
    of block ``i // 8``, returns each block's 32-bit register of the lane: in lane ``4 * g + t``,
    bytes ``4t .. 4t + 3`` of row g (16-bit elements at columns 2t and 2t + 1, a 32-bit one at
    column t), or, ``transposed`` (16-bit elements only), the elements at (rows 2t and 2t + 1,
    column g). Core uses it where the operands' fragments are made of such
    blocks (``codegen.threads.warp_matrix``) and plain shared-memory loads elsewhere."""

    m: int
    n: int
    k: int
    k_pack: int
    a: Fragment
    b: Fragment
    c: Fragment
    emit: Callable[[ll.IRBuilder, list[ll.Value], list[ll.Value], list[ll.Value]], list[ll.Value]]
    load: Callable[[ll.IRBuilder, ll.Value, int, bool], list[ll.Value]] | None = None
    #: the same product issued by a group of warps from shared memory, where the target has one
    group: "WarpgroupMatrixOp | None" = None


@dataclasses.dataclass(frozen=True)
class SharedOperand:
    """An operand of a ``WarpgroupMatrixOp`` in shared memory: the instruction's block of it starts
    ``offset`` bytes (an i32; a chunk of a row whose row index is a multiple of 8) after ``start``,
    the first byte of ``tile`` (``layout.swizzle.SwizzledTile``, aligned to its ``alignment``),
    whose rows run along K (``k_major``: A ``[M, K]``, B stored as ``[N, K]``) or along M or N (A
    stored as ``[K, M]``, B ``[K, N]``). The two parts stay apart so that a target describes the
    tile once and each block as a constant step from it (a product's K steps)."""

    start: ll.Value
    offset: ll.Value
    tile: SwizzledTile
    k_major: bool


@dataclasses.dataclass(frozen=True)
class WarpgroupMatrixOp:
    """A matrix multiply-accumulate that ``warps`` consecutive warps issue together, reading B (and A,
    or A from registers) from shared memory: NVIDIA's Hopper ``wgmma``. Warp ``i`` of the group holds
    the accumulator fragments of rows ``16 i ..`` of the group's ``m = warps * WarpMatrixOp.m`` rows,
    as the warp-level instruction lays out its tiles (its ``c`` fragment, the ``n // 8`` column
    tiles in order), and A's fragments from registers as that instruction's ``a``. So the warp-level
    layouts serve both (``layout.matrix``); the group instruction is the code generator's choice.

    - ``emit(b, a, b_, c, n)``: ``D[m, n] = A[m, k] @ B[k, n] + C`` for ``n`` it ``takes``; ``a``
      is a ``SharedOperand`` or the lane's A fragment registers, ``b_`` a ``SharedOperand``, ``c``
      the lane's accumulator scalars. The result is ready only after ``wait``, and a product must
      ``fence`` before it reads registers other code wrote.
    - ``fence(b)``, ``commit(b)``: order register writes before the group's instructions; close the
      instructions issued since the last commit into one group.
    - ``wait(b, values, pending)``: wait until at most ``pending`` groups run; returns ``values`` (the
      accumulators), which code after it must use instead, so that nothing reads them earlier.
    - ``publish(b)``: make this thread's plain stores to shared memory visible to the instruction
      (before the barrier that orders them for the other threads).
    - ``mn_major``: whether operands may be stored along M or N (else only K-major ones run).
    - ``takes(n)``: whether the instruction has a shape of ``n`` columns (a multiple of 8 up to
      ``n_max``, by default)."""

    warps: int
    k: int
    n_max: int
    mn_major: bool
    emit: Callable[..., list[ll.Value]]
    fence: Callable[[ll.IRBuilder], None]
    commit: Callable[[ll.IRBuilder], None]
    wait: Callable[[ll.IRBuilder, list[ll.Value], int], list[ll.Value]]
    publish: Callable[[ll.IRBuilder], None]
    takes: Callable[[int], bool] = lambda n: n % 8 == 0


@dataclasses.dataclass(frozen=True)
class TensorCopy:
    """A copy engine that moves a whole block of a tensor described on the host into shared memory,
    completing on a barrier object in shared memory: NVIDIA's tensor memory accelerator (TMA).

    The host encodes each descriptor's tensor map (``encode``, at launch); the kernel takes it as a
    parameter that ``parameter`` marks. One thread arms a barrier for the bytes it expects and issues
    the copies; every thread then waits on the barrier's phase.

    - ``parameter(arg)``: make kernel parameter ``arg`` (a pointer) the by-value tensor map.
    - ``init(b, barrier)``: initialise the 8-byte barrier object for one arrival; ``fence_init(b)``
      makes initialisations visible to the copy engine (a thread barrier follows).
    - ``expect(b, barrier, nbytes)``: arrive on it, expecting ``nbytes`` more bytes.
    - ``copy(b, dst, tensor_map, coords, barrier)``: copy the box at ``coords`` (innermost first) of
      the tensor map to shared ``dst``, completing its bytes on ``barrier``.
    - ``wait(b, barrier, phase)``: wait until the barrier's phase ``phase`` (0 or 1, i32) completed.
    - ``invalidate(b, barrier)``: end the barrier object, so that its bytes may be reused.
    - ``swizzles``: the swizzled row widths (bytes) the engine writes, as ``layout.swizzle`` does.
    - ``max_box``: the most elements of a box along one dimension."""

    parameter: Callable[[ll.Argument], None]
    init: Callable[[ll.IRBuilder, ll.Value], None]
    fence_init: Callable[[ll.IRBuilder], None]
    expect: Callable[[ll.IRBuilder, ll.Value, int], None]
    copy: Callable[[ll.IRBuilder, ll.Value, ll.Value, list, ll.Value], None]
    wait: Callable[[ll.IRBuilder, ll.Value, ll.Value], None]
    invalidate: Callable[[ll.IRBuilder, ll.Value], None]
    swizzles: tuple[int, ...] = (32, 64, 128)
    max_box: int = 256


class DeviceHooks(MathHooks):
    """Target-specific pieces of GPU code generation. Subclass per target; every method gets the
    ``ll.IRBuilder`` positioned where the code goes."""

    #: threads per warp (wavefront): 32 on NVIDIA, 64 or 32 on AMD
    warp_size: int = 32
    #: LLVM address space of ``!tile.ptr`` in tile address space 1 (global memory)
    global_address_space: int = 1
    #: LLVM address space of shared memory (NVIDIA's shared, AMD's LDS)
    shared_address_space: int = 3

    def pointer_bits(self, address_space: int) -> int:
        """How wide a pointer in LLVM address space ``address_space`` is in memory: the layout stage
        sizes scratch by it and code generation pointer elements in loads and stores. AMD's shared
        (LDS) and private pointers and a wasm target's are 32-bit; the default is 64 bits in every
        address space."""
        return 64

    def kernel(self, module: ll.Module, name: str, params: list[ll.Type], num_threads: int) -> ll.Function:
        """Declare the kernel entry ``name`` taking ``params``, launched with ``num_threads`` threads
        per program (calling convention, launch-bound attributes)."""
        raise NotImplementedError

    def thread_id(self, b: ll.IRBuilder) -> ll.Value:
        """This thread's index in its program (0 .. num_threads - 1), i32."""
        raise NotImplementedError

    def program_id(self, b: ll.IRBuilder, axis: int) -> ll.Value:
        """The program's index along grid ``axis``, i32."""
        raise NotImplementedError

    def num_programs(self, b: ll.IRBuilder, axis: int) -> ll.Value:
        """The grid's extent along ``axis``, i32."""
        raise NotImplementedError

    def barrier(self, b: ll.IRBuilder) -> None:
        """Wait for every thread of the program; make their shared-memory writes visible."""
        raise NotImplementedError

    def shuffle_xor(self, b: ll.IRBuilder, value: ll.Value, lane_mask: int) -> ll.Value:
        """The i32 ``value`` of the lane ``lane ^ lane_mask`` of this warp (every lane takes part)."""
        raise NotImplementedError

    def printf(self, b: ll.IRBuilder, fmt: str, args: list[ll.Value]) -> None:
        """Print C's ``printf(fmt, *args)`` from this thread (``tl.device_print``); the arguments are
        i32, i64 or double, as C passes them."""
        raise NotImplementedYet("tl.device_print is not implemented on this target yet")

    def assert_fail(self, b: ll.IRBuilder, message: str, file: str, line: int) -> None:
        """A ``tl.device_assert`` with ``message`` at ``file``:``line`` failed in this thread: report
        it and end the launch with an error."""
        raise NotImplementedYet("tl.device_assert is not implemented on this target yet")

    def sync_scope(self, scope: str) -> str:
        """The LLVM ``syncscope`` of Triton's atomic ``scope`` ("gpu", "cta" or "sys"); "" is LLVM's
        default, the whole system, which is right (if slower) everywhere."""
        return ""

    def atomic_rmw(self, b: ll.IRBuilder, op: str, ptr: ll.Value, val: ll.Value, sem: str, scope: str) -> ll.Value:
        """One atomic ``op`` (an LLVM ``atomicrmw`` operation; ``xchg`` of integers) of ``val`` at the
        global ``ptr`` with Triton's ``sem`` and ``scope``; returns the old value."""
        return atomics.llvm_rmw(b, op, ptr, val, sem, self.sync_scope(scope))

    def atomic_cas(self, b: ll.IRBuilder, ptr: ll.Value, cmp: ll.Value, val: ll.Value, sem: str,
                   scope: str) -> ll.Value:
        """One compare-and-swap of integers at the global ``ptr``; returns the old value."""
        return atomics.llvm_cas(b, ptr, cmp, val, sem, self.sync_scope(scope))

    def shared_atomic_add(self, b: ll.IRBuilder, ptr: ll.Value, val: ll.Value) -> None:
        """Add the integer ``val`` to the shared-memory ``ptr`` atomically among the program's threads
        (``tl.histogram``'s counters); LLVM's relaxed ``atomicrmw add`` by default."""
        b.atomic_rmw("add", ptr, val, "monotonic")

    def inline_asm(self, b: ll.IRBuilder, ftype: ll.FunctionType, asm: str, constraints: str,
                   args: list[ll.Value], pure: bool) -> ll.Value | None:
        """Call the foreign assembly ``asm`` (``tl.inline_asm_elementwise``, written for this target's
        instruction set) of type ``ftype`` with LLVM's ``constraints`` on ``args``; ``pure`` says it
        has no side effects. None where the target cannot run foreign assembly: the default, as only
        the target knows which assembly its users write; the code generator then says so."""
        return None

    def warp_matrix_op(self, operand: str, accumulator: str) -> WarpMatrixOp | None:
        """The target's warp-wide matrix instruction for ``tl.dot`` of ``operand`` elements ("fp16",
        "bf16") into ``accumulator`` ("fp32") elements, or None (the default): the code generator
        then multiplies with fused multiply-adds on every thread."""
        return None

    def shared_memory(self, module: ll.Module) -> ll.Value:
        """The base of the program's shared memory (its size is given at launch from the compile
        metadata ``shared``): a pointer in ``shared_address_space``."""
        g = module.globals.get("tritium_shared")
        if g is None:
            g = ll.GlobalVariable(module, ll.ArrayType(ll.IntType(8), 0), "tritium_shared",
                                  addrspace=self.shared_address_space)
            g.linkage = "external"
            g.align = 1024  # as ``passes.shared_memory`` aligns the buffers in it
        return g

    def load(self, b: ll.IRBuilder, ptr: ll.Value, ty: ll.Type, mask: ll.Value | None, other: ll.Value | None,
             align: int, hints: Mapping[str, Any] | None = None) -> ll.Value:
        """Load a ``ty`` (a scalar, or a vector of contiguous elements) from ``ptr``, aligned to
        ``align`` bytes; where the i1 ``mask`` is false, yield ``other`` (undefined when None)
        without touching memory. ``hints`` are ``tl.load``'s cache hints (``cache``: ".ca"/".cg"/
        ".cv", ``evict``: "evict_first"/"evict_last", ``volatile``: True), for a target to honour
        where it can. The default branches around the load and ignores the hints."""
        if mask is None:
            return b.load(ptr, typ=ty, align=align)
        fallback = other if other is not None else ll.Constant(ty, ll.Undefined)
        before = b.block
        with b.if_then(mask, likely=True):
            loaded = b.load(ptr, typ=ty, align=align)
            inside = b.block
        phi = b.phi(ty)
        phi.add_incoming(loaded, inside)
        phi.add_incoming(fallback, before)
        return phi

    #: the engine that copies host-described tensor blocks into shared memory, where there is one
    #: (``TensorCopy``); the layout stage gives it the loads of host tensor descriptors it can take
    tensor_copy: TensorCopy | None = None

    def async_copy(self, b: ll.IRBuilder, dst: ll.Value, src: ll.Value, ty: ll.Type, mask: ll.Value) -> None:
        """Start copying a ``ty`` (a vector of 4, 8 or 16 bytes, or a scalar) from global ``src`` to
        shared ``dst``, both aligned to its size; where the i1 ``mask`` is false, write zeros. The
        copy needs to be complete only after ``async_wait`` leaves fewer groups pending than were
        committed after it (``passes.software_pipeline``). The default copies now: a load, a store."""
        zero = ll.Constant(ty, None)
        count, elem = (ty.count, ty.element) if isinstance(ty, ll.VectorType) else (1, ty)
        align = count * size_in_bytes(elem, self.pointer_bits)
        b.store(self.load(b, src, ty, mask, zero, align), dst, align=align)

    def async_commit(self, b: ll.IRBuilder) -> None:
        """Close this thread's group of copies started since the last commit (default: nothing)."""

    def async_wait(self, b: ll.IRBuilder, pending: int) -> None:
        """Wait until at most ``pending`` of this thread's committed groups of copies are unfinished
        (default: nothing, copies being done at once); a barrier follows."""

    def store(self, b: ll.IRBuilder, ptr: ll.Value, value: ll.Value, mask: ll.Value | None, align: int,
              hints: Mapping[str, Any] | None = None) -> None:
        """Store ``value`` (a scalar or a vector) at ``ptr`` where the i1 ``mask`` is true; ``hints``
        as ``load``'s (``cache``: ".wb"/".cg"/".cs"/".wt")."""
        if mask is None:
            b.store(value, ptr, align=align)
            return
        with b.if_then(mask, likely=True):
            b.store(value, ptr, align=align)
