"""Kernels of the shape tests: a block loaded from row-major memory, one of Triton's shape builtins
selected by a constexpr name, and the result stored row-major."""

import tritium
import tritium.language as tl


@tritium.jit
def offsets(S0: tl.constexpr, S1: tl.constexpr, S2: tl.constexpr, RANK: tl.constexpr):
    """Row-major offsets of a block of shape (S0,), (S0, S1) or (S0, S1, S2) by ``RANK``."""
    if RANK == 1:
        offs = tl.arange(0, S0)
    elif RANK == 2:
        offs = tl.arange(0, S0)[:, None] * S1 + tl.arange(0, S1)[None, :]
    else:
        offs = (tl.arange(0, S0)[:, None, None] * (S1 * S2) + tl.arange(0, S1)[None, :, None] * S2
                + tl.arange(0, S2)[None, None, :])
    return offs


@tritium.jit
def offsets_like(v):
    """Row-major offsets of a block of ``v``'s shape."""
    if len(v.shape) == 1:
        offs = offsets(v.shape[0], 1, 1, 1)
    elif len(v.shape) == 2:
        offs = offsets(v.shape[0], v.shape[1], 1, 2)
    else:
        offs = offsets(v.shape[0], v.shape[1], v.shape[2], 3)
    return offs


@tritium.jit
def shape_fn(x, y, OP: tl.constexpr, ARG: tl.constexpr):
    """The shape builtin named ``OP`` on ``x`` (and ``y``), with its shape/dims argument ``ARG``;
    two results (the second is the first but for ``split``)."""
    if OP == "reshape":
        r = tl.reshape(x, ARG)
    elif OP == "reshape_varargs":
        r = tl.reshape(x, ARG[0], ARG[1])
    elif OP == "reshape_method":
        r = x.reshape(ARG, can_reorder=True)
    elif OP == "view":
        r = tl.view(x, ARG)
    elif OP == "ravel":
        r = tl.ravel(x)
    elif OP == "ravel_method":
        r = x.ravel()
    elif OP == "permute":
        r = tl.permute(x, ARG)
    elif OP == "permute_method":
        r = x.permute(ARG[0], ARG[1], ARG[2])
    elif OP == "trans":
        r = tl.trans(x)
    elif OP == "trans_dims":
        r = tl.trans(x, ARG)
    elif OP == "trans_method":
        r = x.trans()
    elif OP == "T":
        r = x.T
    elif OP == "expand_dims":
        r = tl.expand_dims(x, ARG)
    elif OP == "join":
        r = tl.join(x, y)
    elif OP == "join_scalar":
        r = tl.join(x, 3)
    elif OP == "interleave":
        r = tl.interleave(x, y)
    elif OP == "cat":
        r = tl.cat(x, y, can_reorder=True)
    elif OP == "flip":
        r = tl.flip(x, ARG)
    elif OP == "flip_default":
        r = tl.flip(x)
    elif OP == "flip_method":
        r = x.flip(ARG)
    elif OP == "split":
        r, r2 = tl.split(x)
    elif OP == "split_method":
        r, r2 = x.split()
    elif OP == "split_join":  # the inverse pair: join(split(x)) is x, computed by both ops
        a, b = tl.split(tl.reshape(x, ARG))
        r = tl.reshape(tl.join(b * 2, a), x.shape)
    elif OP == "trans_sum":  # a reduction over a transposed block
        r = tl.sum(tl.trans(x).to(tl.float32), axis=ARG)
    elif OP == "sum_reshape":  # a reshaped reduction result
        r = tl.reshape(tl.sum(x.to(tl.float32), axis=1), ARG)
    elif OP == "chain":  # several re-indexing ops in a row, with arithmetic between them
        t = tl.trans(tl.reshape(x, ARG)) + 1
        r = tl.flip(tl.reshape(t, x.shape), 0)
    else:
        tl.static_assert(False, "unknown OP")
    if OP != "split" and OP != "split_method":
        r2 = r
    return r, r2


@tritium.jit
def shape_kernel(x_ptr, y_ptr, out_ptr, out2_ptr, OP: tl.constexpr, ARG: tl.constexpr, S0: tl.constexpr,
                 S1: tl.constexpr, S2: tl.constexpr, RANK: tl.constexpr):
    offs = offsets(S0, S1, S2, RANK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    r, r2 = shape_fn(x, y, OP, ARG)
    tl.store(out_ptr + offsets_like(r), r)
    tl.store(out2_ptr + offsets_like(r2), r2)


@tritium.jit
def pointer_kernel(x_ptr, out_ptr, OP: tl.constexpr, ARG: tl.constexpr, S0: tl.constexpr, S1: tl.constexpr,
                   S2: tl.constexpr, RANK: tl.constexpr):
    """The shape builtin on a block of pointers, then a load through the result."""
    ptrs = x_ptr + offsets(S0, S1, S2, RANK)
    p, p2 = shape_fn(ptrs, ptrs, OP, ARG)
    v = tl.load(p)
    tl.store(out_ptr + offsets_like(v), v)


@tritium.jit
def masked_pointer_kernel(x_ptr, out_ptr, n, M: tl.constexpr, N: tl.constexpr):
    """Pointers and a mask transposed together: a ragged load of x.T and a store of it."""
    rows, cols = tl.arange(0, M)[:, None], tl.arange(0, N)[None, :]
    offs = rows * N + cols
    p = tl.trans(x_ptr + offs)
    m = tl.trans(offs < n)
    v = tl.load(p, mask=m, other=-1)
    out = tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :]
    tl.store(out_ptr + out, v)


@tritium.jit
def split_scalars_kernel(x_ptr, out_ptr):
    """``split`` of a block of shape (2,) gives two scalars; ``reshape(x, ())`` of one element too."""
    a, b = tl.split(tl.load(x_ptr + tl.arange(0, 2)))
    c = tl.reshape(tl.load(x_ptr + 2 + tl.arange(0, 1)), ())
    tl.store(out_ptr, a * 100 + b * 10 + c)


@tritium.jit
def bad_shape_kernel(x_ptr, OP: tl.constexpr):
    x = tl.load(x_ptr + offsets(4, 8, 1, 2))
    if OP == "count":
        r = tl.reshape(x, 4, 4)
    elif OP == "minus_one":
        r = tl.reshape(x, -1, 8)
    elif OP == "not_pow2":
        r = tl.reshape(x, 2, 3)
    elif OP == "dims":
        r = tl.permute(x, 0, 0)
    elif OP == "dims_rank":
        r = tl.permute(x, 1, 0, 2)
    elif OP == "trans_1d":
        r = tl.trans(tl.ravel(x))
    elif OP == "split":
        r = tl.split(x)
    elif OP == "cat":
        r = tl.cat(tl.ravel(x), tl.ravel(x))
    elif OP == "join_dtype":
        r = tl.join(x, x.to(tl.int8))
    elif OP == "flip_dim":
        r = tl.flip(x, 2)
    elif OP == "T_3d":
        r = tl.reshape(x, 2, 2, 8).T
    elif OP == "expand_twice":
        r = tl.expand_dims(x, (1, -3))
    elif OP == "expand_range":
        r = tl.expand_dims(x, (0, 4))
    else:
        r = x
    tl.store(x_ptr + offsets(4, 8, 1, 2), x)


@tritium.jit
def in_place_kernel(x_ptr, N: tl.constexpr, OP: tl.constexpr):
    """A square block overwritten by its own transpose or flip: every load must come first."""
    offs = offsets(N, N, 1, 2)
    x = tl.load(x_ptr + offs)
    if OP == "trans":
        r = tl.trans(x)
    else:
        r = tl.flip(x, 1)
    tl.store(x_ptr + offs, r)


@tritium.jit
def pairs_kernel(x_ptr, out_ptr, N: tl.constexpr):
    """(a, b) pairs loaded as an (N, 2) block become (2b, a): split, arithmetic, join."""
    offs = tl.arange(0, N)[:, None] * 2 + tl.arange(0, 2)[None, :]
    a, b = tl.split(tl.load(x_ptr + offs))
    tl.store(out_ptr + offs, tl.join(b * 2, a))


@tritium.jit
def split_pointers_kernel(x_ptr, out_ptr):
    """Pointers split and reshaped to scalar pointers, then loaded through."""
    p0, p1 = tl.split(x_ptr + tl.arange(0, 2))
    q = tl.reshape(x_ptr + 2 + tl.arange(0, 1), ())
    tl.store(out_ptr, tl.load(p0) * 100 + tl.load(p1) * 10 + tl.load(q))


@tritium.jit
def loop_kernel(x_ptr, out_ptr, ITERS, N: tl.constexpr):
    """Re-indexing inside a loop, into a loop-carried accumulator."""
    offs = offsets(N, N, 1, 2)
    acc = tl.zeros((N, N), tl.float32)
    for i in range(ITERS):
        x = tl.load(x_ptr + i * N * N + offs)
        acc += tl.flip(tl.trans(x), 0) * (i + 1)
    tl.store(out_ptr + offs, tl.reshape(tl.ravel(acc), N, N))
