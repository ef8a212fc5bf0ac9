"""Hopper's tensor memory accelerator (TMA, sm_90) as core's ``TensorCopy``: the kernel side.

A tensor map (``CUtensorMap``, 128 bytes) is a by-value kernel parameter marked as a grid constant,
so its generic address (``cvta.param``) is what ``cp.async.bulk.tensor`` reads. One thread arms an
``mbarrier`` in shared memory with the bytes it expects (``arrive.expect_tx``) and issues the copies;
the engine completes those bytes on the barrier, and every thread waits for its phase
(``try_wait.parity``). All of it is inline PTX: LLVM's intrinsics for it change between releases.
The host side (encoding the maps at launch) is ``tensor_maps``.
"""

from __future__ import annotations

from llvmlite import ir as ll
from llvmlite.ir.values import ArgumentAttributes
from tritium.codegen.device import TensorCopy

I32, I64 = ll.IntType(32), ll.IntType(64)
#: bytes of a ``CUtensorMap``, and the alignment the driver wants for it
MAP_BYTES, MAP_ALIGN = 128, 64


class _TensorMapParameter(ArgumentAttributes):
    """``byval([128 x i8]) align 64 "nvvm.grid_constant"``: llvmlite prints ``byval`` only for typed
    pointers and no string attributes."""

    def __bool__(self) -> bool:
        return True

    def _to_list(self, typ):
        return [f"byval([{MAP_BYTES} x i8])", f"align {MAP_ALIGN}", '"nvvm.grid_constant"']


def _asm(b: ll.IRBuilder, text: str, args: list[ll.Value], constraints: str, ret: ll.Type = ll.VoidType()):
    ftype = ll.FunctionType(ret, [a.type for a in args])
    return b.call(ll.InlineAsm(ftype, text, constraints + ",~{memory}" if constraints else "~{memory}",
                               side_effect=True), args)


def _shared32(b: ll.IRBuilder, pointer: ll.Value) -> ll.Value:
    """A shared-memory pointer as the 32-bit shared address PTX's ``[%r]`` operands take."""
    return b.trunc(b.ptrtoint(pointer, I64), I32)


def _parameter(arg: ll.Argument) -> None:
    arg.attributes = _TensorMapParameter()


def _init(b: ll.IRBuilder, barrier: ll.Value) -> None:
    _asm(b, "mbarrier.init.shared::cta.b64 [$0], 1;", [_shared32(b, barrier)], "r")


def _fence_init(b: ll.IRBuilder) -> None:
    _asm(b, "fence.mbarrier_init.release.cluster;", [], "")


def _expect(b: ll.IRBuilder, barrier: ll.Value, nbytes: int) -> None:
    _asm(b, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", [_shared32(b, barrier), I32(nbytes)], "r,r")


def _copy(b: ll.IRBuilder, dst: ll.Value, tensor_map: ll.Value, coords: list[ll.Value], barrier: ll.Value) -> None:
    rank = len(coords)
    where = ", ".join(f"${3 + i}" for i in range(rank))
    text = (f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
            f"[$0], [$1, {{{where}}}], [$2];")
    _asm(b, text, [_shared32(b, dst), b.ptrtoint(tensor_map, I64), _shared32(b, barrier), *coords],
         ",".join(["r", "l", "r"] + ["r"] * rank))


def _wait(b: ll.IRBuilder, barrier: ll.Value, phase: ll.Value) -> None:
    text = ("{ .reg .pred done; wait_${:uid}: mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1; "
            "@!done bra wait_${:uid}; }")
    _asm(b, text, [_shared32(b, barrier), phase], "r,r")


def _invalidate(b: ll.IRBuilder, barrier: ll.Value) -> None:
    _asm(b, "mbarrier.inval.shared::cta.b64 [$0];", [_shared32(b, barrier)], "r")


def tensor_copy() -> TensorCopy:
    """TMA on sm_90 and later."""
    return TensorCopy(parameter=_parameter, init=_init, fence_init=_fence_init, expect=_expect, copy=_copy,
                      wait=_wait, invalidate=_invalidate)
