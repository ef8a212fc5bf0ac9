"""Tuple arguments at the launch boundary, as Triton passes them: a tuple (a namedtuple, a
``torch.Size``, nested tuples) is one parameter of the kernel, and its leaves are arguments of their
own.

A leaf is either a runtime argument (an array, a number, a tensor descriptor), typed and
specialised as a top-level argument is, or a compile-time value: ``None``, a ``tl.constexpr``, a
``@jit`` function, a dtype, a namedtuple field annotated ``tl.constexpr``, and an integer equal to 1
(Triton's specialisation, which makes it a constexpr inside the kernel). ``layout`` records which is
which, the compile-time values and the tuples' classes (a namedtuple keeps its fields in the
kernel); it is part of the specialisation key. The parameter's signature type spells the shape,
``(*fp32,(i32,constexpr))``; the target sees only the runtime leaves, spread into parameters of
their own (``parts``) as descriptors are, so no target needs to know tuples exist.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Sequence

from .descriptors import flat_signature as descriptor_flat
from .descriptors import is_descriptor_type
from .descriptors import parts as descriptor_parts


@dataclasses.dataclass(frozen=True)
class Leaf:
    """A runtime leaf: its signature type and its specialisation (``args.specialization``)."""

    arg_type: str
    spec: str = ""


@dataclasses.dataclass(frozen=True)
class Const:
    """A compile-time leaf: the value the kernel sees."""

    value: Any

    def __repr__(self) -> str:  # in cache keys: a @jit function by its sources, not its address
        cache_key = getattr(self.value, "cache_key", None)
        return f"Const({cache_key if isinstance(cache_key, str) else self.value!r})"


@dataclasses.dataclass(frozen=True)
class Layout:
    """A tuple argument: its class (``tuple``, a namedtuple class, ``torch.Size``...) and elements."""

    cls: type
    elements: tuple

    def __repr__(self) -> str:
        name = "tuple" if self.cls is tuple else f"{self.cls.__module__}.{self.cls.__qualname__}"
        return f"{name}({', '.join(map(repr, self.elements))})"


def layout_key(name: str) -> str:
    """Where a tuple parameter's ``Layout`` goes among a compile's constants (no parameter name
    holds a ``:``)."""
    return f"{name}:tuple"


def is_tuple_type(arg_type: str) -> bool:
    return arg_type.startswith("(")


def is_tuple_argument(value: Any) -> bool:
    return isinstance(value, tuple)


def _constexpr_fields(cls: type) -> frozenset[str]:
    """The fields of a namedtuple class annotated ``tl.constexpr``: compile-time values."""
    from ..language.core import constexpr

    notes = getattr(cls, "__annotations__", {})
    return frozenset(f for f, a in notes.items()
                     if a is constexpr or (isinstance(a, str) and a.split(".")[-1] == "constexpr"))


def _is_compile_time(value: Any) -> bool:
    from ..language import dtypes as T
    from ..language.core import constexpr
    from .jit import JITFunction

    return value is None or isinstance(value, (constexpr, JITFunction, T.dtype, str))


def layout(value: tuple, name: str, kernel: str, leaf: Callable[[Any, str], tuple[str, Any, str]],
           specialize: bool = True) -> tuple[Layout, list]:
    """The ``Layout`` of tuple argument ``value`` and its runtime leaves bound, in order, each
    descriptor spread into its parts. ``leaf(value, path)`` types, binds and specialises one leaf
    as ``(type, bound, spec)``; ``specialize=False`` (``do_not_specialize``) keeps integers equal to 1
    runtime arguments and drops the specialisations."""
    from ..language.core import constexpr

    bound: list = []

    def walk(v: tuple, path: str) -> Layout:
        fixed = _constexpr_fields(type(v)) if hasattr(type(v), "_fields") else frozenset()
        fields = getattr(type(v), "_fields", ())
        elements = []
        for i, e in enumerate(v):
            at = f"{path}[{i}]"
            if is_tuple_argument(e):
                elements.append(walk(e, at))
            elif _is_compile_time(e) or (i < len(fields) and fields[i] in fixed):
                elements.append(Const(e.value if isinstance(e, constexpr) else e))
            elif specialize and type(e) is int and e == 1:
                elements.append(Const(1))
            else:
                t, b, spec = leaf(e, at)
                bound.extend(b if is_descriptor_type(t) else (b,))
                elements.append(Leaf(t, spec if specialize else ""))
        return Layout(type(v), tuple(elements))

    return walk(value, name), bound


def spell(lay: Layout) -> str:
    """The signature type of a tuple parameter: ``(*fp32,(i32,constexpr))``."""
    return "(" + ",".join(spell(e) if isinstance(e, Layout) else "constexpr" if isinstance(e, Const) else e.arg_type
                          for e in lay.elements) + ")"


def parts(name: str, lay: Layout) -> list[tuple[str, str, str]]:
    """``(name, type, spec)`` of each parameter a target sees for tuple parameter ``name``, in
    order: the runtime leaves, named by their path (``x[1][0]``), descriptors spread into parts."""
    out: list[tuple[str, str, str]] = []

    def walk(lay: Layout, path: str) -> None:
        for i, e in enumerate(lay.elements):
            at = f"{path}[{i}]"
            if isinstance(e, Layout):
                walk(e, at)
            elif isinstance(e, Leaf):
                if is_descriptor_type(e.arg_type):
                    out.extend((n, t, "") for n, t in descriptor_parts(at, e.arg_type))
                else:
                    out.append((at, e.arg_type, e.spec))

    walk(lay, name)
    return out


def parameter(lay: Layout, leaf: Callable[[str, str], Any]) -> tuple:
    """The frontend's value of a tuple parameter: its class rebuilt around ``leaf(type, spec)`` for
    each runtime leaf (placeholders the frontend turns into the function's parameters) and the
    compile-time values as they are; a plain tuple becomes a ``tl.tuple``, as in Triton."""
    from ..language import tuples as tltuples
    from ..language.core import constexpr
    from .jit import JITFunction

    def const(value: Any) -> Any:  # None stays None (``t[1] is None`` holds) and a function callable
        return value if value is None or isinstance(value, JITFunction) else constexpr(value)

    elements = [parameter(e, leaf) if isinstance(e, Layout) else const(e.value) if isinstance(e, Const)
                else leaf(e.arg_type, e.spec) for e in lay.elements]
    if lay.cls is tuple or not hasattr(lay.cls, "_fields"):
        return tltuples.tuple(elements)
    return lay.cls(*elements)


def leaf_value(values: dict[str, Any], flat_name: str) -> Any:
    """The argument a flat parameter name (``x``, ``x[1][0]``, a descriptor's part ``x[0].shape[1]``)
    stands for, among ``values`` by parameter name: a tuple's leaf, or the descriptor itself."""
    name = flat_name.split("[", 1)[0].split(".", 1)[0]
    value = values[name]
    for index in _PATH.match(flat_name, len(name)).group(0)[1:-1].split("]["):
        if index:
            value = value[int(index)]
    return value


_PATH = re.compile(r"(\[\d+\])*")


def flat_signature(names: Sequence[str], types: Sequence[str],
                   constants: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The names and types a target compiles for: tuples (their ``Layout`` among ``constants``) and
    descriptors spread into their parts."""
    flat_names, flat_types = [], []
    for n, t in zip(names, types):
        if is_tuple_type(t):
            spread = [(p, pt) for p, pt, _ in parts(n, constants[layout_key(n)])]
        else:
            spread = list(zip(*descriptor_flat((n,), (t,))))
        flat_names += [p for p, _ in spread]
        flat_types += [pt for _, pt in spread]
    return tuple(flat_names), tuple(flat_types)
