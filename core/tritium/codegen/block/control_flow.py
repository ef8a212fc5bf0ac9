"""Structured control flow (``scf.for``, ``scf.if``, ``scf.while``) in whole blocks.

Regions become LLVM basic blocks. Values crossing them are ``Carried``: scalars in stack slots
(mem2reg turns them back into SSA values), tensors in a pair of buffers whose roles swap on each
assignment. Every iteration of a loop first tests the interrupt flag (``signals``): after Ctrl-C,
the program returns at once instead of running its loop to the end.
"""

from __future__ import annotations

from typing import Any, Sequence

from llvmlite import ir as ll

from ...ir.mlir import ir
from .evaluate import VIRTUAL, Buffer, cpu_type
from .reductions import ReduceRoot, read
from .roots import MaterializeRoot

#: the additions a summed accumulator may use (``summed_accumulators``)
_ADDS = ("arith.addf", "arith.addi")


class Carried:
    """A value that crosses control flow: a scalar in a stack slot (mem2reg makes it SSA again) or a
    tensor in one of two buffers; assignments write the spare buffer and swap, so a yield may read
    any carried tensor (``scf.yield %b, %a``) while the new values are written."""

    def __init__(self, cg, t: ir.Type):
        if isinstance(t, ir.RankedTensorType):
            self.slots = [cg.alloca(ll.PointerType()) for _ in range(2)]
            for slot in self.slots:
                cg.b.store(cg.alloc_buffer(t), slot)
        else:
            self.slots = [cg.alloca(cpu_type(t))]

    @property
    def is_tensor(self) -> bool:
        return len(self.slots) == 2

    def current(self, b: ll.IRBuilder) -> Any:
        value = read(b, self.slots[0])
        return Buffer(value) if self.is_tensor else value


class ControlFlow:
    """scf lowering; mixed into the kernel code generator."""

    def assign(self, targets: Sequence[Carried], values: Sequence[ir.Value],
               unchanged: Sequence[ir.Value | None] = ()) -> None:
        """Parallel assignment ``targets := values``; ``unchanged[i]`` names the value target i
        already holds (a loop's own block argument), which is then not copied."""
        b = self.b
        swapped = []
        for i, (target, value) in enumerate(zip(targets, values)):
            if not target.is_tensor or (i < len(unchanged) and self.in_place(unchanged[i], value)):
                continue
            self.add_root(MaterializeRoot(value, read(b, target.slots[1])), value)
            swapped.append(target)
        self.flush()
        for target in swapped:
            cur, spare = read(b, target.slots[0]), read(b, target.slots[1])
            b.store(spare, target.slots[0])
            b.store(cur, target.slots[1])
        for target, value in zip(targets, values):
            if not target.is_tensor:
                b.store(self.env[value], target.slots[0])

    def in_place(self, arg: ir.Value, value: ir.Value) -> bool:
        """Whether the carried ``arg`` already holds ``value``: it is ``arg``, or was computed into
        ``arg``'s buffer (a ``tile.dot`` accumulating in place)."""
        held, new = self.env.get(arg), self.env.get(value)
        return arg == value or (isinstance(held, Buffer) and isinstance(new, Buffer) and held.ptr is new.ptr)

    def emit_region_block(self, block: ir.Block, args: Sequence[Any]) -> ir.Operation:
        for arg, value in zip(block.arguments, args):
            self.env[arg] = value
        self.push_scope()
        term = self.emit_block(block)
        self.pop_scope()
        return term

    def return_if_interrupted(self) -> None:
        """Leave the program (its launch raises ``KeyboardInterrupt``) when the target says the
        launch was interrupted (``BlockHooks.interrupted``: Ctrl-C on the host)."""
        b = self.b
        flag = self.hooks.interrupted(b, self.module)
        if flag is None:
            return
        stop, go = b.append_basic_block("interrupted"), b.append_basic_block("running")
        b.cbranch(flag, stop, go)
        b.position_at_end(stop)
        b.ret_void()
        b.position_at_end(go)

    def emit_for(self, op: ir.Operation) -> None:
        b = self.b
        lb, ub, step = (self.env[o] for o in list(op.operands)[:3])
        inits = list(op.operands)[3:]
        summed = summed_accumulators(op)
        carried = [Carried(self, r.type) for i, r in enumerate(op.results) if i not in summed]
        self.assign(carried, [v for i, v in enumerate(inits) if i not in summed])
        sums = {}
        for i, reduce in summed.items():  # each starts at zero, as its accumulator
            slot = sums[i] = self.alloca(cpu_type(reduce.results[0].type))
            b.store(ll.Constant(slot.allocated_type, 0), slot)
        iv_slot = self.alloca(lb.type)
        b.store(lb, iv_slot)
        header = b.append_basic_block("for")
        body = b.append_basic_block("for.body")
        exit_block = b.append_basic_block("for.end")
        b.branch(header)
        b.position_at_end(header)
        self.return_if_interrupted()
        iv = read(b, iv_slot)
        compare = b.icmp_unsigned if "unsignedCmp" in op.attributes else b.icmp_signed
        b.cbranch(compare("<", iv, ub), body, exit_block)
        b.position_at_end(body)
        block = op.regions[0].blocks[0]
        state = iter(carried)
        term = self.emit_region_block(block, [iv] + [VIRTUAL if i in summed else next(state).current(b)
                                                     for i in range(len(op.results))])
        for i, reduce in summed.items():  # this iteration's sum of the added tensor, into the slot
            added = term.operands[i].owner
            term_value = [o for o in added.operands if o != block.arguments[i + 1]][0]
            root = ReduceRoot(reduce, [self.chain_slots(term_value)], [sums[i]], sources=[term_value], accumulate=True)
            self.add_root(root, term_value)
        kept = [i for i in range(len(op.results)) if i not in summed]
        self.assign(carried, [term.operands[i] for i in kept], [block.arguments[i + 1] for i in kept])
        b.store(b.add(iv, step), iv_slot)
        b.branch(header)
        b.position_at_end(exit_block)
        state = iter(carried)
        for i, res in enumerate(op.results):
            self.env[res] = VIRTUAL if i in summed else next(state).current(b)
            if i in summed:
                self.summed[summed[i].results[0]] = sums[i]

    def emit_if(self, op: ir.Operation) -> None:
        b = self.b
        carried = [Carried(self, r.type) for r in op.results]
        then_block = b.append_basic_block("if.then")
        else_block = b.append_basic_block("if.else")
        merge = b.append_basic_block("if.end")
        b.cbranch(self.env[op.operands[0]], then_block, else_block)
        for region, block in zip(op.regions, (then_block, else_block)):
            b.position_at_end(block)
            if len(region.blocks):
                term = self.emit_region_block(region.blocks[0], [])
                self.assign(carried, list(term.operands))
            b.branch(merge)
        b.position_at_end(merge)
        for res, c in zip(op.results, carried):
            self.env[res] = c.current(b)

    def emit_while(self, op: ir.Operation) -> None:
        b = self.b
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        state = [Carried(self, a.type) for a in before.arguments]
        forwarded = [Carried(self, a.type) for a in after.arguments]
        self.assign(state, list(op.operands))
        header = b.append_basic_block("while")
        body = b.append_basic_block("while.body")
        exit_block = b.append_basic_block("while.end")
        b.branch(header)
        b.position_at_end(header)
        self.return_if_interrupted()
        cond = self.emit_region_block(before, [c.current(b) for c in state])
        self.assign(forwarded, list(cond.operands)[1:])
        b.cbranch(self.env[cond.operands[0]], body, exit_block)
        b.position_at_end(body)
        term = self.emit_region_block(after, [c.current(b) for c in forwarded])
        self.assign(state, list(term.operands))
        b.branch(header)
        b.position_at_end(exit_block)
        for res, c in zip(op.results, forwarded):
            self.env[res] = c.current(b)


def summed_accumulators(op: ir.Operation) -> dict[int, ir.Operation]:
    """The results of ``scf.for`` ``op`` that are 1-D accumulators only ever summed: each starts as
    zeros, each iteration adds a tensor to it, and after the loop one ``tile.reduce`` sums it (the
    mean and variance loops of Triton's layer-norm tutorial). Maps the result's index to that
    reduction. Such a loop carries the sum alone (one number, where the accumulator was a block in
    memory, written every iteration), adding each iteration's sum of the tensor: the same sum, in
    another order. Loops that store or hold regions are left alone."""
    block = op.regions[0].blocks[0]
    body = [o.operation for o in block.operations]
    if any(o.name == "tile.store" or (len(o.regions) and o.name != "tile.reduce") for o in body[:-1]):
        return {}
    term = body[-1]
    found = {}
    for i, res in enumerate(op.results):
        init, arg, new = op.operands[3 + i], block.arguments[i + 1], term.operands[i]
        if not (isinstance(res.type, ir.RankedTensorType) and len(res.type.shape) == 1 and _is_zeros(init)):
            continue
        added = new.owner if isinstance(new, ir.OpResult) else None
        if added is None or added.name not in _ADDS or arg not in list(added.operands) \
                or _uses(arg) != [added] or _uses(new) != [term]:
            continue
        users = _uses(res)
        if len(users) == 1 and users[0].name == "tile.reduce" and _sums_with(users[0], added.name):
            found[i] = users[0]
    return found


def _uses(v: ir.Value) -> list[ir.Operation]:
    return [u.owner.operation for u in v.uses]


def _is_zeros(v: ir.Value) -> bool:
    """Whether ``v`` is a tensor of zeros: a splat constant, or a splat of a scalar constant."""
    if isinstance(v, ir.OpResult) and v.owner.name == "tile.splat":
        v = v.owner.operands[0]
    if not isinstance(v, ir.OpResult) or v.owner.name != "arith.constant":
        return False
    value = v.owner.attributes["value"]
    if isinstance(v.type, ir.RankedTensorType):
        dense = ir.DenseElementsAttr(value)
        if not dense.is_splat:
            return False
        value = dense.get_splat_value()
    return (ir.FloatAttr(value).value if isinstance(value.type, ir.FloatType) else ir.IntegerAttr(value).value) == 0


def _sums_with(reduce: ir.Operation, add: str) -> bool:
    """Whether ``reduce`` reduces one tensor along its only axis by ``add`` alone."""
    ops = [o.operation for o in reduce.regions[0].blocks[0].operations]
    return len(reduce.operands) == 1 and len(ops) == 2 and ops[0].name == add and ops[1].name == "tile.reduce_return"
