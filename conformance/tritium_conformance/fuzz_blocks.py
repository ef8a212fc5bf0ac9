"""Block-level statements of the differential tester and their numpy models: ``tl.dot``, scans
(``cumsum``, ``cumprod``, ``associative_scan``), ``sort``/``topk``, ``gather``, ``xor_sum``,
atomics on a buffer the kernel also returns, and loads through block pointers.

Each model follows Triton 3.6's rules (``python/triton/language/standard.py``, ``core.py``,
``semantic.py``), written from them rather than from tritium, as ``fuzz_model`` is.
"""

from __future__ import annotations

import numpy as np

from . import fuzz_model as M
from .fuzz_model import NP, TL, Reject, Val

#: statement kinds this module adds (``fuzz_gen.STATEMENTS`` weighs them)
BLOCK_STATEMENTS = ["dot", "scan", "sort", "gather", "atomic", "xor-sum"]
#: operand types ``tl.dot`` takes here, and its accumulator type for each
DOT_TYPES = {"fp16": "fp32", "bf16": "fp32", "fp32": "fp32", "int8": "int32"}
#: atomics: the element types each operation is generated for
ATOMIC_TYPES = {"add": ["int32", "uint32", "int64", "fp32"], "max": ["int32", "uint32", "int64", "fp32"],
                "min": ["int32", "uint32", "int64", "fp32"], "and": ["int32", "uint32", "int64"],
                "or": ["int32", "uint32", "int64"], "xor": ["int32", "uint32", "int64"],
                "xchg": ["int32", "uint32", "int64", "fp32"], "cas": ["int32", "int64"]}
SEMS = [None, "relaxed", "acquire", "release", "acq_rel"]


def _exact(v: Val) -> bool:
    return v.err is None or not np.any(v.err)


# -- models ---------------------------------------------------------------------------------------


def dot(x: Val, w: Val, out: str, tf32: bool) -> Val:
    """``tl.dot(x, w)`` per program: x (programs, M, K), w (programs, K, N); products and sums in
    float64, rounded once to ``out``; the bound allows any order of accumulation in ``out`` (each
    addition off by at most an ulp of the largest partial sum) and tf32 inputs."""
    a, b = x.a.astype(np.float64), w.a.astype(np.float64)
    exact = np.einsum("pmk,pkn->pmn", a, b)
    if not M.is_float(out):
        return Val(out, exact.shape[1:], M.wrap_ints([int(v) for v in exact.ravel()], out).reshape(exact.shape))
    k = a.shape[-1]
    scale = np.einsum("pmk,pkn->pmn", np.abs(a), np.abs(b))
    err = scale * M.EPS[out] * (k + 1) + (scale * 2.0 ** -10 if tf32 else 0)
    for v, other in ((x, b), (w, a)):
        if v.err is not None:
            e = v.err.astype(np.float64)
            err = err + (np.einsum("pmk,pkn->pmn", e, np.abs(other)) if v is x else
                         np.einsum("pmk,pkn->pmn", np.abs(other), e))
    with np.errstate(all="ignore"):
        result = M.round_to(exact, out)
        err = err + M.ulp_err(result, out)
    if out == "fp16":
        err = np.where(scale > 60000, np.inf, err)
    return Val(out, exact.shape[1:], result, err)


def scan(op: str, x: Val, axis: int, reverse: bool, dtype: str | None = None) -> Val:
    """``tl.cumsum`` (narrow integers widen as ``tl.sum``'s, or ``dtype``), ``tl.cumprod`` (no
    widening) and ``associative_scan`` with a ``max`` or ``+`` combine (in the input's type)."""
    t = x.ty
    if t == "bf16":
        t = "fp32"   # Triton's cumsum and cumprod promote bf16 to fp32 first
    if op == "cumsum":
        t = dtype or (("uint32" if M.unsigned(t) else "int32") if not M.is_float(t) and M.bits(t) < 32 else t)
    a, e = M.cast_array(x.a, x.err, x.ty, t)
    ax = axis + 1
    if reverse:
        a, e = np.flip(a, ax), None if e is None else np.flip(e, ax)
    if not M.is_float(t):
        cols = np.moveaxis(a, ax, -1)
        rows = [M.to_python(row) for row in cols.reshape(-1, cols.shape[-1])]
        step = {"cumsum": lambda p, q: p + q, "add": lambda p, q: p + q, "cumprod": lambda p, q: p * q,
                "max": max}[op]
        out = []
        for row in rows:
            acc = row[0]
            out.append(acc)
            for v in row[1:]:
                acc = int(M.wrap_ints([step(acc, v)], t)[0])
                out.append(acc)
        res = np.moveaxis(M.wrap_ints(out, t).reshape(cols.shape), -1, ax)
        return Val(t, x.shape, np.flip(res, ax) if reverse else res)
    f = a.astype(np.float64)
    if np.any(np.isnan(f)):
        raise Reject("NaN into a scan")
    e = np.zeros(a.shape) if e is None else e
    n = a.shape[ax]
    with np.errstate(all="ignore"):
        if op == "max":
            exact, err = np.maximum.accumulate(f, axis=ax), np.maximum.accumulate(e, axis=ax)
        elif op in ("cumsum", "add"):
            exact = np.cumsum(f, axis=ax)
            err = np.cumsum(e, axis=ax) + np.cumsum(np.abs(f), axis=ax) * M.EPS[t] * (n + 1)
            if t == "fp16":
                err = np.where(np.cumsum(np.abs(f), axis=ax) > 60000, np.inf, err)
        else:
            if np.any(e) or np.any((f != 0) & ((np.abs(f) < 2.0 ** -4) | (np.abs(f) > 16))):
                raise Reject("cumprod of floats only on exact values of moderate size")
            exact = np.cumprod(f, axis=ax)
            if np.any(np.abs(exact) > (1e4 if t == "fp16" else 1e30)):
                raise Reject("cumprod grows too large")
            err = np.abs(exact) * M.EPS[t] * 2 * (n + 1)
        out = M.round_to(exact, t)
        err = err + M.ulp_err(out, t)
    if reverse:
        out, err = np.flip(out, ax), np.flip(err, ax)
    return Val(t, x.shape, np.ascontiguousarray(out), np.ascontiguousarray(err))


def sort(x: Val, descending: bool, k: int | None) -> Val:
    """``tl.sort`` along the last dimension, or ``tl.topk`` (the ``k`` largest, largest first).
    The i-th value of a sorted copy moves by at most the largest input error."""
    a = x.a
    if M.is_float(x.ty) and np.any(np.isnan(a.astype(np.float64))):
        raise Reject("NaN into a sort")
    keyed = a.astype(np.uint8) if x.ty == "int1" else a
    out = np.sort(keyed, axis=-1).astype(a.dtype)
    if descending or k is not None:
        out = np.flip(out, -1)
    if k is not None:
        out = out[..., :k]
    err = None if x.err is None else np.broadcast_to(x.err.max(axis=-1, keepdims=True), out.shape).copy()
    return Val(x.ty, x.shape[:-1] + (out.shape[-1],), np.ascontiguousarray(out), err)


def gather(x: Val, index: np.ndarray, axis: int) -> Val:
    """``tl.gather(x, index, axis)``: index has x's shape and values in [0, x.shape[axis])."""
    out = np.take_along_axis(x.a, index.astype(np.int64), axis + 1)
    err = None if x.err is None else np.take_along_axis(x.err, index.astype(np.int64), axis + 1)
    return Val(x.ty, x.shape, out, err)


def atomic(op: str, t: str, init: np.ndarray, val: Val, cmp: np.ndarray | None):
    """What an atomic ``op`` at distinct addresses leaves in memory (and its error bound); each
    returns the old values, ``init``."""
    if op == "xchg":
        return val.a, val.err
    if op == "cas":
        return np.where(init == cmp, val.a, init), None
    if M.is_float(t):
        f, g = init.astype(np.float64), val.a.astype(np.float64)
        e = np.zeros(init.shape) if val.err is None else val.err
        if op == "add":
            with np.errstate(all="ignore"):
                out = M.round_to(f + g, t)
                return out, e + M.ulp_err(out, t)
        out = np.maximum(f, g) if op == "max" else np.minimum(f, g)
        return out.astype(NP[t]), e
    p, q = M.to_python(init), M.to_python(val.a)
    fn = {"add": lambda u, v: u + v, "max": max, "min": min, "and": lambda u, v: u & v,
          "or": lambda u, v: u | v, "xor": lambda u, v: u ^ v}[op]
    return M.wrap_ints([fn(u, v) for u, v in zip(p, q)], t).reshape(init.shape), None


# -- generator statements -------------------------------------------------------------------------


class BlockStatements:
    """Statements of ``fuzz_gen._Gen`` on whole blocks (mixed into it: uses its pool, arrays and
    frame: ``G``, ``two_d``, ``BM``/``BN`` or ``B``)."""

    def block_statement(self, what: str, xn: str, x: Val) -> None:
        getattr(self, "_" + what.replace("-", "_"))(xn, x)

    def _full_shape(self) -> tuple[int, ...]:
        return (self.BM, self.BN) if self.two_d else (self.B,)

    def _matrix(self, t: str, rows: int, cols: int) -> tuple[str, Val]:
        """A new ``rows`` x ``cols`` matrix argument, loaded whole (the same for every program)."""
        ptr = self.fresh("w") + "_ptr"
        data = self.random_array("fp32" if t == "bf16" else t, rows * cols)
        if t == "bf16":  # no bf16 arrays: fp32 values that bf16 holds exactly, converted in the kernel
            data = M.to_bf16(data)
        self.params.append(ptr)
        self.args.append(("array", ptr, data))
        arr = np.broadcast_to(data.reshape(1, rows, cols), (self.G, rows, cols)).copy()
        v = Val(t, (rows, cols), arr, np.zeros(arr.shape) if M.is_float(t) else None)
        r, c = f"tl.arange(0, {rows})", f"tl.arange(0, {cols})"
        load = f"tl.load({ptr} + {r}[:, None] * {cols} + {c}[None, :])"
        return self.add(load + (".to(tl.bfloat16)" if t == "bf16" else ""), v, "w")

    def _dot(self, xn: str, x: Val) -> None:
        if len(x.shape) != 2 or min(x.shape) < 16:  # another value of the pool may do
            blocks = [(n, v) for n, v in self.pool if len(v.shape) == 2 and min(v.shape) >= 16]
            if not blocks:
                raise Reject("tl.dot needs blocks of at least 16 x 16")
            xn, x = self.choice(blocks)
        t = self.choice([x.ty] if x.ty in DOT_TYPES else list(DOT_TYPES))
        if t == "bf16" and not self.bf16:
            raise Reject("bf16 only in bf16 kernels")
        if t == "int8" and x.shape[1] < 32:
            raise Reject("int8 operands need K >= 32 (Triton's smallest int8 dot)")
        a, e = M.cast_array(x.a, x.err, x.ty, t)
        if M.is_float(t) and not np.all(np.isfinite(a.astype(np.float64))):
            raise Reject("non-finite dot operands")
        xc = Val(t, x.shape, a, e)
        src = xn if t == x.ty else f"{xn}.to({TL[t]})"
        wn, w = self._matrix(t, x.shape[1], int(self.choice([16, x.shape[1]])))
        out, extra = DOT_TYPES[t], ""
        if t == "fp16" and "dot-fp16-acc" not in self.exclude and self.r.random() < 0.25:
            out, extra = "fp16", ", out_dtype=tl.float16"
            self.tags.append("dot-fp16-acc")
        tf32 = t == "fp32" and self.r.random() < 0.5
        if t == "fp32" and not tf32:
            extra += ', input_precision="ieee"'
        self.add(f"tl.dot({src}, {wn}{extra})", dot(xc, w, out, tf32), "d")
        self.tags.append("dot")

    def _scan(self, xn: str, x: Val) -> None:
        if not x.shape or x.ty in ("int1", "bf16"):
            raise Reject("scans of blocks of numbers")
        axis = int(self.r.integers(0, len(x.shape)))
        reverse = self.r.random() < 0.3
        op = self.choice(["cumsum", "cumsum", "cumprod", "max", "add"])
        rev = ", reverse=True" if reverse else ""
        dtype = None
        if op == "cumsum" and self.r.random() < 0.3:
            dtype = self.choice(["int32", "int64", "fp32"] if not M.is_float(x.ty) else ["fp32", "fp64"])
        if op in ("cumsum", "cumprod"):
            extra = f", dtype={TL[dtype]}" if dtype else ""
            self.add(f"tl.{op}({xn}, axis={axis}{rev}{extra})", scan(op, x, axis, reverse, dtype), "c")
        else:
            h = self.fresh("_combine")
            body = "tl.maximum(a, b)" if op == "max" else "a + b"
            self.helpers.append(f"@triton.jit\ndef {h}(a, b):\n    return {body}\n")
            self.add(f"tl.associative_scan({xn}, {axis}, {h}{rev})", scan(op, x, axis, reverse), "c")
        self.tags.append("scan")

    def _sort(self, xn: str, x: Val) -> None:
        if not x.shape or x.ty == "bf16":
            raise Reject("sorts of blocks")
        n = x.shape[-1]
        if self.r.random() < 0.5:
            desc = self.r.random() < 0.5
            self.add(f"tl.sort({xn}{', descending=True' if desc else ''})", sort(x, desc, None), "s")
            self.tags.append("sort")
            return
        ks = [kk for kk in (1, 2, 4, n) if kk <= n and (kk > 1 or "topk-1" not in self.exclude)]
        if not ks:
            raise Reject("no k to take")
        k = int(self.choice(ks))
        v = sort(x, True, k)
        if k == n or self.r.random() < 0.3:
            self.add(f"tl.topk({xn}, {k})", v, "s")
        else:  # reduced at once, so the smaller block can be stored
            red = self.choice(["sum", "max", "min"])
            self.add(f"tl.{red}(tl.topk({xn}, {k}), axis={len(x.shape) - 1})", M.reduce(red, v, len(x.shape) - 1,
                                                                                          self.G), "s")
        self.tags.append("topk-1" if k == 1 else "topk")

    def _gather(self, xn: str, x: Val) -> None:
        ints = [(n, v) for n, v in self.pool if v.shape == x.shape and not M.is_float(v.ty) and v.ty != "int1"]
        if not x.shape or not ints:
            raise Reject("gather needs a block and an integer block of its shape")
        yn, y = self.choice(ints)
        axis = int(self.r.integers(0, len(x.shape)))
        n = x.shape[axis]
        idx = M.cast_array(y.a, None, y.ty, "int32")[0].astype(np.int64) & (n - 1)
        self.add(f"tl.gather({xn}, {yn}.to(tl.int32) & {n - 1}, {axis})", gather(x, idx, axis), "g")
        self.tags.append("gather")

    def _xor_sum(self, xn: str, x: Val) -> None:
        if not x.shape or M.is_float(x.ty):
            raise Reject("xor_sum of integer blocks")
        axis = int(self.r.integers(0, len(x.shape)))
        self.add(f"tl.xor_sum({xn}, axis={axis})", M.reduce("xor_sum", x, axis, self.G), "r")
        self.tags.append("xor-sum")

    def _atomic(self, xn: str, x: Val) -> None:
        """An atomic at ``buf + offs`` (distinct addresses across programs) on a new buffer that
        the kernel also returns; the old values join the pool."""
        shape = self._full_shape()
        try:
            if np.broadcast_shapes(x.shape, shape) != shape:
                raise ValueError
        except ValueError:
            raise Reject("an atomic's value must broadcast to the block") from None
        op = self.choice(list(ATOMIC_TYPES))
        t = self.choice(ATOMIC_TYPES[op])
        ga, ge = M.expand(x, shape, self.G)
        a, e = M.cast_array(np.ascontiguousarray(ga), None if ge is None else np.ascontiguousarray(ge), x.ty, t)
        if M.is_float(t) and np.any(np.isnan(a)):
            raise Reject("NaN into an atomic")
        val = Val(t, shape, a, e)
        per = int(np.prod(shape))
        init = self.random_array(t, self.G * per).reshape((self.G,) + shape)
        buf = self.fresh("buf") + "_ptr"
        cmp = None
        sem = self.choice(SEMS)
        opts = (f", sem={sem!r}" if sem else "") + (", scope='gpu'" if self.r.random() < 0.2 else "")
        masked = not self.two_d and op != "cas" and self.r.random() < 0.3
        if op == "cas":  # swap where the old value is even
            cn = self.fresh("cmp")
            self.emit(f"{cn} = tl.where(tl.load({buf} + offs) % 2 == 0, tl.load({buf} + offs), 1)")
            cmp = np.where(init % 2 == 0, init, 1).astype(NP[t])
            src = f"tl.atomic_cas({buf} + offs, {cn}, {xn}.to({TL[t]}){opts})"  # cas casts nothing
        else:
            src = f"tl.atomic_{op}({buf} + offs, {xn}{', mask=mask' if masked else ''}{opts})"
        new, err = atomic(op, t, init, val, cmp)
        if masked:  # masked-off lanes leave memory alone and return nothing defined
            live = self.offs < self.size
            new = np.where(live, new, init)
            err = None if err is None else np.where(live, err, 0)
            self.emit(src)
        else:
            self.add(src, Val(t, shape, init.copy(), np.zeros(init.shape) if M.is_float(t) else None), "old")
        self.params.append(buf)
        self.args.append(("inout", buf, init.ravel().copy()))
        self.inouts.append([len(self.lines) - 1, buf, t, new.reshape(self.G, -1), None if err is None else
                            err.reshape(self.G, -1), init.reshape(self.G, -1)])
        self.tags.append(f"atomic-{op}")

    def block_ptr_load(self, ptr: str, t: str, data: np.ndarray) -> None:
        """A load through ``tl.make_block_ptr`` (sometimes moved there by ``tl.advance``), with a
        boundary check and zero padding past ``n`` in a 1-D kernel; a bool array reads as int8."""
        k = int(self.r.integers(1, 5)) if self.r.random() < 0.5 else 0
        if t == "int1":  # Triton's make_block_ptr reads a bool array as int8
            t, data = "int8", data.astype(np.int8)
        if self.two_d:
            shape, strides, block, order, check = f"({self.G * self.BM}, BN)", "(BN, 1)", "(BM, BN)", "(1, 0)", "(0, 1)"
            start, moved = f"(pid * BM + {k}, 0)", f"({-k}, 0)"
            vals, vshape = data.reshape(self.G, self.BM, self.BN), (self.BM, self.BN)
        else:
            shape, strides, block, order, check = "(n,)", "(1,)", "(BLOCK,)", "(0,)", "(0,)"
            start, moved = f"(pid * BLOCK + {k},)", f"({-k},)"
            vals = np.where(self.offs < self.size, data[np.clip(self.offs, 0, self.size - 1)], NP[t](0))
            vshape = (self.B,)
        bp = self.fresh("bp")
        self.emit(f"{bp} = tl.make_block_ptr({ptr}, shape={shape}, strides={strides}, offsets={start}, "
                  f"block_shape={block}, order={order})")
        if k:
            self.emit(f"{bp} = tl.advance({bp}, {moved})")
        self.add(f"tl.load({bp}, boundary_check={check}, padding_option='zero')", Val(t, vshape, vals.astype(NP[t])),
                 "a")
        self.tags.append("block-ptr")
