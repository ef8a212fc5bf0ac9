"""``scf.for``, ``scf.if`` and ``scf.while`` as LLVM blocks, per-thread values carried in phis.

Conditions and loop bounds are scalars, the same in every thread, so control flow never diverges
inside a warp (shuffles and barriers in a loop body are reached by all threads). A carried tensor
is one phi per register.
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...ir.mlir import ir


def flat(value) -> list[ll.Value]:
    """A lowered value as a list of LLVM values (a tensor's registers, or the one scalar)."""
    return value if isinstance(value, list) else [value]


class ControlFlow:
    """Structured control flow; mixed into the walker."""

    def join(self, types: list[ir.Type], arms: list[tuple[list, ll.Block]]) -> list:
        """Values of ``types`` joined by phis (one per register) at the start of the current block,
        from each ``(values, predecessor)`` arm known so far; loops add their back edge later."""
        joined = []
        for t, value in zip(types, arms[0][0]):
            phis = [self.b.phi(v.type) for v in flat(value)]
            joined.append(phis if isinstance(t, ir.RankedTensorType) else phis[0])
        for values, block in arms:
            self.add_incoming(joined, values, block)
        return joined

    @staticmethod
    def add_incoming(joined: list, values: list, block: ll.Block) -> None:
        """``values`` reach the phis of ``joined`` from ``block``."""
        for phis, value in zip(joined, values):
            for phi, v in zip(flat(phis), flat(value)):
                phi.add_incoming(v, block)

    def enter_loop(self, name: str, types: list, inits: list) -> tuple:
        """Branch into a new loop header whose phis start at ``inits``; returns the header, body and
        exit blocks (named ``name``, ``name.body``, ``name.end``) and the phis, positioned in the header."""
        b = self.b
        header = self.fn.append_basic_block(name)
        body = self.fn.append_basic_block(name + ".body")
        exit_block = self.fn.append_basic_block(name + ".end")
        entered_from = b.block
        b.branch(header)
        b.position_at_end(header)
        return header, body, exit_block, self.join(types, [(inits, entered_from)])

    def emit_for(self, op: ir.Operation) -> None:
        b = self.b
        lb, ub, step = (self.env[o] for o in list(op.operands)[:3])
        inits = [self.env[o] for o in list(op.operands)[3:]]
        body_block = op.regions[0].blocks[0]
        header, body, exit_block, (iv, *carried) = self.enter_loop(
            "for", [a.type for a in body_block.arguments], [lb, *inits])
        compare = b.icmp_unsigned if "unsignedCmp" in op.attributes else b.icmp_signed
        b.cbranch(compare("<", iv, ub), body, exit_block)
        b.position_at_end(body)
        term = self.emit_region(body_block, [iv, *carried])
        self.add_incoming([iv, *carried], [b.add(iv, step), *(self.env[o] for o in term.operands)], b.block)
        b.branch(header)
        b.position_at_end(exit_block)
        for finish in self.loop_exits.pop(op, ()):  # e.g. the last wait of a product left in flight
            carried = finish(carried)
        self.env.update(zip(op.results, carried))

    def emit_if(self, op: ir.Operation) -> None:
        b = self.b
        then_block = self.fn.append_basic_block("if.then")
        else_block = self.fn.append_basic_block("if.else")
        merge = self.fn.append_basic_block("if.end")
        b.cbranch(self.env[op.operands[0]], then_block, else_block)
        arms = []
        for region, block in zip(op.regions, (then_block, else_block)):
            b.position_at_end(block)
            if len(region.blocks):
                term = self.emit_region(region.blocks[0], [])
                arms.append(([self.env[o] for o in term.operands], b.block))
            b.branch(merge)
        b.position_at_end(merge)
        if len(op.results):
            self.env.update(zip(op.results, self.join([r.type for r in op.results], arms)))

    def emit_while(self, op: ir.Operation) -> None:
        b = self.b
        before_block, after_block = op.regions[0].blocks[0], op.regions[1].blocks[0]
        header, body, exit_block, state = self.enter_loop(
            "while", [a.type for a in before_block.arguments], [self.env[o] for o in op.operands])
        cond = self.emit_region(before_block, state)
        forwarded = [self.env[o] for o in list(cond.operands)[1:]]
        b.cbranch(self.env[cond.operands[0]], body, exit_block)
        b.position_at_end(body)
        term = self.emit_region(after_block, forwarded)
        self.add_incoming(state, [self.env[o] for o in term.operands], b.block)
        b.branch(header)
        b.position_at_end(exit_block)
        self.env.update(zip(op.results, forwarded))
