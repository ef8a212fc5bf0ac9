"""Kernels of the random-number tests (in a module: @jit reads source files)."""

import tritium
import tritium.language as tl


@tritium.jit
def philox_kernel(out_ptr, seed, c0, c1, c2, c3, BLOCK: tl.constexpr):
    """The four Philox blocks of the counters (c0 + i, c1, c2, c3) for i < BLOCK."""
    i = tl.arange(0, BLOCK)
    zero = i * 0
    r0, r1, r2, r3 = tl.philox(seed, c0 + i, c1 + zero, c2 + zero, c3 + zero)
    tl.store(out_ptr + i, r0)
    tl.store(out_ptr + BLOCK + i, r1)
    tl.store(out_ptr + 2 * BLOCK + i, r2)
    tl.store(out_ptr + 3 * BLOCK + i, r3)


@tritium.jit
def random_kernel(out_ptr, seed, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if KIND == "randint":
        r = tl.randint(seed, offs)
    elif KIND == "rand":
        r = tl.rand(seed, offs)
    else:
        r = tl.randn(seed, offs)
    tl.store(out_ptr + offs, r, mask=offs < n)


@tritium.jit
def mixed_philox_kernel(out_ptr, x):
    """``philox_impl`` on a uint32 and a uint64 counter word: refused."""
    w = x.to(tl.uint32, bitcast=True)
    r0, r1, r2, r3 = tl.philox_impl(w, w.to(tl.uint64), w, w, w, w)
    tl.store(out_ptr, r0)


@tritium.jit
def randint4x_kernel(out_ptr, seed, base, WIDE: tl.constexpr, BLOCK: tl.constexpr):
    """The four ``randint4x`` blocks of the offsets ``base + i`` for i < BLOCK: int64 offsets when
    WIDE, else int32 ones."""
    i = tl.arange(0, BLOCK)
    if WIDE:
        offs = base.to(tl.int64) + i
    else:
        offs = base + i
    r0, r1, r2, r3 = tl.randint4x(seed, offs)
    tl.static_assert(r0.dtype == tl.uint32, "randint4x gives uint32 bits whatever the offsets' width")
    tl.store(out_ptr + i, r0)
    tl.store(out_ptr + BLOCK + i, r1)
    tl.store(out_ptr + 2 * BLOCK + i, r2)
    tl.store(out_ptr + 3 * BLOCK + i, r3)
