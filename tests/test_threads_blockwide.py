"""Block-wide ops on the GPU path: ``tl.gather`` emits ``tile.gather`` and ``tl.histogram`` is raised
to ``tile.histogram`` (``passes.blockwide``), both lowered through shared memory, so their LLVM IR
grows with the elements each thread holds, not with the block squared (issue 27); their results,
run by the SIMT emulator (``tritium_simt.emulator``) with several warps and lanes, match numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.ir import tile
from tritium.passes.axis_info import walk
from tritium_conformance.kernels import blockwide_kernel

from .test_threads_codegen import nvptx_hooks
from .test_threads_shape import laid_out
from tritium_simt.emulator import run

LAUNCHES = [(1, 4), (2, 8), (4, 4)]


@tritium.jit
def gather_kernel(s_ptr, i_ptr, o_ptr, SM: tl.constexpr, SN: tl.constexpr, IM: tl.constexpr, IN: tl.constexpr,
                  AXIS: tl.constexpr):
    s = tl.load(s_ptr + tl.arange(0, SM)[:, None] * SN + tl.arange(0, SN)[None, :])
    offs = tl.arange(0, IM)[:, None] * IN + tl.arange(0, IN)[None, :]
    tl.store(o_ptr + offs, tl.gather(s, tl.load(i_ptr + offs), AXIS))


@tritium.jit
def gather1d_kernel(s_ptr, i_ptr, o_ptr, S: tl.constexpr, I: tl.constexpr):
    s = tl.load(s_ptr + tl.arange(0, S))
    tl.store(o_ptr + tl.arange(0, I), tl.gather(s, tl.load(i_ptr + tl.arange(0, I)), 0))


@tritium.jit
def histogram_kernel(x_ptr, o_ptr, n, M: tl.constexpr, N: tl.constexpr, BINS: tl.constexpr,
                     MASKED: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.ravel(tl.load(x_ptr + offs))
    h = tl.histogram(x, BINS, mask=tl.ravel(offs) < n) if MASKED else tl.histogram(x, BINS)
    tl.store(o_ptr + tl.arange(0, BINS), h)


@tritium.jit
def loop_kernel(x_ptr, i_ptr, o_ptr, h_ptr, N: tl.constexpr, BINS: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    index = tl.load(i_ptr + tl.arange(0, N))
    acc = tl.zeros((BINS,), tl.int32)
    for k in range(3):
        acc += tl.histogram(index + k, BINS)
        x = tl.gather(x, index, 0)
    tl.store(h_ptr + tl.arange(0, BINS), acc)
    tl.store(o_ptr + tl.arange(0, N), x)


@tritium.jit
def _or(a, b):
    return a | b


@tritium.jit
def idiom_kernel(x_ptr, s_ptr, o_ptr, h_ptr, N: tl.constexpr, BINS: tl.constexpr, BROADCAST: tl.constexpr):
    """A user's own one-hot histogram and gather (an or-reduction of a select); with BROADCAST, of
    one value broadcast along the counted dimension (which must not be raised: it counts N times)."""
    x = tl.load(x_ptr + tl.arange(0, N))
    if BROADCAST:
        hit = tl.max(x[:, None], 0)[:, None] == tl.broadcast_to(tl.arange(0, BINS)[None, :], (N, BINS))
    else:
        hit = x[:, None] == tl.arange(0, BINS)[None, :]
    tl.store(h_ptr + tl.arange(0, BINS), tl.sum(hit.to(tl.int32), 0))
    picked = tl.where(hit, tl.load(s_ptr + tl.arange(0, BINS))[None, :], 0)
    tl.store(o_ptr + tl.arange(0, N), tl.reduce(picked, 1, _or))


_TYPES = {np.float32: "fp32", np.float16: "fp16", np.int64: "i64", np.int8: "i8", np.int16: "i16", np.int32: "i32",
          np.uint8: "u8"}


def _ops(module) -> list[str]:
    return [op.name for op in walk(module.operation)]


def _emulate(kernel, signature, constants, args, num_warps, warp_size, raised: str) -> None:
    with tile.context():
        module = laid_out(kernel, signature, constants, num_warps, warp_size)
        assert raised in _ops(module), f"no {raised}"
        run(module, (1,), args, num_warps, warp_size)


@pytest.mark.parametrize("num_warps,warp_size", LAUNCHES)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("dtype,itype", [(np.float32, np.int32), (np.float16, np.int64), (np.int64, np.int32),
                                         (np.int8, np.int64), (np.float32, np.int8), (np.int16, np.int16)])
def test_gather(num_warps, warp_size, axis, dtype, itype):
    """Every element read from its index's position, indices outside the axis wrapping as the
    language defines, for source and index types of every width (narrow indices are compared
    widened)."""
    rng = np.random.default_rng(axis)
    src = (rng.standard_normal((8, 16)) * 50).astype(dtype)
    index_shape = (4, 16) if axis == 0 else (8, 32)
    n = src.shape[axis]
    index = rng.integers(-2 * n, 2 * n, index_shape).astype(itype)
    out = np.full(index_shape, 7, dtype)
    _emulate(gather_kernel, {"s_ptr": "*" + _TYPES[dtype], "i_ptr": "*" + _TYPES[itype], "o_ptr": "*" + _TYPES[dtype]},
             {"SM": 8, "SN": 16, "IM": index_shape[0], "IN": index_shape[1], "AXIS": axis}, [src, index, out],
             num_warps, warp_size, "tile.gather")
    np.testing.assert_array_equal(out, np.take_along_axis(src, index % n, axis))


@pytest.mark.parametrize("num_warps,warp_size", LAUNCHES)
def test_gather_1d(num_warps, warp_size):
    """A 1-D source smaller than the program's threads (held in copies) read by a longer index."""
    src = np.arange(8, dtype=np.float32) * 1.5
    index = np.random.default_rng(3).integers(0, 8, 64).astype(np.int32)
    out = np.full(64, 7, np.float32)
    _emulate(gather1d_kernel, {"s_ptr": "*fp32", "i_ptr": "*i32", "o_ptr": "*fp32"}, {"S": 8, "I": 64},
             [src, index, out], num_warps, warp_size, "tile.gather")
    np.testing.assert_array_equal(out, src[index])


@pytest.mark.parametrize("num_warps,warp_size", LAUNCHES)
@pytest.mark.parametrize("bins,masked", [(2, False), (8, True), (256, True)])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.uint8])
def test_histogram(num_warps, warp_size, bins, masked, dtype):
    """Counts of a ravelled 2-D block, with values below 0 and beyond the bins, a mask, fewer and
    more bins than threads, narrow signed and unsigned integers; each element counted once although
    several threads may hold it."""
    info = np.iinfo(dtype)
    x = np.random.default_rng(bins).integers(max(-3, info.min), min(bins + 3, info.max), (4, 16)).astype(dtype)
    x[0, :5] = min(bins - 1, info.max)
    x[1, :3] = info.max  # 255 as u8 is a bin of 256, -1 as i8 is none
    out = np.full(bins, 7, np.int32)
    n = 50 if masked else 64
    _emulate(histogram_kernel, {"x_ptr": "*" + _TYPES[dtype], "o_ptr": "*i32", "n": "i32"},
             {"M": 4, "N": 16, "BINS": bins, "MASKED": masked}, [x, out, n], num_warps, warp_size, "tile.histogram")
    kept = x.ravel()[:n]
    np.testing.assert_array_equal(out, np.bincount(kept[(kept >= 0) & (kept < bins)], minlength=bins))


@pytest.mark.parametrize("num_warps,warp_size", LAUNCHES)
def test_in_a_loop(num_warps, warp_size):
    """Gathers and histograms that reuse their scratch in every iteration (the layout stage puts a
    barrier between an iteration's reads and the next one's writes)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(32).astype(np.float32)
    index = rng.integers(0, 32, 32).astype(np.int32)
    out, hist = np.full(32, 7, np.float32), np.full(16, 7, np.int32)
    with tile.context():
        module = laid_out(loop_kernel, {"x_ptr": "*fp32", "i_ptr": "*i32", "o_ptr": "*fp32", "h_ptr": "*i32"},
                          {"N": 32, "BINS": 16}, num_warps, warp_size)
        assert {"tile.gather", "tile.histogram"} <= set(_ops(module))
        run(module, (1,), [x, index, out, hist], num_warps, warp_size)
    want_x, want_h = x, np.zeros(16, np.int64)
    for k in range(3):
        want_h += np.bincount((index + k)[index + k < 16], minlength=16)
        want_x = want_x[index]
    np.testing.assert_array_equal(out, want_x)
    np.testing.assert_array_equal(hist, want_h)


@pytest.mark.parametrize("broadcast", [False, True])
def test_user_written_one_hot(broadcast):
    """The one-hot histogram written by hand is raised, and left alone where a value is broadcast;
    the hand-written one-hot gather is not raised (only ``tl.gather`` is a ``tile.gather``) and
    stays right: an index outside the source selects nothing (0)."""
    rng = np.random.default_rng(7)
    x = rng.integers(-2, 10, 32).astype(np.int32)
    src = rng.integers(1, 100, 8).astype(np.int32)
    out, hist = np.full(32, 7, np.int32), np.full(8, 7, np.int32)
    with tile.context():
        module = laid_out(idiom_kernel, {"x_ptr": "*i32", "s_ptr": "*i32", "o_ptr": "*i32", "h_ptr": "*i32"},
                          {"N": 32, "BINS": 8, "BROADCAST": broadcast}, 2, 8)
        assert ({"tile.gather", "tile.histogram"} & set(_ops(module))) == (set() if broadcast else
                                                                           {"tile.histogram"})
        run(module, (1,), [x, src, out, hist], 2, 8)
    values = np.full(32, x.max()) if broadcast else x
    inside = (values >= 0) & (values < 8)
    np.testing.assert_array_equal(hist, np.bincount(values[inside], minlength=8))
    np.testing.assert_array_equal(out, np.where(inside, src[np.clip(values, 0, 7)], 0))


def _llir_lines(kernel, signature, constants) -> int:
    from tritium.codegen.threads import generate

    hooks = nvptx_hooks()()
    from tritium_nvptx import compiler

    with tile.context():
        module = laid_out(kernel, signature, constants, 4, 32)
        return generate(module, hooks, compiler.TRIPLE, compiler.datalayout(), 4).count("\n")


@pytest.mark.parametrize("kernel,signature,small,large", [
    (gather_kernel, {"s_ptr": "*fp32", "i_ptr": "*i32", "o_ptr": "*fp32"},
     {"SM": 32, "SN": 32, "IM": 32, "IN": 32, "AXIS": 1}, {"SM": 64, "SN": 64, "IM": 64, "IN": 64, "AXIS": 1}),
    (gather_kernel, {"s_ptr": "*fp32", "i_ptr": "*i32", "o_ptr": "*fp32"},
     {"SM": 32, "SN": 32, "IM": 32, "IN": 32, "AXIS": 0}, {"SM": 64, "SN": 64, "IM": 64, "IN": 64, "AXIS": 0}),
    (histogram_kernel, {"x_ptr": "*i32", "o_ptr": "*i32", "n": "i32"},
     {"M": 64, "N": 64, "BINS": 2, "MASKED": False}, {"M": 128, "N": 128, "BINS": 2, "MASKED": False}),
    (histogram_kernel, {"x_ptr": "*i32", "o_ptr": "*i32", "n": "i32"},
     {"M": 64, "N": 64, "BINS": 64, "MASKED": True}, {"M": 128, "N": 128, "BINS": 64, "MASKED": True}),
], ids=["gather-axis1", "gather-axis0", "histogram-2", "histogram-64-masked"])
def test_ir_grows_with_elements_per_thread(kernel, signature, small, large):
    """Four times the elements, at most about four times the nvptx LLVM IR (it grew with the
    square: a histogram of a 128x128 block in 2 bins gave 37,700 lines, of a 64x64 block 4,900)."""
    assert _llir_lines(kernel, signature, large) <= 4.5 * _llir_lines(kernel, signature, small)
    with tile.context():
        assert {"tile.gather", "tile.histogram"} & set(_ops(laid_out(kernel, signature, large, 4, 32)))


@pytest.mark.parametrize("kernel,signature,small,large", [
    (gather_kernel, {"s_ptr": "*fp32", "i_ptr": "*i32", "o_ptr": "*fp32"},
     {"SM": 64, "SN": 64, "IM": 64, "IN": 64, "AXIS": 0}, {"SM": 128, "SN": 128, "IM": 128, "IN": 128, "AXIS": 0}),
    (gather_kernel, {"s_ptr": "*fp32", "i_ptr": "*i32", "o_ptr": "*fp32"},
     {"SM": 64, "SN": 64, "IM": 64, "IN": 64, "AXIS": 1}, {"SM": 128, "SN": 128, "IM": 128, "IN": 128, "AXIS": 1}),
    (gather1d_kernel, {"s_ptr": "*fp32", "i_ptr": "*i64", "o_ptr": "*fp32"}, {"S": 2 ** 14, "I": 2 ** 14},
     {"S": 2 ** 16, "I": 2 ** 16}),
], ids=["128x128-axis0", "128x128-axis1", "1d-65536"])
def test_gathers_triton_accepts_compile_for_nvptx(kernel, signature, small, large):
    """Gathers of 2**21 and 2**32 index-position pairs (the one-hot form refused them) compile to
    PTX without a GPU, through ``tile.gather``, in LLVM IR about 4 times that of a quarter of the
    elements (it grows with the elements per thread)."""
    pytest.importorskip("tritium_nvptx", reason="tritium-nvptx is not installed")

    def compiled(constants):
        return tritium.compile(kernel, signature, constants, target="nvptx", num_warps=4)

    big = compiled(large)
    assert "tile.gather" in big.asm["tile-opt"] and f".entry {kernel.__name__}" in big.asm["ptx"]
    assert big.asm["llir"].count("\n") <= 4.5 * compiled(small).asm["llir"].count("\n")


@pytest.mark.parametrize("op", ["sort", "topk", "cumsum", "trans", "interleave", "ravel"])
def test_ir_of_other_block_ops_grows_with_elements_per_thread(op):
    """Sorting, scans and the re-indexing ops: from 64x64 to 128x128, the nvptx LLVM IR grows with
    the elements per thread, at most about 4x (a sort's network unrolled per round grew 5.7x, and
    with the square of the rounds' count beyond: ``passes.decomposed`` keeps such sorts in loops)."""
    signature = {"x_ptr": "*fp32", "i_ptr": "*i32", "o_ptr": "*fp32"}
    small = _llir_lines(blockwide_kernel, signature, {"B": 64, "OP": op})
    assert _llir_lines(blockwide_kernel, signature, {"B": 128, "OP": op}) <= 4.5 * small
