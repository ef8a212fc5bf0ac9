"""Where each element of a re-indexing op's result comes from (``tile.reshape``, ``trans``,
``join``, ``split``, ``flip``): one definition of the ops' meaning that every code generator uses.

Indices are per-dimension entries that are Python ints (folded at compile time) or LLVM ``i32``
values; the helpers here fold ints and emit arithmetic only where a value is not known (the cpu
target's chunk loops use them too). Every
dimension is a power of two, so row-major positions unflatten with shifts and masks.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence, Union

from llvmlite import ir as ll

from ..ir import tile
from ..ir.mlir import ir

I32 = ll.IntType(32)
Index = Union[int, ll.Value]


def value(i: Index) -> ll.Value:
    return ll.Constant(I32, i) if isinstance(i, int) else i


def add(b: ll.IRBuilder, x: Index, y: Index) -> Index:
    if isinstance(x, int) and isinstance(y, int):
        return x + y
    if isinstance(y, int) and y == 0:
        return x
    if isinstance(x, int) and x == 0:
        return y
    return b.add(value(x), value(y))


def mul(b: ll.IRBuilder, x: Index, k: int) -> Index:
    if isinstance(x, int):
        return x * k
    if k == 0:
        return 0
    return x if k == 1 else b.mul(x, ll.Constant(I32, k))


def mirror(b: ll.IRBuilder, x: Index, n: int) -> Index:
    """``n - 1 - x``, for ``x`` in ``[0, n)`` (n a power of two: an xor with ``n - 1``)."""
    return n - 1 - x if isinstance(x, int) else b.xor(x, ll.Constant(I32, n - 1))


def row_major(b: ll.IRBuilder, idx: Sequence[Index], shape: Sequence[int]) -> Index:
    """The row-major position of ``idx`` in a tensor of ``shape``."""
    out: Index = 0
    stride = 1
    for i, n in reversed(list(zip(idx, shape))):
        if n > 1:
            out = add(b, out, mul(b, i, stride))
        stride *= n
    return out


def unflatten(b: ll.IRBuilder, flat: Index, shape: Sequence[int]) -> tuple[Index, ...]:
    """The index of row-major position ``flat`` in a tensor of ``shape``."""
    out: list[Index] = []
    for n in reversed(shape):
        if n == 1:
            out.append(0)
        elif isinstance(flat, int):
            out.append(flat % n)
            flat //= n
        else:
            out.append(b.and_(flat, ll.Constant(I32, n - 1)))
            flat = b.lshr(flat, ll.Constant(I32, int(math.log2(n))))
    return tuple(reversed(out))


@dataclasses.dataclass(frozen=True)
class Reindex:
    """One re-indexing op: its kind, operand and result shapes and its attribute."""

    kind: str                             # "reshape", "trans", "join", "split" or "flip"
    src_shape: tuple[int, ...]            # every operand's shape (join's two are equal)
    res_shape: tuple[int, ...]
    order: tuple[int, ...] = ()           # trans
    axis: int = 0                         # flip: the reversed dimension; split: the part

    @classmethod
    def of(cls, op: ir.Operation) -> "Reindex":
        kind = op.name.removeprefix("tile.")
        src = tuple(ir.RankedTensorType(op.operands[0].type).shape)
        res = tuple(ir.RankedTensorType(op.results[0].type).shape)
        order = tuple(tile.ints(op.attributes["order"])) if kind == "trans" else ()
        key = {"flip": "axis", "split": "part"}.get(kind)
        axis = ir.IntegerAttr(op.attributes[key]).value if key else 0
        return cls(kind, src, res, order, axis)

    @property
    def operands(self) -> int:
        return 2 if self.kind == "join" else 1

    def source(self, b: ll.IRBuilder, idx: Sequence[Index]) -> tuple[Index, tuple[Index, ...]]:
        """The operand (0 or 1; an LLVM value for ``join`` at a position unknown at compile
        time) and the position in it of the result element at ``idx`` (``b`` may be None when
        every index is an int)."""
        idx = tuple(idx)
        if self.kind == "reshape":
            return 0, unflatten(b, row_major(b, idx, self.res_shape), self.src_shape)
        if self.kind == "trans":
            src: list[Index] = [0] * len(idx)
            for i, d in enumerate(self.order):
                src[d] = idx[i]
            return 0, tuple(src)
        if self.kind == "join":
            return idx[-1], idx[:-1]
        if self.kind == "split":
            return 0, idx + (self.axis,)
        if self.kind == "flip":
            a = self.axis
            return 0, idx[:a] + (mirror(b, idx[a], self.res_shape[a]),) + idx[a + 1:]
        raise ValueError(f"not a re-indexing op: tile.{self.kind}")

    def scratch_index(self, b: ll.IRBuilder, idx: Sequence[Index]) -> Index:
        """The row-major position of the source of result element ``idx`` when the operands lie
        one after the other, row-major, in one buffer."""
        if self.kind == "reshape":  # reshaping keeps row-major positions
            return row_major(b, idx, self.res_shape)
        which, src = self.source(b, idx)
        pos = row_major(b, src, self.src_shape)
        return add(b, pos, mul(b, which, math.prod(self.src_shape))) if self.operands == 2 else pos
