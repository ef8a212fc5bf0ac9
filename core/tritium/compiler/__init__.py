"""Triton's ``triton.compiler``: compile a kernel for a target without launching it.

``compile(ASTSource(fn, signature, constexprs), target=GPUTarget(...))`` is Triton's spelling of
``tritium.compile``: the target is named by Triton's ``GPUTarget`` (backend, arch, warp size) and
found among the installed targets through ``Target.options_for``; without one, the selected
target compiles for its current device.
"""

from __future__ import annotations

from typing import Any

from ..errors import ArgumentError, CompilationError, CompileTimeAssertionFailure, TargetError, user_facing
from ..runtime.compiler import CompiledKernel
from ..target import GPUTarget
from . import errors

__all__ = ["ASTSource", "CompilationError", "CompileTimeAssertionFailure", "CompiledKernel", "compile", "errors"]


class ASTSource:
    """A ``@jit`` function with its signature, as Triton's ``triton.compile`` takes it.

    ``signature`` maps every parameter to its type (``"*fp32"``, ``"i32"``) or ``"constexpr"``;
    ``constexprs`` gives the constexpr values by name (or by Triton's ``(index,)`` path); ``attrs``
    maps ``(index,)`` to Triton's attributes, of which ``tt.divisibility`` 16 specialises a pointer
    or integer as a multiple of 16.
    """

    def __init__(self, fn: Any, signature: dict[str, str], constexprs: dict[Any, Any] | None = None,
                 attrs: dict[Any, Any] | None = None):
        self.fn, self.signature = fn, dict(signature)
        names = list(fn.arg_names)
        self.constexprs = {names[k[0]] if isinstance(k, tuple) else k: v for k, v in (constexprs or {}).items()}
        self.attrs = {names[k[0]] if isinstance(k, tuple) else k: v for k, v in (attrs or {}).items()}

    def specializations(self) -> dict[str, str]:
        """The runtime parameters ``attrs`` declares multiples of 16 (``"D"``)."""
        out = {}
        for name, attributes in self.attrs.items():
            for key, value in attributes:
                if key == "tt.divisibility" and value % 16 == 0:
                    out[name] = "D"
        return out


def target_options(target: GPUTarget | str | None) -> tuple[Any, dict[str, Any]]:
    """The tritium target that compiles for ``target`` and the options that make it do so: a
    target's name, a ``GPUTarget`` (the selected target first, then every installed one) or None
    (the selected target, for its current device)."""
    from .. import plugins

    if target is None or isinstance(target, str):
        return plugins.get_target(target, runnable=False), {}
    selected = None
    try:
        selected = plugins.get_target()
    except TargetError:
        pass
    candidates = [selected] if selected is not None else []
    candidates += [i.target for i in plugins.target_infos() if i.target is not selected]
    for candidate in candidates:
        options = candidate.options_for(target)
        if options is not None:
            return candidate, options
    raise TargetError(f"no installed tritium target compiles for {target}; installed: "
                      + ", ".join(i.name for i in plugins.target_infos()))


@user_facing
def compile(src: ASTSource, target: GPUTarget | str | None = None,  # noqa: A001 - Triton's name
            options: dict[str, Any] | None = None) -> CompiledKernel:
    """Compile ``src`` for ``target`` (see ``target_options``) with launch ``options`` (``num_warps``...)."""
    from ..runtime.compiler import compile_for_signature

    if not isinstance(src, ASTSource):
        raise ArgumentError(f"triton.compile takes an ASTSource (or use tritium.compile(fn, signature)), "
                            f"not {type(src).__name__}")
    tgt, chosen = target_options(target)
    signature = {n: t for n, t in src.signature.items() if t != "constexpr"}
    constants = {n: v for n, v in src.constexprs.items() if n not in signature}
    return compile_for_signature(src.fn, tgt, signature, constants, src.specializations(),
                                 {**chosen, **(options or {})})
