"""Hopper's warpgroup matrix instruction (``wgmma.mma_async``, sm_90a) as core's ``WarpgroupMatrixOp``.

Four warps issue one ``m64nNk16`` product (``k32`` for 8-bit operands, ``k8`` for tf32) together, asynchronously, reading B
(and A, or A from registers) from shared memory through 64-bit descriptors. Core stores operands
as ``SwizzledTile``s, which are the instruction's 128-, 64- and 32-byte swizzle modes; a
descriptor says which, and the strides between the tile's 8-row groups (SBO) and, for an operand
stored along M or N, between its column blocks (LBO). K-major operands need no LBO (one K step
lies in one block row). All of it is inline PTX: LLVM has no intrinsic for the product itself."""

from __future__ import annotations

from llvmlite import ir as ll
from tritium.codegen.device import SharedOperand, WarpgroupMatrixOp

I32, I64 = ll.IntType(32), ll.IntType(64)
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
    tile_start = b.lshr(b.and_(b.ptrtoint(operand.start, I64), I64(0x3FFFF)), I64(4))
    # the block's step added to the tile's descriptor: one add per K step (the steps fold to
    # constants), where the address computed whole would be a shift, a mask and an or; shared
    # memory's addresses fit the 14-bit field, so the step never carries out of it
    step = b.zext(b.lshr(operand.offset, I32(4)), I64)
    return b.add(b.or_(tile_start, I64(fields)), step)


def _asm(b: ll.IRBuilder, text: str, outputs: list[ll.Type], inputs: list[ll.Value],
         constraints: list[str]) -> list[ll.Value]:
    """Side-effecting inline PTX returning values of the ``outputs`` types."""
    ret = ll.LiteralStructType(outputs) if len(outputs) > 1 else (outputs[0] if outputs else ll.VoidType())
    ftype = ll.FunctionType(ret, [v.type for v in inputs])
    got = b.call(ll.InlineAsm(ftype, text, ",".join(constraints + ["~{memory}"]), side_effect=True), inputs)
    if len(outputs) <= 1:
        return [got] if outputs else []
    return [b.extract_value(got, i) for i in range(len(outputs))]


def _passed(values: list[ll.Value]) -> tuple[list[ll.Type], list[str]]:
    """Output types and constraints of ``values`` passed through an inline-assembly statement."""
    return [v.type for v in values], [_REGISTERS[str(v.type)] for v in values] + [str(i) for i in range(len(values))]


#: the output constraint of each accumulator type
_REGISTERS = {"float": "=f", "i32": "=r"}


def _statement(b: ll.IRBuilder, text: str) -> None:
    _asm(b, text, [], [], [])


def warpgroup_op(kind: str, k: int) -> WarpgroupMatrixOp:
    """``wgmma.mma_async.sync.aligned.m64nNk{k}.{f32,s32}.{kind}.{kind}``: 16-bit ``kind`` ("f16",
    "bf16", ``k`` 16) take operands stored K-major or M/N-major (the instruction's transposes); fp8
    ones ("e4m3", "e5m2") and int8 ones ("s8", into int32, N up to 32 or a multiple of 16), ``k``
    32, and tf32 ones (``k`` 8: fp32 values, of which the instruction reads tf32's bits), K-major
    only."""
    transposes = kind in ("f16", "bf16")
    integer = kind == "s8"

    def emit(b: ll.IRBuilder, a, b_: SharedOperand, c: list[ll.Value], n: int) -> list[ll.Value]:
        d = len(c)
        assert d == n // 2, (d, n)
        regs = ",".join(f"${i}" for i in range(d))
        inputs, (types, constraints) = list(c), _passed(c)
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
        scales = "" if integer else ", 1, 1"  # integer products take no operand negations
        text = ("{ .reg .pred p; setp.ne.b32 p, $" + str(at + 1) + ", 0; "
                f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{'s32' if integer else 'f32'}.{kind}.{kind} "
                f"{{{regs}}}, {a_text}, ${at}, p{scales}{trans}; }}")
        return _asm(b, text, types, inputs, constraints)

    def wait(b: ll.IRBuilder, values: list[ll.Value], pending: int) -> list[ll.Value]:
        out = []
        for i in range(0, len(values), _WAIT_CHUNK):  # the first waits; the others only pass values on
            chunk = values[i:i + _WAIT_CHUNK]
            text = f"wgmma.wait_group.sync.aligned {pending};" if i == 0 else ""
            types, constraints = _passed(chunk)
            out += _asm(b, text, types, chunk, constraints)
        return out

    return WarpgroupMatrixOp(
        warps=4, k=k, n_max=256, mn_major=transposes, emit=emit, wait=wait,
        takes=(lambda n: n in (8, 16, 24, 32) or n % 16 == 0) if integer else (lambda n: n % 8 == 0),
        fence=lambda b: _statement(b, "wgmma.fence.sync.aligned;"),
        commit=lambda b: _statement(b, "wgmma.commit_group.sync.aligned;"),
        publish=lambda b: _statement(b, "fence.proxy.async.shared::cta;"))
