"""Element types of the language, spelled as in Triton (``tl.float32``, ``tl.int32``, pointers)."""

from __future__ import annotations

from typing import Any, Sequence


class dtype:
    """A scalar element type. ``name`` is Triton's (``fp32``, ``int32``, ``int1``)."""

    FLOATS = ("fp16", "bf16", "fp32", "fp64")
    #: Triton's 8-bit floats: e4m3 with no infinities (NVIDIA's), e5m2 (with infinities), and three
    #: variants whose values tritium cannot convert yet (e4m3 with bias 15, AMD's e4m3/e5m2 "fnuz")
    FP8 = ("fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16")
    #: the fp8 types that convert from and to fp32, fp16 and bf16 only, rounding only their own
    #: way, as Triton's conversions do (``language.fp8.FORMATS`` says how each one rounds)
    FP8_FROM_FP32_ONLY = ("fp8e4b15", "fp8e4b8", "fp8e5b16")
    SINTS = ("int1", "int8", "int16", "int32", "int64")
    UINTS = ("uint8", "uint16", "uint32", "uint64")
    #: no value: what a function returning nothing gives, as in Triton (``tl.void``)
    OTHER = ("void",)
    #: Triton's lists of the type names, which its tests and helper code iterate over (``int1`` is
    #: unsigned there, as tritium treats it)
    SINT_TYPES = ["int8", "int16", "int32", "int64"]
    UINT_TYPES = ["int1", "uint8", "uint16", "uint32", "uint64"]
    FP_TYPES = ["fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32", "fp64"]
    STANDARD_FP_TYPES = ["fp16", "bf16", "fp32", "fp64"]
    OTHER_TYPES = ["void"]
    #: explicit mantissa bits of each floating type (Triton's ``fp_mantissa_width``)
    MANTISSA_BITS = {"fp8e4b15": 3, "fp8e4nv": 3, "fp8e4b8": 3, "fp8e5": 2, "fp8e5b16": 2, "fp16": 10, "bf16": 7,
                     "fp32": 23, "fp64": 52}
    #: the exponent bias of each floating type (Triton's ``exponent_bias``): the b15/b8/b16 fp8 types
    #: name theirs
    EXPONENT_BIAS = {"fp8e4b15": 15, "fp8e4nv": 7, "fp8e4b8": 8, "fp8e5": 15, "fp8e5b16": 16, "fp16": 15, "bf16": 127,
                     "fp32": 127, "fp64": 1023}

    def __init__(self, name: str):
        if name not in self.FLOATS + self.FP8 + self.SINTS + self.UINTS + self.OTHER:
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

    def is_void(self) -> bool:
        return self.name == "void"

    def is_block(self) -> bool:
        return False

    def is_const(self) -> bool:
        return False

    @property
    def scalar(self) -> dtype:
        """The element type (a dtype is its own; a ``block_type``'s is its elements')."""
        return self

    @property
    def primitive_bitwidth(self) -> int:
        if self.name in self.FP8:
            return 8
        if self.name == "void":
            return 0
        return int("".join(c for c in self.name if c.isdigit()))

    @property
    def fp_mantissa_width(self) -> int:
        """The explicit mantissa bits of a floating type (an ``AttributeError`` for others, as in Triton)."""
        if self.name not in self.MANTISSA_BITS:
            raise AttributeError(f"{self} is not a floating-point type: it has no fp_mantissa_width")
        return self.MANTISSA_BITS[self.name]

    @property
    def exponent_bias(self) -> int:
        """The exponent bias of a floating type (an ``AttributeError`` for others, as in Triton)."""
        if self.name not in self.EXPONENT_BIAS:
            raise AttributeError(f"{self} is not a floating-point type: it has no exponent_bias")
        return self.EXPONENT_BIAS[self.name]

    @property
    def itemsize(self) -> int:
        return max(1, self.primitive_bitwidth // 8)

    @property
    def short(self) -> str:
        """The signature spelling: ``fp32``, ``i32``, ``u8``, ``i1``."""
        if self.is_floating() or self.is_void():
            return self.name
        return ("u" if self.name.startswith("u") else "i") + str(self.primitive_bitwidth)

    def __eq__(self, other) -> bool:
        if not isinstance(other, dtype):  # a constexpr compares its value (``dtype == tl.constexpr(tl.int32)``)
            return NotImplemented
        return type(other) is type(self) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"tl.{_PUBLIC.get(self.name, self.name)}"

    def __str__(self) -> str:
        return repr(self)


class pointer_type(dtype):
    """A pointer to ``element_ty`` in ``address_space`` (1: global memory); ``const`` pointers
    (parameters annotated ``tl.const``) refuse stores."""

    def __init__(self, element_ty: dtype, address_space: int = 1, const: bool = False):
        if not isinstance(element_ty, dtype):
            raise TypeError(f"element_ty has type `{type(element_ty).__name__}`; expected `dtype`")
        self.element_ty, self.address_space, self.const = element_ty, address_space, const
        self.name = f"*{element_ty.short}"

    def is_ptr(self) -> bool:
        return True

    def is_const(self) -> bool:
        return self.const

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
        if not isinstance(other, dtype):
            return NotImplemented
        return isinstance(other, pointer_type) and (other.element_ty, other.address_space, other.const) == (
            self.element_ty, self.address_space, self.const)

    def __hash__(self) -> int:
        return hash((self.element_ty, self.address_space, self.const))

    def __repr__(self) -> str:
        return f"{'const_' if self.const else ''}pointer<{self.element_ty!r}>"


class block_type(dtype):
    """The type of a block of ``shape`` elements of ``element_ty``: ``x.type`` of a tensor that is
    not a scalar, as in Triton (``x.type.shape``, ``x.type.scalar``, ``x.type.is_block()``)."""

    def __init__(self, element_ty: dtype, shape: Sequence[int]):
        if not isinstance(shape, (list, tuple)):
            raise TypeError(f"block_type's shape must be a list or tuple, got {shape!r}")
        self.element_ty = element_ty
        self.shape = tuple(int(getattr(s, "value", s)) for s in shape)
        if not self.shape:
            raise TypeError("0d block_type is forbidden")
        self.numel = 1
        for s in self.shape:
            self.numel *= s
        self.name = f"<{list(self.shape)}, {element_ty!r}>"

    def is_block(self) -> bool:
        return True

    def is_floating(self) -> bool:
        return self.element_ty.is_floating()

    def is_int(self) -> bool:
        return self.element_ty.is_int()

    def is_ptr(self) -> bool:
        return False

    def get_block_shapes(self) -> tuple[int, ...]:
        return self.shape

    def with_element_ty(self, element_ty: dtype) -> block_type:
        return block_type(element_ty, self.shape)

    @property
    def scalar(self) -> dtype:
        return self.element_ty

    @property
    def primitive_bitwidth(self) -> int:
        return self.element_ty.primitive_bitwidth

    def __eq__(self, other) -> bool:
        if not isinstance(other, dtype):
            return NotImplemented
        return isinstance(other, block_type) and (other.element_ty, other.shape) == (self.element_ty, self.shape)

    def __hash__(self) -> int:
        return hash((self.element_ty, self.shape))

    def __repr__(self) -> str:
        return self.name


class constexpr_type:
    """The type of a compile-time constant (``tl.constexpr(v).type``): two are equal when their
    values are."""

    def __init__(self, value: Any):
        self.value = value

    def __eq__(self, other) -> bool:
        return isinstance(other, constexpr_type) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"constexpr_type[{self.value!r}]"


class tuple_type:
    """The type of a ``tl.tuple``: its elements' types, in order."""

    def __init__(self, types: Sequence[Any], fields: Sequence[str] | None = None):
        self.types = list(types)
        self.fields = list(fields or [""] * len(self.types))
        self.name = "[" + ",".join(f"{k}:{v!r}" for k, v in zip(self.fields, self.types)) + "]"

    def __iter__(self):
        return iter(self.types)

    def __getitem__(self, index: int) -> Any:
        return self.types[index]

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and (other.types, other.fields) == (self.types, self.fields)

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return self.name


class slice_type(dtype):
    """The type of a ``tl.slice``."""

    def __init__(self) -> None:
        self.name = "slice_type"


_PUBLIC = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64", "fp8e4nv": "float8e4nv",
           "fp8e5": "float8e5", "fp8e4b15": "float8e4b15", "fp8e4b8": "float8e4b8", "fp8e5b16": "float8e5b16"}

int1, int8, int16, int32, int64 = (dtype(n) for n in dtype.SINTS)
uint8, uint16, uint32, uint64 = (dtype(n) for n in dtype.UINTS)
float16, bfloat16, float32, float64 = (dtype(n) for n in dtype.FLOATS)
float8e4nv, float8e5, float8e4b15, float8e4b8, float8e5b16 = (dtype(n) for n in dtype.FP8)
void = dtype("void")
pi32_t = pointer_type(int32)

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


def str_to_ty(name: str, c: Any = None) -> dtype | constexpr_type:
    """Triton's ``tl.str_to_ty``: the type a signature string names (``"fp32"``, ``"i32"``, ``"u1"``
    or ``"B"`` for booleans, ``"*fp16"``, ``"*kfp16"`` for a const pointer), or for ``"constexpr"``
    the type of the constant ``c``."""
    if name == "constexpr":
        return constexpr_type(c)
    if name.startswith("*k"):
        return pointer_type(str_to_ty(name[2:]), const=True)
    if name.startswith("*"):
        return pointer_type(str_to_ty(name[1:]))
    found = {"u1": int1, "B": int1}.get(name) or _BY_SHORT.get(name)
    if found is None:
        raise ValueError(f"str_to_ty: unknown type {name!r} (e.g. 'fp32', 'i32', 'u1', '*fp16', 'constexpr'; "
                         "tensor descriptor types are not taken here)")
    return found


def canonical_names() -> dict[str, str]:
    """Triton's ``type_canonicalisation_dict``: every element type name tritium knows (numpy's and
    torch's, ``float8e4nv``..., and the signature names themselves) -> its signature name."""
    names = {name: t.short for name, t in _BY_FOREIGN.items()}
    names.update({short: short for short in _BY_SHORT})
    names["void"] = "void"
    return names


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
