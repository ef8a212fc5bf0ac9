"""Give every tensor value of a ``tile`` module a distributed layout, in program order, and insert
``tile.convert_layout`` where an op needs an operand in another layout than the one it has.

The rules, as in Triton:

- values made from nothing (``make_range``, ``splat``, dense constants) and memory ops (loads,
  stores and atomics: their pointers, masks, values and results; coalescing is decided for them)
  take the rank's default, but for the loads only products read (``choose.operand_layouts``),
  which take their own;
- ``tile.reduce`` along ``axis`` gives ``#tile.slice<axis, layout of its operands>`` (the first
  operand that is not free decides; the others are converted to it);
- ``tile.scan`` along ``axis`` takes its operands in, and gives its results, a layout where the
  lanes of each warp hold the whole axis (``scan_layout``), so no scan crosses warps;
- re-indexing ops (``tile.reshape``, ``trans``, ``join``, ``split``, ``flip``) take their operands
  as they come; a ``trans`` of a blocked layout permutes it, a ``join`` extends it (its second
  operand converted to the first's), a ``split`` of an in-thread last dimension drops it and a
  ``flip`` keeps it, and a ``reshape`` takes the layout that keeps each position in its thread,
  so their data stays in the threads where it can (``reindexed``; else their rank's default);
- ``expand_dims`` at ``axis`` of a ``slice<axis, P>`` gives ``P``; of anything else the default,
  its operand converted to ``slice<axis, default>``; ``broadcast`` keeps its operand's layout;
- ``tile.dot`` on the target's matrix instruction (``layout.matrix``) takes its accumulator in,
  and gives its result, the instruction's layout (``#tile.mma``); any other ``tile.dot`` gives its
  accumulator's layout. Its operands A and B pass through shared memory, so they stay in whatever
  layout they come (``codegen.threads.dot``, ``codegen.threads.warp_matrix``);
- ``tile.gather`` gives its index's layout, its source stays in whatever layout it comes;
  ``tile.histogram`` gives the 1-D default, its mask converted to its source's layout (both pass
  through shared memory: ``codegen.threads.blockwide``; a GPU's one-hot histograms are raised to
  ``tile.histogram`` before layouts, by ``passes.blockwide``); so does a ``tile.sort`` (kept for
  large blocks by ``passes.decomposed``), whose result gives its rank's default; a
  ``tile.descriptor_load`` kept for a tensor copy gives a row-major layout of 16-byte runs (its
  block lies in shared memory as the copy wrote it: ``passes.tensor_copies``);
- ``tile.map_elementwise`` with ``pack`` > 1 takes its operands in, and gives its results, a layout
  whose threads hold runs of ``pack`` elements along the last dimension (``packed``);
- elementwise ops take the layout of their first operand that is not *free* (made from nothing,
  see ``FREE``, arithmetic, broadcasts and ``expand_dims`` of such values, or carried by a loop
  from such a value: a causal mask ``offs_m[:, None] >= offs_n[None, :]`` takes the scores' layout) and convert
  the others to it;
- a loop-carried or branch-joined value has one layout in its init, block argument, yield and
  result: the yielded value is converted to the init's (``scf.for``, ``scf.while``) or the first
  branch's (``scf.if``).

Conversions are inserted freely here; ``passes.convert_layout`` removes the needless ones and
rebuilds cheap values in the layout their consumer wants.
"""

from __future__ import annotations

from ..ir import tile
from ..ir.mlir import ir
from ..codegen.reindex import Reindex
from .assign import retyped
from .choose import element_bytes
from .distributed import Blocked, Layout, Slice, default_blocked, encoded, layout_of_type, threads
from .matrix import MatrixUnit, mma_layout
from .reindexed import register_layout

#: ops whose results cost nothing to rebuild in any layout: they never decide an elementwise layout
FREE = frozenset({"tile.make_range", "tile.splat", "arith.constant"})
#: ops that only place their operand's elements: free when their operand is (``offs_m[:, None]``,
#: and the conversions this pass inserts)
SHAPED = frozenset({"tile.expand_dims", "tile.broadcast", "tile.convert_layout"})
#: ops whose tensor operands and results all take the default layout of their rank
MEMORY = frozenset({"tile.load", "tile.store", "tile.atomic_rmw", "tile.atomic_cas"})
#: ops that take their operands in whatever layout they come (printing, asserting)
ANY = frozenset({"tile.print", "tile.assert", "tile.convert_layout"})


def propagate_layouts(module: ir.Module, defaults: dict[int, Blocked], matrix_unit: MatrixUnit | None = None,
                      own: dict[ir.Operation, Blocked] | None = None) -> None:
    """Encode every tensor of ``module`` in place; ``matrix_unit`` is the target's warp-level matrix
    instruction (``DeviceHooks.warp_matrix_op``), if it has one; ``own`` the memory ops that take a
    layout of their own."""
    with module.context, ir.Location.unknown():
        _Propagation(defaults, matrix_unit, own or {}).region_tree(module.operation)


def is_tensor(value: ir.Value) -> bool:
    return isinstance(value.type, ir.RankedTensorType)


class _Propagation:
    def __init__(self, defaults: dict[int, Blocked], matrix_unit: MatrixUnit | None, own: dict[ir.Operation, Blocked]):
        self.defaults = defaults
        self.own = own
        self.matrix_unit = matrix_unit
        self.layouts: dict[ir.Value, Layout] = {}
        self.converted: dict[tuple[ir.Value, Layout], ir.Value] = {}
        #: loop-carried values that start from a free value (an accumulator from tl.zeros)
        self.free_carried: set[ir.Value] = set()
        self.free_values: dict[ir.Value, bool] = {}

    # -- values ------------------------------------------------------------------------------

    def default(self, rank: int) -> Blocked:
        if rank not in self.defaults:
            raise ValueError(f"no default layout for rank {rank}")
        return self.defaults[rank]

    def set(self, value: ir.Value, layout: Layout | None) -> None:
        """Give the tensor ``value`` ``layout`` (its rank's default when None)."""
        if not is_tensor(value):
            return
        t = ir.RankedTensorType(value.type)
        layout = layout or self.default(t.rank)
        self.layouts[value] = layout
        value.set_type(encoded(t, layout))

    def need(self, op: ir.Operation, index: int, layout: Layout) -> None:
        """Make operand ``index`` of ``op`` arrive in ``layout``. The conversion goes right after
        the value is defined, once per value and layout: it is not repeated in a loop that uses a
        value from outside."""
        value = op.operands[index]
        if not is_tensor(value) or self.layouts.get(value) == layout:
            return
        key = (value, layout)
        if key not in self.converted:
            owner = value.owner
            ip = (ir.InsertionPoint.at_block_begin(owner) if isinstance(owner, ir.Block)
                  else ir.InsertionPoint.after(owner))
            convert = tile.ConvertLayoutOp(value, encoded(ir.RankedTensorType(value.type), layout),
                                           loc=op.location, ip=ip)
            self.layouts[convert.res] = layout
            self.converted[key] = convert.res
        op.operands[index] = self.converted[key]

    def free(self, value: ir.Value) -> bool:
        """Made from nothing (``FREE``), arithmetic or ``SHAPED`` ops on such values, or carried by a
        loop (or by loops one after the other) from such a value: an accumulator starting from
        ``tl.zeros`` takes the layout of what it accumulates (``passes.convert_layout`` then carries
        that layout around the loop)."""
        owner = value.owner
        if isinstance(owner, ir.Block):
            return value in self.free_carried
        if value not in self.free_values:
            self.free_values[value] = owner.name in FREE or (
                (owner.name.startswith("arith.") or owner.name in SHAPED)
                and all(self.free(v) for v in owner.operands if is_tensor(v)))
        return self.free_values[value]

    # -- the walk ------------------------------------------------------------------------------

    def region_tree(self, op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                self.block(block)

    def block(self, block: ir.Block) -> None:
        for arg in block.arguments:
            if arg not in self.layouts:
                self.set(arg, None)
        for op in list(block.operations):  # conversions are inserted while walking
            self.op(op.operation)

    def op(self, op: ir.Operation) -> None:
        name = op.name
        if name == "scf.for":
            return self.loop(op, list(op.operands)[3:], [op.regions[0].blocks[0]], op.regions[0].blocks[0], 1)
        if name == "scf.while":
            return self.loop(op, list(op.operands), [op.regions[0].blocks[0], op.regions[1].blocks[0]],
                             op.regions[1].blocks[0], 0)
        if name == "scf.if":
            return self.branches(op)
        if name == "func.func":
            self.region_tree(op)
            return _function_type(op)
        self.region_tree(op)
        tensors = [i for i, v in enumerate(op.operands) if is_tensor(v)]
        if name in ANY:
            result = self.layouts.get(op.operands[0]) if name == "tile.convert_layout" else None
            for res in op.results:
                self.set(res, _encoding(res) or result)
            return
        if name in MEMORY:
            own = self.own.get(op)
            for i in tensors:
                self.need(op, i, own or self.default(ir.RankedTensorType(op.operands[i].type).rank))
            for res in op.results:
                self.set(res, own)
            return
        if name == "tile.reduce":
            axis = ir.IntegerAttr(op.attributes["axis"]).value
            anchor = next((i for i in tensors if not self.free(op.operands[i])), tensors[0])
            layout = self.layouts[op.operands[anchor]]
            for i in tensors:
                self.need(op, i, layout)
            for res in op.results:
                self.set(res, Slice(axis, layout))
            return
        if name in tile.REINDEXING:
            return self.reindexed(op)
        if name == "tile.scan":
            t = ir.RankedTensorType(op.operands[0].type)
            layout = scan_layout(tuple(t.shape), ir.IntegerAttr(op.attributes["axis"]).value, self.default(t.rank))
            for i in tensors:
                self.need(op, i, layout)
            for res in op.results:
                self.set(res, layout)
            return
        if name == "tile.gather":
            return self.set(op.result, self.layouts[op.operands[1]])
        if name == "tile.descriptor_load":  # kept for a tensor copy: rows contiguous, as copied
            t = ir.RankedTensorType(op.results[0].type)
            warp_size, num_warps = threads(self.default(t.rank))
            vector = max(1, 16 // max(1, element_bytes(t)))
            return self.set(op.result, default_blocked(tuple(t.shape), num_warps, warp_size, min(vector, t.shape[-1])))
        if name == "tile.sort":  # through shared memory: any layout in, any out
            return self.set(op.result, None)
        if name == "tile.histogram":
            for i in tensors[1:]:
                self.need(op, i, self.layouts[op.operands[0]])
            return self.set(op.result, None)
        if name == "tile.map_elementwise" and ir.IntegerAttr(op.attributes["pack"]).value > 1:
            return self.packed(op, tensors, ir.IntegerAttr(op.attributes["pack"]).value)
        if name == "tile.dot":
            arriving = (self.layouts.get(op.operands[0]), self.layouts.get(op.operands[1]))
            warps = threads(self.default(ir.RankedTensorType(op.result.type).rank))[1]
            mma = mma_layout(op, self.matrix_unit, warps, *arriving) if self.matrix_unit else None
            if mma is not None:
                self.need(op, 2, mma)
            return self.set(op.result, mma or self.layouts[op.operands[2]])
        if name == "tile.expand_dims":
            return self.expand_dims(op)
        if name == "tile.broadcast":
            return self.set(op.result, self.layouts[op.operands[0]])
        self.elementwise(op, tensors)

    def elementwise(self, op: ir.Operation, tensors: list[int]) -> None:
        """Results in the layout of the first operand that is not free; the others converted to it."""
        rank = next((ir.RankedTensorType(r.type).rank for r in op.results if is_tensor(r)), None)
        same = [i for i in tensors if ir.RankedTensorType(op.operands[i].type).rank == rank]
        anchor = next((i for i in same if not self.free(op.operands[i])), same[0] if same else None)
        layout = None if anchor is None else self.layouts[op.operands[anchor]]
        for i in same:
            self.need(op, i, layout)
        for res in op.results:
            self.set(res, layout)
        if op.name == "arith.constant" and is_tensor(op.result):
            op.attributes["value"] = retyped(op.attributes["value"], op.result.type)

    def packed(self, op: ir.Operation, tensors: list[int], pack: int) -> None:
        """Operands and results in a layout whose threads hold runs of ``pack`` elements along the
        last dimension, so each call of the region gets consecutive elements, as on every target."""
        t = ir.RankedTensorType(op.results[0].type)
        warp_size, num_warps = threads(self.default(t.rank))
        layout = default_blocked(tuple(t.shape), num_warps, warp_size, vector=pack)
        for i in tensors:
            self.need(op, i, layout)
        for res in op.results:
            self.set(res, layout)

    def reindexed(self, op: ir.Operation) -> None:
        src = self.layouts[op.operands[0]]
        layout = register_layout(Reindex.of(op), src)
        if layout is not None and op.name == "tile.join":
            self.need(op, 1, src)
        self.set(op.result, layout)

    def expand_dims(self, op: ir.Operation) -> None:
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        src = self.layouts[op.operands[0]]
        if isinstance(src, Slice) and src.dim == axis:
            return self.set(op.result, src.parent)
        layout = self.default(ir.RankedTensorType(op.result.type).rank)
        self.need(op, 0, Slice(axis, layout))
        self.set(op.result, layout)

    def loop(self, op: ir.Operation, inits: list[ir.Value], blocks: list[ir.Block], exit_block: ir.Block,
             skip: int) -> None:
        """``scf.for`` (carried values after ``skip`` = 1 induction variable) and ``scf.while``
        (``before`` then ``after``): every carried value keeps its init's layout around the loop."""
        first = blocks[0]
        carried = list(first.arguments)[skip:]
        for arg, init in zip(carried, inits):
            self.set(arg, self.layouts.get(init))
            if self.free(init):
                self.free_carried.add(arg)
        self.block(first)
        if op.name == "scf.while":  # scf.condition forwards values to `after` and to the results
            cond = _terminator(first)
            forwarded = list(cond.operands)[1:]
            for arg, res, value in zip(exit_block.arguments, op.results, forwarded):
                self.set(arg, self.layouts.get(value))
                self.set(res, self.layouts.get(value))
            self.block(exit_block)
        else:
            for res, arg in zip(op.results, carried):
                self.set(res, self.layouts.get(arg))
                if arg in self.free_carried:  # what the next loop carries from it is free too
                    self.free_values[res] = True
        yield_op = _terminator(blocks[-1])
        for i, arg in enumerate(carried):
            if arg in self.layouts:
                self.need(yield_op, i, self.layouts[arg])

    def branches(self, op: ir.Operation) -> None:
        """``scf.if``: results in the layouts the first branch yields; the other branch converts."""
        blocks = [block for region in op.regions for block in region.blocks]
        for block in blocks:
            self.block(block)
        if not op.results:
            return
        yielded = list(_terminator(blocks[0]).operands)
        for res, value in zip(op.results, yielded):
            self.set(res, self.layouts.get(value))
        for block in blocks[1:]:
            terminator = _terminator(block)
            for i, res in enumerate(op.results):
                if res in self.layouts:
                    self.need(terminator, i, self.layouts[res])


def scan_layout(shape: tuple[int, ...], axis: int, default: Blocked) -> Blocked:
    """A layout of ``shape`` (with the threads of ``default``) for a scan along ``axis``: the lanes
    of one warp share the axis, each holding a contiguous run of it (the whole axis once, without
    repetitions: no warp needs another's values); the other lanes and the warps spread over the
    other dimensions, and those left over hold copies."""
    warp_size, num_warps = threads(default)
    lanes = min(warp_size, shape[axis])
    off_axis = tuple(1 if d == axis else n for d, n in enumerate(shape))
    base = default_blocked(off_axis, num_warps, warp_size // lanes, order=default.order)
    spt, tpw = list(base.size_per_thread), list(base.threads_per_warp)
    spt[axis], tpw[axis] = shape[axis] // lanes, tpw[axis] * lanes
    return Blocked(tuple(spt), tuple(tpw), base.warps_per_cta, base.order)


def _encoding(value: ir.Value):
    """The layout a type of the input already carries, or None."""
    t = ir.RankedTensorType(value.type)
    return layout_of_type(t) if t.encoding is not None else None


def _terminator(block: ir.Block) -> ir.Operation:
    ops = block.operations
    return ops[len(ops) - 1].operation


def _function_type(fn: ir.Operation) -> None:
    """Rewrite ``fn``'s signature to the (now encoded) types of its entry block's arguments."""
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    inputs = [a.type for a in fn.regions[0].blocks[0].arguments]
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(ftype.results)))
