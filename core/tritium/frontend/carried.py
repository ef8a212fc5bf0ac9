"""Values as the frontend's loops, ifs and calls carry them: tensors as IR values, block pointers
as their scalar parts, tuples as the values they hold in IR (their Python values stay Python);
``flatten`` lists what is carried, ``unflatten`` rebuilds the values from the carried handles and
``signature`` says when two values carry alike."""

from __future__ import annotations

from typing import Any

from ..language import core as tlc
from ..language import semantic
from ..language import tuples as tltuples
from ..language.block_ptr import block_ptr


def is_tensor(v: Any) -> bool:
    return isinstance(v, tlc.tensor)


def hashable(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)


def in_ir(v: Any) -> bool:
    """Whether ``v`` is held by IR values (a tensor, a block pointer's parts, a tuple holding
    either), not by Python alone."""
    return is_tensor(v) or isinstance(v, block_ptr) or (isinstance(v, tuple) and any(in_ir(e) for e in v))


def as_value(v: Any) -> Any:
    """``v`` as loops, ifs and returns carry it: block pointers and tuples as they are (a tuple's
    Python values stay Python values), the rest as tensors."""
    return v if isinstance(v, (block_ptr, tuple)) else semantic.to_tensor(v)


def flatten(values: list) -> list:
    """Tensors as they are, block pointers as their scalar parts, tuples as the flattened values
    they hold in IR: what loops, ifs and calls carry."""
    out: list = []
    for v in values:
        if isinstance(v, block_ptr):
            out += v.components()
        elif isinstance(v, tuple):
            out += flatten([e for e in v if in_ir(e)])
        else:
            out.append(v)
    return out


def unflatten(templates: list, handles) -> list:
    """The values ``flatten(templates)`` carried, rebuilt from the carried ``handles``."""
    handles, out = list(handles), []
    for t in templates:
        n = len(flatten([t]))
        out.append(rebuild(t, handles[:n]))
        handles = handles[n:]
    return out


def rebuild(t: Any, part: list) -> Any:
    if isinstance(t, block_ptr):
        return t.rebuild(part)
    if isinstance(t, tuple):
        elements = []
        for e in t:
            n = len(flatten([e])) if in_ir(e) else 0
            elements.append(rebuild(e, part[:n]) if n else e)
            part = part[n:]
        return same_tuple(t, elements)
    return tlc.tensor(part[0], t.dtype, t.shape)


def same_tuple(t: tuple, elements: list) -> tuple:
    """``elements`` in a tuple of ``t``'s class (a namedtuple keeps its fields)."""
    if isinstance(t, tltuples.tuple):
        return tltuples.tuple(elements)
    return type(t)(*elements) if hasattr(type(t), "_fields") else tuple(elements)


def signature(v) -> tuple:
    if isinstance(v, block_ptr):
        return ("block_ptr", *v.signature)
    if isinstance(v, tuple):
        return (type(v), *(signature(e) if in_ir(e) else ("const", hashable(e)) for e in v))
    return (v.dtype, v.shape)
