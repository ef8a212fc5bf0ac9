"""Kernels with mistakes users make; each test expects a clear error pointing at the bad line."""

import tritium
import tritium.language as tl


@tritium.jit
def uses_with(x_ptr):
    with open("f") as f:  # noqa: F841
        tl.store(x_ptr, 1.0)


@tritium.jit
def uses_lambda(x_ptr):
    f = lambda v: v + 1  # noqa: E731
    tl.store(x_ptr, f(1.0))


@tritium.jit
def arange_not_pow2(x_ptr):
    offs = tl.arange(0, 100)
    tl.store(x_ptr + offs, 1.0)


@tritium.jit
def arange_runtime_extent(x_ptr, n):
    offs = tl.arange(0, n)
    tl.store(x_ptr + offs, 1.0)


@tritium.jit
def shape_mismatch(x_ptr):
    a = tl.arange(0, 16)
    b = tl.arange(0, 32)
    tl.store(x_ptr + a, (a + b).to(tl.float32))


@tritium.jit
def needs_block(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


@tritium.jit
def loop_changes_type(x_ptr, n):
    acc = 0
    for i in range(n):
        acc += 0.5
    tl.store(x_ptr, acc)


@tritium.jit
def uses_undefined(x_ptr):
    tl.store(x_ptr, undefined_name)  # noqa: F821


@tritium.jit
def ping(x_ptr):
    pong(x_ptr)


@tritium.jit
def pong(x_ptr):
    ping(x_ptr)


@tritium.jit
def float_mask(x_ptr):
    offs = tl.arange(0, 4)
    tl.store(x_ptr + offs, 1.0, mask=offs * 1.0)


@tritium.jit
def returns_value(x_ptr):
    return 1


@tritium.jit
def and_on_blocks(x_ptr):
    offs = tl.arange(0, 8)
    tl.store(x_ptr + offs, 1.0, mask=offs > 1 and offs < 5)


@tritium.jit
def mismatched_add(a, b):
    return a + b


@tritium.jit
def calls_bad_helper(x_ptr):
    y = mismatched_add(tl.arange(0, 8), tl.arange(0, 4))
    tl.store(x_ptr + tl.arange(0, 8), y)


@tritium.jit
def too_many_elements(out_ptr, HOW: tl.constexpr, N: tl.constexpr):
    """Makes a block of 2 * N elements (N = 2**20 is Triton's limit) the way ``HOW`` names."""
    half = tl.arange(0, N)
    if HOW == "arange":
        block = tl.arange(0, 2 * N)
    elif HOW == "zeros":
        block = tl.zeros((2 * N,), dtype=tl.int32)
    elif HOW == "full":
        block = tl.full((2, N), 7, tl.int32)
    elif HOW == "broadcast":
        block = tl.arange(0, 2)[:, None] + half[None, :]
    elif HOW == "join":
        block = tl.join(half, half)
    elif HOW == "cat":
        block = tl.cat(half, half, can_reorder=True)
    elif HOW == "reshape":
        block = tl.reshape(half, 2, N)
    else:
        rows = tl.zeros((2 * N // 16, 16), dtype=tl.float32)
        block = tl.dot(rows, tl.zeros((16, 16), dtype=tl.float32))
    tl.store(out_ptr + tl.arange(0, 16), tl.sum(tl.ravel(block), 0).to(tl.int32))
