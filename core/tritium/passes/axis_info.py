"""Axis info: what is known, per dimension, about the integer and pointer values of a ``tile`` module.

For every integer, index or pointer value (scalars count as one dimension of size 1) it gives:

- **contiguity** ``c``: the dimension splits into aligned runs of ``c`` elements whose values step
  by one (elements for integers, elements of the pointee for pointers);
- **divisibility** ``d``: the largest power of two dividing the first value of every such run
  (every value when ``c`` is 1); pointers are measured in bytes;
- **constancy** ``k``: the dimension splits into aligned runs of ``k`` equal values;

and the value itself where it is a compile-time constant.

Targets use it to choose per-op layouts: a load or store whose pointers are contiguous for ``c``
elements along the fastest dimension and ``d``-byte aligned becomes a vector access of up to
``min(c, d / element size)`` elements, and the contiguous dimension decides the order in which
threads are spread, so neighbouring threads touch neighbouring addresses (coalescing). Masks with a
constancy of ``k`` keep such vectors whole. The CPU target decides its SIMD chunks' vector and
scalar accesses from it too; both apply the rules of ``tritium.codegen.runs``.

Seeds: ``tile.make_range``, integer constants, function arguments with the ``tile.divisibility``
argument attribute (from the integer specialisation), arguments specialised to 1 (they reach the
IR as constants), and the ``tile.divisibility`` / ``tile.contiguity`` / ``tile.constancy``
attributes that ``tl.multiple_of``, ``tl.max_contiguous`` and ``tl.max_constancy`` put on the
op defining a value or on a kernel argument (they replace what the analysis derives, as in
Triton). The transfer functions
follow Triton's axis analysis; anything not modelled is pessimistic (1, 1, 1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from math import gcd
from typing import Iterator

from ..ir import tile
from ..ir.mlir import ir

#: the divisibility of 0 (every power of two divides it), as in Triton
MAX_DIVISOR = 1 << 30

#: op attributes carrying the language's hints, by the field they replace
HINTS = {"tile.contiguity": "contiguity", "tile.divisibility": "divisibility", "tile.constancy": "constancy"}


@dataclass(frozen=True)
class AxisInfo:
    """Per-dimension facts about one value (see the module docstring)."""

    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]
    constant: int | None = None

    @property
    def rank(self) -> int:
        return len(self.contiguity)

    def join(self, other: AxisInfo) -> AxisInfo:
        """What holds for a value that is either ``self`` or ``other``."""
        g = lambda a, b: tuple(gcd(x, y) for x, y in zip(a, b))  # noqa: E731
        return AxisInfo(g(self.contiguity, other.contiguity), g(self.divisibility, other.divisibility),
                        g(self.constancy, other.constancy),
                        self.constant if self.constant == other.constant else None)

    def __str__(self) -> str:
        text = (f"contiguity={list(self.contiguity)} divisibility={list(self.divisibility)} "
                f"constancy={list(self.constancy)}")
        return text if self.constant is None else f"{text} constant={self.constant}"


def analyze(module: ir.Module) -> dict[ir.Value, AxisInfo]:
    """The axis info of every integer, index and pointer value in ``module``'s functions."""
    infos: dict[ir.Value, AxisInfo] = {}
    for op in module.body.operations:
        if op.operation.name != "func.func":
            continue
        fn = op.operation
        block = fn.regions[0].blocks[0]
        arg_attrs = list(ir.ArrayAttr(fn.attributes["arg_attrs"])) if "arg_attrs" in fn.attributes else []
        for i, arg in enumerate(block.arguments):
            if not _tracked(arg.type):
                continue
            attrs = ir.DictAttr(arg_attrs[i]) if i < len(arg_attrs) else ir.DictAttr.get({})
            infos[arg] = _apply_hints(attrs, _uniform(_shape(arg.type), 1, 1, None))
        _Analysis(infos).block(block)
    return infos


def axis_info_text(module: ir.Module) -> str:
    """One line per op result with axis info, in program order: ``<name> = <op>: <facts>``, where a
    name is the op's location name when it has one (``loc("offs")``) and its SSA name otherwise."""
    infos = analyze(module)
    state = ir.AsmState(module.operation)
    lines = []
    for op in walk(module.operation):
        for res in op.results:
            if res in infos:
                named = re.fullmatch(r'loc\("([^"]*)"\)', str(op.location))
                name = named.group(1) if named else res.get_name(state)
                lines.append(f"{name} = {op.name}: {infos[res]}")
    return "\n".join(lines)


# -- the walk ------------------------------------------------------------------------------------


class _Analysis:
    #: rounds of a loop body before its carried values are taken as unknown
    MAX_ROUNDS = 8

    def __init__(self, infos: dict[ir.Value, AxisInfo]):
        self.infos = infos

    def block(self, block: ir.Block) -> None:
        for op in block.operations:
            self.op(op.operation)

    def op(self, op: ir.Operation) -> None:
        if op.name == "scf.for":
            return self.loop(op)
        if op.name == "scf.if":
            for region in op.regions:
                for block in region.blocks:
                    self.block(block)
            self.set_results(op, [self.yielded(op, i) for i in range(len(op.results))])
            return
        for region in op.regions:  # regions of ops not modelled: their arguments are unknown
            for block in region.blocks:
                for arg in block.arguments:
                    if _tracked(arg.type):
                        self.infos[arg] = _unknown(arg.type)
                self.block(block)
        results = [r for r in op.results if _tracked(r.type)]
        if len(results) != 1 or len(op.results) != 1:
            for r in results:
                self.infos[r] = _unknown(r.type)
            return
        info = _transfer(op, [self.get(v) for v in op.operands]) or _unknown(op.result.type)
        self.infos[op.result] = _apply_hints(op.attributes, info)

    def get(self, value: ir.Value) -> AxisInfo | None:
        return self.infos.get(value)

    def yielded(self, op: ir.Operation, i: int) -> AxisInfo | None:
        """The join of result ``i`` over the ``scf.yield`` of each region of ``op``."""
        out = None
        for region in op.regions:
            for block in region.blocks:
                ops = block.operations
                info = self.get(ops[len(ops) - 1].operands[i])
                if info is None:
                    return None
                out = info if out is None else out.join(info)
        return out

    def set_results(self, op: ir.Operation, infos: list[AxisInfo | None]) -> None:
        for res, info in zip(op.results, infos):
            if _tracked(res.type):
                self.infos[res] = info or _unknown(res.type)

    def loop(self, op: ir.Operation) -> None:
        """``scf.for``: the induction variable steps from its lower bound; each carried value is
        the join of its init and what the body yields, iterated until nothing changes."""
        lb, _, step = (self.get(v) for v in op.operands[:3])
        body = op.regions[0].blocks[0]
        iv = body.arguments[0]
        if _tracked(iv.type):
            div = gcd(lb.divisibility[0], step.divisibility[0]) if lb and step else 1
            if "tile.iv_divisibility" in op.attributes:  # tl.multiple_of on the induction variable
                div = max(div, ir.DenseI32ArrayAttr(op.attributes["tile.iv_divisibility"])[0])
            self.infos[iv] = _uniform((1,), 1, div, None)
        carried = list(body.arguments)[1:]
        inits = [self.get(v) if _tracked(v.type) else None for v in op.operands[3:]]
        current = [i or (_unknown(a.type) if _tracked(a.type) else None) for i, a in zip(inits, carried)]
        for round_ in range(self.MAX_ROUNDS + 1):
            if round_ == self.MAX_ROUNDS:
                current = [_unknown(a.type) if c else None for a, c in zip(carried, current)]
            for arg, info in zip(carried, current):
                if info is not None:
                    self.infos[arg] = info
            self.block(body)
            yields = body.operations[len(body.operations) - 1].operands
            new = [c and c.join(self.get(y) or _unknown(y.type)) for c, y in zip(current, yields)]
            if new == current or round_ == self.MAX_ROUNDS:
                break
            current = new
        self.set_results(op, current)


def walk(op: ir.Operation) -> Iterator[ir.Operation]:
    """Every op nested in ``op``, in program order (an op before the ops of its regions)."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner.operation
                yield from walk(inner.operation)


# -- lattice helpers -----------------------------------------------------------------------------


def _tracked(t: ir.Type) -> bool:
    elem = ir.RankedTensorType(t).element_type if isinstance(t, ir.RankedTensorType) else t
    return isinstance(elem, (ir.IntegerType, ir.IndexType)) or tile.is_ptr(elem)


def _shape(t: ir.Type) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(t).shape) if isinstance(t, ir.RankedTensorType) else (1,)


def _uniform(shape, contiguity: int, divisibility: int, constancy: int | None,
             constant: int | None = None) -> AxisInfo:
    """The same facts on every dimension; a ``constancy`` of None means whole dimensions."""
    return AxisInfo(tuple(contiguity for _ in shape), tuple(divisibility for _ in shape),
                    tuple(constancy or n for n in shape), constant)


def _unknown(t: ir.Type) -> AxisInfo:
    return _uniform(_shape(t), 1, 1, 1)


def _pow2(value: int) -> int:
    """The largest power of two dividing ``value`` (``MAX_DIVISOR`` for 0)."""
    return MAX_DIVISOR if value == 0 else min(value & -value, MAX_DIVISOR)


def _mul_div(a: int, b: int) -> int:
    return min(a * b, MAX_DIVISOR)


def _elem_bytes(ptr_type: ir.Type) -> int:
    """Bytes of a pointer's pointee; 1 for pointers to pointers (their width is the target's, and a
    smaller factor only weakens the divisibility)."""
    t = ir.RankedTensorType(ptr_type).element_type if isinstance(ptr_type, ir.RankedTensorType) else ptr_type
    pointee = tile.pointee(t)
    width = getattr(pointee, "width", 0)
    return max(1, width // 8)


def _apply_hints(attrs, info: AxisInfo) -> AxisInfo:
    """``info`` with the fields that hint attributes in ``attrs`` (an op's or an argument's) give."""
    fields = {}
    for attr, field in HINTS.items():
        if attr in attrs:
            a = attrs[attr]
            is_int = isinstance(a, ir.IntegerAttr)
            values = [ir.IntegerAttr(a).value] if is_int else list(ir.DenseI32ArrayAttr(a))
            if len(values) == 1:
                values *= info.rank
            fields[field] = tuple(values)
    if not fields:
        return info
    return AxisInfo(fields.get("contiguity", info.contiguity), fields.get("divisibility", info.divisibility),
                    fields.get("constancy", info.constancy), info.constant)


# -- transfer functions --------------------------------------------------------------------------


def _transfer(op: ir.Operation, args: list[AxisInfo | None]) -> AxisInfo | None:
    """The result's axis info from the operands'; None when the op is not modelled."""
    name, res = op.name, op.result
    shape = _shape(res.type)
    if name == "tile.make_range":
        start = ir.IntegerAttr(op.attributes["start"]).value
        end = ir.IntegerAttr(op.attributes["end"]).value
        return AxisInfo((end - start,), (_pow2(start),), (1,))
    if name == "arith.constant":
        value = _constant_value(op.attributes["value"])
        return None if value is None else _uniform(shape, 1, _pow2(value), None, value)
    if any(a is None for a in args) or not args:
        return None
    if name == "arith.cmpi":
        return _binary(f"cmp{ir.IntegerAttr(op.attributes['predicate']).value}", op, args[0], args[1], shape)
    if name in _BINARY:
        return _binary(_BINARY[name], op, args[0], args[1], shape)
    src = args[0]
    if name == "tile.splat":
        return _uniform(shape, 1, src.divisibility[0], None, src.constant)
    if name == "tile.broadcast":
        src_shape = _shape(op.operands[0].type)
        return AxisInfo(tuple(1 if s == 1 else c for s, c in zip(src_shape, src.contiguity)),
                        src.divisibility,
                        tuple(n if s == 1 else k for s, n, k in zip(src_shape, shape, src.constancy)),
                        src.constant)
    if name == "tile.expand_dims":
        return _expand_dims(src, ir.IntegerAttr(op.attributes["axis"]).value, len(shape))
    if name in ("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "tile.convert_layout"):
        return src
    if name in tile.REINDEXING:
        return _reindexed(op, args, shape)
    if name == "arith.select":
        cond, a, b = args
        if cond.constant is not None:
            return a if cond.constant else b
        # a scalar condition (an ``if`` that canonicalize turned into a select) picks whole tensors
        uniform = cond.constancy if isinstance(op.operands[0].type, ir.RankedTensorType) else shape
        g = lambda *xs: tuple(gcd(*v) for v in zip(*xs))  # noqa: E731
        contig = g(a.contiguity, b.contiguity, uniform)
        div = tuple(gcd(_run_divisibility(a, d, c), _run_divisibility(b, d, c)) for d, c in enumerate(contig))
        return AxisInfo(contig, div, g(a.constancy, b.constancy, uniform),
                        a.constant if a.constant == b.constant else None)
    if name == "tile.load":  # equal pointers, mask and other give equal values
        constancy = tuple(gcd(*ks) for ks in zip(*(a.constancy for a in args)))
        return AxisInfo(tuple(1 for _ in shape), tuple(1 for _ in shape), constancy)
    return None


def _constant_value(attr: ir.Attribute) -> int | None:
    if isinstance(attr, ir.IntegerAttr):
        return attr.value
    if isinstance(attr, ir.DenseIntElementsAttr) and attr.is_splat:
        return ir.IntegerAttr(attr.get_splat_value()).value
    return None


def _expand_dims(src: AxisInfo, axis: int, rank: int) -> AxisInfo:
    """A new dimension of size 1: its divisibility is what holds for every element of ``src``."""
    if src.constant is not None:
        div = _pow2(src.constant)
    else:
        div = MAX_DIVISOR
        for d in range(src.rank):
            div = gcd(div, _run_divisibility(src, d, 1))
    ins = lambda xs, v: xs[:axis] + (v,) + xs[axis:]  # noqa: E731
    if rank == 1:  # a scalar (shape (1,)) cannot be expanded; the frontend expands tensors only
        return src
    return AxisInfo(ins(src.contiguity, 1), ins(src.divisibility, div), ins(src.constancy, 1), src.constant)


def _reindexed(op: ir.Operation, args: list[AxisInfo], shape) -> AxisInfo:
    """The re-indexing ops: ``trans`` permutes the facts; ``flip`` keeps constancy, not contiguity,
    along its axis; ``reshape`` keeps the runs along the last dimension (row-major order is kept,
    and runs are aligned); otherwise only what holds for every element is known."""
    src = args[0]
    every = MAX_DIVISOR if src.constant is None else _pow2(src.constant)
    for info in args:
        every = gcd(every, *(_run_divisibility(info, d, 1) for d in range(info.rank)))
    constant = src.constant if all(a.constant == src.constant for a in args) else None
    rank = len(shape)
    if op.name == "tile.trans":
        order = tile.ints(op.attributes["order"])
        pick = lambda xs: tuple(xs[d] for d in order)  # noqa: E731
        return AxisInfo(pick(src.contiguity), pick(src.divisibility), pick(src.constancy), constant)
    if op.name == "tile.flip":
        a = ir.IntegerAttr(op.attributes["axis"]).value
        at = lambda xs, v: xs[:a] + (v,) + xs[a + 1:]  # noqa: E731
        return AxisInfo(at(src.contiguity, 1), at(src.divisibility, _run_divisibility(src, a, 1)), src.constancy,
                        constant)
    contig, div, const = [1] * rank, [every] * rank, [1] * rank
    if op.name == "tile.reshape":
        n = shape[-1]
        contig[-1] = min(src.contiguity[-1], n)
        div[-1] = _run_divisibility(src, src.rank - 1, contig[-1])
        const[-1] = min(src.constancy[-1], n)
    return AxisInfo(tuple(contig), tuple(div), tuple(const), constant)


def _run_divisibility(info: AxisInfo, d: int, run: int) -> int:
    """The divisibility of ``info``'s values at the starts of aligned runs of ``run`` elements along
    ``d`` (a run of the result need not start where one of the operand does)."""
    c = info.contiguity[d]
    return info.divisibility[d] if run % c == 0 else gcd(info.divisibility[d], _pow2(gcd(run, c)))


def _binary(kind: str, op: ir.Operation, lhs: AxisInfo, rhs: AxisInfo, shape) -> AxisInfo:
    value = _fold(kind, lhs.constant, rhs.constant)
    if value is not None:
        return _uniform(shape, 1, _pow2(value), None, value)
    rc = rhs.constant
    by = rc if kind == "div" else 1 << rc if kind == "shr" and rc is not None and 0 <= rc < 31 else None
    if (kind == "mul" and rc == 1) or by == 1 or (kind == "shl" and rc == 0):
        return lhs
    if kind == "mul" and lhs.constant == 1:
        return rhs
    if kind == "mul" and 0 in (lhs.constant, rc):  # 0 * m[:, None]: zeros, whatever the other side
        return _uniform(shape, 1, MAX_DIVISOR, None, 0)
    if kind == "rem" and rc == 1:
        return _uniform(shape, 1, MAX_DIVISOR, None, 0)
    dims = range(len(shape))
    const = [gcd(lhs.constancy[d], rhs.constancy[d]) for d in dims]
    contig = [1 for _ in dims]
    div = [1 for _ in dims]

    def by_constant(d: int, n: int | None) -> bool:
        """lhs runs along ``d`` step by one and rhs is the power of two ``n`` everywhere."""
        return (lhs.contiguity[d] > 1 and rhs.constancy[d] == shape[d] and n is not None and n > 0
                and n & (n - 1) == 0)

    for d in dims:
        ld, rd = lhs.divisibility[d], rhs.divisibility[d]
        if kind in ("add", "sub", "addptr"):
            if kind == "sub":  # contiguity means increasing: only lhs may run
                contig[d] = gcd(lhs.contiguity[d], rhs.constancy[d])
            else:
                contig[d] = max(gcd(lhs.constancy[d], rhs.contiguity[d]),
                                gcd(lhs.contiguity[d], rhs.constancy[d]))
            rd = _run_divisibility(rhs, d, contig[d])
            div[d] = gcd(_run_divisibility(lhs, d, contig[d]),
                         _mul_div(rd, _elem_bytes(op.result.type)) if kind == "addptr" else rd)
        elif kind in ("mul", "shl"):
            if kind == "mul":
                factor = _run_divisibility(rhs, d, 1)
            else:
                factor = 1 << rc if rc is not None and 0 < rc < 31 else 1
            div[d] = _mul_div(_run_divisibility(lhs, d, 1), factor)
        elif kind in ("div", "shr"):
            if by is not None and by > 0 and by & (by - 1) == 0 and lhs.contiguity[d] == 1:
                div[d] = max(1, ld // by)
            if by_constant(d, by):  # aligned runs of gcd(contiguity, divisors) have one quotient
                const[d] = max(const[d], gcd(lhs.contiguity[d], ld, by))
        elif kind == "rem":  # aligned runs of x no longer than a divisor of n hold no multiple of n
            if lhs.contiguity[d] > 1 and rhs.constancy[d] == shape[d]:  # (x + arange) % n, n % 16 == 0
                contig[d] = gcd(lhs.contiguity[d], ld, rd)
            if rhs.constancy[d] > 1 or shape[d] == 1:
                div[d] = gcd(_run_divisibility(lhs, d, contig[d]), rd)
        elif kind == "and":
            if rc is not None and by_constant(d, rc + 1):  # x & (2^k - 1) is x % 2^k
                contig[d] = gcd(lhs.contiguity[d], ld, rc + 1)
            else:  # the result's set bits are set in both
                div[d] = max(_run_divisibility(lhs, d, 1), _run_divisibility(rhs, d, 1))
        elif kind in ("or", "max", "min"):
            div[d] = gcd(_run_divisibility(lhs, d, 1), _run_divisibility(rhs, d, 1))
        elif kind in _BELOW:  # x < c and x >= c agree over aligned runs of x that c cannot split
            if lhs.contiguity[d] > 1 and rhs.constancy[d] == shape[d]:
                const[d] = max(const[d], gcd(lhs.contiguity[d], ld, rd))
        elif kind in _ABOVE:  # c > x and c <= x: the same with the operands swapped
            if rhs.contiguity[d] > 1 and lhs.constancy[d] == shape[d]:
                const[d] = max(const[d], gcd(rhs.contiguity[d], ld, rd))
    return AxisInfo(tuple(contig), tuple(div), tuple(const))


_BINARY = {"arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul", "arith.divsi": "div",
           "arith.divui": "div", "arith.remsi": "rem", "arith.remui": "rem", "arith.shli": "shl",
           "arith.shrsi": "shr", "arith.shrui": "shr", "arith.andi": "and", "arith.ori": "or",
           "arith.maxsi": "max", "arith.minsi": "min", "arith.maxui": "max", "arith.minui": "min",
           "tile.addptr": "addptr"}

#: arith.cmpi predicates (its ``predicate`` attribute): x < c, x >= c (slt, sge, ult, uge) ...
_BELOW = {"cmp2", "cmp5", "cmp6", "cmp9"}
#: ... and c > x, c <= x (sgt, sle, ugt, ule)
_ABOVE = {"cmp4", "cmp3", "cmp8", "cmp7"}


def _fold(kind: str, a: int | None, b: int | None) -> int | None:
    """The result when both operands are constants (integers; pointers are never constant)."""
    if a is None or b is None or kind == "addptr":
        return None
    if kind in ("div", "rem") and b == 0:
        return None
    q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1) if kind in ("div", "rem") else 0
    table = {"add": a + b, "sub": a - b, "mul": a * b, "div": q, "rem": a - q * b if kind == "rem" else 0,
             "and": a & b, "or": a | b, "max": max(a, b), "min": min(a, b),
             "shl": a << b if 0 <= b < 64 else None, "shr": a >> b if 0 <= b < 64 else None}
    return table.get(kind)
