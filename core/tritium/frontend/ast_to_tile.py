"""Python AST -> ``tile`` IR: the frontend of the compiler.

``generate_module`` walks a ``@jit`` function's AST and evaluates it abstractly: Python values
(constexprs, literals, dtypes, modules) are computed in Python, tensors are MLIR values, and
builtins/operators emit IR through ``IRBuilder``. Control flow on tensors becomes ``scf``; calls
to other ``@jit`` functions become private ``func.func``s (inlined later by ``passes.inline``).
Every error is re-raised as a ``CompilationError`` naming the kernel and the source line.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import operator
import warnings
from typing import Any

from ..errors import CompilationError, CompileTimeAssertionFailure, TritiumError
from ..ir import tile
from ..ir.mlir import func, ir, scf
from ..language import core as tlc
from ..language.block_ptr import block_ptr
from ..language import debug
from ..language import dtypes as T
from ..language import python_ops, semantic
from ..language import tuples as tltuples
from ..language.semantic import StaticAssertionFailed
from ..runtime.jit import JITFunction, allowed_global, global_rule_message
from .carried import as_value, flatten, hashable, in_ir, is_tensor, same_tuple, signature, unflatten
from .ir_builder import IRBuilder, ir_type
from .names import assigned_names

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
           ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.Pow: operator.pow}
_CMPOPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
           ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_,
           ast.IsNot: operator.is_not, ast.In: lambda a, b: a in b,
           ast.NotIn: lambda a, b: a not in b}
_BUILTINS = {n: getattr(builtins, n) for n in (
    "range", "min", "max", "len", "int", "float", "bool", "abs", "tuple", "list", "isinstance",
    "enumerate", "zip", "getattr", "hasattr", "ValueError", "TypeError", "AssertionError", "print",
    "breakpoint")}


def source_error(jitfn, node: ast.AST, message: str, kernel: str | None = None,
                 cls: type[CompilationError] = CompilationError) -> CompilationError:
    """An error at ``node`` of ``jitfn``'s source: kernel name, file:line, the line and a caret.
    ``kernel`` names the kernel being compiled when ``jitfn`` is a helper it calls."""
    lineno = getattr(node, "lineno", None)
    lines = jitfn.src.splitlines()
    text = lines[lineno - 1] if lineno and lineno <= len(lines) else ""
    if kernel is not None and kernel != jitfn.__name__:
        message = f"in @jit function '{jitfn.__name__}': {message}"
    return cls(kernel or jitfn.__name__, message, filename=jitfn.filename,
               lineno=(lineno + jitfn.first_line - 1) if lineno else None,
               source_line=text, col=getattr(node, "col_offset", None))


class ModuleGenerator:
    """Owns the MLIR module of one compilation and the callee functions instantiated into it."""

    def __init__(self, kernel, debug: bool = False, interpreting: bool = False, num_warps: int = 4):
        self.interpreting = interpreting  # only checking a kernel the interpreter will run as Python
        self.active = [kernel]  # the chain of @jit functions being generated, for recursion errors
        self.module = ir.Module.create()
        self.builder = IRBuilder(debug, quiet=interpreting, call_jit=self.call_jit, num_warps=num_warps)
        self.callees: dict[Any, tuple[str, list, bool]] = {}  # symbol, returned values (as types), tuple?

    def call_jit(self, jfn, args: list, kwargs: dict) -> Any:
        """A call of @jit function ``jfn``: a ``func.call`` of its instance for these arguments
        (inlined by ``tile-opt``). Kernels' calls come here, and so do the language's own calls of
        a user's @jit function (``tl.reduce``'s combine function)."""
        try:
            bound = jfn.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise semantic.SemanticError(f"bad call to @jit function '{jfn.__name__}': {e}") from None
        bound.apply_defaults()
        vals = [_unwrap(v) for v in bound.arguments.values()]
        symbol, results, returned_tuple = self.callee(jfn, vals)
        tensors = flatten([v for v in vals if in_ir(v)])
        call = func.CallOp([ir_type(r.dtype, r.shape) for r in flatten(results)], ir.FlatSymbolRefAttr.get(symbol),
                           [t.handle for t in tensors])
        outs = unflatten(results, call.results)
        return same_tuple(returned_tuple, outs) if returned_tuple is not None else (outs[0] if outs else None)

    def callee(self, jitfn, args: list[Any]) -> tuple[str, list, tuple | None]:
        """Instantiate ``jitfn`` for these argument types/constants once; return (symbol, returned values
        (their types matter), the tuple it returns (its class matters) or None)."""
        if jitfn in self.active:
            chain = " -> ".join(f.__name__ for f in self.active[self.active.index(jitfn):] + [jitfn])
            raise semantic.SemanticError(f"recursive call ({chain}): @jit functions cannot recurse")
        key = (jitfn, tuple(signature(a) if in_ir(a) else ("const", hashable(a)) for a in args))
        if key not in self.callees:
            symbol = f"{jitfn.__name__}__{len(self.callees)}"
            self.active.append(jitfn)
            try:
                with ir.InsertionPoint(self.module.body), ir.Location.unknown():
                    gen = FunctionGenerator(self, jitfn, symbol)
                    self.callees[key] = (symbol, *gen.build(args, public=False))
            finally:
                self.active.pop()
        return self.callees[key]


class FunctionGenerator(ast.NodeVisitor):
    """Generates one ``func.func`` from one ``@jit`` function's AST."""

    def __init__(self, mod: ModuleGenerator, jitfn, symbol: str):
        self.mod, self.jitfn, self.symbol = mod, jitfn, symbol
        self.fn = jitfn.fn
        self.globals = dict(jitfn.fn.__globals__)
        self.globals.update(jitfn.closure_vars())
        self.scope: dict[str, Any] = {}
        self.returned: Any = None
        self.has_return = False
        self.loops = 0  # how many loops enclose the statement being generated

    # -- entry points ------------------------------------------------------------------------------
    def build(self, args: list[Any], public: bool, arg_attrs: list[dict] | None = None,
              known: dict[str, Any] | None = None) -> tuple[list, tuple | None]:
        """Emit the function for ``args`` (tensors become parameters, other values constants);
        ``known`` parameters stay in the signature but their uses see the given constant, a constexpr
        (Triton makes an integer argument equal to 1 one).
        Returns the values it returns (tensors, block pointers: their types matter) and the
        tuple it returns, whose class the caller's value takes (a namedtuple keeps its fields), or None."""
        fdef = self.jitfn.ast.body[0]
        params = [a.arg for a in fdef.args.args]
        flat = flatten([a for a in args if in_ir(a)])
        inputs = [ir_type(a.dtype, a.shape) for a in flat]
        fop = func.FuncOp(self.symbol, (inputs, []), visibility="public" if public else "private")
        if arg_attrs and any(arg_attrs):
            fop.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in arg_attrs])
        entry = fop.add_entry_block()
        block_args = iter(entry.arguments)
        with ir.InsertionPoint(entry), semantic.using(self.mod.builder):  # (a descriptor rebuilds with constants)
            for name, a in zip(params, args):
                if in_ir(a):
                    a = unflatten([a], [next(block_args) for _ in flatten([a])])[0]
                if name in self.jitfn.const_params:
                    a = tlc.as_const(a)
                self.scope[name] = a
            for name, value in (known or {}).items():
                self.scope[name] = tlc.constexpr(value)  # as in Triton: an argument specialised to 1 is a constexpr
            self.visit_body(fdef.body)
            results = self._materialize_return()
            func.ReturnOp([r.handle for r in flatten(results)])
        fop.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(inputs, [ir_type(r.dtype, r.shape) for r in flatten(results)]))
        return results, self.returned if isinstance(self.returned, tuple) else None

    def _materialize_return(self) -> list:
        r = self.returned
        if r is None:
            return []
        vals = list(r) if isinstance(r, tuple) else [r]
        return [as_value(v) for v in vals]

    # -- errors and locations ----------------------------------------------------------------------
    def error(self, node: ast.AST, message: str, cls: type[CompilationError] = CompilationError) -> CompilationError:
        return source_error(self.jitfn, node, message, kernel=self.mod.active[0].__name__, cls=cls)

    def visit(self, node: ast.AST) -> Any:
        lineno = getattr(node, "lineno", None)
        loc = (ir.Location.file(self.jitfn.filename, lineno + self.jitfn.first_line - 1, node.col_offset + 1)
               if lineno else contextlib.nullcontext())
        try:
            with loc:
                return super().visit(node)
        except CompilationError:
            raise
        except TritiumError as e:
            cls = CompileTimeAssertionFailure if isinstance(e, StaticAssertionFailed) else CompilationError
            error = self.error(node, str(e), cls)
            error.reason = None if cls is CompileTimeAssertionFailure else e.with_traceback(None)  # (as Triton's)
            raise error from None
        except Exception as e:  # user code called wrongly, or a value of the wrong kind
            error = self.error(node, f"{type(e).__name__}: {e}")
            error.reason = e.with_traceback(None)
            raise error from e

    def generic_visit(self, node: ast.AST) -> Any:
        raise self.error(node, f"unsupported Python construct in a kernel: {type(node).__name__}")

    # -- statements -------------------------------------------------------------------------------
    def visit_body(self, stmts: list[ast.stmt]) -> None:
        """Statements in order; as in Triton, code after a ``return`` is dead and not generated.
        An ``if`` that returns on some path takes the statements after it into its branches."""
        for i, s in enumerate(stmts):
            if isinstance(s, ast.If) and _contains_return(s):
                self._returning_if(s, stmts[i + 1:])
                return
            self.visit(s)
            if self.has_return:
                return

    def visit_Return(self, node: ast.Return) -> None:
        if self.loops:
            raise self.error(node, _RETURN_IN_LOOP)
        if node.value is not None and self.symbol == self.mod.active[0].__name__:
            raise self.error(node, "a kernel cannot return a value; store results through a pointer")
        self.returned = self.visit(node.value) if node.value is not None else None
        self.has_return = True

    def visit_Pass(self, node) -> None:
        pass

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, (ast.Name, ast.Attribute)):
            must_use = getattr(self.visit(call.func), "_must_use_result", False)  # (names have no side effects)
            if must_use:
                raise self.error(node, must_use if isinstance(must_use, str) else
                                 f"the result of {ast.unparse(call.func)}(...) is not used; assign it to a variable")
        self.visit(call)

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.visit(node.value)
        for target in node.targets:
            self.assign(target, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.assign(node.target, self.visit(node.value))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "augmented assignment is only supported to plain names")
        value = self.apply_binop(node.op, self.lookup(node.target.id, node), self.visit(node.value), node)
        self.assign(node.target, value)

    def assign(self, target: ast.AST, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.scope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            vals = list(value) if isinstance(value, (tuple, list)) else None
            if vals is None or len(vals) != len(target.elts):
                raise self.error(target, "cannot unpack this value into the names on the left")
            for t, v in zip(target.elts, vals):
                self.assign(t, v)
        else:
            raise self.error(target, "only assignments to names are supported (tensors are values; use tl.store to write memory)")

    def visit_Assert(self, node: ast.Assert) -> None:
        cond = self.visit(node.test)
        if is_tensor(cond):  # as in Triton: a device_assert, checked in debug mode
            return debug.device_assert(cond, self.visit(node.msg) if node.msg is not None else "")
        if not cond:
            msg = self.visit(node.msg) if node.msg is not None else "assertion failed"
            raise self.error(node, f"static assertion failed: {msg}", CompileTimeAssertionFailure)

    def visit_If(self, node: ast.If) -> None:
        cond = self.visit(node.test)
        if not is_tensor(cond):
            self.visit_body(node.body if cond else node.orelse)
            return
        self._scf_if(node, self._scalar_condition(cond, node))

    def _scalar_condition(self, cond, node) -> ir.Value:
        if cond.shape != () and all(d == 1 for d in cond.shape):  # Triton takes its one element, and warns
            test = getattr(node, "test", node)
            where = f"{self.jitfn.filename}:{test.lineno + self.jitfn.first_line - 1}"
            warnings.warn(f"in kernel '{self.mod.active[0].__name__}' at {where}: a condition on a block of shape "
                          f"{list(cond.shape)} is read as its one element, as in Triton; write "
                          f"({ast.unparse(test)}).item() to say so", stacklevel=2)
            cond = cond.item()
        if cond.shape != ():
            raise self.error(node, f"the condition must be a scalar, got a block of shape {list(cond.shape)}; "
                                   "use tl.where for elementwise choices")
        return semantic.cast(cond, T.int1).handle

    def _scf_if(self, node: ast.If, cond: ir.Value) -> None:
        """An ``if`` on a tensor that does not return: the names both branches bind flow out."""
        before = dict(self.scope)
        scratch, scopes = self._scratch_if(cond, [node.body, node.orelse], lambda: self.scope)
        self.scope = before
        names = sorted(n for n in assigned_names(node.body) | assigned_names(node.orelse)
                       if _needs_yield(n, *scopes))
        yields = []
        for block, s in zip((scratch.then_block, scratch.else_block), scopes):
            with ir.InsertionPoint(block):
                yields.append([as_value(s[n]) for n in names])
        for n, a, b in zip(names, *yields):
            if signature(a) != signature(b):
                raise self.error(node, f"Mismatched type for {n}: '{n}' is {_desc(a)} in one branch and "
                                       f"{_desc(b)} in the other; both branches must give it one type and shape")
        results = self._final_if(cond, scratch, [flatten(y) for y in yields])
        for n, v in zip(names, unflatten(yields[0], results)):
            self.scope[n] = v

    def _returning_if(self, node: ast.If, rest: list[ast.stmt]) -> None:
        """An ``if`` with a ``return`` on some path: the statements after it run only on the paths
        that fall through, so each branch is generated followed by them, and the ``scf.if`` yields
        what the function returns (Triton's early return, with structured control flow)."""
        cond = self.visit(node.test)
        if not is_tensor(cond):
            self.visit_body((node.body if cond else node.orelse) + rest)
            return
        if self.loops:
            raise self.error(node, _RETURN_IN_LOOP)
        cond = self._scalar_condition(cond, node)

        def outcome():
            vals = self._materialize_return()
            return isinstance(self.returned, tuple), vals

        before = dict(self.scope)
        scratch, outcomes = self._scratch_if(cond, [node.body + rest, node.orelse + rest], outcome)
        self.scope = before
        (then_tuple, then_vals), (else_tuple, else_vals) = outcomes
        if then_tuple != else_tuple or [signature(v) for v in then_vals] != [signature(v) for v in else_vals]:
            raise self.error(node, f"Return type mismatch: the function returns {_desc_all(then_tuple, then_vals)} "
                                   "on one path and "
                                   f"{_desc_all(else_tuple, else_vals)} on another; every return must give "
                                   "the same types")
        outs = unflatten(then_vals, self._final_if(cond, scratch, [flatten(then_vals), flatten(else_vals)]))
        self.returned = tuple(outs) if then_tuple else (outs[0] if outs else None)
        self.has_return = True

    def _scratch_if(self, cond: ir.Value, bodies: list, finish) -> tuple[Any, list]:
        """Both branches are generated into a result-less ``scratch`` if first: what flows out, and
        with which types, is known only afterwards (``finish()`` in each branch's block says it);
        ``_final_if`` then moves the ops into the ``scf.if`` that yields them."""
        scratch = scf.IfOp(cond, [], has_else=True)
        before = dict(self.scope)
        outcomes = []
        for block, body in zip((scratch.then_block, scratch.else_block), bodies):
            self.scope, self.returned, self.has_return = dict(before), None, False
            with ir.InsertionPoint(block):
                self.visit_body(body)
                outcomes.append(finish())
        self.returned, self.has_return = None, False
        return scratch, outcomes

    def _final_if(self, cond: ir.Value, scratch, yields: list[list]) -> list:
        final = scf.IfOp(cond, [ir_type(a.dtype, a.shape) for a in yields[0]], has_else=True)
        for old, new, vals in ((scratch.then_block, final.then_block, yields[0]),
                               (scratch.else_block, final.else_block, yields[1])):
            with ir.InsertionPoint(new):
                term = scf.YieldOp([v.handle for v in vals])
            for op in list(old.operations):
                op.move_before(term)
        scratch.operation.erase()
        return list(final.results)

    def _carried(self, body: list[ast.stmt], extra: set[str] = frozenset()) -> list[tuple[str, Any]]:
        out = []
        for n in sorted(assigned_names(body) - set(extra)):
            v = self.scope.get(n)
            if isinstance(v, tlc.constexpr) and type(v.value) in (int, float):  # an argument specialised to 1
                v = v.value
            if isinstance(v, block_ptr) or (isinstance(v, tuple) and in_ir(v)):
                out.append((n, v))
            elif is_tensor(v) or (isinstance(v, (int, float)) and not isinstance(v, bool)):
                out.append((n, semantic.to_tensor(v)))
        return out

    def _check_carried(self, node, carried, new_values) -> list:
        out = []
        for (n, init), v in zip(carried, new_values):
            v = as_value(v)
            if signature(v) != signature(init):
                raise self.error(node, f"loop-carried variable '{n}' starts as {_desc(init)} but becomes "
                                       f"{_desc(v)} inside the loop; give it its final type before the loop "
                                       "(e.g. with .to() or tl.zeros(..., dtype))")
            out.append(v)
        return out

    def visit_For(self, node: ast.For) -> None:
        it = node.iter
        fn = self.visit(it.func) if isinstance(it, ast.Call) else None
        if fn is tlc.static_range:
            return self._unrolled_for(node, self.visit(it))
        if fn not in (builtins.range, tlc.range):
            raise self.error(node, "kernels can only loop over range(...), tl.range(...) or tl.static_range(...)")
        if node.orelse:
            raise self.error(node, "'for ... else' is not supported")
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "the loop variable must be a single name")
        args = [self.visit(a) for a in it.args]
        if not 1 <= len(args) <= 3:
            raise self.error(it, "range() takes 1 to 3 arguments")
        lb, ub, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        step_v = step.value if isinstance(step, tlc.constexpr) else step
        if not is_tensor(step_v) and step_v == 0:
            raise self.error(it, "range() step must not be zero")
        bounds = [semantic.to_tensor(b.value if isinstance(b, tlc.constexpr) else b) for b in (lb, ub, step)]
        if any(not b.dtype.is_int() or b.shape != () for b in bounds):
            raise self.error(it, "range() bounds must be scalar integers")
        ity = T.int64 if any(b.dtype.primitive_bitwidth > 32 for b in bounds) else T.int32
        lb_t, ub_t, st_t = (semantic.cast(b, ity) for b in bounds)
        counted = is_tensor(step_v) or step_v < 0
        if counted:  # scf.for needs a positive step: iterate k in [0, trip) with i = lb + k * step
            lb_t, ub_t, st_t, start, step_t = semantic.to_tensor(0, ity), _trip_count(lb_t, ub_t, st_t), \
                semantic.to_tensor(1, ity), lb_t, st_t
        carried = self._carried(node.body, {node.target.id})
        inits = [c for _, c in carried]
        loop = scf.ForOp(lb_t.handle, ub_t.handle, st_t.handle, [c.handle for c in flatten(inits)])
        self._loop_hints(it, fn, loop.operation)
        before = dict(self.scope)
        for (n, _), v in zip(carried, unflatten(inits, loop.inner_iter_args)):
            self.scope[n] = v
        with ir.InsertionPoint(loop.body):
            iv = tlc.tensor(loop.induction_variable, ity, ())
            self.scope[node.target.id] = start + iv * step_t if counted else iv
            self._loop_body(node.body)
            new = self._check_carried(node, carried, [self.scope[n] for n, _ in carried])
            scf.YieldOp([v.handle for v in flatten(new)])
        self._end_loop(before, carried, loop.results)

    def _loop_hints(self, it: ast.Call, fn, loop: ir.Operation) -> None:
        """``tl.range(..., num_stages=n)``: the loop's software-pipelining depth (``tile.num_stages``,
        ``passes.software_pipeline``); Triton's other flags are hints the targets may ignore."""
        if fn is not tlc.range:
            return
        for kw in it.keywords:
            if kw.arg not in _RANGE_HINTS:
                raise self.error(kw, f"tl.range() got an unexpected keyword argument '{kw.arg}'")
            if kw.arg == "num_stages":
                value = self.visit(kw.value)
                value = value.value if isinstance(value, tlc.constexpr) else value
                if value is None:
                    continue
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise self.error(kw, f"tl.range(num_stages=...) must be a non-negative constant integer, not "
                                         f"{value!r}")
                loop.attributes["tile.num_stages"] = tile.i32_attr(value)

    def _unrolled_for(self, node: ast.For, values: range) -> None:
        """``tl.static_range``: the body once per value, the loop variable a Python int."""
        if node.orelse or not isinstance(node.target, ast.Name):
            raise self.error(node, "tl.static_range loops take one loop variable and no 'else'")
        for v in values:
            self.scope[node.target.id] = v
            self._loop_body(node.body)

    def _loop_body(self, stmts: list[ast.stmt]) -> None:
        self.loops += 1
        self.visit_body(stmts)
        self.loops -= 1

    def _end_loop(self, before, carried, results) -> None:
        self.scope = before
        for (n, _), v in zip(carried, unflatten([c for _, c in carried], results)):
            self.scope[n] = v

    def visit_While(self, node: ast.While) -> None:
        if node.orelse:
            raise self.error(node, "'while ... else' is not supported")
        carried = self._carried(node.body)
        inits = [c for _, c in carried]
        types = [ir_type(c.dtype, c.shape) for c in flatten(inits)]
        loop = scf.WhileOp(types, [c.handle for c in flatten(inits)])
        before_block = loop.before.blocks.append(*types)
        after_block = loop.after.blocks.append(*types)
        before = dict(self.scope)
        for (n, _), v in zip(carried, unflatten(inits, before_block.arguments)):
            self.scope[n] = v
        with ir.InsertionPoint(before_block):
            cond = self.visit(node.test)
            if isinstance(cond, tlc.condition):  # ``while tl.condition(c, ...)``: the hint changes nothing here
                cond = cond.condition
            if not is_tensor(cond):
                raise self.error(node.test, "a while loop's condition must depend on tensors; "
                                            "a constant condition would never end or never start")
            scf.ConditionOp(self._scalar_condition(cond, node.test), list(before_block.arguments))
        self.scope = dict(before)
        for (n, _), v in zip(carried, unflatten(inits, after_block.arguments)):
            self.scope[n] = v
        with ir.InsertionPoint(after_block):
            self._loop_body(node.body)
            new = self._check_carried(node, carried, [self.scope[n] for n, _ in carried])
            scf.YieldOp([v.handle for v in flatten(new)])
        self._end_loop(before, carried, loop.results)

    # -- expressions ------------------------------------------------------------------------------
    def lookup(self, name: str, node: ast.AST) -> Any:

        if name in self.scope:
            return self.scope[name]
        if name in self.globals:
            value = self.globals[name]
            if not allowed_global(value):
                captured = name in self.jitfn.closure_vars()
                raise self.error(node, global_rule_message(name, value, captured))
            return value
        if name in _BUILTINS:
            return _BUILTINS[name]
        raise self.error(node, f"name '{name}' is not defined")

    def visit_Name(self, node: ast.Name) -> Any:
        return self.lookup(node.id, node)

    def visit_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        return python_ops.python_attribute(self.visit(node.value), node.attr)

    def visit_Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self.visit(e) for e in node.elts)

    def visit_List(self, node: ast.List) -> Any:
        """A list literal is a ``tl.tuple``, as in Triton: ``x.shape == [32, 32]`` holds."""
        return tltuples.tuple([self.visit(e) for e in node.elts])

    def visit_JoinedStr(self, node: ast.JoinedStr) -> str:
        """An f-string of compile-time values is a string (``getattr(desc, f"atomic_{OP}")``)."""
        parts = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                parts.append(str(part.value))
                continue
            value = _unwrap(self.visit(part.value))
            if in_ir(value):
                raise self.error(part, "an f-string in a kernel formats compile-time values (constexprs), not "
                                       f"{_desc(value)}; use tl.device_print for values known at run time")
            spec = self.visit(part.format_spec) if part.format_spec is not None else ""
            conversion = {-1: None, 115: str, 114: repr, 97: ascii}[part.conversion]
            parts.append(format(conversion(value) if conversion else value, spec))
        return "".join(parts)

    def visit_ListComp(self, node: ast.ListComp) -> Any:
        """A list comprehension over compile-time sequences (a tuple, ``range`` of constants),
        unrolled into a ``tl.tuple``, as in Triton; its names do not leak into the function."""
        saved, out = dict(self.scope), []

        def unroll(generators: list[ast.comprehension]) -> None:
            if not generators:
                out.append(self.visit(node.elt))
                return
            gen, rest = generators[0], generators[1:]
            if gen.is_async:
                raise self.error(gen, "async comprehensions are not supported in kernels")
            items = _unwrap(self.visit(gen.iter))
            if in_ir(items) and not isinstance(items, tuple) or not isinstance(items, (tuple, list, range)):
                raise self.error(gen.iter, "a comprehension in a kernel iterates over a tuple or a range of "
                                           f"constants (it is unrolled at compile time), not {_desc(items)}")
            for item in items:
                self.assign(gen.target, item)
                if all(self._static_condition(c) for c in gen.ifs):
                    unroll(rest)

        try:
            unroll(list(node.generators))
        finally:
            self.scope = saved
        return tltuples.tuple(out)

    def _static_condition(self, node: ast.expr) -> bool:
        value = _unwrap(self.visit(node))
        if is_tensor(value):
            raise self.error(node, "a comprehension's condition must be known at compile time (a constexpr)")
        return bool(value)

    def visit_Slice(self, node: ast.Slice) -> Any:
        return slice(*(self.visit(p) if p is not None else None for p in (node.lower, node.upper, node.step)))

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        return self.visit(node.value)[self.visit(node.slice)]

    def apply_binop(self, op: ast.operator, a: Any, b: Any, node: ast.AST) -> Any:
        fn = _BINOPS.get(type(op))
        if fn is None:
            raise self.error(node, f"operator {type(op).__name__} is not supported")
        a, b = _unwrap(a), _unwrap(b)
        if fn is operator.pow and (is_tensor(a) or is_tensor(b)):
            raise self.error(node, "'**' on tensors is not supported; use tl.exp/tl.log or multiply")
        return fn(a, b)

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        return self.apply_binop(node.op, self.visit(node.left), self.visit(node.right), node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = _unwrap(self.visit(node.operand))
        if isinstance(node.op, ast.Not):
            self._scalar_only(v, node, "'not'", "~ (or == 0)")
            return python_ops.python_not(v)
        return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}[type(node.op)](v)

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        is_and = isinstance(node.op, ast.And)
        what, instead = ("'and'", "&") if is_and else ("'or'", "|")
        return python_ops.python_bool_op(is_and, self.visit(node.values[0]),
                                       [lambda e=e: self.visit(e) for e in node.values[1:]],
                                       lambda v: self._scalar_only(v, node, what, instead))

    def _scalar_only(self, v: Any, node: ast.AST, what: str, instead: str) -> None:
        """Python's boolean operators mean one truth value; on blocks they are errors (as in the
        interpreter, where Python evaluates them), so kernels behave alike on every target."""
        if is_tensor(v) and v.shape != ():
            raise self.error(node, f"{what} needs scalars, got a block of shape {list(v.shape)}; "
                                   f"use {instead} for elementwise logic")

    def visit_Compare(self, node: ast.Compare) -> Any:
        left = _unwrap(self.visit(node.left))
        result = None
        for op, right_node in zip(node.ops, node.comparators):
            right = _unwrap(self.visit(right_node))
            if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) and (is_tensor(left) or is_tensor(right)):
                if not isinstance(op, (ast.Is, ast.IsNot)):
                    raise self.error(node, "'in' is not supported on tensors")
            part = _CMPOPS[type(op)](left, right)
            if result is not None:
                self._scalar_only(part, node, "a chained comparison", "(a < b) & (b < c)")
            result = part if result is None else (
                semantic.logical("and", result, part) if is_tensor(result) or is_tensor(part) else (result and part))
            left = right
        return result

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        """On a scalar tensor condition, only the side taken runs (an ``scf.if``, as Triton's: a
        guarded load does not read, a store of the other side does not happen); else Python's
        choice, or a ``tl.where`` of a block condition (``python_ops.python_if_exp``)."""
        cond = self.visit(node.test)
        if not is_tensor(cond) or cond.shape != ():
            return python_ops.python_if_exp(cond, lambda: self.visit(node.body), lambda: self.visit(node.orelse))
        handle = self._scalar_condition(cond, node)
        sides = iter((node.body, node.orelse))
        before = dict(self.scope)
        scratch, values = self._scratch_if(handle, [[], []], lambda: self.visit(next(sides)))
        self.scope = before
        if values[0] is None and values[1] is None:  # both sides void (stores, calls): no result
            self._final_if(handle, scratch, [[], []])
            return None
        t, shape = python_ops.if_exp_type(*values)
        yields = []
        for block, v in zip((scratch.then_block, scratch.else_block), values):
            with ir.InsertionPoint(block):
                v = semantic.cast(v, t) if is_tensor(v) else semantic.full((), _unwrap(v), t)
                yields.append([semantic.broadcast_to(v, shape) if shape else v])
        return tlc.tensor(self._final_if(handle, scratch, yields)[0], t, shape)

    def visit_Call(self, node: ast.Call) -> Any:
        fn = self.visit(node.func)
        args = []
        for a in node.args:
            if not isinstance(a, ast.Starred):
                args.append(self.visit(a))
                continue
            spread = _unwrap(self.visit(a.value))  # *t of a tuple: its elements, as Python spreads it
            if not isinstance(spread, (tuple, list)):
                raise self.error(a, f"*args in a kernel spreads a tuple, not {_desc(spread)}")
            args += list(spread)
        kwargs = {k.arg: self.visit(k.value) for k in node.keywords if k.arg is not None}
        if len(kwargs) != len(node.keywords):
            raise self.error(node, "**kwargs in calls are not supported")
        if isinstance(fn, JITFunction):
            return self.mod.call_jit(fn, args, kwargs)
        if fn is builtins.breakpoint:
            if self.mod.interpreting:
                return None  # Python's debugger: the interpreter runs it
            raise self.error(node, "breakpoint() works only when the kernel runs as Python: run with "
                                   "TRITIUM_TARGET=interpreter")
        if fn is builtins.print:  # Triton's print is device_print
            return debug.builtin_print(args, **kwargs)
        if fn in (builtins.min, builtins.max) and any(is_tensor(_unwrap(a)) for a in args):
            combine = tlc.minimum if fn is builtins.min else tlc.maximum
            out = args[0]
            for a in args[1:]:
                out = combine(out, a)
            return out
        if fn in (builtins.int, builtins.float, builtins.bool) and any(is_tensor(_unwrap(a)) for a in args):
            raise self.error(node, f"{fn.__name__}() of a tensor is not known at compile time; use .to(tl.<dtype>)")
        return fn(*args, **kwargs)


def _unwrap(v: Any) -> Any:
    return v.value if isinstance(v, tlc.constexpr) else v


#: the keyword arguments of Triton's ``tl.range``
_RANGE_HINTS = ("num_stages", "loop_unroll_factor", "disallow_acc_multi_buffer", "flatten", "warp_specialize",
                "disable_licm")


def _trip_count(lb, ub, step):
    """Python's ``len(range(lb, ub, step))`` for a step of either sign; 0 for a zero step (which
    Python rejects but a running kernel cannot report)."""
    sign = semantic.where(step > 0, 1, -1)
    divisor = semantic.where(step == 0, 1, step)  # never divide by zero
    trip = (ub - lb + step - sign) // divisor  # C-style division: exact wherever the result is >= 0
    return semantic.where(step == 0, 0, semantic.minmax("max", trip, 0))


def _needs_yield(name: str, then_scope: dict, else_scope: dict) -> bool:
    """Whether a name bound by an ``if`` on a tensor must flow out of it as an ``scf.if`` result."""
    if name not in then_scope or name not in else_scope:
        return False  # bound in one branch only: local to that branch
    a, b = then_scope[name], else_scope[name]
    if is_tensor(a) or is_tensor(b) or (isinstance(a, block_ptr) and a is not b):
        return True
    return a is not b and all(isinstance(v, (int, float)) for v in (a, b))


def _contains_return(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Return) for n in ast.walk(node))


def _desc_all(is_tuple: bool, vals: list) -> str:
    if not vals:
        return "nothing"
    descs = ", ".join(_desc(v) for v in vals)
    return f"a tuple ({descs})" if is_tuple else descs


_RETURN_IN_LOOP = ("'return' inside a loop is not supported (as in Triton); set a flag and test it after the "
                   "loop, or mask the work instead")


def _desc(t) -> str:
    if isinstance(t, block_ptr):
        return f"a block pointer {t!r}"
    if not is_tensor(t):
        return f"{type(t).__name__} {t!r}"
    return f"{t.dtype}" + (f" of shape {list(t.shape)}" if t.shape else " (scalar)")


def generate_module(jitfn, arg_values: list[Any], arg_attrs: list[dict], known: dict[str, Any],
                    debug: bool = False, interpreting: bool = False, name: str | None = None,
                    num_warps: int = 4) -> ir.Module:
    """The ``tile`` stage: the kernel and every @jit function it calls, as one MLIR module.

    ``arg_values`` has one entry per parameter: a ``tensor`` whose handle is None for runtime
    arguments (its dtype gives the parameter type) or a Python value for constants. ``debug``
    (the launch option) keeps ``tl.device_assert``s. ``interpreting``: the interpreter checks a
    kernel it will run as Python, where ``breakpoint()`` runs. ``name``: the kernel's symbol (the
    function's name by default; a ``@jit(repr=...)`` names its specialisations). ``num_warps``: the
    launch option, which ``tl.extra.cuda.num_warps()`` gives kernels as a constant.
    """
    mod = ModuleGenerator(jitfn, debug, interpreting, num_warps)
    with ir.InsertionPoint(mod.module.body), ir.Location.unknown():
        gen = FunctionGenerator(mod, jitfn, name or jitfn.__name__)
        gen.build(arg_values, public=True, arg_attrs=arg_attrs, known=known)
    return mod.module
