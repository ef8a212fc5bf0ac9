"""Software pipelining of the loads that feed a product on the matrix instruction (Triton's
``num_stages``), part of the GPU ``tile-layout`` stage.

In a ``scf.for`` whose ``tile.dot`` runs on the target's matrix instruction (``#tile.mma``), each
``tile.load`` that only that product reads (its operand A or B, with no ``other`` but zero) is
issued ``num_stages - 1`` iterations ahead, into a ring of ``num_stages`` shared-memory slots:

- *stage 0* is the load and everything in the body it depends on: address and mask arithmetic,
  and the loop-carried values that arithmetic advances (a pointer tensor ``a_ptrs += BK``);
- before the loop, stage 0 runs for iterations ``0 .. num_stages - 2`` (``tile.async_copy`` into
  their slots, masked off past the trip count, one ``tile.async_commit`` each);
- in the loop, the body first waits until the slot of this iteration is filled
  (``tile.async_wait`` keeps ``num_stages - 2`` groups in flight, then a barrier), reads the
  product's operand from it (``tile.local_load``), runs unchanged, and ends by running stage 0 for
  iteration ``i + num_stages - 1`` into the slot the previous iteration read (or begins with it,
  right after the wait, where no product still reads that slot: ``products_keep_running``). Stage
  0's loop-carried values are carried again, that many iterations ahead, beside the originals;
- after the loop, a ``tile.async_wait`` of 0 drains the copies left.

An operand a load before the loop makes for the product alone (attention's ``q``) is copied once,
before the loop, into a ring of one slot (``hoist_invariant_operands``), instead of being staged
again by every iteration's product.

The copy writes each slot as the product reads its operands (``codegen.threads.warp_matrix``), so
the product reads them straight from the ring. A target with asynchronous copies (``cp.async``)
overlaps them with the products; elsewhere a copy is a load and a store (``DeviceHooks``).
``tl.range(..., num_stages=n)`` sets a loop's depth; the launch option ``num_stages`` the rest's.
"""

from __future__ import annotations

import math

from ..ir import tile
from ..ir.mlir import arith, ir, scf
from ..layout.choose import element_bytes
from ..layout.distributed import Mma, layout_of_type
from . import tensor_copies
from .analysis import is_zero
from .axis_info import walk

#: the attribute of a loop that sets its depth (``tl.range(..., num_stages=)``)
STAGES = "tile.num_stages"
#: the attributes naming the ring an op uses, and its size in bytes (all its slots)
RING, RING_BYTES = "tile.ring", "tile.ring_bytes"
#: ops stage 0 may hold besides the pipelined loads: they compute without side effects
_PURE_PREFIXES = ("arith.", "math.")
_PURE_TILE = frozenset({"tile.splat", "tile.make_range", "tile.broadcast", "tile.expand_dims", "tile.addptr",
                        "tile.convert_layout", "tile.program_id", "tile.num_programs"})


def pipeline_loops(module: ir.Module, num_stages: int) -> None:
    """Pipeline every loop of ``module`` that qualifies (see the module docstring), in place."""
    rings = 0
    with module.context, ir.Location.unknown():
        for loop in [op for op in walk(module.operation) if op.name == "scf.for"]:
            rings += hoist_invariant_operands(loop, rings)
            stages = loop_stages(loop, num_stages)
            if stages >= 2:
                rings += _Loop(loop, stages, rings).pipeline()


def loop_stages(loop: ir.Operation, num_stages: int) -> int:
    """The depth ``loop`` is pipelined to: its own ``tl.range(..., num_stages=)``, else the option's."""
    return ir.IntegerAttr(loop.attributes[STAGES]).value if STAGES in loop.attributes else num_stages


def can_issue_ahead(loop: ir.Operation, loads: list[ir.Operation]) -> bool:
    """Whether ``loads`` in the body of ``loop`` depend only on what stage 0 may clone (their
    addresses, offsets and the loop-carried values that advance them)."""
    return _Loop(loop, 2, 0).stage0(loads) is not None


def _matrix_product(op: ir.Operation) -> bool:
    return op.name == "tile.dot" and isinstance(layout_of_type(ir.RankedTensorType(op.results[0].type)), Mma)


def _hoistable_uses(load: ir.Operation) -> list[tuple[ir.Operation, int]] | None:
    """The (product, operand index) uses of ``load``'s result where every use is operand A or B of a
    matrix-instruction product in the body of a loop beside the load (attention's ``q``, read by
    the loop left of the diagonal and by the diagonal's); else None."""
    uses = [(u.owner.operation if hasattr(u.owner, "operation") else u.owner, u.operand_number)
            for u in load.results[0].uses]
    for user, index in uses:
        loop = user.parent
        if not (_matrix_product(user) and index < 2 and loop is not None and loop.name == "scf.for"
                and loop.parent == load.parent):
            return None
    return uses


def hoist_invariant_operands(loop: ir.Operation, first_ring: int) -> int:
    """An operand of a matrix-instruction product in ``loop`` that a load before the loop makes for
    products alone (attention's ``q``, in this loop and in loops after it) is copied once into a ring
    of one slot, and read there in every iteration, instead of being staged in shared memory by
    every iteration's product. Return how many rings that makes."""
    body = loop.regions[0].blocks[0]
    rings = 0
    for op in [op.operation for op in body.operations]:
        if not _matrix_product(op):
            continue
        for index in (0, 1):
            value = op.operands[index]
            if isinstance(value.owner, ir.Block):
                continue
            load = value.owner.operation
            uses = _hoistable_uses(load) if load.name == "tile.load" and load.parent == loop.parent else None
            if uses is None:
                continue
            if len(load.operands) == 3 and not is_zero(load.operands[2]):
                continue
            ring, slot_bytes = first_ring + rings, _bytes(value.type)
            ptr = load.operands[0]
            t = ir.RankedTensorType(ptr.type)
            with ir.InsertionPoint(load):
                tile.BarrierOp()  # the ring may reuse bytes an earlier op's threads still read
                if len(load.operands) >= 2:
                    mask = load.operands[1]
                else:
                    i1 = ir.IntegerType.get_signless(1)
                    mask = tile.SplatOp(arith.ConstantOp(i1, 1).result,
                                        ir.RankedTensorType.get(list(t.shape), i1, t.encoding)).result
                zero = arith.ConstantOp(ir.IntegerType.get_signless(32), 0).result
                copy = tile.AsyncCopyOp(ptr, mask, zero, tile.i32_attr(slot_bytes))
                tile.AsyncCommitOp()
            with ir.InsertionPoint(loop):
                tile.AsyncWaitOp(tile.i32_attr(0))
            ring_ops = [copy.operation]
            for user, at in uses:  # each product reads the slot
                with ir.InsertionPoint(user):
                    local = tile.LocalLoadOp(arith.ConstantOp(ir.IntegerType.get_signless(32), 0).result,
                                             tile.i32_attr(slot_bytes), res=value.type)
                user.operands[at] = local.result
                ring_ops.append(local.operation)
            for ring_op in ring_ops:
                ring_op.attributes[RING] = tile.i32_attr(ring)
                ring_op.attributes[RING_BYTES] = tile.i32_attr(slot_bytes)
            load.erase()
            rings += 1
    return rings


def _pure(op: ir.Operation) -> bool:
    return not op.regions and (op.name.startswith(_PURE_PREFIXES) or op.name in _PURE_TILE)


class _Loop:
    def __init__(self, loop: ir.Operation, stages: int, first_ring: int):
        self.loop, self.stages, self.first_ring = loop, stages, first_ring
        self.body = loop.regions[0].blocks[0]
        self.ops = [op.operation for op in self.body.operations]
        self.yield_op = self.ops[-1]
        self.iv, self.carried = self.body.arguments[0], list(self.body.arguments)[1:]

    # -- which loads, and what stage 0 is ------------------------------------------------------
    def candidates(self) -> list[ir.Operation]:
        """The loads only a matrix-instruction product of this body reads, as its A or B, directly or
        through a ``tl.trans``."""
        found = []
        for op in self.ops:
            if op.name != "tile.dot" or not isinstance(layout_of_type(ir.RankedTensorType(op.results[0].type)), Mma):
                continue
            for operand in list(op.operands)[:2]:
                if isinstance(operand.owner, ir.Block):
                    continue
                load = operand.owner.operation
                if load.name == "tile.trans" and not isinstance(load.operands[0].owner, ir.Block):
                    operand = load.operands[0]  # a block transposed for the product (``b.T``): its slot
                    load = operand.owner.operation  # holds it as loaded, the product reads it transposed
                if load.name not in ("tile.load", "tile.descriptor_load") or load in found:
                    continue
                if load.parent != self.loop or len(list(operand.uses)) != 1:
                    continue
                if load.name == "tile.load" and len(load.operands) == 3 and not is_zero(load.operands[2]):
                    continue
                found.append(load)
        return found

    def stage0(self, loads: list[ir.Operation]) -> tuple[list[ir.Operation], list[int]] | None:
        """Stage 0's ops in body order and the loop-carried values it advances; None where the loads
        depend on anything else the body computes (a product, a store, a nested region). Stage 0 is
        cloned, never moved: the body keeps computing the current iteration's values for its other
        users, and the loop's results stay what they were."""
        ops, carried = set(), set()
        work = [v for load in loads for v in load.operands]
        in_body = {op: i for i, op in enumerate(self.ops)}
        while work:
            value = work.pop()
            owner = value.owner if isinstance(value.owner, ir.Block) else value.owner.operation
            if isinstance(owner, ir.Block):
                if owner == self.body and value != self.iv:
                    index = self.carried.index(value)
                    if index not in carried:
                        carried.add(index)
                        work.append(self.yield_op.operands[index])
                continue
            if owner not in in_body or owner in ops or owner in loads:
                continue
            if not _pure(owner):
                return None
            ops.add(owner)
            work.extend(owner.operands)
        return sorted(ops, key=in_body.get), sorted(carried)

    # -- the rewrite ---------------------------------------------------------------------------
    def pipeline(self) -> int:
        """Rewrite the loop; return how many rings it uses (0 where it does not qualify)."""
        loads = self.candidates()
        if not loads:
            return 0
        plan = self.stage0(loads)
        if plan is None:
            return 0
        ops, carried = plan
        loop, s = self.loop, self.stages
        lb, ub, step = list(loop.operands)[:3]
        inits = list(loop.operands)[3:]
        rings = [self.first_ring + i for i in range(len(loads))]
        slot_bytes = [_bytes(load.results[0].type) for load in loads]
        copied = [i for i, load in enumerate(loads) if load.name == "tile.descriptor_load"]  # tensor copies
        self.ring_bytes = [tensor_copies.ring_bytes(s, b) if i in copied else s * b for i, b in enumerate(slot_bytes)]
        i32 = ir.IntegerType.get_signless(32)

        def const(value: int, t: ir.Type) -> ir.Value:
            return arith.ConstantOp(t, value).result

        def in_ring(op, i: int):
            op.operation.attributes[RING] = tile.i32_attr(rings[i])
            op.operation.attributes[RING_BYTES] = tile.i32_attr(self.ring_bytes[i])
            if i in copied:
                op.operation.attributes[tensor_copies.STAGES_ATTR] = tile.i32_attr(s)

        with ir.InsertionPoint(loop):
            tile.BarrierOp()  # the ring may reuse bytes an earlier op's threads still read
            for i in copied:
                in_ring(tile.TensorCopyInitOp(tile.i32_attr(slot_bytes[i])), i)
            if copied:
                tile.BarrierOp()
            values = {c: inits[c] for c in carried}
            for j in range(s - 1):
                iv = arith.AddIOp(lb, arith.MulIOp(step, const(j, lb.type)).result).result
                values = self.issue(ops, loads, carried, iv, ub, values, const(j, i32), rings, slot_bytes)
            ahead_inits = [values[c] for c in carried]
            new = scf.ForOp(lb, ub, step, inits + ahead_inits + [const(0, i32)] + ([const(0, i32)] if copied else []))
        for name in [a if isinstance(a, str) else a.name for a in loop.attributes]:
            new.operation.attributes[name] = loop.attributes[name]
        body = new.body
        n = len(inits)
        args = list(body.arguments)
        ahead = args[1 + n:1 + n + len(carried)]
        slot = args[1 + n + len(carried)]
        def issue_ahead() -> dict:
            """Stage 0 for iteration ``i + s - 1``, into the slot iteration ``i - 1`` read."""
            later = arith.AddIOp(args[0], arith.MulIOp(step, const(s - 1, lb.type)).result).result
            last = const(s - 1, i32)
            write = arith.SelectOp(arith.CmpIOp(arith.CmpIPredicate.eq, slot, const(0, i32)).result, last,
                                   arith.SubIOp(slot, const(1, i32)).result).result
            # stage 0 reads the loop's own (current) values: remap them to the ones carried ahead
            return self.issue(ops, loads, carried, later, ub, dict(zip(carried, ahead)), write, rings, slot_bytes,
                              current=dict(zip(self.carried, args[1:1 + n])), iv_now=args[0])

        early = not self.products_keep_running(loads)
        with ir.InsertionPoint(body):
            for i in copied:  # the use of the slot's barrier: the phase flips each time the ring wraps
                in_ring(tile.TensorCopyWaitOp(slot, args[-1], tile.i32_attr(slot_bytes[i])), i)
            tile.AsyncWaitOp(tile.i32_attr(s - 2))
            for i, load in enumerate(loads):
                local = tile.LocalLoadOp(slot, tile.i32_attr(slot_bytes[i]), res=load.results[0].type)
                in_ring(local, i)
                load.results[0].replace_all_uses_with(local.result)
            if early:  # every thread is past iteration i - 1 here: its slot is free for the next copies
                ahead_values = issue_ahead()
        anchor = ir.InsertionPoint(body)
        for op in self.ops[:-1]:
            if op not in loads:
                op.detach_from_parent()
                anchor.insert(op)
        self.iv.replace_all_uses_with(args[0])
        for old, arg in zip(self.carried, args[1:1 + n]):
            old.replace_all_uses_with(arg)
        with ir.InsertionPoint(body):
            if not early:
                ahead_values = issue_ahead()
            following = arith.AddIOp(slot, const(1, i32)).result
            wraps = arith.CmpIOp(arith.CmpIPredicate.eq, following, const(s, i32)).result
            wrapped = arith.SelectOp(wraps, const(0, i32), following).result
            phase = [arith.SelectOp(wraps, arith.XOrIOp(args[-1], const(1, i32)).result, args[-1]).result] \
                if copied else []
            scf.YieldOp(list(self.yield_op.operands) + [ahead_values[c] for c in carried] + [wrapped] + phase)
        self.yield_op.erase()
        for old, result in zip(loop.results, list(new.results)[:n]):
            old.replace_all_uses_with(result)
        with ir.InsertionPoint.after(new.operation):
            tile.AsyncWaitOp(tile.i32_attr(0))
            if copied:
                tile.BarrierOp()  # every thread is past its last wait on the barrier objects
            for i in copied:
                in_ring(tile.TensorCopyDoneOp(tile.i32_attr(slot_bytes[i])), i)
        for load in loads:
            load.erase()
        loop.erase()
        return len(loads)

    def products_keep_running(self, loads: list[ir.Operation]) -> bool:
        """Whether a product of the body carries its accumulator to the next iteration with both
        operands from the rings (a matmul's K loop): a warpgroup instruction may then still read the
        previous iteration's slots until this iteration's product is issued and waited down to one
        group (``codegen.threads.warpgroup_matrix``), so the next copies go at the end of the body.
        Elsewhere they go at its start, right after the wait, a whole iteration earlier."""
        sources = {load.results[0] for load in loads}
        for op in self.ops:
            if not _matrix_product(op):
                continue
            c = op.operands[2]
            if not isinstance(c.owner, ir.Block) or c.owner != self.body:
                continue
            index = ir.BlockArgument(c).arg_number - 1
            if index < 0 or self.yield_op.operands[index] != op.results[0]:
                continue
            if all(_through_trans(v) in sources for v in list(op.operands)[:2]):
                return True
        return False

    def issue(self, ops, loads, carried, iv, ub, values, slot, rings, slot_bytes, current=None, iv_now=None):
        """Clone stage 0 for the iteration whose induction value is ``iv`` (carried values
        ``values``), its loads as copies into ``slot`` masked by ``iv < ub``; commit them; return the
        carried values of the iteration after it. ``current``/``iv_now``: the values the moved body
        uses now for the original block arguments, which stage 0 must not read."""
        mapping = {self.iv: iv, **{self.carried[c]: values[c] for c in carried}}
        if current is not None:
            mapping.update({current[self.carried[c]]: values[c] for c in carried})
            mapping[iv_now] = iv

        def get(value):
            return mapping.get(value, value)

        for op in ops:
            clone = op.clone()
            for i, operand in enumerate(op.operands):
                clone.operands[i] = get(operand)
            for old, res in zip(op.results, clone.results):
                mapping[old] = res
        inside = arith.CmpIOp(arith.CmpIPredicate.slt, iv, ub).result
        for i, load in enumerate(loads):
            if load.name == "tile.descriptor_load":
                copy = tile.AsyncTensorCopyOp(load.operands[0], inside, slot, [get(o) for o in list(load.operands)[1:]],
                                              tile.i32_attr(slot_bytes[i]))
                copy.operation.attributes[tensor_copies.BLOCK] = ir.TypeAttr.get(load.results[0].type)
                copy.operation.attributes[RING] = tile.i32_attr(rings[i])
                copy.operation.attributes[RING_BYTES] = tile.i32_attr(self.ring_bytes[i])
                copy.operation.attributes[tensor_copies.STAGES_ATTR] = tile.i32_attr(self.stages)
                continue
            ptr = get(load.operands[0])
            t = ir.RankedTensorType(ptr.type)
            mask_t = ir.RankedTensorType.get(list(t.shape), ir.IntegerType.get_signless(1), t.encoding)
            mask = tile.SplatOp(inside, res=mask_t).result
            if len(load.operands) >= 2:
                mask = arith.AndIOp(mask, get(load.operands[1])).result
            copy = tile.AsyncCopyOp(ptr, mask, slot, tile.i32_attr(slot_bytes[i]))
            copy.operation.attributes[RING] = tile.i32_attr(rings[i])
            copy.operation.attributes[RING_BYTES] = tile.i32_attr(self.ring_bytes[i])
        tile.AsyncCommitOp()
        return {c: get(self.yield_op.operands[c]) for c in carried}


def _through_trans(value: ir.Value) -> ir.Value:
    """``value``, or the operand of the ``tile.trans`` that makes it."""
    owner = value.owner
    if not isinstance(owner, ir.Block) and owner.operation.name == "tile.trans":
        return owner.operation.operands[0]
    return value


def _bytes(t: ir.Type) -> int:
    return math.prod(ir.RankedTensorType(t).shape) * element_bytes(t)
