"""MLIR types to llvmlite types.

Scalars map one to one, ``!tile.ptr<T, as>`` becomes an opaque pointer in an address space the
target chooses (the CPU has one address space, GPUs keep the tile's), and ``i1`` is stored as a
byte in memory, as Triton does. How wide a pointer is in memory is the target's to say, per
address space (``DeviceHooks.pointer_bits``): AMD's shared and private pointers are 32-bit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from llvmlite import ir as ll

from ..errors import TritiumError
from ..language.dtypes import bf16_bits

if TYPE_CHECKING:  # MLIR is imported where code is generated, not where launchers size pointers
    from ..ir.mlir import ir


class BFloatType(ll.types._BaseFloatType):
    """LLVM's ``bfloat``, which llvmlite does not define."""

    null = "0.0"
    intrinsic_name = "bf16"

    def __str__(self) -> str:
        return "bfloat"

    def format_constant(self, value: float) -> str:
        return f"0xR{bf16_bits(value):04X}"


BFloatType._create_instance()

#: MLIR's fp8 type classes: LLVM has none, so an fp8 value is an ``i8`` in the IR, and conversions
#: (which carry the format, ``codegen/fp8.py``) do the arithmetic on its bits
FP8_TYPES = ("Float8E4M3FNType", "Float8E5M2Type", "Float8E4M3B11FNUZType", "Float8E4M3FNUZType",
             "Float8E5M2FNUZType")


AddrspaceMap = Callable[[int], int]
#: ``pointer_bits(llvm_address_space) -> bits``, as ``DeviceHooks.pointer_bits`` gives it
PointerBits = Callable[[int], int]


def _same_addrspace(addrspace: int) -> int:
    return addrspace


def llvm_type(t: ir.Type, addrspace_map: AddrspaceMap = _same_addrspace) -> ll.Type:
    """The llvmlite type of one *element* (scalar) MLIR type."""
    from ..ir import tile  # MLIR: imported by code generation only (a launcher needs the rest)
    from ..ir.mlir import ir

    if tile.is_ptr(t):
        return ll.PointerType(addrspace=addrspace_map(tile.addrspace(t)))
    if isinstance(t, ir.IntegerType):
        return ll.IntType(t.width)
    if isinstance(t, ir.IndexType):
        return ll.IntType(64)
    floats = ((ir.F16Type, ll.HalfType()), (ir.BF16Type, BFloatType()), (ir.F32Type, ll.FloatType()),
              (ir.F64Type, ll.DoubleType()))
    for mlir_cls, ll_type in floats:
        if isinstance(t, mlir_cls):
            return ll_type
    if any(isinstance(t, getattr(ir, name)) for name in FP8_TYPES):
        return ll.IntType(8)
    raise TritiumError(f"type {t} has no LLVM equivalent (tritium cannot compute with it yet)")


def element_type(t: ir.Type) -> ir.Type:
    """The element type of a ranked tensor, or the type itself for scalars."""
    from ..ir.mlir import ir

    return t.element_type if isinstance(t, ir.RankedTensorType) else t


def memory_type(t: ll.Type) -> ll.Type:
    """How an element of type ``t`` is laid out in memory (``i1`` occupies a byte)."""
    return ll.IntType(8) if isinstance(t, ll.IntType) and t.width == 1 else t


def vector_of(t: ll.Type, width: int) -> ll.Type:
    """``<width x t>``, or ``t`` itself for width 1 (one lane is kept scalar)."""
    return t if width == 1 else ll.VectorType(t, width)


def scalar_of(t: ll.Type) -> ll.Type:
    return t.element if isinstance(t, ll.VectorType) else t


def pointers_of_64_bits(address_space: int) -> int:
    """The default ``PointerBits`` (``DeviceHooks.pointer_bits``'s default): 64 bits everywhere."""
    return 64


def size_in_bytes(t: ll.Type, pointer_bits: PointerBits = pointers_of_64_bits) -> int:
    """Byte size of a scalar memory type; a pointer's comes from ``pointer_bits`` of its address
    space. A target whose pointers are not all 64-bit passes its ``DeviceHooks.pointer_bits``."""
    t = memory_type(t)
    if isinstance(t, ll.IntType):
        return t.width // 8
    if isinstance(t, ll.PointerType):
        return pointer_bits(t.addrspace) // 8
    return {"half": 2, "bfloat": 2, "float": 4, "double": 8}[str(t)]


def const(t: ll.Type, value) -> ll.Constant:
    """The constant ``value`` of scalar type ``t``, or splatted over vector type ``t``."""
    if isinstance(t, ll.VectorType):
        return ll.Constant(t, [value] * t.count)
    return ll.Constant(t, value)
