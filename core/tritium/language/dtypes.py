"""Element types of the language, spelled as in Triton (``tl.float32``, ``tl.int32``, pointers)."""

from __future__ import annotations


class dtype:
    """A scalar element type. ``name`` is Triton's (``fp32``, ``int32``, ``int1``)."""

    FLOATS = ("fp16", "bf16", "fp32", "fp64")
    #: Triton's 8-bit floats: e4m3 with no infinities (NVIDIA's), e5m2 (with infinities), and three
    #: variants whose values tritium cannot convert yet (e4m3 with bias 15, AMD's e4m3/e5m2 "fnuz")
    FP8 = ("fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16")
    #: the fp8 types whose values convert (``language.fp8.FORMATS``)
    FP8_CONVERTED = ("fp8e4nv", "fp8e5")
    SINTS = ("int1", "int8", "int16", "int32", "int64")
    UINTS = ("uint8", "uint16", "uint32", "uint64")

    def __init__(self, name: str):
        if name not in self.FLOATS + self.FP8 + self.SINTS + self.UINTS:
            raise ValueError(f"unknown dtype {name!r}")
        self.name = name

    # -- classification ------------------------------------------------------------------------
    def is_floating(self) -> bool:
        return self.name in self.FLOATS or self.name in self.FP8

    def is_fp8(self) -> bool:
        return self.name in self.FP8

    def is_int(self) -> bool:
        return self.name in self.SINTS + self.UINTS

    def is_bool(self) -> bool:
        return self.name == "int1"

    def is_int_signed(self) -> bool:
        return self.name in self.SINTS and self.name != "int1"

    def is_int_unsigned(self) -> bool:
        return self.name in self.UINTS or self.name == "int1"

    def is_ptr(self) -> bool:
        return False

    @property
    def primitive_bitwidth(self) -> int:
        if self.name in self.FP8:
            return 8
        return int("".join(c for c in self.name if c.isdigit()))

    @property
    def itemsize(self) -> int:
        return max(1, self.primitive_bitwidth // 8)

    @property
    def short(self) -> str:
        """The signature spelling: ``fp32``, ``i32``, ``u8``, ``i1``."""
        if self.is_floating():
            return self.name
        return ("u" if self.name.startswith("u") else "i") + str(self.primitive_bitwidth)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"tl.{_PUBLIC.get(self.name, self.name)}"

    __str__ = __repr__


class pointer_type(dtype):
    """A pointer to ``element_ty`` in ``address_space`` (1: global memory)."""

    def __init__(self, element_ty: dtype, address_space: int = 1):
        self.element_ty, self.address_space = element_ty, address_space
        self.name = f"*{element_ty.short}"

    def is_ptr(self) -> bool:
        return True

    def is_floating(self) -> bool:
        return False

    def is_int(self) -> bool:
        return False

    @property
    def primitive_bitwidth(self) -> int:
        return 64

    @property
    def short(self) -> str:
        return self.name

    def __eq__(self, other) -> bool:
        return isinstance(other, pointer_type) and (other.element_ty, other.address_space) == (
            self.element_ty, self.address_space)

    def __hash__(self) -> int:
        return hash((self.element_ty, self.address_space))

    def __repr__(self) -> str:
        return f"pointer<{self.element_ty!r}>"


_PUBLIC = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64", "fp8e4nv": "float8e4nv",
           "fp8e5": "float8e5", "fp8e4b15": "float8e4b15", "fp8e4b8": "float8e4b8", "fp8e5b16": "float8e5b16"}

int1, int8, int16, int32, int64 = (dtype(n) for n in dtype.SINTS)
uint8, uint16, uint32, uint64 = (dtype(n) for n in dtype.UINTS)
float16, bfloat16, float32, float64 = (dtype(n) for n in dtype.FLOATS)
float8e4nv, float8e5, float8e4b15, float8e4b8, float8e5b16 = (dtype(n) for n in dtype.FP8)

_BY_SHORT = {t.short: t for t in (int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                                  float16, bfloat16, float32, float64, float8e4nv, float8e5, float8e4b15,
                                  float8e4b8, float8e5b16)}

# numpy / torch / DLPack spellings of element types
_BY_FOREIGN = {
    "bool": int1, "int8": int8, "int16": int16, "int32": int32, "int64": int64,
    "uint8": uint8, "uint16": uint16, "uint32": uint32, "uint64": uint64,
    "float16": float16, "half": float16, "bfloat16": bfloat16, "float32": float32, "float": float32,
    "float64": float64, "double": float64,
    "float8_e4m3fn": float8e4nv, "float8_e5m2": float8e5, "float8_e4m3fnuz": float8e4b8, "float8_e5m2fnuz": float8e5b16,
}
_BY_FOREIGN.update({public: _BY_SHORT[name] for name, public in _PUBLIC.items()})  # tritium's own (reinterpret)


def from_signature(text: str) -> dtype:
    """``'*fp32'`` -> pointer to float32, ``'i32'`` -> int32."""
    text = text.strip()
    if text.startswith("*"):
        return pointer_type(from_signature(text[1:]))
    if text in _BY_SHORT:
        return _BY_SHORT[text]
    raise ValueError(f"unknown type {text!r} in signature (use e.g. '*fp32', 'i32', 'fp32')")


def from_foreign(name: str) -> dtype | None:
    """The element type for a numpy/torch dtype name (``'float32'``, ``'torch.int64'``), or None."""
    return _BY_FOREIGN.get(str(name).rsplit(".", 1)[-1])


def bf16_bits(value: float) -> int:
    """The bits of the bfloat16 nearest ``value`` (through float32, ties to even): the one rounding
    of bf16 constants and launch arguments."""
    import numpy as np

    with np.errstate(over="ignore"):
        bits = int(np.array(value, dtype=np.float32).view(np.uint32))
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
