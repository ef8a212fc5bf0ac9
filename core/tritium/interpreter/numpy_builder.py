"""The interpreter's builder: language calls evaluated eagerly on numpy arrays.

Pointers are byte addresses (``memory.Pointers``, which also remember the argument each derives
from), so pointer arithmetic, masks and loads keep their exact meaning; every load and store is
checked against that argument's memory, then views the addressed host memory through ctypes.
"""

from __future__ import annotations

import ctypes
import linecache
import math
import sys
from typing import Any, Callable

import ml_dtypes
import numpy as np

from ..errors import DeviceAssertionError
from ..language.core import as_const
from ..language.dtypes import dtype
from ..language.semantic import SemanticError
from ..runtime import debug_output
from ..runtime.jit import JIT_CODE
from .memory import AccessError, Pointers, Region, check, pointers, select

_NP = {"int1": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
       "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
       "fp16": np.float16, "bf16": ml_dtypes.bfloat16, "fp32": np.float32, "fp64": np.float64,
       **{name: np.uint8 for name in dtype.FP8}}  # fp8: the bits (``language.fp8`` converts them)


_BF16 = np.dtype(ml_dtypes.bfloat16)


def np_dtype(t: dtype) -> Any:
    if t.is_ptr():
        return np.uint64
    if t.name not in _NP:
        raise SemanticError(f"the interpreter does not support {t} (numpy has no such type)")
    return _NP[t.name]


def _convert(h: np.ndarray, src: dtype, dst: dtype) -> np.ndarray:
    """A numeric conversion, rounding to nearest; fp8 values are their bits (``language.fp8``)."""
    from ..language import fp8

    if src.is_fp8():
        h = fp8.decode(h, fp8.FORMATS[src.name])
    if dst.is_fp8():
        with np.errstate(all="ignore"):  # (NaNs and values beyond float32 round as the formats say)
            wide = np.asarray(h, dtype=np.float64).astype(np.float32)
        return fp8.encode(wide, fp8.FORMATS[dst.name], nan_sign=src.name == "fp16")
    with np.errstate(all="ignore"):
        return np.asarray(h).astype(np_dtype(dst))


def _c_div(a, b):
    q = np.floor_divide(a, b)
    return q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0)))


def _shift_right(a, b, kind: str):
    """``a >> b`` on the bits of ``a`` read as signed (``kind`` "i": arithmetic) or unsigned ("u":
    logical) integers of its width, whatever ``a``'s own signedness."""
    a = np.asarray(a)
    as_kind = np.dtype(f"{kind}{a.dtype.itemsize}")
    shifted = np.right_shift(a.view(as_kind), np.asarray(b).astype(as_kind))
    return np.asarray(shifted).view(a.dtype)


_ARITH: dict[str, Callable] = {
    "addi": np.add, "addf": np.add, "subi": np.subtract, "subf": np.subtract, "muli": np.multiply,
    "mulf": np.multiply, "divf": np.divide, "divsi": _c_div, "divui": np.floor_divide,
    "remsi": np.fmod, "remui": np.remainder, "remf": np.fmod, "andi": np.bitwise_and,
    "ori": np.bitwise_or, "xori": np.bitwise_xor, "shli": np.left_shift,
    "shrsi": lambda a, b: _shift_right(a, b, "i"), "shrui": lambda a, b: _shift_right(a, b, "u"),
    "negf": np.negative, "maxnumf": np.fmax, "minnumf": np.fmin,
    "maximumf": np.maximum, "minimumf": np.minimum,
    "maxsi": np.maximum, "maxui": np.maximum, "minsi": np.minimum, "minui": np.minimum,
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "cos": np.cos, "floor": np.floor,
    "ceil": np.ceil, "absf": np.abs, "absi": np.abs, "sqrt_rn": np.sqrt, "divf_rn": np.divide,
    "erf": lambda x: _ERF(x).astype(x.dtype), "fma": lambda x, y, z: _fma(x, y, z),
    "log10": np.log10, "tan": np.tan, "tanh": np.tanh, "trunc": np.trunc, "roundeven": np.rint,
    "round": lambda x: (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(x.dtype), "copysign": np.copysign,
    "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh, "atan": np.arctan,
    "atanh": np.arctanh, "cbrt": np.cbrt, "cosh": np.cosh, "sinh": np.sinh, "expm1": np.expm1, "log1p": np.log1p,
    "erfc": lambda x: np.vectorize(math.erfc, otypes=[np.float64])(x).astype(x.dtype), "atan2": np.arctan2,
    "powf": np.power,
}
_ERF = np.vectorize(math.erf, otypes=[np.float64])


def _fma(x, y, z):
    """x * y + z rounded once where float64 holds the exact product (f16/f32), as a fused op is."""
    if x.dtype == np.float64:
        return x * y + z
    return (x.astype(np.float64) * y + z).astype(x.dtype)


def _float_order(x):
    """Triton's order of floats in atomic max/min: the bits as integers, negative values reversed
    (so -0.0 < +0.0 and NaNs sort by their sign bit)."""
    bits = x.view(np.dtype(f"u{x.itemsize}")).astype(np.uint64)
    sign = np.uint64(1 << (8 * x.itemsize - 1))
    return np.where(bits & sign, ~bits & (sign * 2 - 1) if x.itemsize < 8 else ~bits, bits | sign)


_RMW: dict[str, Callable] = {
    "add": np.add, "fadd": np.add, "max": np.maximum, "umax": np.maximum, "min": np.minimum,
    "umin": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "xchg": lambda old, v: np.asarray(v).astype(old.dtype),
    "fmax": lambda old, v: np.where(_float_order(np.asarray(v, old.dtype)) > _float_order(old), v, old),
    "fmin": lambda old, v: np.where(_float_order(np.asarray(v, old.dtype)) < _float_order(old), v, old),
}
_WRAPPING = ("addi", "subi", "muli")
_CMP = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
        "eq": np.equal, "ne": np.not_equal}


class NumpyBuilder:
    """Implements the builder protocol of ``tritium.language.semantic`` eagerly with numpy."""

    interprets = True

    def __init__(self, pid: tuple[int, int, int], grid: tuple[int, int, int], regions: tuple[Region, ...],
                 program: Any, debug: bool = False, kernel: str = "", static_printed: set | None = None,
                 num_warps: int = 4):
        """``regions`` are the arguments' memory (every access is checked against them);
        ``program`` holds the interpreted functions of this launch (``rewrite``); ``debug`` turns
        ``device_assert`` on; ``static_printed`` (shared by the programs of one launch) holds the
        ``static_print`` calls already printed, so each prints once per launch; ``num_warps`` is
        the launch option's."""
        self.pid, self.grid, self.regions, self.program = pid, grid, regions, program
        self.debug, self.kernel, self.num_warps = debug, kernel, num_warps
        self.static_printed = set() if static_printed is None else static_printed

    def call_jit(self, jitfn, args: tuple, kwargs: dict) -> Any:
        """A kernel calls a @jit helper: run the helper's interpreted function (``rewrite``)."""
        if jitfn.const_params:
            bound = jitfn.signature.bind(*args, **kwargs).arguments
            args, kwargs = (), {n: as_const(v) if n in jitfn.const_params else v for n, v in bound.items()}
        return self.program.function(jitfn)(*args, **kwargs)

    def python_value(self, x) -> Any:
        if any(d != 1 for d in x.shape):  # a block of one element is that element, as in Triton
            raise SemanticError(f"the value of a block of shape {list(x.shape)} is not one number; "
                                "use tl.where, tl.max or tl.min")
        return np.asarray(x.handle).reshape(()).item()

    def constant(self, value, t: dtype):
        return np.array(value).astype(np_dtype(t))

    def splat(self, h, t, shape):
        if isinstance(h, Pointers):
            return h.like(np.full(shape, h.addr), np.full(shape, h.which))
        return np.full(shape, h, dtype=np_dtype(t))

    def broadcast(self, h, t, src_shape, shape):
        if isinstance(h, Pointers):
            return h.like(np.broadcast_to(h.addr, shape), np.broadcast_to(h.which, shape))
        return np.broadcast_to(h, shape)

    def expand_dims(self, h, t, axis, shape):
        if isinstance(h, Pointers):
            return h.like(np.expand_dims(h.addr, axis), np.expand_dims(h.which, axis))
        return np.expand_dims(h, axis)

    def reshape(self, h, t, src_shape, shape):
        return _each(h, lambda a: np.reshape(a, shape))

    def trans(self, h, t, order, shape):
        return _each(h, lambda a: np.transpose(a, order))

    def join(self, a, b, t, shape):
        if t.is_ptr():  # each element keeps its origin: a select between the two, stacked
            first = np.broadcast_to(np.array([True, False]), shape)
            twice = lambda p: _each(pointers(p), lambda x: np.stack([x, x], -1))  # noqa: E731
            return select(first, twice(a), twice(b))
        return np.stack([np.asarray(a), np.asarray(b)], axis=-1)

    def split(self, h, t, part, shape):
        return _each(h, lambda a: a[..., part])

    def flip(self, h, t, axis, shape):
        return _each(h, lambda a: np.flip(a, axis))

    def sort(self, h, t, dim, descending, k, shape, network):
        """``tile.sort``: its network, as every target may run it."""
        return network(h)

    def descriptor_load(self, base, offsets, padding, t, shape, decompose):
        """``tile.descriptor_load``: its pointers and masked loads."""
        return decompose()

    def gather(self, src, index, axis, t, shape):
        """``tile.gather``: 0 where an index is outside the axis (the language passes none)."""
        index = np.asarray(index)
        inside = (index >= 0) & (index < np.shape(src)[axis])
        picked = np.take_along_axis(np.asarray(src), np.where(inside, index, 0), axis)
        return np.where(inside, picked, np.zeros((), picked.dtype))

    def arith(self, op: str, operands, t: dtype, shape):
        if t.is_bool() and op in _WRAPPING:  # i1 arithmetic wraps modulo 2 (True + True == False)
            operands = [np.asarray(o, dtype=np.uint8) for o in operands]
            return (np.asarray(_ARITH[op](*operands)) & 1).astype(np.bool_)
        operands = [np.asarray(o) for o in operands]
        if any(o.dtype == _BF16 for o in operands):  # bf16 computed in fp32 and rounded, as GPUs do
            operands = [o.astype(np.float32) if o.dtype == _BF16 else o for o in operands]
        with np.errstate(all="ignore"):
            return np.asarray(_ARITH[op](*operands)).astype(np_dtype(t), copy=False)

    def cmp(self, kind: str, pred: str, a, b, t, shape):
        base = pred[1:] if kind == "f" and pred not in ("eq", "ne") else pred
        base = {"oeq": "eq", "une": "ne"}.get(pred, base)
        base = base[1:] if base[0] in "su" and base not in ("eq", "ne") else base
        return np.asarray(_CMP[base](a, b))

    def cast(self, op: str, h, src: dtype, dst: dtype, shape, toward_zero: bool = False):
        if dst.is_ptr():
            return _as_pointer(h)
        if src.is_ptr():  # its address
            return pointers(h).addr.astype(np.uint64).view(np_dtype(dst))
        if op == "bitcast":
            return np.asarray(h).view(np_dtype(dst))
        nearest = _convert(np.asarray(h), src, dst)
        if not toward_zero:
            return nearest
        back = _convert(nearest, dst, src)  # to nearest went one step too far from zero, or not
        with np.errstate(invalid="ignore"):
            too_far = np.abs(back.astype(np.float64)) > np.abs(np.asarray(h, dtype=np.float64))
        bits = nearest.view(np.uint8 if dst.is_fp8() else f"u{np.dtype(np_dtype(dst)).itemsize}")
        return np.where(too_far, bits - 1, bits).astype(bits.dtype).view(np_dtype(dst))

    def retype(self, h, src: dtype, dst: dtype, shape):
        if dst.is_ptr():
            return _as_pointer(h)
        return np.asarray(h).view(np_dtype(dst))

    def select(self, c, a, b, t, shape):
        if t.is_ptr():
            return select(c, a, b)
        return np.where(c, a, b).astype(np_dtype(t), copy=False)

    def program_id(self, axis: int):
        return np.int32(self.pid[axis])

    def num_programs(self, axis: int):
        return np.int32(self.grid[axis])

    def hint(self, h, field: str, values) -> None:
        pass  # hints only inform the compiler's analysis

    def barrier(self) -> None:
        pass  # one program runs as one thread: its memory operations are already in order

    def make_range(self, start: int, end: int):
        return np.arange(start, end, dtype=np.int32)

    def addptr(self, p, off, t, shape):
        p = pointers(p)
        step = np.asarray(off).astype(np.int64) * t.element_ty.itemsize
        addr = (p.addr + step.astype(np.uint64)).astype(np.uint64)
        return p.like(addr, np.broadcast_to(p.which, addr.shape))

    def _check(self, p: Pointers, active: np.ndarray, size: int, storing: bool) -> None:
        try:
            check(p, active, size, self.regions, storing)
        except AccessError as e:
            raise AccessError(f"program {self.pid}: {e}") from None

    def _memory(self, addrs: np.ndarray, dt: Any):
        """A numpy view of element type ``dt`` over the memory ``addrs`` span, and each address's
        index in it."""
        size = np.dtype(dt).itemsize
        lo, hi = int(addrs.min()), int(addrs.max()) + size
        delta = (addrs - np.uint64(lo)).astype(np.int64)
        if np.any(delta % size):
            raise SemanticError("misaligned pointers: the interpreter needs addresses that are multiples of "
                                "the element size apart")
        buf = (ctypes.c_char * (hi - lo)).from_address(lo)
        return np.frombuffer(buf, dtype=dt), delta // size

    def dot(self, a, b, c, operand: dtype, t: dtype, shape, input_precision: str, max_num_imprecise_acc: int):
        """``a @ b + c`` with exact products: int8 in int32 (wrapping), fp64 in fp64, fp16/fp32 in fp32
        (numpy's BLAS; no tensor cores, so every ``input_precision`` is exact fp32), rounded once to
        an fp16 result."""
        wide = np.int32 if t.is_int() else (np.float64 if t.name == "fp64" else np.float32)
        with np.errstate(all="ignore"):
            out = np.matmul(np.asarray(a, dtype=wide), np.asarray(b, dtype=wide)) + np.asarray(c, dtype=wide)
        return out.astype(np_dtype(t), copy=False)

    def load(self, p, mask, other, t: dtype, shape, hints: dict | None = None):
        p = pointers(p)
        out = np.zeros(shape, dtype=np_dtype(t)) if other is None else np.array(other, dtype=np_dtype(t))
        out = np.broadcast_to(out, p.shape).copy()
        active = _active(p, mask)
        if active.any():
            self._check(p, active, out.dtype.itemsize, storing=False)
            view, idx = self._memory(p.addr[active], out.dtype)
            out[active] = view[idx]
        return out

    def store(self, p, value, mask, shape, hints: dict | None = None):
        p = pointers(p)
        active = _active(p, mask)
        if active.any():
            value = np.broadcast_to(np.asarray(value), p.shape)
            self._check(p, active, value.dtype.itemsize, storing=True)
            view, idx = self._memory(p.addr[active], value.dtype)
            view[idx] = value[active]

    def map_elementwise(self, hs, arg_types, shape, pack: int, body: Callable):
        """``body`` called on each group of ``pack`` consecutive elements, in row-major order (Python
        runs the scalar function, branches and loops included, once per group)."""
        groups = [np.broadcast_to(np.asarray(h), shape).reshape(-1, pack) for h in hs]
        outs: list[list] = []
        types = None
        for g in range(groups[0].shape[0]):
            values, types = body([np.asarray(x[g, k]) for x in groups for k in range(pack)])
            outs.append([np.asarray(v) for v in values])
        results = []
        for r in range(len(types)):
            flat = [out[r * pack + k] for out in outs for k in range(pack)]
            results.append(np.array(flat, dtype=flat[0].dtype).reshape(shape))
        return results, types

    def inline_asm(self, asm: str, constraints: str, hs, arg_types, ts, shape, is_pure: bool, pack: int):
        """Foreign assembly cannot run on numpy."""
        from ..language.elementwise_fns import unsupported_message

        raise SemanticError(unsupported_message("interpreter"))

    def atomic_rmw(self, kind: str, p, val, mask, t: dtype, shape, sem: str, scope: str):
        """Each active element in row-major order: read, combine with ``kind``, write back."""
        val = _flat(val, p)
        return self._atomic(p, mask, t, lambda old, at: _RMW[kind](old, val[at]))

    def atomic_cas(self, p, cmp, val, t: dtype, shape, sem: str, scope: str):
        """Each element in row-major order: write ``val`` where the old bits equal ``cmp``'s."""
        cmp, val = _flat(cmp, p), _flat(val, p)

        def combine(old, at):
            bits = np.dtype(f"u{old.itemsize}")
            return np.where(old.view(bits) == cmp[at].astype(old.dtype).view(bits), val[at], old)
        return self._atomic(p, None, t, combine)

    def _atomic(self, p, mask, t: dtype, combine: Callable):
        """The old values (0 where masked off) of read-modify-writes ``combine(old, at)`` of the
        elements at flat positions ``at``, one element after the other as one program does them (all
        at once where no two elements share an address)."""
        p = pointers(p)
        out = np.zeros(p.shape, dtype=np_dtype(t))
        active = _active(p, mask)
        if active.any():
            self._check(p, active, out.dtype.itemsize, storing=True)
            view, idx = self._memory(p.addr[active], out.dtype)
            at = np.flatnonzero(active)
            olds = out.reshape(-1)
            with np.errstate(all="ignore"):
                if len(np.unique(idx)) == len(idx):
                    olds[at] = view[idx]
                    view[idx] = combine(view[idx], at)
                    return out
                for i, k in zip(idx, at):
                    olds[k] = view[i]
                    view[i:i + 1] = combine(view[i:i + 1], k)
        return out

    def reduce(self, hs, ts, axis: int, src_shape, shape, combine: Callable):
        xs = [np.asarray(h) for h in hs]
        while xs[0].shape[axis] > 1:  # dims are powers of two: a pairwise tree, lower half first
            half = xs[0].shape[axis] // 2
            lo, hi = zip(*(np.split(x, [half], axis=axis) for x in xs))
            xs = [np.asarray(v) for v in combine(list(lo), list(hi))]
        return [np.squeeze(x, axis=axis) for x in xs]

    def scan(self, hs, ts, axis: int, shape, reverse: bool, combine: Callable):
        """In order along ``axis``; ``reverse`` scans the flipped tensor (the accumulated value is
        always the combine's first operand)."""
        xs = [np.moveaxis(np.array(np.broadcast_to(h, shape)), axis, 0) for h in hs]
        n = xs[0].shape[0]
        order = range(n - 1, -1, -1) if reverse else range(n)
        acc = None
        for k in order:
            cur = [x[k] for x in xs]
            acc = cur if acc is None else [np.asarray(v) for v in combine(acc, cur)]
            for x, v in zip(xs, acc):
                x[k] = v
        return [np.moveaxis(x, 0, axis) for x in xs]

    def device_print(self, prefix: str, hex: bool, handles, types, shapes) -> None:
        values = [(np.broadcast_to(np.asarray(h), shape), t) for h, t, shape in zip(handles, types, shapes)]
        debug_output.write(debug_output.print_lines(prefix, self.pid, values, hex))

    def static_print(self, text: str) -> None:
        frame = _kernel_frame()
        site = (frame.f_code, frame.f_lineno, text) if frame is not None else text
        if site not in self.static_printed:
            self.static_printed.add(site)
            print(text, file=sys.stdout)

    def device_assert(self, cond, shape, message: str) -> None:
        failed = np.argwhere(~np.broadcast_to(np.asarray(cond, dtype=bool), shape))
        if len(failed):
            frame = _kernel_frame()
            file, line = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("", None)
            raise DeviceAssertionError(self.kernel, debug_output.assertion_message(message, self.pid, failed[0]),
                                       filename=file, lineno=line,
                                       source_line=linecache.getline(file, line) if line else "")


def _each(h, fn: Callable):
    """``fn`` applied to a block's values, or to both arrays of pointers."""
    if isinstance(h, Pointers):
        return h.like(fn(h.addr), fn(np.broadcast_to(h.which, h.addr.shape)))
    return fn(np.asarray(h))


def _as_pointer(h) -> Pointers:
    """A pointer cast to another pointer type keeps its origin; an integer has none."""
    return h.like(h.addr, h.which) if isinstance(h, Pointers) else Pointers.of(np.asarray(h).astype(np.uint64), None)


def _flat(values, p: Pointers) -> np.ndarray:
    """``values`` (broadcast to the pointers' shape) in row-major order."""
    return np.broadcast_to(np.asarray(values), p.shape).reshape(-1)


def _active(p: Pointers, mask) -> np.ndarray:
    """The lanes a load or store touches."""
    return np.ones(p.shape, dtype=bool) if mask is None else np.broadcast_to(np.asarray(mask, dtype=bool), p.shape)


def _kernel_frame():
    """The innermost frame running a @jit function's code: where the language call was made."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code not in JIT_CODE:
        frame = frame.f_back
    return frame

