"""The launch fast path: one small Python function generated per kernel and target.

A warm launch must cost little more than the driver call (a GPU launch from Python has a floor
of about 5 µs). Binding arguments through ``inspect``-like dictionaries, generators and layers of
calls costs more than that, so, as Triton does, each kernel gets a launch function generated from
its parameter list: Python itself binds positional and keyword arguments, and the body types,
binds and specialises each runtime argument inline, looks the specialisation up and runs the
launcher. ``kernel[grid]`` hands out this function with the grid bound, so a warm launch is three
Python calls and the target's launcher. Anything unusual (an error, a ``None`` argument, a new
specialisation) goes to the general path (``launch.general_launch``), which words the errors and
compiles. Nothing here is compiled to C. The key holds the same facts as the general path's
(``args.specialization``), spelled differently.
"""

from __future__ import annotations

import builtins
import keyword
import os
from typing import Any, Callable

from ..environment import raw_expression, raw_reader
from ..errors import TritiumError, reason_of
from ..tools.tensor_descriptor import TensorDescriptor
from .args import ARRAY_TYPES, SPECIALIZED_INTS, arg_type
from .descriptors import bind as bind_descriptor
from .descriptors import bind_inline as inline_descriptor
from .descriptors import shape_key as descriptor_shape_key

#: environment variables that change what compiles
COMPILE_ENVIRONMENT = ("TRITIUM_DEBUG", "TRITIUM_OVERRIDE_DIR", "TRITIUM_DEFAULT_FP_FUSION")
_READERS = tuple(raw_reader(v) for v in COMPILE_ENVIRONMENT)


def environment_key(target: Any = None) -> tuple:
    """The raw values of ``COMPILE_ENVIRONMENT`` and of ``target``'s own (``Target.compile_environment``,
    its arch): part of every in-process specialisation key."""
    own = tuple(os.environ.get(v) for v in target.compile_environment) if target is not None else ()
    return tuple(read() for read in _READERS) + own


class Binder:
    """The generated functions of one kernel on one target, for the general path and the fast one:

    - ``bind(*args, **kwargs) -> (key, values)``: ``values`` are the bound runtime arguments in
      signature order; raises on anything the general path should handle;
    - ``launch(grid, *args, **kwargs)``: the whole warm launch, handing anything else to
      ``general(grid, args, kwargs)``;
    - ``on_grid(grid)``: what ``kernel[grid]`` returns: ``launch`` on ``grid``, where arguments
      that do not bind to the parameters (a missing or repeated one) reach ``general`` too.

    A launch allocates as few objects as it can, since each one brings Python's garbage collector
    closer (it cost a third of a GPU launch).
    """

    def __init__(self, jitfn: Any, target: Any, general: Callable[[Any, tuple, dict], Any]):
        names = jitfn.arg_names
        self.usable = jitfn.plain_params and all(n.isidentifier() and not keyword.iskeyword(n)  # names the
                                                 and not hasattr(builtins, n)  # generated code can take
                                                 and not n.startswith("_tritium") for n in names)
        if not self.usable:
            return
        from ..language.core import constexpr
        from .launch import check_writable, launch_dims

        inline = target.inline_array()
        scope: dict[str, Any] = {
            "_tritium_type": arg_type, "_tritium_dtypes": ARRAY_TYPES, "_tritium_none": {},
            "_tritium_ints": SPECIALIZED_INTS, "_tritium_array": inline.cls if inline else None,
            "_tritium_bind": target.bind_arg,
            "_tritium_bind_desc": lambda v, t, n: bind_descriptor(target.bind_arg, v, t, n, jitfn.__name__),
            "_tritium_desc": TensorDescriptor, "_tritium_inline_desc": inline_descriptor,
            "_tritium_dshape": descriptor_shape_key,
            "_tritium_constexpr": constexpr, "_tritium_defaults": jitfn.defaults, "_tritium_debug": jitfn.debug,
            "_tritium_kernel": jitfn.__name__,
            "_tritium_jit": jitfn, "_tritium_kernels": jitfn.kernels, "_tritium_self": self,
            "_tritium_general": general, "_tritium_dims": launch_dims, "_tritium_check": check_writable,
            "_tritium_error": TritiumError, "_tritium_reason": reason_of,
        }
        params = [f"{n}=_tritium_defaults[{n!r}]" if n in jitfn.defaults else n for n in names]
        lines = ["_tritium_p = None", "_tritium_mixed = False"] if inline else []
        key, values = [], []
        for i, n in enumerate(names):
            if n in jitfn.constexprs:
                lines.append(f"_tritium_c{i} = {n}.value if type({n}) is _tritium_constexpr else {n}")
                lines.append(f"hash(_tritium_c{i})")
                key.append(f"_tritium_c{i}")
                continue
            if n in jitfn.annotated:
                lines += _annotated_lines(i, n, jitfn.annotated[n], specialize=n not in jitfn.do_not_specialize)
            else:
                lines += _argument_lines(i, n, inline, specialize=n not in jitfn.do_not_specialize)
            key += [f"_tritium_t{i}", f"_tritium_s{i}"]
            values.append(f"_tritium_b{i}")
        if jitfn.debug is not None:
            lines.append("if 'debug' not in _tritium_options: _tritium_options['debug'] = _tritium_debug")
        lines.append("_tritium_o = tuple(sorted(_tritium_options.items())) if _tritium_options else ()")
        key.append("_tritium_o")
        key += [raw_expression(name, scope) for name in COMPILE_ENVIRONMENT + tuple(target.compile_environment)]
        body = "\n    ".join(lines)
        signature = ", ".join(params + ["**_tritium_options"])
        args = ", ".join(names) + ("," if names else "")
        key_src, values_src = ", ".join(key) + ",", ", ".join(values) + ("," if values else "")
        # arrays of the inline class and arrays of other classes together: the general path binds them all
        mixed = " or (_tritium_mixed and _tritium_p is not None)" if inline else ""
        run = (f"    if _tritium_p is None:\n        _tritium_k._launcher(_tritium_d, ({values_src}))\n"
               f"    else:\n        _tritium_k._launcher.{inline.launch}(_tritium_d, ({values_src}), _tritium_p)\n"
               if inline else f"    _tritium_k._launcher(_tritium_d, ({values_src}))\n")
        src = (f"def binder({signature}):\n    {body}\n"
               f"    return ({key_src}), ({values_src})\n"
               f"def launch(_tritium_grid, {signature}):\n"
               f"    try:\n        {body.replace(chr(10), chr(10) + '    ')}\n"
               f"        _tritium_k = _tritium_kernels.get((_tritium_self, ({key_src})))\n"
               f"    except Exception:  # the general path words the error\n"
               f"        _tritium_k = None\n"
               f"    if _tritium_k is None{mixed}:\n"
               f"        return _tritium_general(_tritium_grid, ({args}), _tritium_options)\n"
               f"    if _tritium_jit.used_globals:\n"
               f"        _tritium_jit.check_globals()\n"
               f"    if _tritium_k.written_params:\n"
               f"        _tritium_check(_tritium_k, _tritium_jit, ({args}))\n"
               f"    _tritium_g = _tritium_grid\n"
               f"    if type(_tritium_g) is tuple and len(_tritium_g) == 1 and type(_tritium_g[0]) is int \\\n"
               f"            and 0 < _tritium_g[0] < 2147483648:  # the most common grid, checked inline\n"
               f"        _tritium_d = (_tritium_g[0], 1, 1)\n"
               f"    else:\n"
               f"        _tritium_d = _tritium_dims(_tritium_k, _tritium_g, ({args}))\n"
               f"        if _tritium_d is None:  # an empty grid launches nothing\n"
               f"            return _tritium_k\n"
               f"{run}"
               f"    return _tritium_k\n"
               f"def on_grid(_tritium_grid):\n"
               f"    def launch_on_grid(*args, **kwargs):\n"
               f"        try:\n"
               f"            return launch(_tritium_grid, *args, **kwargs)\n"
               f"        except TypeError as e:  # not bindable to the parameters: the general path words it\n"
               f"            if e.__traceback__.tb_next is not None:  # raised inside, not by the call\n"
               f"                raise\n"
               f"        except _tritium_error as e:  # the user's line and the message, not the library's frames\n"
               f"            raise e.with_traceback(None) from _tritium_reason(e)\n"
               f"        try:\n"
               f"            return _tritium_general(_tritium_grid, args, kwargs)\n"
               f"        except _tritium_error as e:\n"
               f"            raise e.with_traceback(None) from _tritium_reason(e)\n"
               f"    return launch_on_grid\n")
        exec(compile(src, f"<tritium launch of {jitfn.__name__}>", "exec"), scope)
        self.bind: Callable[..., tuple] = scope["binder"]
        self.launch: Callable[..., Any] = scope["launch"]
        self.on_grid: Callable[[Any], Callable[..., Any]] = scope["on_grid"]


def _annotated_lines(i: int, n: str, arg_type: str, specialize: bool) -> list[str]:
    """The generated lines for a scalar parameter whose annotation fixes its type ``arg_type``:
    bound as that type; an integer one specialises on divisibility by 16 only (as in Triton)."""
    t, b, s = f"_tritium_t{i}", f"_tritium_b{i}", f"_tritium_s{i}"
    spec = f"{b} % 16 == 0" if specialize and arg_type in SPECIALIZED_INTS else "None"
    return [f"{t} = {arg_type!r}", f"{b} = _tritium_bind({n}, {t}, {n!r})", f"{s} = {spec}"]


def _argument_lines(i: int, n: str, inline: Any, specialize: bool) -> list[str]:
    """The generated lines that type, bind and specialise runtime argument ``n`` (the ``i``-th
    parameter) into ``_tritium_t{i}`` (its type), ``_tritium_b{i}`` (its bound value) and
    ``_tritium_s{i}`` (its specialisation, spelled differently from ``args.specialization``): the
    target's inline array class, Python ints of type i32 and Python floats inline, the rest through
    ``args.arg_type`` and the target's ``bind_arg``."""
    t, b, s = f"_tritium_t{i}", f"_tritium_b{i}", f"_tritium_s{i}"
    lines = [f"_tritium_k{i} = type({n})"]
    if inline:
        v, q = {"v": n}, {"v": "_tritium_q"}
        lines += [f"if _tritium_k{i} is _tritium_array:",
                  f"    {b} = {inline.address.format(**v)}",
                  f"    _tritium_p = {inline.placement.format(**v)}",
                  f"    {t} = {inline.dtype.format(**v)}",
                  f"    {s} = " + (f"({b} % 16 == 0) + " if specialize else "") + "2 * _tritium_p",
                  # a tensor descriptor on an array of the inline class: its base is read inline too
                  f"elif _tritium_k{i} is _tritium_desc:",
                  f"    {t} = _tritium_type({n}, {n!r}, _tritium_kernel)",
                  f"    _tritium_q = {n}.base",
                  "    if type(_tritium_q) is _tritium_array:",
                  f"        {b} = _tritium_inline_desc({n}, {inline.address.format(**q)})",
                  f"        _tritium_p = {inline.placement.format(**q)}",
                  f"        {s} = 2 * _tritium_p" + (f" + 4 * _tritium_dshape({n})" if specialize else ""),
                  "    else:",
                  f"        {b} = _tritium_bind_desc({n}, {t}, {n!r})",
                  f"        {s} = " + (f"_tritium_dshape({n})" if specialize else "None"),
                  "        _tritium_mixed = True",
                  f"elif _tritium_k{i} is int and -2147483648 <= {n} <= 2147483647:"]
    else:
        lines.append(f"if _tritium_k{i} is int and -2147483648 <= {n} <= 2147483647:")
    lines += [f"    {t} = 'i32'", f"    {b} = {n}",
              f"    {s} = ({n} == 1) + 2 * ({n} % 16 == 0)" if specialize else f"    {s} = None",
              f"elif _tritium_k{i} is float:", f"    {t} = 'fp32'", f"    {b} = {n}", f"    {s} = None",
              "else:",
              f"    {t} = (_tritium_dtypes.get(_tritium_k{i}) or _tritium_none).get(getattr({n}, 'dtype', None)) "
              f"or _tritium_type({n}, {n!r}, _tritium_kernel)",
              f"    {b} = _tritium_bind({n}, {t}, {n!r}) if {t}[0] != 't' else _tritium_bind_desc({n}, {t}, {n!r})"]
    if not specialize:
        return lines + [f"    {s} = None"] + (["    _tritium_mixed = True"] if inline else [])
    lines += [f"    if {t}[0] == '*':",
              f"        {s} = ({b} % 16 == 0) if isinstance({b}, int) else None"]
    if inline:
        lines.append("        _tritium_mixed = True")
    lines += [f"    elif {t}[0] == 't':",  # a tensor descriptor: the host checked its alignments
              f"        {s} = _tritium_dshape({n})"]
    if inline:
        lines.append("        _tritium_mixed = True")
    return lines + ["    else:",
                    f"        {s} = ({b} == 1) + 2 * ({b} % 16 == 0) if {t} in _tritium_ints else None"]
