"""Pointer widths come from the target, per address space: core's codegen helpers size a pointer
kept in memory by ``Target.pointer_bits`` (AMD's LDS and private pointers are 32-bit)."""

from __future__ import annotations

from llvmlite import ir as ll

from tritium.codegen.types import llvm_type, memory_type, size_in_bytes
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.target import Target


class Amdish(Target):
    """64-bit global pointers; 32-bit shared (3) and private (5) ones, as on AMD GPUs."""

    def pointer_bits(self, address_space: int) -> int:
        return 32 if address_space in (3, 5) else 64


def test_default_pointers_are_64_bit_in_every_address_space():
    assert [Target().pointer_bits(a) for a in (0, 1, 3, 5)] == [64] * 4
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


def test_pointers_stored_in_memory_are_laid_out_by_their_width():
    """A buffer of shared-memory pointers (as a tensor of pointers kept in memory): the second
    element sits 4 bytes in, and the store is 4-byte aligned."""
    bits = Amdish().pointer_bits
    ptr3 = ll.PointerType(addrspace=3)
    module = ll.Module()
    fn = ll.Function(module, ll.FunctionType(ll.VoidType(), [ll.PointerType(addrspace=5), ptr3]), "keep")
    b = ll.IRBuilder(fn.append_basic_block())
    size = size_in_bytes(ptr3, bits)
    slot = b.gep(fn.args[0], [ll.Constant(ll.IntType(32), 1 * size)], source_etype=ll.IntType(8))
    b.store(fn.args[1], slot, align=size)
    b.ret_void()
    text = str(module)
    assert "getelementptr i8, ptr addrspace(5) %\".1\", i32 4" in text
    assert "store ptr addrspace(3) %\".2\", ptr addrspace(5)" in text and text.count("align 4") == 1
