"""Hopper's warpgroup matrix instruction (``wgmma.mma_async``, sm_90a) as core's ``WarpgroupMatrixOp``.

Four warps issue one ``m64nNk16`` product (``k32`` for fp8) together, asynchronously, reading B
(and A, or A from registers) from shared memory through 64-bit descriptors. Core stores operands
as ``SwizzledTile``s, which are the instruction's 128-, 64- and 32-byte swizzle modes; a
descriptor says which, and the strides between the tile's 8-row groups (SBO) and, for an operand
stored along M or N, between its column blocks (LBO). K-major operands need no LBO (one K step
lies in one block row). All of it is inline PTX: LLVM has no intrinsic for the product itself."""

from __future__ import annotations

from llvmlite import ir as ll
from tritium.codegen.device import SharedOperand, WarpgroupMatrixOp

I32, I64, F32 = ll.IntType(32), ll.IntType(64), ll.FloatType()
#: the descriptor's swizzle-mode field, by the bytes of a swizzled row
_SWIZZLE_MODES = {128: 1, 64: 2, 32: 3}
#: the most registers one inline-assembly statement passes through ``wait``
_WAIT_CHUNK = 128


def descriptor(b: ll.IRBuilder, operand: SharedOperand) -> ll.Value:
    """The i64 shared-memory matrix descriptor of ``operand``: start address, LBO, SBO (each in
    16-byte units) and the swizzle mode."""
    tile = operand.tile
    row_bytes = tile.swizzle_bytes
    sbo = 8 * row_bytes  # from one 8-row group to the next
    lbo = 16 if operand.k_major else tile.block_elements * tile.element_bytes  # between column blocks
    fields = (_SWIZZLE_MODES[row_bytes] << 62) | ((sbo >> 4) << 32) | ((lbo >> 4) << 16)
    start = b.lshr(b.and_(b.ptrtoint(operand.address, I64), I64(0x3FFFF)), I64(4))
    return b.or_(start, I64(fields))


def _asm(b: ll.IRBuilder, text: str, outputs: int, inputs: list[ll.Value], constraints: list[str]) -> list[ll.Value]:
    """Side-effecting inline PTX returning ``outputs`` f32 values."""
    ret = ll.LiteralStructType([F32] * outputs) if outputs > 1 else (F32 if outputs else ll.VoidType())
    ftype = ll.FunctionType(ret, [v.type for v in inputs])
    got = b.call(ll.InlineAsm(ftype, text, ",".join(constraints + ["~{memory}"]), side_effect=True), inputs)
    if outputs <= 1:
        return [got] if outputs else []
    return [b.extract_value(got, i) for i in range(outputs)]


def _statement(b: ll.IRBuilder, text: str) -> None:
    _asm(b, text, 0, [], [])


def warpgroup_op(kind: str, k: int) -> WarpgroupMatrixOp:
    """``wgmma.mma_async.sync.aligned.m64nNk{k}.f32.{kind}.{kind}``: 16-bit ``kind`` ("f16", "bf16",
    ``k`` 16) take operands stored K-major or M/N-major (the instruction's transposes); fp8 ones
    ("e4m3", "e5m2", ``k`` 32) K-major only."""
    transposes = k == 16

    def emit(b: ll.IRBuilder, a, b_: SharedOperand, c: list[ll.Value], n: int) -> list[ll.Value]:
        d = len(c)
        assert d == n // 2, (d, n)
        regs = ",".join(f"${i}" for i in range(d))
        inputs, constraints = list(c), ["=f"] * d + [str(i) for i in range(d)]
        at = 2 * d
        if isinstance(a, SharedOperand):
            inputs.append(descriptor(b, a))
            constraints.append("l")
            a_text, trans = f"${at}", f", {int(not a.k_major)}" if transposes else ""
            at += 1
        else:
            inputs += [b.bitcast(x, I32) for x in a]
            constraints += ["r"] * len(a)
            a_text, trans = "{" + ",".join(f"${at + i}" for i in range(len(a))) + "}", ""
            at += len(a)
        inputs += [descriptor(b, b_), I32(1)]
        constraints += ["l", "r"]
        if transposes:
            trans += f", {int(not b_.k_major)}"
        text = ("{ .reg .pred p; setp.ne.b32 p, $" + str(at + 1) + ", 0; "
                f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{kind}.{kind} {{{regs}}}, {a_text}, ${at}, p, 1, 1"
                f"{trans}; }}")
        return _asm(b, text, d, inputs, constraints)

    def wait(b: ll.IRBuilder, values: list[ll.Value], pending: int) -> list[ll.Value]:
        out = []
        for i in range(0, len(values), _WAIT_CHUNK):  # the first waits; the others only pass values on
            chunk = values[i:i + _WAIT_CHUNK]
            text = f"wgmma.wait_group.sync.aligned {pending};" if i == 0 else ""
            out += _asm(b, text, len(chunk), chunk, ["=f"] * len(chunk) + [str(j) for j in range(len(chunk))])
        return out

    return WarpgroupMatrixOp(
        warps=4, k=k, n_max=256, mn_major=transposes, emit=emit, wait=wait,
        fence=lambda b: _statement(b, "wgmma.fence.sync.aligned;"),
        commit=lambda b: _statement(b, "wgmma.commit_group.sync.aligned;"),
        publish=lambda b: _statement(b, "fence.proxy.async.shared::cta;"))
