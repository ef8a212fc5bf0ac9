"""An independent numpy model of Triton's typing and arithmetic, the oracle of the fuzzer.

Written from Triton's rules (``python/triton/language/semantic.py`` and ``core.py``), not from
tritium's own semantic module, so that a typing mistake in tritium shows up as a mismatch rather
than being reproduced. Every value is a ``Val``: its Triton dtype, block shape, and numpy array of
shape ``(programs,) + block shape``; floating values also carry an error bound, so that values
the targets may round differently (fused multiply-add, libm's transcendentals, reduction order)
are compared within that bound, and discontinuous operations (comparisons, float to int casts,
floor) are only generated where the bound cannot change their result.

bf16 has no numpy type: its values are float32 arrays rounded to bf16 (``to_bf16``) after every
operation, and it is typed as Triton types it (bf16 op bf16 stays bf16 except ``/`` and ``%``;
with fp32, fp64 or an integer tensor it computes in fp32, with fp16 in fp16; a float literal keeps it).

A generated operation that Triton refuses or that has undefined behaviour raises ``Reject``; the
generator then tries another operation.
"""

from __future__ import annotations

import dataclasses
import functools
import operator

import numpy as np

NP = {"int1": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
      "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
      "fp16": np.float16, "fp32": np.float32, "fp64": np.float64,
      "bf16": np.float32}   # numpy has no bf16: its values are float32 arrays rounded by ``to_bf16``
TL = {"int1": "tl.int1", "int8": "tl.int8", "int16": "tl.int16", "int32": "tl.int32", "int64": "tl.int64",
      "uint8": "tl.uint8", "uint16": "tl.uint16", "uint32": "tl.uint32", "uint64": "tl.uint64",
      "fp16": "tl.float16", "fp32": "tl.float32", "fp64": "tl.float64", "bf16": "tl.bfloat16"}
INTS = ["int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["fp16", "fp32", "fp64"]
EPS = {"fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "fp32": 2.0 ** -24, "fp64": 2.0 ** -53}
MANTISSA = {"fp16": 11, "bf16": 8, "fp32": 24, "fp64": 53}


class Reject(Exception):
    """The operation is refused by Triton or undefined for these values: generate another."""


def is_float(t: str) -> bool:
    return t.startswith("fp") or t == "bf16"


def bits(t: str) -> int:
    return 1 if t == "int1" else int(t.lstrip("uintfpb"))


def to_bf16(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to bfloat16 (to nearest even on float32's bits, as LLVM's fptrunc does), kept
    as float32; NaN stays NaN."""
    f = np.asarray(x, dtype=np.float32)
    b = f.view(np.uint32).astype(np.uint64)
    r = (((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(f), f, r)


def round_to(x: np.ndarray, t: str) -> np.ndarray:
    """Float values rounded to ``t`` (numpy's dtype; bf16 through ``to_bf16``)."""
    with np.errstate(all="ignore"):
        out = np.asarray(x).astype(NP[t])
    return to_bf16(out) if t == "bf16" else out


def unsigned(t: str) -> bool:
    """Triton counts int1 among the unsigned types (``UINT_TYPES`` in core.py)."""
    return t == "int1" or t.startswith("u")


def kind(t: str) -> int:
    return 0 if t == "int1" else 2 if is_float(t) else 1


def int_range(t: str) -> tuple[int, int]:
    if t == "int1":
        return 0, 1
    b = bits(t)
    return (0, 2 ** b - 1) if unsigned(t) else (-2 ** (b - 1), 2 ** (b - 1) - 1)


@dataclasses.dataclass
class Val:
    """A value of the model: a tensor (``lit`` False) or a weakly typed Python literal."""

    ty: str
    shape: tuple[int, ...]
    a: np.ndarray                      # (programs,) + shape, dtype NP[ty]; for a literal, a 0-d array
    err: np.ndarray | None = None      # float64 absolute error bound, same shape (floats only)
    lit: object = None                 # the Python literal, when this is one

    @property
    def is_lit(self) -> bool:
        return self.lit is not None


def literal_type(x) -> str:
    if isinstance(x, bool):
        return "int1"
    if isinstance(x, int):
        for t, lo, hi in (("int32", -2**31, 2**31), ("uint32", 2**31, 2**32), ("int64", -2**63, 2**63),
                          ("uint64", 2**63, 2**64)):
            if lo <= x < hi:
                return t
        raise Reject("nonrepresentable literal")
    return "fp32"


def lit(x) -> Val:
    t = literal_type(x)
    return Val(t, (), np.array(x, dtype=NP[t]), np.zeros(()) if is_float(t) else None, x)


# ------------------------------------------------------------------------------------------------
# Typing
# ------------------------------------------------------------------------------------------------
def integer_promote(a: str, b: str) -> str:
    if unsigned(a) == unsigned(b):
        return a if bits(a) > bits(b) else b
    if unsigned(a):
        return a if bits(a) >= bits(b) else b
    return b if bits(b) >= bits(a) else a


def computation_type(a: Val, b: Val, div_or_mod: bool) -> str:
    if a.is_lit != b.is_lit:
        s, t = (a, b) if a.is_lit else (b, a)
        if kind(s.ty) <= kind(t.ty):
            return "fp32" if div_or_mod and t.ty in ("fp16", "bf16") else t.ty
    ta, tb = a.ty, b.ty
    for f in ("fp64", "fp32"):
        if f in (ta, tb):
            return f
    if "fp16" in (ta, tb):    # fp16 before bf16: fp16 with bf16 is fp16, as in Triton
        return "fp32" if div_or_mod else "fp16"
    if ta == tb == "bf16":
        return "fp32" if div_or_mod else "bf16"
    if "bf16" in (ta, tb):     # bf16 with an integer
        return "fp32"
    if div_or_mod and unsigned(ta) != unsigned(tb):
        raise Reject("Triton refuses / // % on operands of different signedness")
    return integer_promote(ta, tb)


# ------------------------------------------------------------------------------------------------
# Shapes and casts
# ------------------------------------------------------------------------------------------------
def expand(v: Val, shape: tuple[int, ...], programs: int) -> tuple[np.ndarray, np.ndarray | None]:
    """``v``'s array (and error) broadcast to ``(programs,) + shape`` (numpy's left padding)."""
    if v.is_lit:
        full = (programs,) + shape
        return np.broadcast_to(v.a, full), (None if v.err is None else np.broadcast_to(v.err, full))
    pad = (programs,) + (1,) * (len(shape) - len(v.shape)) + v.shape
    out = np.broadcast_to(v.a.reshape(pad), (programs,) + shape)
    err = None if v.err is None else np.broadcast_to(v.err.reshape(pad), (programs,) + shape)
    return out, err


def broadcast_shape(*vals: Val) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*(v.shape for v in vals if not v.is_lit)))
    except ValueError:
        raise Reject("shapes do not broadcast") from None


def ulp_err(x: np.ndarray, t: str) -> np.ndarray:
    """Half an ulp-ish bound for one rounding of ``x`` to ``t`` (plus the subnormal floor)."""
    tiny = {"fp16": 2.0 ** -24, "bf16": 2.0 ** -133, "fp32": 2.0 ** -149, "fp64": 2.0 ** -1074}[t]
    with np.errstate(all="ignore"):
        return np.abs(x.astype(np.float64)) * EPS[t] + tiny


def cast_array(a: np.ndarray, err: np.ndarray | None, src: str, dst: str):
    """Triton's ``cast`` (``.to()``, implicit promotion, store): returns (array, error)."""
    if src == dst:
        return a, err
    with np.errstate(all="ignore"):
        if not is_float(dst):
            if is_float(src):
                if dst == "int1":
                    raise Reject("float to bool casts are not generated")
                lo, hi = int_range(dst)
                f = a.astype(np.float64)
                e = err if err is not None else 0.0
                if not np.all(np.isfinite(f)) or np.any(np.trunc(f - e) != np.trunc(f + e)):
                    raise Reject("float to int cast of an inexact value")
                t = np.trunc(f)
                if np.any(t < lo) or np.any(t > hi):
                    raise Reject("float to int cast out of range")
                return wrap_ints([int(x) for x in t.ravel()], dst).reshape(a.shape), None
            if dst == "int1":
                return a != 0, None
            src_vals = a.astype(np.uint8) if src == "int1" else a
            return wrap_ints([int(x) for x in src_vals.ravel()], dst).reshape(a.shape), None
        if is_float(src):
            out = round_to(a, dst)
            e = None if err is None else err.copy()
            if MANTISSA[dst] < MANTISSA[src] or bits(dst) < bits(src):
                e = (0 if e is None else e) + ulp_err(out, dst)
            return out, (np.zeros(a.shape) if e is None else e)
        # int to float: the integer rounded to the destination; through float64 that is one rounding
        # below 2**53, and two (within an ulp) above, where the error bound says so
        vals = a.astype(np.uint8) if src == "int1" else a
        wide = np.array([float(int(x)) for x in vals.ravel()], dtype=np.float64).reshape(a.shape)
        out = round_to(wide, dst)   # bf16: through float32, exact below 2**24, one rounding more above
        return out, np.where(np.abs(wide) >= 2.0 ** (24 if dst == "bf16" else 53), ulp_err(out, dst), 0.0)


def bitcast(v: Val, dst: str) -> Val:
    """``v.to(dst, bitcast=True)``: the same bits read as another type of the same width."""
    src = v.ty
    if "int1" in (src, dst) or bits(src) != bits(dst):
        raise Reject("bitcast between different widths")
    if is_float(src) and ((v.err is not None and np.any(v.err)) or np.any(np.isnan(v.a))):
        raise Reject("bits of an inexact float or of a NaN (its payload is the machine's)")
    a = v.a
    if src == "bf16":
        a = (a.view(np.uint32) >> 16).astype(np.uint16)
    if dst == "bf16":
        out = (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    else:
        out = a.view(NP[dst])
    return Val(dst, v.shape, out.copy(), np.zeros(out.shape) if is_float(dst) else None)


def wrap_ints(values, t: str) -> np.ndarray:
    """Python integers reduced to ``t``'s width (two's complement)."""
    if t == "int1":
        return np.array([v & 1 for v in values], dtype=np.bool_)
    lo, hi = int_range(t)
    span = hi - lo + 1
    return np.array([(v - lo) % span + lo for v in values], dtype=NP[t])


def as_type(v: Val, t: str, shape: tuple[int, ...], programs: int):
    """``v`` cast to ``t`` and broadcast to ``shape``; literals are made in ``t`` directly."""
    if v.is_lit:
        if not is_float(t):
            lo, hi = int_range(t)
            if not isinstance(v.lit, int) or not lo <= v.lit <= hi:
                raise Reject("literal out of range for the computation type")
        a = np.full((programs,) + shape, v.lit, dtype=NP[t]) if not is_float(t) else \
            round_to(np.full((programs,) + shape, float(v.lit)), t)
        e = np.zeros(a.shape) if is_float(t) else None
        if is_float(t) and float(a.flat[0]) != v.lit:
            e = e + ulp_err(a, t)
        return a, e
    a, e = expand(v, shape, programs)
    return cast_array(np.ascontiguousarray(a), None if e is None else np.ascontiguousarray(e), v.ty, t)


def to_python(a: np.ndarray) -> list[int]:
    return [int(x) for x in (a.astype(np.uint8) if a.dtype == np.bool_ else a).ravel()]


# ------------------------------------------------------------------------------------------------
# Operations
# ------------------------------------------------------------------------------------------------
def _float_op(fn, args: list[np.ndarray], errs: list[np.ndarray], t: str, extra_ulps: float = 1.0):
    """Apply ``fn`` (float64) and round to ``t``; the error bound propagates each input's bound by
    perturbation, plus ``extra_ulps`` roundings of the result."""
    with np.errstate(all="ignore"):
        f64 = [x.astype(np.float64) for x in args]
        exact = fn(*f64)
        out = round_to(exact, t)
        err = ulp_err(out, t) * extra_ulps
        for i, e in enumerate(errs):
            if e is None or not np.any(e):
                continue
            for sign in (1, -1):
                moved = list(f64)
                moved[i] = f64[i] + sign * e
                err = err + np.abs(fn(*moved) - exact) / 2
        err = np.where(np.isnan(exact) & ~np.isnan(out), np.inf, err)
    return out, err


def binary(op: str, x: Val, y: Val, programs: int) -> Val:
    """``x op y`` for + - * / // % & | ^ << >> and the comparisons."""
    div_or_mod = op in ("/", "//", "%")
    if op in ("&", "|", "^", "<<", ">>") and (is_float(x.ty) or is_float(y.ty)):
        raise Reject("bitwise operation on a float")
    t = computation_type(x, y, div_or_mod)
    for v in (x, y):
        if v.is_lit and v.lit < 0 and unsigned(t):
            raise Reject("Triton refuses an unsigned tensor with a negative literal")
    if op == "//" and is_float(t):
        raise Reject("Triton's // is for integers only")
    shape = broadcast_shape(x, y)
    a, ea = as_type(x, t, shape, programs)
    b, eb = as_type(y, t, shape, programs)
    if op in ("<", "<=", ">", ">=", "==", "!="):
        return _compare(op, a, ea, b, eb, t, shape)
    if op == "/":
        if not is_float(t):
            a, ea = cast_array(a, None, t, "fp32")
            b, eb = cast_array(b, None, t, "fp32")
            t = "fp32"
        out, err = _float_op(lambda p, q: p / q, [a, b], [ea, eb], t)
        return Val(t, shape, out, err)
    if is_float(t):
        if op == "%":
            if np.any(b == 0) or (eb is not None and np.any(eb >= np.abs(b.astype(np.float64)))):
                raise Reject("float % by (nearly) zero")
            if (ea is not None and np.any(ea)) or (eb is not None and np.any(eb)):
                raise Reject("fmod of an inexact value is discontinuous")
            out, err = _float_op(np.fmod, [a, b], [None, None], t, 0.0)  # fmod is exact
            return Val(t, shape, out, err)
        fn = {"+": np.add, "-": np.subtract, "*": np.multiply}[op]
        out, err = _float_op(fn, [a, b], [ea, eb], t)
        return Val(t, shape, out, err)
    # Triton picks ashr by the signedness of the tensor the operator is called on (the right one for
    # a number on the left: ``__rrshift__``), then promotes
    if op == ">>" and not unsigned((y if x.is_lit else x).ty):
        op = ">>a"
    return Val(t, shape, _int_op(op, a, b, t), None)


def _int_op(op: str, a: np.ndarray, b: np.ndarray, t: str) -> np.ndarray:
    pa, pb = to_python(a), to_python(b)
    n = bits(t)
    if op in ("<<", ">>", ">>a"):
        if any(not 0 <= s < n for s in pb):
            raise Reject("shift amount out of range")
    if op in ("//", "%"):
        if any(q == 0 for q in pb):
            raise Reject("integer division by zero")
    out = []
    lo, hi = int_range(t)
    for p, q in zip(pa, pb):
        if op == "+":
            r = p + q
        elif op == "-":
            r = p - q
        elif op == "*":
            r = p * q
        elif op == "//":
            r = abs(p) // abs(q) * (1 if (p < 0) == (q < 0) else -1)
            if r > hi:
                raise Reject("INT_MIN // -1")
        elif op == "%":
            r = p - q * (abs(p) // abs(q) * (1 if (p < 0) == (q < 0) else -1))
        elif op == "&":
            r = p & q
        elif op == "|":
            r = p | q
        elif op == "^":
            r = p ^ q
        elif op == "<<":
            r = p << q
        elif op == ">>a":  # arithmetic: the bits of t read as signed, shifted with the sign
            r = (p - (1 << n) if p >= 1 << (n - 1) else p) >> q
        else:  # logical: the bits of t read as unsigned
            r = (p % (1 << n)) >> q
        out.append(r)
    return wrap_ints(out, t).reshape(a.shape)


def _compare(op: str, a, ea, b, eb, t: str, shape) -> Val:
    fn = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "==": np.equal,
          "!=": np.not_equal}[op]
    if is_float(t):
        e = (0 if ea is None else ea) + (0 if eb is None else eb)
        if np.any(e):
            with np.errstate(all="ignore"):
                fa, fb = a.astype(np.float64), b.astype(np.float64)
                if np.any(np.abs(fa - fb) <= 2 * e) or np.any(np.isnan(e)):
                    raise Reject("comparison too close to call")
        return Val("int1", shape, fn(a, b), None)
    pa, pb = np.array(to_python(a), dtype=object), np.array(to_python(b), dtype=object)
    return Val("int1", shape, np.array(fn(pa, pb), dtype=np.bool_).reshape(a.shape), None)


def unary(op: str, x: Val, programs: int) -> Val:
    """``-x``, ``~x``, ``tl.abs`` and the float math functions."""
    a, e = x.a, x.err
    if op == "~":
        if is_float(x.ty):
            raise Reject("~ of a float")
        return Val(x.ty, x.shape, wrap_ints([~p for p in to_python(a)], x.ty).reshape(a.shape))
    if op == "-":
        if x.ty == "int1":
            raise Reject("unary minus of bool is not generated")
        zero = Val(x.ty, (), np.zeros((programs,), dtype=NP[x.ty]), np.zeros((programs,)) if e is not None else None)
        return binary("-", zero, x, programs)
    if op == "abs":
        if is_float(x.ty):
            return Val(x.ty, x.shape, np.abs(a), e)
        if x.ty == "int1" or unsigned(x.ty):
            return Val(x.ty, x.shape, a.copy())
        if np.any(a == int_range(x.ty)[0]):
            raise Reject("abs(INT_MIN)")
        return Val(x.ty, x.shape, np.abs(a))
    if x.ty not in ("fp32", "fp64"):
        raise Reject("Triton's math functions take fp32 or fp64")
    f64 = a.astype(np.float64)
    if op in ("floor", "ceil"):
        fn = np.floor if op == "floor" else np.ceil
        with np.errstate(all="ignore"):
            unstable = e is not None and np.any(e) and np.any(fn(f64 - e) != fn(f64 + e))
        if unstable:
            raise Reject("floor/ceil of an inexact value")
        return Val(x.ty, x.shape, fn(a), np.zeros(a.shape))
    fn, dom = {
        "exp": (np.exp, lambda v: v < 80), "exp2": (np.exp2, lambda v: v < 120),
        "log": (np.log, lambda v: v > 0), "log2": (np.log2, lambda v: v > 0),
        "sqrt": (np.sqrt, lambda v: v >= 0), "rsqrt": (lambda v: 1 / np.sqrt(v), lambda v: v > 0),
        "sin": (np.sin, lambda v: np.abs(v) < 100), "cos": (np.cos, lambda v: np.abs(v) < 100),
    }[op]
    with np.errstate(all="ignore"):
        inside = np.all(dom(f64 - (0 if e is None else e))) and np.all(dom(f64 + (0 if e is None else e)))
    if not inside:
        raise Reject(f"{op} outside its well-conditioned domain")
    ulps = 1.0 if op == "sqrt" else 4.0 if x.ty == "fp32" else 64.0   # libm and vector math libraries
    out, err = _float_op(fn, [a], [e], x.ty, ulps)
    if op in ("sin", "cos"):
        err = err + 4 * EPS[x.ty]                       # absolute: argument reduction
    return Val(x.ty, x.shape, out, err)


def to_tensor(v: Val, programs: int) -> Val:
    """Triton's ``to_tensor``: a Python number becomes a scalar tensor of its literal type (int32,
    uint32, int64, uint64 or fp32), no longer weakly typed; a tensor stays."""
    if not v.is_lit:
        return v
    a = np.full((programs,), v.lit, dtype=NP[v.ty])
    return Val(v.ty, (), a, np.zeros(a.shape) if is_float(v.ty) else None)


def minmax(op: str, x: Val, y: Val, programs: int) -> Val:
    """``tl.maximum``/``tl.minimum``: Triton's ``core.maximum`` makes numbers tensors (``to_tensor``)
    and bf16 fp32 before the usual promotion, so ``maximum(x_uint8, 0)`` is int32."""
    x, y = (to_tensor(v, programs) for v in (x, y))
    if "bf16" in (x.ty, y.ty):
        x, y = (Val("fp32", v.shape, *cast_array(v.a, v.err, v.ty, "fp32")) if v.ty == "bf16" else v
                for v in (x, y))
    t = computation_type(x, y, False)
    shape = broadcast_shape(x, y)
    a, ea = as_type(x, t, shape, programs)
    b, eb = as_type(y, t, shape, programs)
    if is_float(t):
        if np.any(np.isnan(a)) or np.any(np.isnan(b)):
            raise Reject("NaN into minimum/maximum")
        out = np.maximum(a, b) if op == "max" else np.minimum(a, b)
        err = np.maximum(0 if ea is None else ea, 0 if eb is None else eb) * np.ones(a.shape)
        return Val(t, shape, out, err)
    pa, pb = to_python(a), to_python(b)
    pick = max if op == "max" else min
    return Val(t, shape, wrap_ints([pick(p, q) for p, q in zip(pa, pb)], t).reshape(a.shape))


def where(c: Val, x: Val, y: Val, programs: int) -> Val:
    t = computation_type(x, y, False)
    for v in (x, y):
        if v.is_lit and v.lit < 0 and unsigned(t):
            raise Reject("unsigned tensor with a negative literal")
    shape = broadcast_shape(c, x, y)
    cond, _ = as_type(c, "int1", shape, programs)
    a, ea = as_type(x, t, shape, programs)
    b, eb = as_type(y, t, shape, programs)
    err = None if not is_float(t) else np.where(cond, 0 if ea is None else ea, 0 if eb is None else eb)
    return Val(t, shape, np.where(cond, a, b), None if err is None else err * np.ones(a.shape))


def reduce(op: str, x: Val, axis: int, programs: int, dtype: str | None = None) -> Val:
    """``tl.sum``/``tl.max``/``tl.min``/``tl.xor_sum`` over ``axis`` with Triton's accumulation
    types; ``tl.sum(dtype=D)`` casts to ``D`` first and sums in it (``_pick_sum_dtype``)."""
    t = x.ty
    if dtype is not None:
        t = dtype
    elif op == "xor_sum":
        if is_float(t):
            raise Reject("xor_sum of floats")
    elif op == "sum":
        if not is_float(t) and bits(t) < 32:
            t = "uint32" if unsigned(t) else "int32"
    elif bits(t) < 32:
        t = "fp32" if is_float(t) else "int32"
    a, e = cast_array(x.a, x.err, x.ty, t)
    shape = x.shape[:axis] + x.shape[axis + 1:]
    ax = axis + 1
    if not is_float(t):
        cols = np.moveaxis(a, ax, -1)
        flat = cols.reshape(-1, cols.shape[-1])
        fn = {"sum": sum, "max": max, "min": min, "xor_sum": lambda row: functools.reduce(operator.xor, row)}[op]
        out = wrap_ints([fn(to_python(row)) for row in flat], t).reshape(cols.shape[:-1])
        return Val(t, shape, out)
    f = a.astype(np.float64)
    if np.any(np.isnan(f)):
        raise Reject("NaN into a reduction")
    e = np.zeros(a.shape) if e is None else e
    if op == "sum":
        n = a.shape[ax]
        with np.errstate(all="ignore"):
            exact = f.sum(axis=ax)
            out = round_to(exact, t)
            err = e.sum(axis=ax) + np.abs(f).sum(axis=ax) * EPS[t] * (n + 1) + ulp_err(out, t)
            if t == "fp16":   # any order of fp16 partial sums: bound their overflow honestly
                err = np.where(np.abs(f).sum(axis=ax) > 60000, np.inf, err)
        return Val(t, shape, out, err)
    out = round_to((f.max if op == "max" else f.min)(axis=ax), t)
    return Val(t, shape, out, e.max(axis=ax))


def same_value(got: np.ndarray, want: np.ndarray, err: np.ndarray | None, t: str) -> np.ndarray:
    """Which elements of ``got`` agree with the model: exactly for integers; for floats within the
    error bound (a non-finite bound means the model cannot tell)."""
    if not is_float(t):
        return got == want
    with np.errstate(all="ignore"):
        g, w = got.astype(np.float64), want.astype(np.float64)
        e = np.zeros(w.shape) if err is None else err
        slack = 4 * e + 2 * ulp_err(want, t)
        ok = (g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= slack) | ~np.isfinite(e)
        # a finite slack around an overflow: inf is right when the bound reaches past the range
        big = float(np.finfo(NP[t]).max)
        ok |= np.isinf(g) & (np.abs(w) + slack >= big) & (np.sign(g) == np.sign(w))
        ok |= np.isinf(w) & (np.abs(g) + slack >= big) & (np.sign(g) == np.sign(w))
        return ok
