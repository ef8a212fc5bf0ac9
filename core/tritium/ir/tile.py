"""The ``tile`` dialect: block-level ops on ranked tensors and ``!tile.ptr`` pointers.

Defined in Python on the upstream dialect API (IRDL underneath), so the IR parses, prints,
verifies and runs upstream passes. Elementwise arithmetic stays in upstream ``arith``/``math``;
this dialect holds only what those lack: program ids, ranges, shape ops, pointers, matrix products,
memory, atomics, reductions, scans and the debugging ops ``print`` and ``assert``. Ops print in MLIR's
generic form.
"""


from typing import Any, Sequence

from .mlir import ir

from .mlir import ext as _ext
Dialect, Operand, Result, Region = _ext.Dialect, _ext.Operand, _ext.Result, _ext.Region
result, operand, Pure = _ext.result, _ext.operand, _ext.Pure


class Tile(Dialect, name="tile"):
    pass


class PtrType(Tile.Type, name="ptr"):
    """``!tile.ptr<f32, 1 : i32>``: a pointer to ``pointee`` in address space ``addrspace``."""

    pointee: ir.TypeAttr
    addrspace: ir.IntegerAttr


class BlockedAttr(Tile.Attribute, name="blocked"):
    """``#tile.blocked<...>``: how a tensor's elements are spread over one program's workers.

    ``size_per_thread`` is the contiguous chunk one worker holds (on a CPU: one SIMD vector),
    ``threads_per_warp``/``warps_per_cta`` how many workers share the tile along each dimension,
    ``order`` the dimensions from fastest to slowest varying. Every list has one entry per dimension.
    """

    size_per_thread: ir.ArrayAttr
    threads_per_warp: ir.ArrayAttr
    warps_per_cta: ir.ArrayAttr
    order: ir.ArrayAttr


class SliceAttr(Tile.Attribute, name="slice"):
    """``#tile.slice<dim, parent>``: the layout of a tensor that is ``parent``'s with dimension
    ``dim`` removed (a reduction's result along ``dim``; the source of ``expand_dims`` at ``dim``).
    Every thread holds the elements it holds in ``parent`` at any position along ``dim``, so the
    threads spread along ``dim`` in ``parent`` hold copies."""

    dim: ir.IntegerAttr
    parent: Any


class MmaAttr(Tile.Attribute, name="mma"):
    """``#tile.mma<...>``: a 2-D tensor held as the accumulators of a warp-level matrix instruction
    (``layout.distributed.Mma``). ``instr`` is the instruction's ``[m, n]`` tile, ``warps_per_cta``
    how the warps tile the tensor (interleaved, tile by tile), ``entries`` and ``lanes`` the
    instruction's accumulator fragment as flattened ``(row, col)`` pairs: the offset of each of a
    lane's entries, and the offset each bit of the lane number adds."""

    instr: ir.ArrayAttr
    warps_per_cta: ir.ArrayAttr
    entries: ir.ArrayAttr
    lanes: ir.ArrayAttr


# -- ops ---------------------------------------------------------------------------------------


class ProgramIdOp(Tile.Operation, name="program_id", traits=[Pure]):
    """The index of this program along grid ``axis`` (0, 1 or 2), as i32."""

    axis: ir.IntegerAttr
    res: Result[Any] = result()


class NumProgramsOp(Tile.Operation, name="num_programs", traits=[Pure]):
    """The grid's extent along ``axis``, as i32."""

    axis: ir.IntegerAttr
    res: Result[Any] = result()


class MakeRangeOp(Tile.Operation, name="make_range", traits=[Pure]):
    """``tensor<(end-start)xi32>`` holding start, start+1, ..., end-1."""

    start: ir.IntegerAttr
    end: ir.IntegerAttr
    res: Result[Any] = result()


class SplatOp(Tile.Operation, name="splat", traits=[Pure]):
    """A tensor whose every element is the scalar ``src``."""

    src: Operand[Any] = operand()
    res: Result[Any] = result()


class BroadcastOp(Tile.Operation, name="broadcast", traits=[Pure]):
    """Repeat ``src`` along its size-1 dimensions to the (same-rank) result shape."""

    src: Operand[Any] = operand()
    res: Result[Any] = result()


class ExpandDimsOp(Tile.Operation, name="expand_dims", traits=[Pure]):
    """Insert a dimension of size 1 at ``axis``."""

    src: Operand[Any] = operand()
    axis: ir.IntegerAttr
    res: Result[Any] = result()


# Re-indexing ops: each result element is one operand element, found by the maps of
# ``tritium.codegen.reindex`` (which every target shares). Triton's ``cat`` is ``join``, ``trans``
# and ``reshape``; ``interleave`` and ``ravel`` are ``join``/``reshape``.


class ReshapeOp(Tile.Operation, name="reshape", traits=[Pure]):
    """The same elements in row-major order, in the result's shape (same element count)."""

    src: Operand[Any] = operand()
    res: Result[Any] = result()


class TransOp(Tile.Operation, name="trans", traits=[Pure]):
    """Permuted dimensions: result dimension ``i`` is ``src`` dimension ``order[i]``."""

    src: Operand[Any] = operand()
    order: ir.ArrayAttr
    res: Result[Any] = result()


class JoinOp(Tile.Operation, name="join", traits=[Pure]):
    """``lhs`` and ``rhs`` (one type) stacked along a new last dimension of size 2."""

    lhs: Operand[Any] = operand()
    rhs: Operand[Any] = operand()
    res: Result[Any] = result()


class SplitOp(Tile.Operation, name="split", traits=[Pure]):
    """Element ``part`` (0 or 1) of ``src``'s last dimension, which has size 2 (the inverse of
    ``join``; one op per part, so every op has one result)."""

    src: Operand[Any] = operand()
    part: ir.IntegerAttr
    res: Result[Any] = result()


class FlipOp(Tile.Operation, name="flip", traits=[Pure]):
    """``src`` reversed along dimension ``axis``."""

    src: Operand[Any] = operand()
    axis: ir.IntegerAttr
    res: Result[Any] = result()


#: the re-indexing ops, by name
REINDEXING = frozenset({"tile.reshape", "tile.trans", "tile.join", "tile.split", "tile.flip"})


# Block-wide selection ops, whose code grows with the elements per thread, not with the block
# squared. ``tl.gather`` emits ``tile.gather``; ``tl.histogram`` is written as one-hot comparisons
# that every target runs, and a GPU target raises them to ``tile.histogram`` (``passes.blockwide``).


class GatherOp(Tile.Operation, name="gather", traits=[Pure]):
    """``res[i] = src[i with dimension axis replaced by index[i]]``; 0 where ``index[i]`` is outside
    ``[0, src.shape[axis])`` (``tl.gather`` passes indices already reduced modulo that size).
    ``index`` has the result's shape; ``src`` matches it off ``axis``."""

    src: Operand[Any] = operand()
    index: Operand[Any] = operand()
    axis: ir.IntegerAttr
    res: Result[Any] = result()


class HistogramOp(Tile.Operation, name="histogram", traits=[Pure]):
    """``res[b]``: how many elements of the 1-D ``src`` equal ``b`` (where ``mask`` is true, when
    given), for every bin ``b`` of the 1-D integer result."""

    src: Operand[Any] = operand()
    mask: Operand[Any] | None = None
    res: Result[Any] = result(kw_only=True)


class SortOp(Tile.Operation, name="sort", traits=[Pure]):
    """``src`` sorted along ``dim`` (ascending, or descending where ``descending`` is 1; NaN above
    every number; integers compared as unsigned where ``unsigned`` is 1), keeping the first ``k``
    along ``dim`` (``tl.sort``: all of them; ``tl.topk``: the largest ``k``, descending).

    The ``network`` region computes the same with other tile ops (``language.sorting``'s bitonic
    network: its block takes ``src`` and returns the result with ``tile.reduce_return``). A target
    runs that (``passes.decomposed`` inlines it) or lowers the op itself, with the region emptied:
    GPU targets sort large blocks in shared memory (``codegen.threads.blockwide``)."""

    src: Operand[Any] = operand()
    dim: ir.IntegerAttr
    descending: ir.IntegerAttr
    k: ir.IntegerAttr
    unsigned: ir.IntegerAttr
    res: Result[Any] = result()
    network: Region


class DescriptorLoadOp(Tile.Operation, name="descriptor_load"):
    """``desc.load(offsets)`` of a tensor descriptor made on the host whose base pointer is the
    kernel parameter ``base``: the block at ``offsets`` (i32, one per dimension), ``padding``
    ("zero" or "nan") outside the tensor.

    The ``decomposition`` region computes the same with pointers and masked loads (its block takes
    no arguments and returns the block with ``tile.reduce_return``). A target runs that
    (``passes.decomposed`` inlines it) or copies the block itself, with the region emptied (Hopper's
    tensor memory accelerator)."""

    base: Operand[Any] = operand()
    offsets: Sequence[Operand[Any]] = operand()
    padding: ir.StringAttr
    res: Result[Any] = result()
    decomposition: Region


class AddPtrOp(Tile.Operation, name="addptr", traits=[Pure]):
    """``ptr + offset`` elements (not bytes); scalars, or tensors of one shape."""

    ptr: Operand[Any] = operand()
    offset: Operand[Any] = operand()
    res: Result[Any] = result()


class PtrCastOp(Tile.Operation, name="ptr_cast", traits=[Pure]):
    """A pointer as another pointer type, an int64 as a pointer, or a pointer as an int64 (its
    address), by the types (scalars, or tensors of one shape): Triton's int_to_ptr, ptr_to_int and
    pointer bitcast. The address is unchanged."""

    src: Operand[Any] = operand()
    res: Result[Any] = result()


class DotOp(Tile.Operation, name="dot", traits=[Pure]):
    """``a @ b + c`` of 2-D blocks ([M, K] x [K, N] + [M, N]), or of 3-D ones batched along the first
    dimension ([B, M, K] x [B, K, N] + [B, M, N]); ``a`` and ``b`` share one element type,
    ``c`` and the result have the accumulation type (``tl.dot``'s typing rules). ``input_precision``
    ("ieee", "tf32", ...) says how tensor cores may round fp32 operands; targets that multiply
    without them compute exact products. ``max_num_imprecise_acc`` is Triton's fp8 knob."""

    a: Operand[Any] = operand()
    b: Operand[Any] = operand()
    c: Operand[Any] = operand()
    input_precision: ir.StringAttr
    max_num_imprecise_acc: ir.IntegerAttr
    res: Result[Any] = result()


class LoadOp(Tile.Operation, name="load"):
    """Read through ``ptr``; where ``mask`` is false, yield ``other`` (undefined when absent)."""

    ptr: Operand[Any] = operand()
    mask: Operand[Any] | None = None
    other: Operand[Any] | None = None
    res: Result[Any] = result(kw_only=True)


class StoreOp(Tile.Operation, name="store"):
    """Write ``value`` through ``ptr`` where ``mask`` (when given) is true."""

    ptr: Operand[Any] = operand()
    value: Operand[Any] = operand()
    mask: Operand[Any] | None = None


class PrefetchOp(Tile.Operation, name="prefetch"):
    """A hint: bring the memory the tensor of pointers ``ptr`` points at toward the core, for a later
    store (``write`` 1) or read (0). It never faults and changes no result (``passes.prefetch``, on
    whole-block targets)."""

    ptr: Operand[Any] = operand()
    write: ir.IntegerAttr


class AtomicRMWOp(Tile.Operation, name="atomic_rmw"):
    """Atomically replace the value at ``ptr`` by ``old kind val`` where ``mask`` (when given) is
    true; the result is ``old`` (0 where masked off). ``kind`` is LLVM's ``atomicrmw`` operation
    (add, fadd, max, umax, min, umin, and, or, xor, xchg) or fmax/fmin (Triton's float order:
    integer max/min on the bits, split by sign); ``sem`` and ``scope`` are Triton's strings."""

    ptr: Operand[Any] = operand()
    val: Operand[Any] = operand()
    kind: ir.StringAttr
    sem: ir.StringAttr
    scope: ir.StringAttr
    mask: Operand[Any] | None = None
    res: Result[Any] = result(kw_only=True)


class AtomicCASOp(Tile.Operation, name="atomic_cas"):
    """Atomically store ``val`` at ``ptr`` where the value there has ``cmp``'s bits; the result is
    the old value (``sem`` and ``scope`` as for ``tile.atomic_rmw``)."""

    ptr: Operand[Any] = operand()
    cmp: Operand[Any] = operand()
    val: Operand[Any] = operand()
    sem: ir.StringAttr
    scope: ir.StringAttr
    res: Result[Any] = result()


#: the most tensors one ``tile.reduce`` or ``tile.scan`` combines at once (``tl.reduce((a, b, ...))``)
MAX_OPERANDS = 8


def _combining_op(cls_name: str, name: str, doc: str, attrs: dict[str, Any], terminator: bool = False,
                  region: bool = True, pure: bool = True):
    """An op with up to ``MAX_OPERANDS`` operands (and results) of any types, one per field.

    IRDL gives every value of one variadic operand the same type, while ``tl.reduce((values,
    indices), ...)`` combines tensors of different types: so each operand (result) is an optional
    field of its own, and the op carries ``operandSegmentSizes``/``resultSegmentSizes``."""
    annotations: dict[str, Any] = dict(attrs)
    namespace: dict[str, Any] = {"__doc__": doc}
    for i in range(MAX_OPERANDS):
        annotations[f"src{i}"] = Operand[Any] | None
        namespace[f"src{i}"] = None
    if not terminator:
        for i in range(MAX_OPERANDS):
            annotations[f"res{i}"] = Result[Any] | None
            namespace[f"res{i}"] = None
        if region:
            annotations["combine"] = Region
    namespace["__annotations__"] = annotations
    traits = ([Pure] if pure else []) + ([ir.IsTerminatorTrait] if terminator else [])
    return type(Tile.Operation)(cls_name, (Tile.Operation,), namespace, name=name, traits=traits)


ReduceOp = _combining_op("ReduceOp", "reduce", """Combine the operands along ``axis`` with the ``combine``
    region: its block takes (a_0 .. a_n-1, b_0 .. b_n-1) scalars and returns the n combined scalars
    with ``tile.reduce_return``; result ``i`` is operand ``i`` reduced.

    The combine function must be associative and, as in Triton, commutative: targets may regroup
    and reorder (they keep lower positions on the left where their layout makes that free).""",
                         {"axis": ir.IntegerAttr})

ScanOp = _combining_op("ScanOp", "scan", """The inclusive scan of the operands along ``axis`` with the
    ``combine`` region (as ``tile.reduce``'s): result ``i`` has operand ``i``'s shape; element k of
    every result combines elements 0..k in order, the running value on the left (elements n-1 down
    to k when ``reverse`` is 1).""",
                       {"axis": ir.IntegerAttr, "reverse": ir.IntegerAttr})

ReduceReturnOp = _combining_op("ReduceReturnOp", "reduce_return",
                               "Terminates a ``tile.reduce`` or ``tile.scan`` combine region with the combined values (and a "
                               "``tile.sort`` network with its result).",
                               {}, terminator=True)


MapElementwiseOp = _combining_op("MapElementwiseOp", "map_elementwise", """``tl.map_elementwise``: the
    ``combine`` region applied to the operands (one shape) element by element, ``pack`` elements at a
    time: its block takes ``pack`` scalars of operand 0 (consecutive along the last dimension), then
    ``pack`` of operand 1, ..., and returns ``pack`` scalars of result 0, then of result 1, ... with
    ``tile.reduce_return``. The region may branch and loop per element; it has no side effects.""",
                                  {"pack": ir.IntegerAttr})

InlineAsmOp = _combining_op("InlineAsmOp", "inline_asm", """``tl.inline_asm_elementwise``: the assembly
    ``asm`` (with LLVM's ``constraints``) applied to the operands, which share one shape, ``pack``
    elements at a time, giving results of that shape (Triton's packing conventions: see
    ``codegen.inline_asm``). Never pure as far as passes know (``is_pure`` is recorded), so no pass
    removes, merges or moves it; only targets that run foreign assembly lower it.""",
                             {"asm": ir.StringAttr, "constraints": ir.StringAttr, "is_pure": ir.IntegerAttr,
                              "pack": ir.IntegerAttr}, region=False, pure=False)


def combining_op(cls, operands: Sequence[ir.Value], result_types: Sequence[ir.Type], **attrs) -> ir.OpView:
    """A ``tile.reduce``/``tile.scan`` (``cls``) of ``operands`` with results of ``result_types``;
    its combine block is still empty."""
    kwargs = {f"src{i}": v for i, v in enumerate(operands)}
    kwargs.update({f"res{i}": t for i, t in enumerate(result_types)})
    return cls(*attrs.values(), **kwargs)


def reduce_return(values: Sequence[ir.Value]) -> ir.OpView:
    return ReduceReturnOp(**{f"src{i}": v for i, v in enumerate(values)})


class ConvertLayoutOp(Tile.Operation, name="convert_layout", traits=[Pure]):
    """The same tensor, moved to the layout of the result type (inserted by layout lowering)."""

    src: Operand[Any] = operand()
    res: Result[Any] = result()


class BarrierOp(Tile.Operation, name="barrier"):
    """Every thread of a program waits here until all have arrived, and their shared-memory writes
    before it are visible after it (inserted by the shared-memory pass, where one is needed)."""


# Software pipelining (``passes.software_pipeline``): loads feeding a product copied ahead into a ring
# of shared-memory slots. A ring's ops share the attribute ``tile.ring`` (its number in the module)
# and, after shared-memory allocation, ``tile.shared_offset``; each slot holds one tensor of the
# loaded type, row-major with its rows' 16-byte chunks swizzled as ``codegen.threads.warp_matrix``
# stores a product's operands.


class AsyncCopyOp(Tile.Operation, name="async_copy"):
    """Start copying the elements ``ptr`` points at into slot ``slot`` (i32) of the ring ``tile.ring``
    of ``slot_bytes`` bytes a slot; where ``mask`` is false, zeros. Complete only after an
    ``async_wait`` that leaves fewer groups pending than were committed since."""

    ptr: Operand[Any] = operand()
    mask: Operand[Any] = operand()
    slot: Operand[Any] = operand()
    slot_bytes: ir.IntegerAttr


class AsyncTensorCopyOp(Tile.Operation, name="async_tensor_copy"):
    """Where ``pred`` (i1) holds, start copying the block at ``offsets`` of the host tensor
    descriptor whose base is the kernel parameter ``base`` into slot ``slot`` of the ring, with the
    target's tensor copy engine (``DeviceHooks.tensor_copy``). The ring ends with one barrier
    object per slot (8 bytes each, after the slots) on which the copy completes: see
    ``tensor_copy_wait``."""

    base: Operand[Any] = operand()
    pred: Operand[Any] = operand()
    slot: Operand[Any] = operand()
    offsets: Sequence[Operand[Any]] = operand()
    slot_bytes: ir.IntegerAttr


class TensorCopyInitOp(Tile.Operation, name="tensor_copy_init"):
    """Initialise the barrier objects of the ring's slots (one thread; a ``tile.barrier`` follows)."""

    slot_bytes: ir.IntegerAttr


class TensorCopyWaitOp(Tile.Operation, name="tensor_copy_wait"):
    """Wait until the copy into slot ``slot`` completed its use number ``n`` of the slot, where
    ``phase`` (i32) is ``n % 2``."""

    slot: Operand[Any] = operand()
    phase: Operand[Any] = operand()
    slot_bytes: ir.IntegerAttr


class TensorCopyDoneOp(Tile.Operation, name="tensor_copy_done"):
    """End the ring's barrier objects (after a ``tile.barrier``: no thread waits on them any more)."""

    slot_bytes: ir.IntegerAttr


class AsyncCommitOp(Tile.Operation, name="async_commit"):
    """Close the group of this thread's copies started since the last commit."""


class AsyncWaitOp(Tile.Operation, name="async_wait"):
    """Wait until at most ``pending`` of this thread's committed groups are unfinished, then wait for
    every thread of the program (a barrier), so that the finished copies are visible to all."""

    pending: ir.IntegerAttr


class LocalLoadOp(Tile.Operation, name="local_load"):
    """The tensor in slot ``slot`` (i32) of the ring ``tile.ring`` (``slot_bytes`` bytes a slot)."""

    slot: Operand[Any] = operand()
    slot_bytes: ir.IntegerAttr
    res: Result[Any] = result(kw_only=True)


class PrintOp(Tile.Operation, name="print"):
    """Print every element of ``value`` (operand ``operand`` of ``count`` in one
    ``tl.device_print``), or only ``prefix`` when there is none. ``hex`` and ``is_signed`` are 0 or
    1 (MLIR integers are signless). One op per printed value, as IRDL gives all values of a
    variadic operand one type. Not pure: printing is the point, so no pass may remove or merge it."""

    prefix: ir.StringAttr
    hex: ir.IntegerAttr
    is_signed: ir.IntegerAttr
    operand: ir.IntegerAttr
    count: ir.IntegerAttr
    value: Operand[Any] | None = None


class AssertOp(Tile.Operation, name="assert"):
    """Fail the launch when an element of ``condition`` (i1, scalar or tensor) is false
    (``tl.device_assert``, emitted only in debug mode); ``file`` and ``line`` locate it."""

    condition: Operand[Any] = operand()
    message: ir.StringAttr
    file: ir.StringAttr
    line: ir.IntegerAttr


# -- helpers -------------------------------------------------------------------------------------


def context() -> ir.Context:
    """A new MLIR context with the ``tile`` dialect loaded (the dialect loads once per context)."""
    ctx = ir.Context()
    with ctx, ir.Location.unknown():
        Tile.load()
    return ctx


def i32_attr(value: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(value))


def ptr_type(pointee: ir.Type, addrspace: int = 1) -> ir.Type:
    return PtrType.get(ir.TypeAttr.get(pointee), i32_attr(addrspace))


def is_ptr(t: ir.Type) -> bool:
    return isinstance(t, PtrType)


def pointee(t: ir.Type) -> ir.Type:
    """The element type a ``!tile.ptr`` points to."""
    return ir.TypeAttr(t.pointee).value


def addrspace(t: ir.Type) -> int:
    return ir.IntegerAttr(t.addrspace).value


def i32_array(values) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([i32_attr(x) for x in values])


def ints(attr: ir.Attribute) -> list[int]:
    """An ``ArrayAttr`` of integers as plain ints."""
    return [ir.IntegerAttr(x).value for x in ir.ArrayAttr(attr)]


def blocked(size_per_thread, threads_per_warp, warps_per_cta, order) -> ir.Attribute:
    arr = lambda xs: ir.ArrayAttr.get([i32_attr(x) for x in xs])  # noqa: E731
    return BlockedAttr.get(arr(size_per_thread), arr(threads_per_warp), arr(warps_per_cta), arr(order))


def slice_of(dim: int, parent: ir.Attribute) -> ir.Attribute:
    return SliceAttr.get(i32_attr(dim), parent)


def mma(instr, warps_per_cta, entries, lanes) -> ir.Attribute:
    flat = lambda pairs: i32_array([x for pair in pairs for x in pair])  # noqa: E731
    return MmaAttr.get(i32_array(instr), i32_array(warps_per_cta), flat(entries), flat(lanes))


def mma_fields(attr: ir.Attribute) -> dict[str, list]:
    """The fields of a ``#tile.mma`` encoding: ``instr`` and ``warps_per_cta`` as lists of ints,
    ``entries`` and ``lanes`` as lists of ``(row, col)`` pairs."""
    a = attr if isinstance(attr, MmaAttr) else MmaAttr(attr)
    pairs = lambda arr: list(zip(ints(arr)[::2], ints(arr)[1::2]))  # noqa: E731
    return {"instr": ints(a.instr), "warps_per_cta": ints(a.warps_per_cta), "entries": pairs(a.entries),
            "lanes": pairs(a.lanes)}


def blocked_fields(attr: ir.Attribute) -> dict[str, list[int]]:
    """The fields of a ``#tile.blocked`` encoding as plain lists of ints."""
    a = attr if isinstance(attr, BlockedAttr) else BlockedAttr(attr)
    ints = lambda arr: [ir.IntegerAttr(x).value for x in ir.ArrayAttr(arr)]  # noqa: E731
    return {
        "size_per_thread": ints(a.size_per_thread),
        "threads_per_warp": ints(a.threads_per_warp),
        "warps_per_cta": ints(a.warps_per_cta),
        "order": ints(a.order),
    }
