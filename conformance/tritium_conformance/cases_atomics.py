"""Conformance cases of the atomics (``tl.atomic_add`` ... ``tl.atomic_xchg``, ``tl.atomic_cas``) and
their kernels.

References are exact: the programs of a launch may run in any order and at once, so a case checks
only what every order gives. Where each program owns its elements, the old values are the initial
ones and the results a plain elementwise op. Where programs contend for elements, the final values
of commutative ops are checked (integer sums exactly, float sums within a tolerance), an exchange
is checked as a permutation (the old values and the final one are the initial value and the values
written, in some order), a counter's old values as a permutation of 0..n-1, and locks by the sums
the critical sections build. Old values where ``mask`` is false are unspecified (Triton leaves
them undefined), so they are never stored: those elements keep their poison.
"""

from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl

from .suite import Device, Output, cases, rng_for

NP = {"int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64, "fp16": np.float16,
      "fp32": np.float32, "fp64": np.float64}
POISON = 77  # what unwritten outputs hold


# -- kernels ----------------------------------------------------------------------------------------
@triton.jit
def _apply(ptr, val, mask, OP: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr):
    if OP == "add":
        old = tl.atomic_add(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
    elif OP == "max":
        old = tl.atomic_max(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
    elif OP == "min":
        old = tl.atomic_min(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
    elif OP == "and":
        old = tl.atomic_and(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
    elif OP == "or":
        old = tl.atomic_or(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
    elif OP == "xor":
        old = tl.atomic_xor(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
    else:
        old = tl.atomic_xchg(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
    return old


@triton.jit
def rmw_kernel(x_ptr, v_ptr, old_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr, SHARED: tl.constexpr,
               SEM: tl.constexpr, SCOPE: tl.constexpr):
    """Program p combines v[p, :n] into x[:n] (SHARED: every program the same elements) or into its own
    x[p, :n], and stores the old values."""
    pid = tl.program_id(0) + tl.num_programs(0) * (tl.program_id(1) + tl.num_programs(1) * tl.program_id(2))
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    row = pid * n + offs
    target = offs if SHARED else row
    old = _apply(x_ptr + target, tl.load(v_ptr + row, mask=mask), mask, OP, SEM, SCOPE)
    tl.store(old_ptr + row, old, mask=mask)


@triton.jit
def rmw_2d_kernel(x_ptr, v_ptr, old_ptr, OP: tl.constexpr, R: tl.constexpr, C: tl.constexpr):
    """A 2-D block of pointers, one program per block."""
    base = tl.program_id(0) * R * C
    offs = base + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    old = _apply(x_ptr + offs, tl.load(v_ptr + offs), None, OP, None, None)
    tl.store(old_ptr + offs, old)


@triton.jit
def rows_add_kernel(x_ptr, v_ptr, R: tl.constexpr, C: tl.constexpr):
    """Every element of row r of a 2-D block adds into x[r]: one address held by many lanes."""
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    v = tl.load(v_ptr + tl.program_id(0) * R * C + r[:, None] * C + c[None, :])
    tl.atomic_add(x_ptr + r[:, None] + c[None, :] * 0, v)


@triton.jit
def scalar_ptr_kernel(x_ptr, v_ptr, BLOCK: tl.constexpr):
    """A scalar pointer with a block of values: each value is added to the one element."""
    tl.atomic_add(x_ptr, tl.load(v_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)))


@triton.jit
def method_kernel(x_ptr, v_ptr, old_ptr, BLOCK: tl.constexpr):
    """The tensor methods: ``ptr.atomic_add(val)`` and ``ptr.atomic_cas(cmp, val)``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    p = x_ptr + offs
    old = p.atomic_add(tl.load(v_ptr + offs))
    p.atomic_cas(old, old)
    tl.store(old_ptr + offs, old)


@triton.jit
def counter_kernel(counter_ptr, old_ptr, OP: tl.constexpr):
    """A scalar atomic per program (grid of any rank); program p stores the old value it saw."""
    pid = tl.program_id(0) + tl.num_programs(0) * (tl.program_id(1) + tl.num_programs(1) * tl.program_id(2))
    if OP == "add":
        old = tl.atomic_add(counter_ptr, 1)
    else:  # an increment as a compare-and-swap loop
        cur = tl.atomic_add(counter_ptr, 0)
        seen = tl.atomic_cas(counter_ptr, cur, cur + 1)
        while seen != cur:
            cur = seen
            seen = tl.atomic_cas(counter_ptr, cur, cur + 1)
        old = cur
    tl.store(old_ptr + pid, old)


@triton.jit
def loop_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Atomics in a loop and a branch, their old values carried by the loop (one program)."""
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.int32)
    for i in range(n):
        acc += tl.atomic_add(x_ptr + offs, offs + i, mask=offs < BLOCK - 4)
        if i % 2 == 0:
            acc += tl.atomic_max(x_ptr + BLOCK, i)
    tl.store(out_ptr + offs, acc)


@triton.jit
def cas_kernel(x_ptr, cmp_ptr, v_ptr, old_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    old = tl.atomic_cas(x_ptr + offs, tl.load(cmp_ptr + offs), tl.load(v_ptr + offs))
    tl.store(old_ptr + offs, old)


@triton.jit
def lock_kernel(partial_ptr, sums_ptr, locks_ptr, n, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    """Tutorial 05's accumulation: program p adds its row into sums[p % GROUP] under a spin lock
    (``atomic_cas``/``atomic_xchg``); the group's first writer stores instead of adding."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    row = tl.load(partial_ptr + pid * n + offs, mask=mask)
    lock_id = pid % GROUP
    lock = locks_ptr + lock_id
    count = lock + GROUP
    out = sums_ptr + lock_id * n + offs
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    first = tl.load(count) == 0
    tl.debug_barrier()  # every thread has read the count before one of them sets it
    if first:
        tl.atomic_xchg(count, 1)
    else:
        row += tl.load(out, mask=mask)
    tl.store(out, row, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@triton.jit
def exclusion_kernel(x_ptr, lock_ptr, reps, N: tl.constexpr):
    """Every program increments all of x ``reps`` times, non-atomically, under one lock."""
    offs = tl.arange(0, N)
    while tl.atomic_cas(lock_ptr, 0, 1, sem="acquire") == 1:
        pass
    for _ in range(reps):
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
    tl.debug_barrier()
    tl.atomic_xchg(lock_ptr, 0, sem="release")


# -- references -------------------------------------------------------------------------------------
def _float_key(x: np.ndarray) -> np.ndarray:
    """Triton's order of floats in atomic max/min, as integers: the bit pattern, negative values
    reversed (so -0.0 < +0.0)."""
    bits = x.view(np.dtype(f"i{x.itemsize}")).astype(object)
    top = 1 << (8 * x.itemsize - 1)
    return np.array([b if b >= 0 else -1 - (b + top) for b in bits.ravel()], dtype=object).reshape(x.shape)


def combine(op: str, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``x op v`` elementwise as one atomic leaves it, exactly."""
    t = x.dtype
    if op == "xchg":
        return v.copy()
    if t.kind == "f":
        if op == "add":
            return (x.astype(np.float64) + v.astype(np.float64)).astype(t)
        pick_v = _float_key(v) > _float_key(x) if op == "max" else _float_key(v) < _float_key(x)
        return np.where(pick_v.astype(bool), v, x)
    fn = {"add": lambda a, b: a + b, "max": max, "min": min, "and": lambda a, b: a & b,
          "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}[op]
    info = np.iinfo(t)
    span = int(info.max) - int(info.min) + 1
    out = [(fn(int(a), int(b)) - int(info.min)) % span + int(info.min) for a, b in zip(x.ravel(), v.ravel())]
    return np.array(out, dtype=t).reshape(x.shape)


def _values(rng, dtype: str, op: str, shape) -> np.ndarray:
    t = NP[dtype]
    if dtype.startswith("fp"):
        x = rng.integers(-40, 40, shape).astype(np.float64) / 4  # exact in fp16
        if op in ("max", "min"):  # both zeros, and values of either sign
            flat = x.reshape(-1)
            flat[:6] = [0.0, -0.0, 0.0, -0.0, -3.0, 2.5][:flat.size]
        return x.astype(t)
    info = np.iinfo(t)
    lo, hi = (0, 1000) if op == "add" and info.min == 0 else (int(info.min), int(info.max))
    return rng.integers(lo, hi, shape, dtype=t, endpoint=True)


def _poisoned(dev: Device, shape, dtype) -> object:
    return dev.full(shape, POISON, dtype)


# -- distinct elements: old values and results --------------------------------------------------------
RMW_DTYPES = {
    "add": ["int32", "uint32", "int64", "uint64", "fp16", "fp32", "fp64"],
    "max": ["int32", "uint32", "int64", "fp32", "fp64"],
    "min": ["int32", "uint64", "int64", "fp32", "fp64"],
    "and": ["int32", "int64"], "or": ["uint32", "int64"], "xor": ["int32", "uint64"],
    "xchg": ["int32", "fp32", "fp64"],
}
RMW_CASES = {f"{op}-{dtype}": (op, dtype) for op, dtypes in RMW_DTYPES.items() for dtype in dtypes}


def _rmw_distinct(dev: Device, op: str, dtype: str, n: int, block: int, programs: int, sem=None, scope=None,
                  case: str = "") -> list[Output]:
    rng = rng_for(case)
    t = NP[dtype]
    x0, v = _values(rng, dtype, op, (programs, n)), _values(rng, dtype, op, (programs, n))
    x, old = dev.to_device(x0), _poisoned(dev, (programs, n), t)
    dev.launch(rmw_kernel, (programs,), x, dev.to_device(v), old, n, OP=op, BLOCK=block, SHARED=False,
               SEM=sem, SCOPE=scope)
    return [Output("old", dev.to_host(old), x0), Output("x", dev.to_host(x), combine(op, x0, v))]


@cases("atomic-{op}-masked", op=RMW_CASES)
def rmw_masked(dev: Device, op: tuple[str, str]) -> list[Output]:
    """Each program its own 45 elements of a block of 64 (the rest masked off)."""
    return _rmw_distinct(dev, *op, n=45, block=64, programs=3, case=f"atomic-{op}")


@cases("atomic-{op}-int32-unmasked-{n}", op=["add", "max", "xchg"], n=[1, 128])
def rmw_unmasked(dev: Device, op: str, n: int) -> list[Output]:
    return _rmw_distinct(dev, op, "int32", n=n, block=n, programs=2, case=f"atomic-{op}-{n}")


@cases("atomic-add-int32-sem_{sem}-scope_{scope}",
       sem=["acquire", "release", "acq_rel", "relaxed"], scope=["gpu", "cta", "sys"])
def rmw_orderings(dev: Device, sem: str, scope: str) -> list[Output]:
    """Every ``sem`` and ``scope``: the values are the same whatever the ordering."""
    return _rmw_distinct(dev, "add", "int32", n=100, block=128, programs=2, sem=sem, scope=scope,
                         case=f"atomic-sem-{sem}-{scope}")


@cases("atomic-{op}-2d-{dtype}", op=["add", "max", "xchg"], dtype=["int32", "fp32"])
def rmw_2d(dev: Device, op: str, dtype: str) -> list[Output]:
    R, C, programs = 8, 16, 2
    rng = rng_for(f"atomic-2d-{op}-{dtype}")
    x0, v = _values(rng, dtype, op, (programs * R, C)), _values(rng, dtype, op, (programs * R, C))
    x, old = dev.to_device(x0), _poisoned(dev, (programs * R, C), NP[dtype])
    dev.launch(rmw_2d_kernel, (programs,), x, dev.to_device(v), old, OP=op, R=R, C=C)
    return [Output("old", dev.to_host(old), x0), Output("x", dev.to_host(x), combine(op, x0, v))]


@cases("atomic-methods")
def methods(dev: Device) -> list[Output]:
    rng = rng_for("atomic-methods")
    x0, v = (rng.integers(-100, 100, 64, dtype=np.int32) for _ in range(2))
    x, old = dev.to_device(x0), _poisoned(dev, 64, np.int32)
    dev.launch(method_kernel, (2,), x, dev.to_device(v), old, BLOCK=32)
    return [Output("old", dev.to_host(old), x0), Output("x", dev.to_host(x), x0 + v)]


# -- contention ---------------------------------------------------------------------------------------
CONTENTION = {"add-int32": ("add", "int32"), "add-uint32": ("add", "uint32"), "add-int64": ("add", "int64"),
              "add-fp32": ("add", "fp32"), "add-fp64": ("add", "fp64"), "max-int32": ("max", "int32"),
              "min-fp32": ("min", "fp32"), "and-int64": ("and", "int64"), "or-int32": ("or", "int32"),
              "xor-uint32": ("xor", "uint32")}


@cases("atomic_contention-{op}-grid{grid}", op=CONTENTION, grid={"1": (1,), "37": (37,), "4x3x2": (4, 3, 2)})
def contention(dev: Device, op: tuple[str, str], grid: tuple[int, ...]) -> list[Output]:
    """Every program combines its row into the same 40 elements (block 64, masked)."""
    kind, dtype = op
    n, programs = 40, int(np.prod(grid))
    rng = rng_for(f"atomic_contention-{kind}-{dtype}")
    x0, v = _values(rng, dtype, kind, n), _values(rng, dtype, kind, (programs, n))
    if dtype.startswith("fp"):
        v = (rng.standard_normal((programs, n)) * 3).astype(NP[dtype]) if kind == "add" else v
    x = dev.to_device(x0)
    dev.launch(rmw_kernel, grid, x, dev.to_device(v), _poisoned(dev, (programs, n), NP[dtype]), n, OP=kind,
               BLOCK=64, SHARED=True, SEM=None, SCOPE=None)
    if kind == "add" and dtype.startswith("fp"):  # any order of additions: a tolerance for rounding
        want = x0.astype(np.float64) + v.astype(np.float64).sum(axis=0)
        scale = np.abs(x0).astype(np.float64) + np.abs(v.astype(np.float64)).sum(axis=0)
        eps = float(np.finfo(NP[dtype]).eps)
        return [Output("x", dev.to_host(x), want, rtol=0.0, atol=float(scale.max()) * eps * (programs + 1))]
    want = x0
    for row in v:
        want = combine(kind, want, row)
    return [Output("x", dev.to_host(x), want)]


@cases("atomic_contention-xchg-{dtype}", dtype=["int32", "fp64"])
def exchange_permutation(dev: Device, dtype: str) -> list[Output]:
    """64 programs exchange into the same 16 elements: per element, the old values and the final one
    are the initial value and the 64 written ones, in some order."""
    n, programs = 16, 64
    x0 = np.arange(n).astype(NP[dtype]) * 1000
    v = (np.arange(programs * n).reshape(programs, n) + 1).astype(NP[dtype])
    x, old = dev.to_device(x0), _poisoned(dev, (programs, n), NP[dtype])
    dev.launch(rmw_kernel, (programs,), x, dev.to_device(v), old, n, OP="xchg", BLOCK=n, SHARED=True,
               SEM=None, SCOPE=None)
    got = np.sort(np.concatenate([dev.to_host(old), dev.to_host(x)[None, :]]), axis=0)
    return [Output("old+final", got, np.sort(np.concatenate([v, x0[None, :]]), axis=0))]


@cases("atomic_contention-rows-{dtype}", dtype=["int32", "fp32"])
def rows(dev: Device, dtype: str) -> list[Output]:
    """Within one program, the 16 lanes of each row of an 8x16 block add into one element; 5 programs."""
    R, C, programs = 8, 16, 5
    rng = rng_for(f"atomic_contention-rows-{dtype}")
    v = rng.integers(-50, 50, (programs, R, C)).astype(NP[dtype])
    x = dev.to_device(np.zeros(R, NP[dtype]))
    dev.launch(rows_add_kernel, (programs,), x, dev.to_device(v), R=R, C=C)
    return [Output("x", dev.to_host(x), v.astype(np.float64).sum(axis=(0, 2)))]


@cases("atomic_contention-scalar_ptr-{dtype}", dtype=["int64", "fp64"])
def scalar_pointer(dev: Device, dtype: str) -> list[Output]:
    """A scalar pointer with a block of 32 values, 9 programs: all 288 values add into one element."""
    rng = rng_for(f"atomic_contention-scalar_ptr-{dtype}")
    v = rng.integers(-1000, 1000, (9, 32)).astype(NP[dtype])
    x = dev.to_device(np.array([5], NP[dtype]))
    dev.launch(scalar_ptr_kernel, (9,), x, dev.to_device(v), BLOCK=32)
    return [Output("x", dev.to_host(x), np.array([5 + v.astype(np.float64).sum()]))]


@cases("atomic_counter-{op}-grid{grid}", op=["add", "cas_loop"], grid={"1": (1,), "100": (100,), "5x4x3": (5, 4, 3)})
def counter(dev: Device, op: str, grid: tuple[int, ...]) -> list[Output]:
    """A scalar counter every program increments once: it ends at the number of programs, and the old
    values the programs saw are 0 .. programs-1 in some order."""
    programs = int(np.prod(grid))
    counter_buf, old = dev.to_device(np.zeros(1, np.int32)), _poisoned(dev, programs, np.int32)
    dev.launch(counter_kernel, grid, counter_buf, old, OP=op)
    return [Output("counter", dev.to_host(counter_buf), np.array([programs])),
            Output("sorted old", np.sort(dev.to_host(old)), np.arange(programs))]


@cases("atomic-loop-{n}", n=[1, 5])
def loop(dev: Device, n: int) -> list[Output]:
    block = 16
    x = dev.to_device(np.zeros(block + 1, np.int32))
    out = _poisoned(dev, block, np.int32)
    dev.launch(loop_kernel, (1,), x, out, n, BLOCK=block)
    j = np.arange(block)
    active = j < block - 4
    olds = sum(np.where(active, i * j + i * (i - 1) // 2, 0) for i in range(n))  # x[j] before step i
    maxes = sum(max(range(0, i, 2), default=0) for i in range(0, n, 2))  # x[BLOCK] before each even step
    want_x = np.append(np.where(active, n * j + n * (n - 1) // 2, 0), max(range(0, n, 2)))
    return [Output("x", dev.to_host(x), want_x), Output("out", dev.to_host(out), olds + maxes)]


# -- compare-and-swap ---------------------------------------------------------------------------------
@cases("atomic_cas-{dtype}", dtype=["int32", "int64", "fp32", "fp16"])
def compare_and_swap(dev: Device, dtype: str) -> list[Output]:
    """Elements whose value equals ``cmp`` (every third) take ``val``; the old values come back."""
    n, block = 96, 32
    rng = rng_for(f"atomic_cas-{dtype}")
    x0 = _values(rng, dtype, "cas", n)
    cmp = _values(rng, dtype, "cas", n)
    cmp[::3] = x0[::3]
    v = _values(rng, dtype, "cas", n)
    x, old = dev.to_device(x0), _poisoned(dev, n, NP[dtype])
    dev.launch(cas_kernel, (n // block,), x, dev.to_device(cmp), dev.to_device(v), old, BLOCK=block)
    return [Output("old", dev.to_host(old), x0), Output("x", dev.to_host(x), np.where(x0 == cmp, v, x0))]


@cases("atomic_lock-{shape}", shape={"1_program": (1, 1, 10), "16_programs-4_locks": (16, 4, 100),
                                     "64_programs-8_locks": (64, 8, 256)})
def lock(dev: Device, shape: tuple[int, int, int]) -> list[Output]:
    """Tutorial 05's lock: every group's sum of rows (integers in fp32: exact in any order)."""
    programs, group, n = shape
    rng = rng_for(f"atomic_lock-{programs}")
    partial = rng.integers(-100, 100, (programs, n)).astype(np.float32)
    sums = dev.full((group, n), np.nan, np.float32)
    locks = dev.to_device(np.zeros(2 * group, np.int32))
    dev.launch(lock_kernel, (programs,), dev.to_device(partial), sums, locks, n, GROUP=group,
               BLOCK=triton.next_power_of_2(n))
    want = np.stack([partial[g::group].astype(np.float64).sum(axis=0) for g in range(group)])
    counts = np.array([0] * group + [1] * group)
    return [Output("sums", dev.to_host(sums), want), Output("locks", dev.to_host(locks), counts)]


# -- tutorial 05: layer norm backward ----------------------------------------------------------------
@triton.jit
def layernorm_bwd_dx_kernel(dx_ptr, dy_ptr, dw_ptr, db_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, locks_ptr, stride, N,
                            GROUP: tl.constexpr, BLOCK: tl.constexpr):
    """dx of one row, and the row's dw and db added into partial sums, one per group of rows, each
    under its lock (tutorial 05's ``_layer_norm_bwd_dx_fused``)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x_ptr += row * stride
    dy_ptr += row * stride
    dx_ptr += row * stride
    lock_id = row % GROUP
    lock = locks_ptr + lock_id
    count = lock + GROUP
    dw_ptr = dw_ptr + lock_id * N + cols
    db_ptr = db_ptr + lock_id * N + cols
    x = tl.load(x_ptr + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(dy_ptr + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    wdy = tl.where(mask, w * dy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    tl.store(dx_ptr + cols, (wdy - (xhat * c1 + c2)) * rstd, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = dy.to(w.dtype)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    first = tl.load(count) == 0
    tl.debug_barrier()  # every thread has read the count before one of them sets it
    if first:
        tl.atomic_xchg(count, 1)
    else:
        partial_dw += tl.load(dw_ptr, mask=mask)
        partial_db += tl.load(db_ptr, mask=mask)
    tl.store(dw_ptr, partial_dw, mask=mask)
    tl.store(db_ptr, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@triton.jit
def layernorm_bwd_dwdb_kernel(dw_ptr, db_ptr, final_dw_ptr, final_db_ptr, M, N, BLOCK_M: tl.constexpr,
                              BLOCK_N: tl.constexpr):
    """The partial sums of dw and db summed over their groups (tutorial 05's ``_layer_norm_bwd_dwdb``)."""
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_M):
        rows = i + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(dw_ptr + offs, mask=mask, other=0.0)
        db += tl.load(db_ptr + offs, mask=mask, other=0.0)
    tl.store(final_dw_ptr + cols, tl.sum(dw, axis=0), mask=cols < N)
    tl.store(final_db_ptr + cols, tl.sum(db, axis=0), mask=cols < N)


@cases("atomic_layernorm_bwd-{shape}", shape={"8x16-group4": (8, 16, 4), "100x300-group16": (100, 300, 16),
                                              "257x1000-group32": (257, 1000, 32)})
def layernorm_backward(dev: Device, shape: tuple[int, int, int]) -> list[Output]:
    M, N, group = shape
    rng = rng_for(f"atomic_layernorm_bwd-{M}x{N}")
    x = (rng.standard_normal((M, N)) * 2 + 0.5).astype(np.float32)
    dy = rng.standard_normal((M, N)).astype(np.float32)
    w = (rng.random(N) + 0.5).astype(np.float32)
    x64, dy64, w64 = x.astype(np.float64), dy.astype(np.float64), w.astype(np.float64)
    mean = x64.mean(axis=1)
    rstd = 1 / np.sqrt(x64.var(axis=1) + 1e-5)
    dx = dev.full((M, N), np.nan, np.float32)
    partial_dw, partial_db = dev.full((group, N), np.nan, np.float32), dev.full((group, N), np.nan, np.float32)
    locks = dev.to_device(np.zeros(2 * group, np.int32))
    dev.launch(layernorm_bwd_dx_kernel, (M,), dx, dev.to_device(dy), partial_dw, partial_db, dev.to_device(x),
               dev.to_device(w), dev.to_device(mean.astype(np.float32)), dev.to_device(rstd.astype(np.float32)),
               locks, N, N, GROUP=group, BLOCK=triton.next_power_of_2(N))
    dw, db = dev.full(N, np.nan, np.float32), dev.full(N, np.nan, np.float32)
    dev.launch(layernorm_bwd_dwdb_kernel, (triton.cdiv(N, 32),), partial_dw, partial_db, dw, db, min(group, M), N,
               BLOCK_M=16, BLOCK_N=32)
    xhat = (x64 - mean[:, None]) * rstd[:, None]
    wdy = w64 * dy64
    c1 = (xhat * wdy).mean(axis=1, keepdims=True)
    c2 = wdy.mean(axis=1, keepdims=True)
    want_dx = (wdy - (xhat * c1 + c2)) * rstd[:, None]
    return [Output("dx", dev.to_host(dx), want_dx, rtol=1e-4, atol=1e-4),
            Output("dw", dev.to_host(dw), (dy64 * xhat).sum(axis=0), rtol=1e-4, atol=1e-3),
            Output("db", dev.to_host(db), dy64.sum(axis=0), rtol=1e-4, atol=1e-3)]


@cases("atomic_lock-exclusion-{programs}_programs", programs=[2, 64, 256])
def exclusion(dev: Device, programs: int) -> list[Output]:
    """Programs that run in parallel take one lock in turn: no increment made under it is lost."""
    reps, n = 20, 1024
    x, lock = dev.to_device(np.zeros(n, np.int32)), dev.to_device(np.zeros(1, np.int32))
    dev.launch(exclusion_kernel, (programs,), x, lock, reps, N=n)
    return [Output("x", dev.to_host(x), np.full(n, programs * reps)), Output("lock", dev.to_host(lock), np.zeros(1))]
