"""Core's own inliner: every ``func.call`` in a ``tile`` module is replaced by the callee's body.

The upstream ``inline`` pass leaves calls alone when the callee holds ops of a dialect without an
inliner interface, which the Python-defined ``tile`` dialect cannot register; a surviving call
would reach target codegen, and no target should have to lower ``func.call``. So each call site
gets a fresh copy of its callee (whose body may itself call other helpers, handled in turn), the
copy's ops move in front of the call, and its arguments and results are rewired to the call's
operands and results. The private callees are erased afterwards. The frontend refuses recursion,
so the worklist ends.
"""

from __future__ import annotations

from typing import Any

from ..ir.mlir import ir


def _calls(root: Any) -> list:
    """Every ``func.call`` nested anywhere under ``root`` (inside loops and ifs too)."""
    found = []

    def visit(op):
        if op.name == "func.call":
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.operation.walk(visit)
    return found


def _inline_call(call: Any, callee: Any) -> list:
    """Replace ``call`` by a copy of ``callee``'s body (one block: the frontend emits structured
    control flow); returns the calls that copy contains."""
    copy = callee.operation.clone(ip=False)
    entry = copy.regions[0].blocks[0]
    operands = list(call.operands)
    for arg, value in zip(entry.arguments, operands):
        arg.replace_all_uses_with(value)
    ops = list(entry.operations)
    ret = ops[-1]
    for op in ops[:-1]:
        op.move_before(call)
    for result, value in zip(call.results, list(ret.operands)):
        result.replace_all_uses_with(value)
    nested = [c for op in ops[:-1] for c in _calls(op)]
    call.erase()
    copy.erase()
    return nested


def inline_calls(module: Any) -> Any:
    """Inline every call of the module's private functions, then drop those functions (in place)."""
    private = {}
    public = []
    for op in module.body.operations:
        if op.operation.name != "func.func":
            continue
        attrs = op.operation.attributes
        name = ir.StringAttr(attrs["sym_name"]).value
        visibility = ir.StringAttr(attrs["sym_visibility"]).value if "sym_visibility" in attrs else "public"
        if visibility == "private":
            private[name] = op
        else:
            public.append(op)
    work = [c for fn in public for c in _calls(fn)]
    while work:
        call = work.pop()
        symbol = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        if symbol not in private:
            raise ValueError(f"call to '{symbol}', which is not a private function of this module")
        work.extend(_inline_call(call, private[symbol]))
    for op in private.values():
        op.operation.erase()
    return module
