"""Typing of launch arguments: what a user value is in the kernel's signature, and how it specialises."""

from __future__ import annotations

import numbers
from typing import Any, Sequence

from ..errors import ArgumentError, ArgumentOverflowError
from ..language import dtypes as T
from ..language.semantic import SemanticError, argument_dtype
from ..tools.tensor_descriptor import TensorDescriptor
from .descriptors import bind as bind_descriptor
from .descriptors import descriptor_type, is_descriptor_type
from .descriptors import specialization as descriptor_specialization


def _np_generic():
    import numpy as np

    return np.generic


#: array class -> its dtype -> signature type: the launch path's fast lookup (nested: no key tuple
#: to allocate per launch), filled by ``arg_type``
ARRAY_TYPES: dict[type, dict[Any, str]] = {}
#: integer signature types that specialise on == 1 and divisibility by 16 (``specialization``)
SPECIALIZED_INTS = frozenset(f"{s}{bits}" for s in "iu" for bits in (8, 16, 32, 64))


#: Triton's spellings of a scalar type in a parameter annotation beyond numpy's and the
#: signature's own (its ``type_canonicalisation_dict``): Python's int, and the bool aliases
_ANNOTATION_ALIASES = {"int": T.int32, "int1": T.int1, "uint1": T.int1, "u1": T.int1}


def annotation_type(annotation: Any) -> str | None:
    """The signature type a scalar parameter's annotation fixes, read as Triton reads it: a tritium
    dtype (``val: tl.float16``), a type name ("fp16", "i64", "float16", "tl.bfloat16", "half") or
    Python's int, float and bool (int32, fp32, bool). None for anything else: pointer types and
    annotations Triton does not know leave the argument typed by its value."""
    if isinstance(annotation, T.dtype):
        t = annotation
    else:
        name = annotation.__name__ if isinstance(annotation, type) else annotation
        if not isinstance(name, str):
            return None
        name = name.strip().removeprefix("tl.")
        t = _ANNOTATION_ALIASES.get(name) or (T.from_foreign(name) if "." not in name else None)
        if t is None:
            try:
                t = T.from_signature(name)
            except ValueError:
                return None
    return None if t.is_ptr() or t.is_void() else t.short


def arg_type(value: Any, name: str, kernel: str) -> str:
    """The signature type of one runtime argument: ``*fp32`` for arrays, ``i32``/``i64``/``fp32``/``i1``."""
    cls = type(value)
    if cls is float:  # every Python float argument is fp32 (``argument_dtype``)
        return "fp32"
    if cls is int and -2**31 <= value < 2**31:  # the common case of ``argument_dtype``
        return "i32"
    if cls is int or cls is bool:
        try:
            return argument_dtype(value).short
        except SemanticError as e:
            raise ArgumentOverflowError(f"kernel '{kernel}': argument '{name}' = {value}: {e}") from None
    dt = getattr(value, "dtype", None)
    if dt is not None:
        by_dtype = ARRAY_TYPES.setdefault(cls, {})
        found = by_dtype.get(dt)
        if found is None:
            found = by_dtype[dt] = _arg_type(value, name, kernel)
        return found
    return _arg_type(value, name, kernel)


def _arg_type(value: Any, name: str, kernel: str) -> str:
    if isinstance(value, TensorDescriptor):
        return descriptor_type(value, name, kernel)
    if isinstance(value, MockTensor):  # (never cached: every launch of one comes here)
        raise ArgumentError(f"kernel '{kernel}': argument '{name}' is a MockTensor, which has no memory: it "
                            "stands in for a tensor in warmup() only; launch with a real array")
    if isinstance(value, _np_generic()):  # first: numpy.float64 is also a Python float
        t = T.from_foreign(value.dtype.name)
        if t is None:
            raise ArgumentError(f"kernel '{kernel}': argument '{name}' has unsupported dtype {value.dtype}")
        return t.short
    if isinstance(value, bool):  # subclasses of the Python number types (IntEnum, ...)
        return "i1"
    if isinstance(value, (int, float)):
        return arg_type(int(value) if isinstance(value, int) else float(value), name, kernel)
    if isinstance(value, (list, tuple)):
        raise ArgumentError(f"kernel '{kernel}': argument '{name}' is a {type(value).__name__}; pointer "
                            "arguments take arrays (numpy.ndarray, torch.Tensor or any DLPack/buffer object), "
                            f"e.g. numpy.asarray({name})")
    dt = getattr(value, "dtype", None)
    if dt is None:
        dt = _element_type_of_buffer(value)
    if dt is not None:
        t = T.from_foreign(str(dt))
        if t is None:
            raise ArgumentError(f"kernel '{kernel}': argument '{name}' has unsupported element type {dt}")
        return "*" + t.short
    if isinstance(value, (memoryview, bytearray, bytes)):
        raise ArgumentError(f"kernel '{kernel}': argument '{name}' is a raw {type(value).__name__} with no "
                            "element type; wrap it with numpy.frombuffer(..., dtype=...)")
    raise ArgumentError(f"kernel '{kernel}': argument '{name}' of type {type(value).__name__} is not supported; "
                        "pass an array, a Python int/float/bool, or a numpy scalar")


def _element_type_of_buffer(value: Any) -> Any:
    """The numpy dtype of a DLPack or typed buffer-protocol object without a ``dtype`` attribute."""
    import numpy as np

    if hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value).dtype
        except (TypeError, RuntimeError, BufferError):
            return None  # device memory: the target's bind_arg says so
    if isinstance(value, (bytes, bytearray)):
        return None  # raw bytes: no element type to take
    try:
        fmt = memoryview(value).format
        return None if isinstance(value, memoryview) and fmt == "B" else np.dtype(fmt)
    except TypeError:
        return None


class MockTensor:
    """A tensor of ``dtype`` that has no memory, for compiling without launching (Triton's name):
    ``kernel.warmup(torch.float32, ...)`` passes torch dtypes where tensors go, and each becomes a
    mock tensor whose address, 0, is taken as 16-byte aligned, as Triton takes it. Launching one
    is an error: it exists only for ``warmup``."""

    def __init__(self, dtype: Any, shape: Sequence[int] | None = None):
        self.dtype, self.shape = dtype, [1] if shape is None else list(shape)

    def stride(self) -> tuple[int, ...]:
        strides, n = [], 1
        for s in reversed(self.shape):
            strides.append(n)
            n *= s
        return tuple(reversed(strides))

    @staticmethod
    def data_ptr() -> int:
        return 0

    @staticmethod
    def ptr_range() -> int:
        return 0

    @staticmethod
    def wrap_dtype(arg: Any) -> Any:
        """A torch dtype as a MockTensor of it; anything else as it is."""
        return MockTensor(arg) if type(arg).__name__ == "dtype" and type(arg).__module__ == "torch" else arg


def mock_type(value: MockTensor, name: str, kernel: str) -> str:
    """The signature type of a ``MockTensor`` (a pointer to its dtype's elements)."""
    t = T.from_foreign(str(value.dtype))
    if t is None:
        raise ArgumentError(f"kernel '{kernel}': argument '{name}' is a MockTensor of unsupported dtype {value.dtype}")
    return "*" + t.short


def bind(target: Any, value: Any, arg_type: str, name: str, kernel: str) -> Any:
    """``target.bind_arg`` with the kernel named in its errors (a tensor descriptor: the tuple of its
    bound parts, ``descriptors.bind``)."""
    if arg_type[0] == "t":
        return bind_descriptor(target.bind_arg, value, arg_type, name, kernel)
    try:
        return target.bind_arg(value, arg_type, name)
    except ArgumentError as e:  # the same class (an overflow stays an OverflowError), the kernel named
        raise type(e)(f"kernel '{kernel}': {e}") from None


def specialization(arg_type: str, bound: Any, annotated: bool = False) -> str:
    """Triton's integer specialisation: ``'1'`` for ints equal to 1 (not for parameters whose
    annotation fixes their type, as in Triton), ``'D'`` for ints and pointers divisible by 16
    (pointers by address in bytes), a tensor descriptor's dimensions that are
    (``descriptors.specialization``), ``''`` otherwise."""
    if arg_type.startswith("*"):
        return "D" if isinstance(bound, int) and bound % 16 == 0 else ""
    if is_descriptor_type(arg_type):
        return descriptor_specialization(bound) if isinstance(bound, tuple) else ""
    if arg_type in SPECIALIZED_INTS and isinstance(bound, int):
        if bound == 1:
            return "" if annotated else "1"
        if bound % 16 == 0:
            return "D"
    return ""


_INT_RANGES = {f"{s}{bits}": ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if s == "i" else (0, (1 << bits) - 1))
               for s in "iu" for bits in (8, 16, 32, 64)}
_FLOATS = frozenset({"fp16", "bf16", "fp32", "fp64"})


def bind_scalar(value: Any, arg_type: str, arg_name: str, target: str) -> int | float:
    """A scalar argument as the Python number a launcher packs (``i1`` as 0/1), after checking that
    it has the signature type's kind and fits its range; shared by every compiling target's
    ``bind_arg``. Raises ``ArgumentError`` naming the argument."""
    cls = type(value)
    if (cls is int and arg_type == "i32" and -2**31 <= value < 2**31) or (cls is float and arg_type == "fp32"):
        return value  # the common cases, checked without the numbers ABCs
    if arg_type == "i1":
        if not isinstance(value, (bool, numbers.Integral)):
            raise ArgumentError(f"argument '{arg_name}' must be a bool for type i1, not {type(value).__name__}")
        return int(bool(value))
    if arg_type in _INT_RANGES:
        if not isinstance(value, numbers.Integral):
            raise ArgumentError(f"argument '{arg_name}' must be an integer for type {arg_type}, "
                                f"not {type(value).__name__}")
        lo, hi = _INT_RANGES[arg_type]
        if not lo <= int(value) <= hi:
            raise ArgumentOverflowError(f"argument '{arg_name}' = {value} is out of range for {arg_type} ({lo}..{hi})")
        return int(value)
    if arg_type in _FLOATS:
        if not isinstance(value, numbers.Real):
            raise ArgumentError(f"argument '{arg_name}' must be a number for type {arg_type}, "
                                f"not {type(value).__name__}")
        return float(value)
    raise ArgumentError(f"argument '{arg_name}': the {target} target does not support arguments of type {arg_type}")
