"""Pointer widths come from the target's hooks, per address space: core's layout stage and codegen
helpers size a pointer kept in memory by ``DeviceHooks.pointer_bits`` (AMD's LDS and private
pointers are 32-bit)."""

from __future__ import annotations

from llvmlite import ir as ll

from tritium.codegen.types import llvm_type, memory_type, size_in_bytes
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.codegen.device import DeviceHooks


class Amdish(DeviceHooks):
    """64-bit global pointers; 32-bit shared (3) and private (5) ones, as on AMD GPUs."""

    def pointer_bits(self, address_space: int) -> int:
        return 32 if address_space in (3, 5) else 64


def test_default_pointers_are_64_bit_in_every_address_space():
    assert [DeviceHooks().pointer_bits(a) for a in (0, 1, 3, 5)] == [64] * 4
    assert size_in_bytes(ll.PointerType()) == 8
    assert size_in_bytes(ll.PointerType(addrspace=3)) == 8


def test_a_pointer_typed_element_takes_the_width_of_its_address_space():
    bits = Amdish().pointer_bits
    with tile.context():
        shared = llvm_type(tile.ptr_type(ir.F32Type.get(), 3))
        glob = llvm_type(tile.ptr_type(ir.F32Type.get(), 1))
    assert str(shared) == "ptr addrspace(3)" and str(glob) == "ptr addrspace(1)"
    assert size_in_bytes(memory_type(shared), bits) == 4
    assert size_in_bytes(memory_type(glob), bits) == 8
    assert size_in_bytes(ll.IntType(1), bits) == 1 and size_in_bytes(ll.HalfType(), bits) == 2

