"""Host tensor descriptors at the launch boundary (``tritium.tools.tensor_descriptor``).

A descriptor argument has one signature type per parameter, Triton's ``tensordesc<fp16[64, 64]>``
(``,nan`` added for NaN padding, which changes the code), and reaches a target as its parts:
the base pointer, the shape (``i32`` each) and the strides but the last (``i64``). So the
signature a target compiles and loads is the *flat* one (``flat_signature``), the launch path
binds a descriptor to the tuple of its bound parts (``bind``) and the launcher sees them spread
out (``FlatLauncher``). No target needs to know descriptors exist.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Sequence

from ..errors import ArgumentError
from ..language import dtypes as T
from ..tools.tensor_descriptor import TensorDescriptor, array_address

PREFIX = "tensordesc<"
_TYPE = re.compile(r"tensordesc<(\w+)\[(\d+(?:, ?\d+)*)\](, ?nan)?>$")
_TYPES: dict[tuple, str] = {}


def is_descriptor_type(arg_type: str) -> bool:
    return arg_type.startswith(PREFIX)


def descriptor_type(desc: TensorDescriptor, name: str, kernel: str) -> str:
    """The signature type of descriptor argument ``desc``."""
    key = (desc.base.dtype, tuple(desc.block_shape), desc.padding)  # (dtypes hash: no str() per launch)
    found = _TYPES.get(key)
    if found is None:
        element = T.from_foreign(str(key[0]))
        if element is None:
            raise ArgumentError(f"kernel '{kernel}': argument '{name}' is a TensorDescriptor of unsupported dtype "
                                f"{key[0]}")
        found = _TYPES[key] = _spell(element, tuple(desc.block_shape), desc.padding)
    return found


def parse(arg_type: str) -> tuple[T.dtype, tuple[int, ...], str]:
    """(element type, block shape, padding) of a descriptor signature type."""
    m = _TYPE.match(arg_type.strip())
    if m is None:
        raise ValueError(f"malformed tensor descriptor type {arg_type!r} (expected e.g. 'tensordesc<fp16[64, 64]>')")
    block = tuple(int(b) for b in m.group(2).split(","))
    return T.from_signature(m.group(1)), block, "nan" if m.group(3) else "zero"


def canonical(arg_type: str) -> str:
    """A descriptor type as launches spell it (``tensordesc<fp16[64, 64]>``), checked."""
    return _spell(*parse(arg_type))


def _spell(element: T.dtype, block: tuple[int, ...], padding: str) -> str:
    return f"{PREFIX}{element.short}{list(block)}{',nan' if padding == 'nan' else ''}>"


@functools.lru_cache(maxsize=1024)
def parts(name: str, arg_type: str) -> tuple[tuple[str, str], ...]:
    """The (name, type) of each runtime part of descriptor parameter ``name``: the parameters a
    target sees."""
    element, block, _ = parse(arg_type)
    rank = len(block)
    return ((name, "*" + element.short), *((f"{name}.shape[{d}]", "i32") for d in range(rank)),
            *((f"{name}.strides[{d}]", "i64") for d in range(rank - 1)))


def flat_signature(names: Sequence[str], types: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The names and types a target compiles for: descriptors spread into their parts."""
    flat = [p for n, t in zip(names, types) for p in (parts(n, t) if is_descriptor_type(t) else ((n, t),))]
    return tuple(n for n, _ in flat), tuple(t for _, t in flat)


def parameter(arg_type: str) -> Any:
    """The frontend's value of a descriptor parameter (its parts become the function's parameters)."""
    from ..language.tensor_descriptor import host_descriptor_parameter

    element, block, padding = parse(arg_type)
    return host_descriptor_parameter(element, block, padding)


def specialization(bound: tuple) -> str:
    """Which dimensions of a bound descriptor (``bind``'s tuple) are multiples of 16, as Triton
    specialises integer arguments: one ``D`` (a multiple) or ``.`` per dimension, ``""`` where none
    is. The blocks' masks then hold over whole vectors, so loads and stores a target does not copy
    whole (a decomposed descriptor load, a store) move 16 bytes at a time."""
    rank = len(bound) // 2  # the base, rank shapes, rank - 1 strides
    flags = "".join("D" if isinstance(x, int) and x % 16 == 0 else "." for x in bound[1:1 + rank])
    return flags if "D" in flags else ""


def shape_key(desc: TensorDescriptor) -> int:
    """``specialization``'s facts as the launch fast path spells them: a bit per dimension."""
    return sum((x % 16 == 0) << d for d, x in enumerate(desc.shape))


def parameter_attributes(arg_type: str, spec: str = "") -> list[dict]:
    """What the host checked, as axis-info hints on the parts: a 16-byte aligned base and strides
    of whole 16-byte units; and the dimensions ``spec`` (``specialization``) says are multiples of 16."""
    from ..ir import tile

    element, block, _ = parse(arg_type)
    units = max(1, 16 // max(1, element.primitive_bitwidth // 8))
    sixteen = {"tile.divisibility": tile.i32_attr(16)}
    return [sixteen] + [sixteen if spec[d:d + 1] == "D" else {} for d in range(len(block))] + \
        [{"tile.divisibility": tile.i32_attr(units)} if units > 1 else {} for _ in block[1:]]


def bind(bind_part: Callable[[Any, str, str], Any], desc: Any, arg_type: str, name: str, kernel: str) -> tuple:
    """Descriptor argument ``desc`` as the tuple of its parts, each bound by ``bind_part(value, type,
    name)`` (a target's ``bind_arg``), checked against its type."""
    if not isinstance(desc, TensorDescriptor):
        raise ArgumentError(f"kernel '{kernel}': argument '{name}' was compiled as a tensor descriptor "
                            f"({arg_type}), got {type(desc).__name__}")
    (_, pointer), *scalars = parts(name, arg_type)
    address = array_address(desc.base)
    if address is not None and address % 16:  # moved since the descriptor was made (a view's base)
        raise ArgumentError(f"kernel '{kernel}': the base of descriptor '{name}' must be 16-byte aligned, its "
                            f"address is {address:#x}")
    try:
        bound = [bind_part(desc.base, pointer, name)]
        for (part, t), v in zip(scalars, _scalar_parts(desc)):
            if not _fits(t, v):
                raise ArgumentError(f"argument '{part}' = {v} does not fit {t}")
            bound.append(bind_part(v, t, part))
    except ArgumentError as e:  # the same class (an overflow stays an OverflowError), the kernel named
        raise type(e)(f"kernel '{kernel}': {e}") from None
    return tuple(bound)


def bind_inline(desc: TensorDescriptor, address: int) -> tuple:
    """A descriptor whose base the launch path read inline (``Target.inline_array``) as the tuple of
    its parts; anything out of order raises, and the general path (``bind``) words it."""
    rank = len(desc.shape)
    values = _scalar_parts(desc)
    if address % 16 or not all(_fits("i32" if i < rank else "i64", v) for i, v in enumerate(values)):
        raise ArgumentError("a descriptor the general path must bind")
    return (address, *values)


def _scalar_parts(desc: TensorDescriptor) -> list[int]:
    """The shape and the strides but the last: the parameters after the base (``parts``' order)."""
    return [*desc.shape, *desc.strides[:-1]]


def _fits(t: str, v: int) -> bool:
    """Whether ``v`` fits its part's type, ``i32`` (a shape) or ``i64`` (a stride)."""
    bits = 32 if t == "i32" else 64
    return -2**(bits - 1) <= v < 2**(bits - 1)


def spread(values: Sequence[Any], positions: frozenset[int]) -> tuple:
    """Launch ``values`` with the descriptors' tuples (at ``positions``) spread into their parts."""
    out: list[Any] = []
    for i, v in enumerate(values):
        if i in positions:
            out.extend(v)
        else:
            out.append(v)
    return tuple(out)


class FlatLauncher:
    """A target's launcher for a kernel with descriptor parameters: the same calls, with each
    descriptor's bound tuple spread into its parts first."""

    def __init__(self, launcher: Any, positions: frozenset[int]):
        self._launcher, self._positions = launcher, positions

    def __call__(self, grid, values: Sequence[Any], *rest) -> Any:
        return self._launcher(grid, spread(values, self._positions), *rest)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._launcher, name)
        if not callable(method):
            return method

        def spreading(grid, values, *rest):
            return method(grid, spread(values, self._positions), *rest)
        return spreading
