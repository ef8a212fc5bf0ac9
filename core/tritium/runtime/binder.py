"""The launch fast path: one small Python function generated per kernel and target.

A warm launch must cost little more than the driver call (a GPU launch from Python has a floor
of about 5 µs). Binding arguments through ``inspect``-like dictionaries and generators costs more
than that, so, as Triton does, each kernel gets a binder generated from its parameter list: Python
itself binds positional and keyword arguments, and the body types, binds and specialises each
runtime argument inline and returns the specialisation key. Anything unusual (an error, a ``None``
argument, a parameter that is not plain) makes the binder give up, and the general path in
``launch`` runs instead: it words the errors and compiles. Nothing here is compiled to C. The key
holds the same facts as the general path's (``args.specialization``), spelled differently.
"""

from __future__ import annotations

import keyword
from typing import Any, Callable

from ..environment import raw_reader
from .args import ARRAY_TYPES, SPECIALIZED_INTS, arg_type

#: environment variables that change what compiles
COMPILE_ENVIRONMENT = ("TRITIUM_DEBUG", "TRITIUM_OVERRIDE_DIR")
_READERS = tuple(raw_reader(v) for v in COMPILE_ENVIRONMENT)


def environment_key() -> tuple:
    """The raw values of ``COMPILE_ENVIRONMENT``: part of every in-process specialisation key."""
    return tuple(read() for read in _READERS)


class Binder:
    """``bind(*args, **kwargs) -> (key, values)`` for one kernel on one target, where ``values`` are
    the bound runtime arguments in signature order; raises on anything the general path should
    handle. ``params(*args, **kwargs)`` gives every parameter's value in order (for grid callables
    and the read-only check), apart: a launch allocates as few objects as it can, since each one
    brings Python's garbage collector closer (it cost a third of a GPU launch)."""

    def __init__(self, jitfn: Any, target: Any):
        names = jitfn.arg_names
        self.usable = jitfn.plain_params and all(n.isidentifier() and not keyword.iskeyword(n)
                                                 and not n.startswith("_tritium") for n in names)
        if not self.usable:
            return
        from ..language.core import constexpr

        scope: dict[str, Any] = {
            "_tritium_type": arg_type, "_tritium_dtypes": ARRAY_TYPES, "_tritium_none": {},
            "_tritium_ints": SPECIALIZED_INTS,
            "_tritium_bind": target.bind_arg,
            "_tritium_constexpr": constexpr, "_tritium_defaults": jitfn.defaults, "_tritium_debug": jitfn.debug,
            "_tritium_kernel": jitfn.__name__, **{f"_tritium_env{i}": read for i, read in enumerate(_READERS)},
        }
        params = [f"{n}=_tritium_defaults[{n!r}]" if n in jitfn.defaults else n for n in names]
        lines, key, values = [], [], []
        for i, n in enumerate(names):
            if n in jitfn.constexprs:
                lines.append(f"c{i} = {n}.value if type({n}) is _tritium_constexpr else {n}")
                lines.append(f"hash(c{i})")
                key.append(f"c{i}")
                continue
            lines += [  # arg_type, target.bind_arg and specialization, with their common cases inline
                f"k{i} = type({n})",
                f"t{i} = ('i32' if -2147483648 <= {n} <= 2147483647 else _tritium_type({n}, {n!r}, _tritium_kernel)) "
                f"if k{i} is int else 'fp32' if k{i} is float else "
                f"(_tritium_dtypes.get(k{i}) or _tritium_none).get(getattr({n}, 'dtype', None)) "
                f"or _tritium_type({n}, {n!r}, _tritium_kernel)",
                f"b{i} = _tritium_bind({n}, t{i}, {n!r})"]
            if n in jitfn.do_not_specialize:
                key.append(f"t{i}")
            else:
                lines.append(f"s{i} = ((b{i} % 16 == 0) if isinstance(b{i}, int) else None) if t{i}[0] == '*' else "
                             f"(b{i} == 1) + 2 * (b{i} % 16 == 0) if t{i} in _tritium_ints else None")
                key += [f"t{i}", f"s{i}"]
            values.append(f"b{i}")
        if jitfn.debug is not None:
            lines.append("if 'debug' not in _tritium_options: _tritium_options['debug'] = _tritium_debug")
        lines.append("o = tuple(sorted(_tritium_options.items())) if _tritium_options else ()")
        key.append("o")
        key += [f"_tritium_env{i}()" for i in range(len(_READERS))]
        body = "\n    ".join(lines)
        signature = ", ".join(params + ["**_tritium_options"])
        src = (f"def binder({signature}):\n    {body}\n"
               f"    return ({', '.join(key)},), ({', '.join(values)}{',' if values else ''})\n"
               f"def params({signature}):\n    return ({', '.join(names)}{',' if names else ''})\n")
        exec(compile(src, f"<tritium binder of {jitfn.__name__}>", "exec"), scope)
        self.bind: Callable[..., tuple] = scope["binder"]
        self.params: Callable[..., tuple] = scope["params"]
