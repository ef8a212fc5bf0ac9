"""Random kernels inside tritium's language subset, each with its expected outputs.

``generate(seed)`` builds a kernel statement by statement: every statement is evaluated on the
numpy model (``fuzz_model``) as it is chosen, so an operation Triton refuses or whose inputs would
be undefined behaviour (division by zero, INT_MIN // -1, shifts past the width, float to int out of
range, NaN into min/max) is rejected and another is drawn. The result is the kernel's source (a
module of its own: ``@jit`` needs a source file), its arguments, and the outputs with error bounds.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import fuzz_model as M
from .fuzz_model import FLOATS, INTS, NP, TL, Reject, Val

CMP = ["<", "<=", ">", ">=", "==", "!="]
MATH = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "floor", "ceil"]
TYPES = INTS + FLOATS
#: statement kinds, repeated by weight, and the ways a 1-D kernel addresses a load (``offs``,
#: ``offs.to(<narrow int>)``, ``offs >= k``, ``n - 1 - offs``); ``generate(exclude=...)``
#: (``--without``) leaves some out, e.g. to look past a known bug
STATEMENTS = (["bin"] * 6 + ["div"] * 2 + ["bit"] * 2 + ["shift", "cmp", "cmp", "where", "unary", "math", "cast",
              "cast", "minmax", "reduce", "loop", "if", "expand"] * 2 + ["helper", "mode"])
LOAD_FORMS = ["plain", "plain", "offset-cast", "offset-bool", "reverse"]


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
    grid: int
    meta: dict                 # constexpr keyword arguments
    tags: list[str]            # constructs used that bugs are known in, to classify a finding


class _Gen:
    def __init__(self, seed: int, exclude: frozenset[str]):
        self.seed, self.exclude = seed, exclude
        self.r = np.random.default_rng(seed)
        self.two_d = self.r.random() < 0.3
        self.G = int(self.r.integers(1, 4))
        self.lines: list[str] = []
        self.helpers: list[str] = []
        self.globals: list[str] = []
        self.pool: list[tuple[str, Val]] = []
        self.args: list = []
        self.params: list[str] = []
        self.n = 0
        self.tags: list[str] = []
        self.used: set[str] = set()

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
        self.emit("pid = tl.program_id(0)")
        self.pool.append(("pid", pid))
        if self.two_d:
            self.BM, self.BN = self.choice([(2, 4), (4, 8), (8, 4), (4, 16)])
            self.meta = {"BM": self.BM, "BN": self.BN}
            rm = (np.arange(G)[:, None] * self.BM + np.arange(self.BM)).astype(np.int32)
            self.emit("rm = pid * BM + tl.arange(0, BM)")
            self.emit("rn = tl.arange(0, BN)")
            self.emit("offs = rm[:, None] * BN + rn[None, :]")
            self.pool += [("rm", Val("int32", (self.BM,), rm)),
                          ("rn", Val("int32", (self.BN,), np.tile(np.arange(self.BN, dtype=np.int32), (G, 1))))]
        else:
            self.B = int(self.choice([8, 16, 32, 64]))
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
            if kind == "tile":
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
            if what == "shift" and not y.is_lit and self.r.random() < 0.5:
                y = M.lit(int(self.r.integers(0, 8)))
                yn = repr(y.lit)
            if what == "minmax":
                self.add(f"tl.{'maximum' if op == 'max' else 'minimum'}({xn}, {yn})", M.minmax(op, x, y, g))
            elif what == "helper":
                h = self.fresh("_helper")
                self.helpers.append(f"@triton.jit\ndef {h}(a, b):\n    return a {op} b\n")
                self.add(f"{h}({xn}, {yn})", M.binary(op, x, y, g))
            else:
                self.add(f"{xn} {op} {yn}", M.binary(op, x, y, g))
            self.tag_binary(op, x, y)
            if what == "helper":
                self.tags.append("helper")
        elif what == "where":
            conds = [(n, v) for n, v in self.pool if v.ty == "int1"]
            if not conds:
                raise Reject("no condition yet")
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
            t = self.choice(TYPES)
            a, e = M.cast_array(x.a, x.err, x.ty, t)
            self.add(f"{xn}.to({TL[t]})", Val(t, x.shape, a, e))
            self.tag_cast(x.ty, t)
        elif what == "reduce":
            if not x.shape:
                raise Reject("reduce of a scalar")
            op = self.choice(["sum", "max", "min"])
            axis = int(self.r.integers(0, len(x.shape)))
            self.add(f"tl.{op}({xn}, axis={axis})", M.reduce(op, x, axis, g))
            if op != "sum" and M.bits(x.ty) < 32:
                self.tags.append("narrow-max-min")
            if op == "sum" and M.unsigned(x.ty) and M.bits(x.ty) < 32:
                self.tags.append("narrow-unsigned-sum")
        elif what == "expand":
            if len(x.shape) != 1:
                raise Reject("expand needs a vector")
            col = self.two_d and x.shape == (self.BM,) and self.BM != self.BN
            where_ = (slice(None), slice(None), None) if col else (slice(None), None, slice(None))
            self.add(f"{xn}[:, None]" if col else f"{xn}[None, :]",
                     Val(x.ty, x.a[where_].shape[1:], x.a[where_], None if x.err is None else x.err[where_]))
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
        trips = int(self.r.integers(1, 6))
        op = self.choice(["+", "-", "^"] if not M.is_float(t) else ["+", "-"])  # not *: i = 0 would zero acc
        inner = self.choice(["+", "*"])
        acc_a, acc_e = M.cast_array(x.a, x.err, x.ty, t)
        acc = Val(t, x.shape, acc_a, acc_e)
        for i in range(trips):
            iv = Val("int32", (), np.full(g, i, dtype=np.int32))
            step = M.binary(op, acc, M.binary(inner, x, iv, g), g)
            a, e = M.cast_array(step.a, step.err, step.ty, t)
            acc = Val(t, step.shape, a, e)
        if acc.shape != x.shape:
            raise Reject("loop-carried shape changes")
        name = self.fresh("acc")
        if not M.is_float(x.ty) and M.bits(x.ty) < 32 and M.bits(t) >= 32:
            self.tags.append("loop-variable")
        self.emit(f"{name} = {xn}.to({TL[t]})")
        self.emit(f"for i in range({trips}):")
        self.emit(f"{name} = ({name} {op} ({xn} {inner} i)).to({TL[t]})", 2)
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
        cond_src, cond = self.choice([("pid % 2 == 0", np.arange(g) % 2 == 0), ("pid > 0", np.arange(g) > 0)])
        c = cond.reshape((g,) + (1,) * len(v1.shape))
        a = np.where(c, v1.a, a2)
        e = None if v1.err is None else np.where(c, v1.err, e2)
        name = self.fresh()
        self.emit(f"if {cond_src}:")
        self.emit(f"{name} = ({xn} {op1} {yn}).to({TL[t]})", 2)
        self.emit("else:")
        second = f"tl.maximum({xn}, {yn})" if op2 == "max" else f"{xn} {op2} {yn}"
        self.emit(f"{name} = ({second}).to({TL[t]})", 2)
        self.pool.append((name, Val(t, v1.shape, a, e)))

    def tag_binary(self, op: str, x: Val, y: Val) -> None:
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

    def store(self, vn: str, v: Val) -> Output:
        t = v.ty
        if self.r.random() < 0.3:
            t2 = self.choice(TYPES)
            if t2 == "int1" and v.ty != "int1":  # Triton stores through an int1 pointer as int8
                t2 = v.ty
            try:
                M.cast_array(v.a, v.err, v.ty, t2)
                t = t2
            except Reject:
                pass
        a, e = M.cast_array(v.a, v.err, v.ty, t)
        self.tag_cast(v.ty, t)
        ptr = self.fresh("out") + "_ptr"
        self.params.append(ptr)
        G = self.G
        if not v.shape:
            self.emit(f"tl.store({ptr} + pid, {vn})")
            want, err = a.reshape(G), None if e is None else e.reshape(G)
        else:
            if self.two_d and v.shape == (self.BM,):
                vn = f"{vn}[:, None]"
                a, e = a[:, :, None], None if e is None else e[:, :, None]
            full = (G, self.BM, self.BN) if self.two_d else (G, self.B)
            pad = (G,) + (1,) * (len(full) - a.ndim) + a.shape[1:]
            want = np.broadcast_to(a.reshape(pad), full).ravel()
            err = None if e is None else np.broadcast_to(e.reshape(pad), full).ravel()
            if self.two_d:
                self.emit(f"tl.store({ptr} + offs, {vn})")
            else:
                self.emit(f"tl.store({ptr} + offs, {vn}, mask=mask)")
                want, err = want[:self.size], None if err is None else err[:self.size]
        self.args.append(("output", ptr, (want.size, t)))
        return Output(ptr, t, np.ascontiguousarray(want), None if err is None else np.ascontiguousarray(err))


def generate(seed: int, exclude: frozenset[str] = frozenset(), statements: tuple[int, int] = (3, 10)) -> Kernel:
    """The kernel of ``seed`` (without the statement kinds in ``exclude``): the same source,
    arguments and expected outputs every time."""
    g = _Gen(seed, exclude)
    g.frame()
    for _ in range(int(g.r.integers(1, 4))):
        g.load()
    for _ in range(int(g.r.integers(0, 3))):
        g.scalar_arg()
    count = int(g.r.integers(*statements, endpoint=True))
    done = tries = 0
    while done < count and tries < 20 * count:
        tries += 1
        mark = (len(g.lines), len(g.helpers), len(g.pool), len(g.globals), len(g.tags))
        try:
            g.statement()
            done += 1
        except Reject:
            del g.lines[mark[0]:], g.helpers[mark[1]:], g.pool[mark[2]:], g.globals[mark[3]:], g.tags[mark[4]:]
    # store the last value and up to two others that nothing used, so that most statements count
    storable = [(n, v) for n, v in g.pool if g.storable(v.shape)]
    unused = [p for p in storable[:-1] if p[0] not in g.used] or storable[:-1]
    picks = [storable[-1]] + [unused[int(i)] for i in g.r.permutation(len(unused))[:2]]
    outputs = [g.store(n, v) for n, v in picks]
    params = g.params + ([] if g.two_d else ["n"]) + [f"{k}: tl.constexpr" for k in g.meta]
    src = ["import tritium as triton", "import tritium.language as tl", ""] + g.globals + [""] + g.helpers + [
        "@triton.jit", f"def kernel({', '.join(params)}):"] + g.lines
    args = list(g.args) + ([] if g.two_d else [("scalar", "n", g.size)])
    return Kernel(seed, "\n".join(src) + "\n", args, outputs, g.G, g.meta, sorted(set(g.tags)))
