"""Random kernels inside tritium's language subset, each with its expected outputs.

``generate(seed)`` builds a kernel statement by statement: every statement is evaluated on the
numpy model (``fuzz_model``) as it is chosen, so an operation Triton refuses or whose inputs would
be undefined behaviour (division by zero, INT_MIN // -1, shifts past the width, float to int out of
range, NaN into min/max) is rejected and another is drawn. The result is the kernel's source (a
module of its own: ``@jit`` needs a source file), its arguments, and the outputs with error bounds.

Beyond arithmetic, a fraction of kernels use each of: a 2-D grid (``program_id(1)``,
``num_programs``), an early ``return`` inside a kernel-level ``if`` (the programs taking it store
other values and skip the rest), ``for``/``while``/``tl.range``/``tl.static_range`` loops (start,
step, a trip count known only at run time, an ``if`` inside), ``not`` and ``tl.where`` on per-program
conditions, ``@jit`` helpers returning tuples, reductions with ``axis=None`` or ``keep_dims``,
bitcasts, ``tl.full``/``tl.zeros``, ``tl.cdiv``, ``tl.expand_dims``,
bf16 values made in the kernel (stored as fp32) and ``debug=True`` launches (nothing is out of bounds: results must not change); and the
block-level statements of ``fuzz_blocks`` (``tl.dot``, scans, sort and topk, gather, ``xor_sum``,
atomics, loads through block pointers), ``tl.sum(dtype=)``, ``tl.maximum``/``minimum`` with Python
numbers and ``>>`` of operands of mixed signedness.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import fuzz_model as M
from .fuzz_blocks import BLOCK_STATEMENTS, BlockStatements
from .fuzz_model import FLOATS, INTS, NP, TL, Reject, Val

CMP = ["<", "<=", ">", ">=", "==", "!="]
MATH = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "floor", "ceil"]
TYPES = INTS + FLOATS
#: statement kinds, repeated by weight, and the ways a 1-D kernel addresses a load (``offs``,
#: ``offs.to(<narrow int>)``, ``offs >= k``, ``n - 1 - offs``); ``generate(exclude=...)``
#: (``--without``) leaves some out, e.g. to look past a known bug
STATEMENTS = (["bin"] * 6 + ["div"] * 2 + ["bit"] * 2 + ["shift", "cmp", "cmp", "where", "unary", "math", "cast",
              "cast", "minmax", "reduce", "loop", "if", "expand", "helper"] * 2 +
              ["mode", "outer", "bitcast", "full", "cdiv"] + ["dot"] * 4 + ["sum-dtype"] + BLOCK_STATEMENTS)
#: kernel-level constructs, each in a fraction of kernels (``--without`` takes these too)
FEATURES = ["grid-2d", "early-return", "bf16", "debug", "keep-dims-all-axes", "minmax-number", "shift-mixed",
            "topk-1", "dot-fp16-acc"]
#: the ways a loop is written: ``for i in range``, ``while`` with a carried counter, ``tl.static_range``
LOOPS = ["for", "while", "static_range", "tl.range"]
LOAD_FORMS = ["plain", "plain", "offset-cast", "offset-bool", "reverse", "block-ptr"]


@dataclasses.dataclass
class Output:
    name: str
    ty: str
    want: np.ndarray           # flat, dtype NP[ty]
    err: np.ndarray | None     # flat float64 bound (floats)


@dataclasses.dataclass
class Kernel:
    seed: int
    source: str
    args: list                 # ("array", name, ndarray) | ("scalar", name, value)
    outputs: list[Output]
    grid: tuple[int, ...]
    meta: dict                 # constexpr keyword arguments
    tags: list[str]            # constructs used that bugs are known in, to classify a finding
    debug: bool = False        # launched with ``debug=True`` (bounds checks: results must not change)


#: block shapes: small ones by default, up to Triton's 128 x 128 tiles with ``large`` (issue 27's
#: compile-time proof; the models and the interpreter take longer on them)
SHAPES_2D = [(2, 4), (4, 8), (8, 4), (4, 16), (16, 16), (16, 32), (32, 16)]
LARGE_2D = [(32, 64), (64, 64), (64, 128), (128, 64), (128, 128)]
SIZES_1D, LARGE_1D = [8, 16, 32, 64], [128]  # 1-D values meet in outer products: 128 x 128 at most


class _Gen(BlockStatements):
    def __init__(self, seed: int, exclude: frozenset[str], large: bool = False):
        self.seed, self.exclude, self.large = seed, exclude, large
        self.r = np.random.default_rng(seed)
        self.two_d = self.r.random() < 0.3
        self.grid = (int(self.r.integers(1, 4)),)
        if "grid-2d" not in exclude and self.r.random() < 0.3:
            self.grid += (int(self.r.integers(1, 3)),)
        self.G = int(np.prod(self.grid))
        self.bf16 = "bf16" not in exclude and self.r.random() < 0.25
        self.types = TYPES + ["bf16"] * 3 if self.bf16 else TYPES
        self.lines: list[str] = []
        self.helpers: list[str] = []
        self.globals: list[str] = []
        self.pool: list[tuple[str, Val]] = []
        self.args: list = []
        self.params: list[str] = []
        self.n = 0
        self.tags: list[str] = []
        self.used: set[str] = set()
        self.int_args: list[tuple[str, int]] = []
        #: buffers of atomics: [line, ptr, type, want, err, initial contents] (want per program)
        self.inouts: list[list] = []

    # -- helpers ----------------------------------------------------------------------------------
    def choice(self, seq):
        return seq[int(self.r.integers(0, len(seq)))]

    def fresh(self, prefix: str = "v") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def emit(self, text: str, depth: int = 1) -> None:
        self.lines.append("    " * depth + text)

    def add(self, expr: str, v: Val, prefix: str = "v") -> tuple[str, Val]:
        name = self.fresh(prefix)
        self.emit(f"{name} = {expr}")
        self.pool.append((name, v))
        return name, v

    def random_array(self, t: str, size: int) -> np.ndarray:
        r = self.r
        if t == "int1":
            return r.random(size) < 0.5
        if M.is_float(t):
            scale = self.choice([1.0, 4.0, 100.0])
            a = (r.standard_normal(size) * scale).astype(NP[t])
            if r.random() < 0.3:
                a[r.random(size) < 0.1] = 0
            return a
        lo, hi = M.int_range(t)
        if r.random() < 0.5:
            lo, hi = max(lo, -20), min(hi, 20)
        draw = r.integers(lo, hi, size, endpoint=True, dtype=np.int64 if hi < 2**63 else np.uint64)
        return np.array([int(x) for x in draw], dtype=object).astype(NP[t])

    def literal(self, like: str):
        r = self.r
        if M.is_float(like) or r.random() < 0.15:
            return self.choice([0.5, 1.5, 2.0, -3.25, 0.125, 3.0])
        if like == "int1":
            return int(r.integers(0, 2))
        if r.random() < 0.2:  # near the edges of the types (Triton refuses those out of range)
            return int(self.choice([127, 128, 250, 255, 256, 1000, 40000, 70000, 2**31 - 1, 2**31, 2**40]))
        lo, hi = M.int_range(like)
        return int(r.integers(max(lo, -9), min(hi, 9), endpoint=True))

    # -- kernel frame ------------------------------------------------------------------------------
    def frame(self) -> None:
        G, r = self.G, self.r
        pid = Val("int32", (), np.arange(G, dtype=np.int32))
        if len(self.grid) == 1:
            self.emit("pid = tl.program_id(0)")
        else:   # program p is (p % G0, p // G0)
            G0 = self.grid[0]
            self.emit("pid0 = tl.program_id(0)")
            self.emit("pid1 = tl.program_id(1)")
            self.emit("pid = pid0 + pid1 * tl.num_programs(0)")
            self.pool += [("pid0", Val("int32", (), (np.arange(G) % G0).astype(np.int32))),
                          ("pid1", Val("int32", (), (np.arange(G) // G0).astype(np.int32)))]
            self.tags.append("grid-2d")
        self.pool.append(("pid", pid))
        if r.random() < 0.3:
            self.add(f"tl.num_programs({len(self.grid) - 1})", Val("int32", (), np.full(G, self.grid[-1], np.int32)),
                     "np")
        if self.two_d:
            self.BM, self.BN = self.choice(LARGE_2D if self.large else SHAPES_2D)
            self.meta = {"BM": self.BM, "BN": self.BN}
            rm = (np.arange(G)[:, None] * self.BM + np.arange(self.BM)).astype(np.int32)
            self.emit("rm = pid * BM + tl.arange(0, BM)")
            self.emit("rn = tl.arange(0, BN)")
            self.emit("offs = rm[:, None] * BN + rn[None, :]")
            self.pool += [("rm", Val("int32", (self.BM,), rm)),
                          ("rn", Val("int32", (self.BN,), np.tile(np.arange(self.BN, dtype=np.int32), (G, 1))))]
        else:
            self.B = int(self.choice(LARGE_1D if self.large else SIZES_1D))
            self.meta = {"BLOCK": self.B}
            self.size = G * self.B - int(r.integers(0, self.B))
            offs = (np.arange(G)[:, None] * self.B + np.arange(self.B)).astype(np.int32)
            self.offs = offs
            self.emit("offs = pid * BLOCK + tl.arange(0, BLOCK)")
            self.emit("mask = offs < n")
            self.pool.append(("offs", Val("int32", (self.B,), offs)))

    def load(self) -> None:
        t = self.choice(TYPES)
        ptr = self.fresh("x") + "_ptr"
        self.params.append(ptr)
        G, r = self.G, self.r
        if self.two_d:
            kind = self.choice(["tile", "tile", "row", "col"])
            BM, BN = self.BM, self.BN
            size = {"tile": G * BM * BN, "row": BN, "col": G * BM}[kind]
            data = self.random_array(t, size)
            self.args.append(("array", ptr, data))
            if kind == "tile" and "block-ptr" not in self.exclude and r.random() < 0.25:
                self.block_ptr_load(ptr, t, data)
            elif kind == "tile":
                self.add(f"tl.load({ptr} + offs)", Val(t, (BM, BN), data.reshape(G, BM, BN)), "a")
            elif kind == "row":
                self.add(f"tl.load({ptr} + rn)", Val(t, (BN,), np.tile(data, (G, 1))), "a")
            else:
                self.add(f"tl.load({ptr} + rm)", Val(t, (BM,), data.reshape(G, BM)), "a")
            return
        n, offs = self.size, self.offs
        data = self.random_array(t, n)
        self.args.append(("array", ptr, data))
        if M.is_float(t):
            other = self.choice([0.0, 1.5, -2.0])
        else:
            lo, hi = M.int_range(t)
            other = int(r.integers(max(lo, -9), min(hi, 9), endpoint=True))
            other = bool(other) if t == "int1" else other
        fill = NP[t](other)
        form = self.choice([f for f in LOAD_FORMS if f not in self.exclude] or ["plain"])
        if form == "block-ptr":
            self.block_ptr_load(ptr, t, data)
            return
        if form == "offset-bool" and n >= 2:
            k = int(r.integers(0, G * self.B + 1))
            idx = (offs >= k).astype(np.int64)
            self.add(f"tl.load({ptr} + (offs >= {k}))", Val(t, (self.B,), data[idx]), "a")
            self.tags.append("bool-offset")
            return
        idx = offs if form != "reverse" else n - 1 - offs
        vals = np.where(offs < n, data[np.clip(idx, 0, n - 1)], fill)
        index = "offs" if form != "reverse" else "(n - 1 - offs)"
        if form == "offset-cast":
            fits = [u for u in ("int8", "uint8", "int16", "uint16", "uint32", "int64")
                    if M.int_range(u)[1] >= G * self.B]
            u = self.choice(fits)
            index = f"offs.to({TL[u]})"
            if u in ("uint8", "uint16"):
                self.tags.append("narrow-unsigned-offset")
        self.add(f"tl.load({ptr} + {index}, mask=mask, other={other!r})", Val(t, (self.B,), vals.astype(NP[t])),
                 "a")

    def scalar_arg(self) -> None:
        name = self.fresh("s")
        self.params.append(name)
        if self.r.random() < 0.6:
            value = int(self.choice([-7, 0, 2, 3, 5, 12, 100, -100, 70000]))
            v = Val("int32", (), np.full(self.G, value, dtype=np.int32))
            self.int_args.append((name, value))
        else:
            value = float(self.choice([0.5, -1.25, 3.0, 1e3]))
            v = Val("fp32", (), np.full(self.G, value, dtype=np.float32), np.zeros(self.G))
        self.args.append(("scalar", name, value))
        self.pool.append((name, v))

    # -- statements --------------------------------------------------------------------------------
    def operand(self, allow_lit: bool = True, like: str = "int32"):
        if allow_lit and self.r.random() < 0.25:
            x = self.literal(like)
            return repr(x), M.lit(x)
        # favour recent values so that expressions nest
        k = len(self.pool)
        i = k - 1 - min(int(self.r.geometric(0.3)) - 1, k - 1)
        self.used.add(self.pool[i][0])
        return self.pool[i]

    def statement(self) -> None:
        g = self.G
        what = self.choice([k for k in STATEMENTS if k not in self.exclude])
        (xn, x) = self.operand(allow_lit=False)
        if what in ("bin", "div", "bit", "shift", "cmp", "minmax", "helper"):
            yn, y = self.operand(like=x.ty)
            op = {"bin": ["+", "-", "*"], "div": ["/", "//", "%"], "bit": ["&", "|", "^"], "shift": ["<<", ">>"],
                  "cmp": CMP, "minmax": ["max", "min"], "helper": ["+", "*", "-"]}[what]
            op = self.choice(op)
            other = [(n, v) for n, v in self.pool if not M.is_float(v.ty) and not M.is_float(x.ty)
                     and M.unsigned(v.ty) != M.unsigned(x.ty)]
            if what == "shift" and op == ">>" and other and self.r.random() < 0.5:
                # mixed signedness, the amount kept in range: x >> (y & 7)
                yn, y = self.choice(other)
                yn, y = f"({yn} & 7)", M.binary("&", y, M.lit(7), g)
            elif what == "shift" and not y.is_lit and self.r.random() < 0.5:
                y = M.lit(int(self.r.integers(0, 8)))
                yn = repr(y.lit)
            if what == "minmax":
                self.add(f"tl.{'maximum' if op == 'max' else 'minimum'}({xn}, {yn})", M.minmax(op, x, y, g))
            elif what == "helper":
                self.helper(op, xn, x, yn, y)
            else:
                self.add(f"{xn} {op} {yn}", M.binary(op, x, y, g))
            self.tag_binary(op, x, y)
            if what == "helper":
                self.tags.append("helper")
        elif what == "where":
            conds = [(n, v) for n, v in self.pool if v.ty == "int1"]
            if not conds or self.r.random() < 0.3:
                conds = [self.scalar_condition()]
            cn, c = self.choice(conds)
            yn, y = self.operand(like=x.ty)
            self.add(f"tl.where({cn}, {xn}, {yn})", M.where(c, x, y, g))
        elif what == "unary":
            op = self.choice(["-", "~", "abs"])
            self.add(f"tl.abs({xn})" if op == "abs" else f"{op}{xn}", M.unary(op, x, g))
            if op == "~" and x.ty in ("uint8", "uint16"):
                self.tags.append("invert-narrow-unsigned")
            if op == "~" and x.ty == "int1":
                self.tags.append("invert-bool")
        elif what == "math":
            op = self.choice(MATH)
            self.add(f"tl.{op}({xn})", M.unary(op, x, g))
        elif what == "cast":
            t = self.choice(self.types)
            a, e = M.cast_array(x.a, x.err, x.ty, t)
            self.add(f"{xn}.to({TL[t]})", Val(t, x.shape, a, e))
            self.tag_cast(x.ty, t)
        elif what in BLOCK_STATEMENTS:
            self.block_statement(what, xn, x)
        elif what in ("reduce", "sum-dtype"):
            if not x.shape:
                raise Reject("reduce of a scalar")
            op = "sum" if what == "sum-dtype" else self.choice(["sum", "max", "min"])
            dtype = self.choice(["int8", "int32", "uint8", "int64", "fp16", "fp32"]) if what == "sum-dtype" else None
            axis = int(self.r.integers(0, len(x.shape))) if self.r.random() < 0.8 else None
            keep = self.r.random() < 0.25
            if keep and axis is None:
                if "keep-dims-all-axes" in self.exclude:
                    raise Reject("excluded")
                self.tags.append("keep-dims-all-axes")
            if axis is None:   # Triton reshapes to one dimension and reduces that
                size = int(np.prod(x.shape))
                flat = Val(x.ty, (size,), x.a.reshape(g, size), None if x.err is None else x.err.reshape(g, size))
                v = M.reduce(op, flat, 0, g, dtype)
                shape = (1,) * len(x.shape) if keep else ()
            else:
                v = M.reduce(op, x, axis, g, dtype)
                shape = x.shape[:axis] + (1,) + x.shape[axis + 1:] if keep else v.shape
            v = Val(v.ty, shape, v.a.reshape((g,) + shape), None if v.err is None else v.err.reshape((g,) + shape))
            args = (f", axis={axis}" if axis is not None else "") + (", keep_dims=True" if keep else "")
            args += f", dtype={TL[dtype]}" if dtype else ""
            if dtype:
                self.tags.append("sum-dtype")
            self.add(f"tl.{op}({xn}{args})", v)
            if op != "sum" and M.bits(x.ty) < 32:
                self.tags.append("narrow-max-min")
            if op == "sum" and M.unsigned(x.ty) and M.bits(x.ty) < 32:
                self.tags.append("narrow-unsigned-sum")
        elif what == "expand":
            if len(x.shape) != 1:
                raise Reject("expand needs a vector")
            col = self.two_d and x.shape == (self.BM,) and self.BM != self.BN
            where_ = (slice(None), slice(None), None) if col else (slice(None), None, slice(None))
            spelled = (f"{xn}[:, None]", f"tl.expand_dims({xn}, 1)") if col else (f"{xn}[None, :]",
                                                                                  f"tl.expand_dims({xn}, 0)")
            self.add(self.choice(spelled),
                     Val(x.ty, x.a[where_].shape[1:], x.a[where_], None if x.err is None else x.err[where_]))
        elif what == "outer":
            self.outer(xn, x)
        elif what == "bitcast":
            same = [t for t in self.types if t != x.ty and t != "int1" and x.ty != "int1" and M.bits(t) == M.bits(x.ty)]
            if not same:
                raise Reject("no other type of this width")
            t = self.choice(same)
            self.add(f"{xn}.to({TL[t]}, bitcast=True)", M.bitcast(x, t))
        elif what == "full":
            t = self.choice(self.types)
            value = self.literal(t) if not M.is_float(t) else self.choice([0.0, 1.5, -2.25, 1e3])
            if not M.is_float(t) and isinstance(value, float) or M.unsigned(t) and value < 0:
                raise Reject("a literal of another kind")
            shape = (self.BM, self.BN) if self.two_d else (self.B,)
            dims = "(BM, BN)" if self.two_d else "(BLOCK,)"
            a, e = M.as_type(M.lit(value), t, shape, g)
            src = f"tl.zeros({dims}, {TL[t]})" if value == 0 else f"tl.full({dims}, {value!r}, {TL[t]})"
            self.add(src, Val(t, shape, a, e))
        elif what == "cdiv":
            yn, y = self.operand(like=x.ty)
            if M.is_float(x.ty) or M.is_float(y.ty):
                raise Reject("cdiv of floats")
            v = M.binary("//", M.binary("-", M.binary("+", x, y, g), M.lit(1), g), y, g)   # Triton's definition
            self.add(f"tl.cdiv({xn}, {yn})", v)
        elif what == "loop":
            self.loop(xn, x)
        elif what == "if":
            self.branch(xn, x)
        elif what == "mode":
            if not self.globals:
                self.globals.append('MODE = tl.constexpr("fast")')
            yn, y = self.operand(like=x.ty)
            v1, v2 = M.binary("+", x, y, g), M.binary("-", x, y, g)
            if (v1.ty, v1.shape) != (v2.ty, v2.shape):
                raise Reject("branches differ")
            name = self.fresh()
            self.tags.append("constexpr-string")
            self.tag_binary("+", x, y)
            self.emit('if MODE == "fast":')
            self.emit(f"{name} = {xn} + {yn}", 2)
            self.emit("else:")
            self.emit(f"{name} = {xn} - {yn}", 2)
            self.pool.append((name, v1))

    def loop(self, xn: str, x: Val) -> None:
        g = self.G
        t = self.choice([x.ty, "int32", "int64"] if not M.is_float(x.ty) else [x.ty, "fp32"])
        t = "int32" if t == "int1" else t
        start, step = (int(self.r.integers(0, 3)), int(self.r.integers(1, 4))) if self.r.random() < 0.3 else (0, 1)
        bound = stop = int(self.r.integers(start + 1, start + 5 * step + 1))
        ops = ["+", "-", "^"] if not M.is_float(t) else ["+", "-"]   # not *: i = 0 would zero acc
        op, op_odd = self.choice(ops), self.choice(ops)
        nested = self.r.random() < 0.3          # an if on the counter's parity inside the body
        inner = self.choice(["+", "*"])
        acc_a, acc_e = M.cast_array(x.a, x.err, x.ty, t)
        acc = Val(t, x.shape, acc_a, acc_e)
        form = self.choice([f for f in LOOPS if f not in self.exclude] or ["for"])
        counts = [(n, c) for n, c in self.int_args if c <= 12]
        if form != "static_range" and counts and self.r.random() < 0.4:   # a trip count known at run time
            bound, stop = self.choice(counts)
            self.tags.append("loop-runtime-count")
        for i in range(start, stop, step):  # static_range's i is a constexpr (weakly typed); the others' int32
            iv = M.lit(i) if form == "static_range" else Val("int32", (), np.full(g, i, dtype=np.int32))
            new = M.binary(op_odd if nested and i % 2 else op, acc, M.binary(inner, x, iv, g), g)
            a, e = M.cast_array(new.a, new.err, new.ty, t)
            acc = Val(t, new.shape, a, e)
        if acc.shape != x.shape:
            raise Reject("loop-carried shape changes")
        name = self.fresh("acc")
        if not M.is_float(x.ty) and M.bits(x.ty) < 32 and M.bits(t) >= 32:
            self.tags.append("loop-variable")
        self.emit(f"{name} = {xn}.to({TL[t]})")
        if form == "while":
            self.emit(f"i = {start}")
            self.emit(f"while i < {bound}:")
        else:
            bounds = f"{bound}" if (start, step) == (0, 1) else f"{start}, {bound}" + (f", {step}" if step > 1 else "")
            self.emit(f"for i in {'range' if form == 'for' else 'tl.' + form.removeprefix('tl.')}({bounds}):")
        body = [f"{name} = ({name} {op} ({xn} {inner} i)).to({TL[t]})"]
        if nested:
            body = (["if i % 2 == 0:", "    " + body[0], "else:"] +
                    [f"    {name} = ({name} {op_odd} ({xn} {inner} i)).to({TL[t]})"])
            self.tags.append("loop-nested-if")
        for line in body:
            self.emit(line, 2)
        if form == "while":
            self.emit(f"i += {step}", 2)
        self.tags.append(f"loop-{form}")
        self.pool.append((name, acc))

    def branch(self, xn: str, x: Val) -> None:
        g = self.G
        yn, y = self.operand(like=x.ty)
        op1, op2 = self.choice(["+", "-", "*"]), self.choice(["+", "-", "*", "max"])
        v1 = M.binary(op1, x, y, g)
        v2 = M.minmax("max", x, y, g) if op2 == "max" else M.binary(op2, x, y, g)
        t = v1.ty
        self.tag_binary(op1, x, y)
        self.tag_binary(op2, x, y)
        a2, e2 = M.cast_array(v2.a, v2.err, v2.ty, t)
        if v1.shape != v2.shape:
            raise Reject("branches differ in shape")
        cond_src, c1 = self.scalar_condition()
        c = c1.a.reshape((g,) + (1,) * len(v1.shape))
        a = np.where(c, v1.a, a2)
        e = None if v1.err is None else np.where(c, v1.err, e2)
        name = self.fresh()
        self.emit(f"if {cond_src}:")
        self.emit(f"{name} = ({xn} {op1} {yn}).to({TL[t]})", 2)
        self.emit("else:")
        second = f"tl.maximum({xn}, {yn})" if op2 == "max" else f"{xn} {op2} {yn}"
        self.emit(f"{name} = ({second}).to({TL[t]})", 2)
        self.pool.append((name, Val(t, v1.shape, a, e)))

    def scalar_condition(self) -> tuple[str, Val]:
        """A condition that is one bool per program: on the program ids, perhaps under ``not``."""
        g = self.G
        p = np.arange(g)
        forms = [("pid % 2 == 0", p % 2 == 0), ("pid > 0", p > 0),
                 ("pid == tl.num_programs(0) - 1", p == self.grid[0] - 1)]
        if len(self.grid) > 1:
            forms.append(("pid1 == 0", p // self.grid[0] == 0))
        src, c = self.choice(forms)
        if self.r.random() < 0.35:
            src, c = f"not ({src})", ~c
        return src, Val("int1", (), c)

    def helper(self, op: str, xn: str, x: Val, yn: str, y: Val) -> None:
        """``x op y`` through a ``@jit`` helper; sometimes one returning a tuple of two results."""
        g = self.G
        h = self.fresh("_helper")
        if self.r.random() < 0.5:
            self.helpers.append(f"@triton.jit\ndef {h}(a, b):\n    return a {op} b\n")
            self.add(f"{h}({xn}, {yn})", M.binary(op, x, y, g))
            return
        op2 = self.choice(["+", "-", "*", "max"])
        v2 = M.minmax("max", x, y, g) if op2 == "max" else M.binary(op2, x, y, g)
        self.tag_binary(op2, x, y)
        second = "tl.maximum(a, b)" if op2 == "max" else f"a {op2} b"
        self.helpers.append(f"@triton.jit\ndef {h}(a, b):\n    return a {op} b, {second}\n")
        n1, n2 = self.fresh(), self.fresh()
        self.emit(f"{n1}, {n2} = {h}({xn}, {yn})")
        self.pool += [(n1, M.binary(op, x, y, g)), (n2, v2)]
        self.tags.append("helper-tuple")

    def outer(self, xn: str, x: Val) -> None:
        """A reduction of ``x[:, None] op y[None, :]``: a 2-D block inside a 1-D kernel."""
        g = self.G
        yn, y = self.operand(allow_lit=False)
        if self.two_d or x.shape != (self.B,) or y.shape != (self.B,):
            raise Reject("outer needs two vectors of a 1-D kernel")
        op, red = self.choice(["+", "-", "*"]), self.choice(["sum", "max", "min"])
        axis = int(self.r.integers(0, 2))
        col = Val(x.ty, (self.B, 1), x.a[:, :, None], None if x.err is None else x.err[:, :, None])
        row = Val(y.ty, (1, self.B), y.a[:, None, :], None if y.err is None else y.err[:, None, :])
        v = M.reduce(red, M.binary(op, col, row, g), axis, g)
        self.tag_binary(op, x, y)
        self.add(f"tl.{red}({xn}[:, None] {op} {yn}[None, :], axis={axis})", v)

    def tag_binary(self, op: str, x: Val, y: Val) -> None:
        """Tag what known bugs involve; refuse what ``--without`` leaves out (the caller rolls back)."""
        kind = ("minmax-number" if op in ("max", "min") and (x.is_lit or y.is_lit) else
                "shift-mixed" if op == ">>" and not y.is_lit and M.unsigned(x.ty) != M.unsigned(y.ty) else None)
        if kind in self.exclude:
            raise Reject("excluded")
        if kind:
            self.tags.append(kind)
        if op in ("/", "%") and "fp16" in (x.ty, y.ty) and "fp64" not in (x.ty, y.ty):
            self.tags.append("fp16-div")
        if op in ("+", "-") and x.ty == y.ty == "int1" and not y.is_lit:
            self.tags.append("bool-arith")

    def tag_cast(self, src: str, dst: str) -> None:
        if src == "fp64" and dst == "fp16":
            self.tags.append("fp64-to-fp16")
        if not M.is_float(src) and dst == "fp16":
            self.tags.append("int-to-fp16")

    # -- outputs -----------------------------------------------------------------------------------
    def storable(self, shape: tuple[int, ...]) -> bool:
        """Whether ``store`` can write a value of ``shape``: Triton broadcasts it to the pointers'
        shape, which must contain it (a column of a 2-D kernel is made ``[:, None]`` first)."""
        full = (self.BM, self.BN) if self.two_d else (self.B,)
        if self.two_d and shape == (self.BM,):
            shape = (self.BM, 1)
        try:
            return not shape or np.broadcast_shapes(shape, full) == full
        except ValueError:
            return False

    def write(self, ptr: str, vn: str, v: Val, t: str, block: bool):
        """The statement storing ``v`` as ``t`` through ``ptr`` (at ``offs`` when ``block``, else one
        element per program) and what it writes: (line, want, err), arrays of (programs, elements)."""
        a, e = M.cast_array(v.a, v.err, v.ty, t)
        G = self.G
        if not block:
            return f"tl.store({ptr} + pid, {vn})", a.reshape(G, 1), None if e is None else e.reshape(G, 1)
        if self.two_d and v.shape == (self.BM,):
            vn = f"{vn}[:, None]"
            a, e = a[:, :, None], None if e is None else e[:, :, None]
        full = (G, self.BM, self.BN) if self.two_d else (G, self.B)
        pad = (G,) + (1,) * (len(full) - a.ndim) + a.shape[1:]
        want = np.broadcast_to(a.reshape(pad), full).reshape(G, -1)
        err = None if e is None else np.broadcast_to(e.reshape(pad), full).reshape(G, -1)
        line = f"tl.store({ptr} + offs, {vn})" if self.two_d else f"tl.store({ptr} + offs, {vn}, mask=mask)"
        return line, want, err

    def store(self, vn: str, v: Val) -> list:
        """Store ``v`` (perhaps converted to another type) to a new output: [ptr, type, block, want, err]."""
        t = "fp32" if v.ty == "bf16" else v.ty   # numpy has no bf16 arrays: bf16 results are stored as fp32
        if self.r.random() < 0.3:
            t2 = self.choice(TYPES)
            if t2 == "int1" and v.ty != "int1":  # Triton stores through an int1 pointer as int8
                t2 = v.ty if v.ty != "bf16" else "fp32"
            try:
                M.cast_array(v.a, v.err, v.ty, t2)
                t = t2
            except Reject:
                pass
        self.tag_cast(v.ty, t)
        ptr = self.fresh("out") + "_ptr"
        self.params.append(ptr)
        line, want, err = self.write(ptr, vn, v, t, bool(v.shape))
        self.emit(line)
        return [ptr, t, bool(v.shape), want, err]

    def early_return(self, at: int, known: int, outs: list) -> None:
        """``if <cond>: <store other values>; return`` inserted at line ``at``, storing values among
        the first ``known`` of the pool: the programs taking it skip everything after it."""
        cond_src, c = self.scalar_condition()
        lines = [f"if {cond_src}:"]
        for out in outs:
            ptr, t, block, want, err = out
            cands = [(n, v) for n, v in self.pool[:known] if self.storable(v.shape) and (block or not v.shape)]
            for i in self.r.permutation(len(cands)):
                try:
                    line, alt, alt_err = self.write(ptr, *cands[int(i)], t, block)
                    break
                except Reject:
                    continue
            else:
                return
            lines.append("    " + line)
            pick = c.a[:, None]
            out[3] = np.where(pick, alt, want)
            if err is not None or alt_err is not None:
                out[4] = np.where(pick, 0 if alt_err is None else alt_err, 0 if err is None else err)
        self.lines[at:at] = ["    " + x for x in lines + ["    return"]]
        self.tags.append("early-return")
        for buf in self.inouts:  # the programs that return skip the atomics after the return
            if buf[0] >= at:
                buf[3] = np.where(c.a[:, None], buf[5], buf[3])
                buf[4] = None if buf[4] is None else np.where(c.a[:, None], 0, buf[4])

    def inout(self, buf: list) -> Output:
        """The final contents of an atomics' buffer (already among the arguments)."""
        _, ptr, t, want, err, _ = buf
        return Output(ptr, t, np.ascontiguousarray(want.ravel()), None if err is None else
                      np.ascontiguousarray(err.ravel()))

    def output(self, out: list) -> Output:
        ptr, t, block, want, err = out
        want, err = want.ravel(), None if err is None else err.ravel()
        if block and not self.two_d:
            want, err = want[:self.size], None if err is None else err[:self.size]
        self.args.append(("output", ptr, (want.size, t)))
        return Output(ptr, t, np.ascontiguousarray(want), None if err is None else np.ascontiguousarray(err))


def generate(seed: int, exclude: frozenset[str] = frozenset(), statements: tuple[int, int] = (3, 10),
             large: bool = False) -> Kernel:
    """The kernel of ``seed`` (without the statement kinds and features in ``exclude``; on blocks up
    to 128 x 128 where ``large``): the same source, arguments and expected outputs every time."""
    g = _Gen(seed, exclude, large)
    g.frame()
    for _ in range(int(g.r.integers(1, 4))):
        g.load()
    if g.bf16:   # bf16 values come from conversions in the kernel (there are no bf16 arrays to load)
        xn, x = g.choice([p for p in g.pool if p[1].shape])
        g.add(f"{xn}.to(tl.bfloat16)", Val("bf16", x.shape, *M.cast_array(x.a, x.err, x.ty, "bf16")), "b")
    for _ in range(int(g.r.integers(0, 3))):
        g.scalar_arg()
    count = int(g.r.integers(*statements, endpoint=True))
    ret_at = int(g.r.integers(0, count + 1)) if "early-return" not in exclude and g.r.random() < 0.25 else -1
    ret_mark = None
    done = tries = 0
    while done < count and tries < 20 * count:
        if done == ret_at and ret_mark is None:
            ret_mark = (len(g.lines), len(g.pool))
        tries += 1
        kept = (g.lines, g.helpers, g.pool, g.globals, g.tags, g.args, g.params, g.inouts)
        mark = [len(x) for x in kept]
        try:
            g.statement()
            done += 1
        except Reject:
            for x, n in zip(kept, mark):
                del x[n:]
    # store the last value and up to two others that nothing used, so that most statements count
    storable = [(n, v) for n, v in g.pool if g.storable(v.shape)]
    unused = [p for p in storable[:-1] if p[0] not in g.used] or storable[:-1]
    picks = [storable[-1]] + [unused[int(i)] for i in g.r.permutation(len(unused))[:2]]
    outs = [g.store(n, v) for n, v in picks]
    if ret_mark is not None:
        g.early_return(*ret_mark, outs)
    outputs = [g.inout(b) for b in g.inouts] + [g.output(o) for o in outs]
    params = g.params + ([] if g.two_d else ["n"]) + [f"{k}: tl.constexpr" for k in g.meta]
    src = ["import tritium as triton", "import tritium.language as tl", ""] + g.globals + [""] + g.helpers + [
        "@triton.jit", f"def kernel({', '.join(params)}):"] + g.lines
    args = list(g.args) + ([] if g.two_d else [("scalar", "n", g.size)])
    source = "\n".join(src) + "\n"
    debug = "debug" not in exclude and g.r.random() < 0.2
    tags = set(g.tags) | ({"bf16"} if "tl.bfloat16" in source else set()) | ({"debug"} if debug else set())
    return Kernel(seed, source, args, outputs, g.grid, g.meta, sorted(tags), debug)
