"""``passes.prefetch``: a ``tile.prefetch {write = 1}`` of each contiguous store's pointers, right
after the first costly float op of the stored shape before the store in its block, else after the
first load of that shape; none where the pointers cannot be recomputed there or are scattered."""

from __future__ import annotations

import tritium
import tritium.language as tl
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.passes.prefetch import prefetch_stores

from .test_threads_codegen import tile_opt


@tritium.jit
def softmax_rows(x_ptr, out_ptr, stride, N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + row * stride + cols)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0))


@tritium.jit
def normalize_chunks(x_ptr, out_ptr, w_ptr, n, BLOCK: tl.constexpr):
    """Tutorial 05's shape: the row read in chunks by a loop, then scaled and stored by another."""
    x_ptr += tl.program_id(0) * n
    total = tl.zeros([BLOCK], tl.float32)
    for off in range(0, n, BLOCK):
        total += tl.load(x_ptr + off + tl.arange(0, BLOCK), mask=off + tl.arange(0, BLOCK) < n, other=0.0)
    scale = 1 / tl.sum(total)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        w = tl.load(w_ptr + cols, mask=cols < n)
        tl.store(out_ptr + tl.program_id(0) * n + cols, tl.load(x_ptr + cols, mask=cols < n) * w * scale,
                 mask=cols < n)


@tritium.jit
def scatter_rows(x_ptr, out_ptr, N: tl.constexpr):
    """Stores two elements apart: no line is written whole, so none is prefetched."""
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + tl.program_id(0) * N + cols)
    tl.store(out_ptr + tl.program_id(0) * 2 * N + cols * 2, tl.exp(x))


@tritium.jit
def loaded_offset(x_ptr, out_ptr, offset_ptr, N: tl.constexpr):
    """The output row comes from a value loaded after the exp: it cannot be recomputed before."""
    cols = tl.arange(0, N)
    e = tl.exp(tl.load(x_ptr + tl.program_id(0) * N + cols))
    row = tl.load(offset_ptr + tl.program_id(0))
    tl.store(out_ptr + row * N + cols, e / tl.sum(e, axis=0))


@tritium.jit
def tile_after_loop(a_ptr, c_ptr, K, BLOCK: tl.constexpr):
    """A product's shape: the tile is stored after the loop that loads; before the loop, an integer
    remainder of the tile's shape, which is no float computation to hide the fetches behind."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    bias = ((rows[:, None] * BLOCK + cols[None, :]) % 7).to(tl.float32)
    acc = tl.zeros([BLOCK, BLOCK], tl.float32)
    for k in range(0, K):
        acc += tl.load(a_ptr + rows[:, None] * K + k + cols[None, :] * 0)
    tl.store(c_ptr + rows[:, None] * BLOCK + cols[None, :], acc + bias)


def prefetched(kernel, types: dict[str, str], constants: dict) -> list[str]:
    """The kernel's tile-opt IR with the pass run, as lines."""
    with tile.context():
        module = ir.Module.parse(tile_opt(kernel, types, constants))
        prefetch_stores(module)
        return str(module).splitlines()


def index(lines: list[str], text: str) -> int:
    return next(i for i, line in enumerate(lines) if text in line)


def test_the_stored_row_is_prefetched_for_writing_after_the_exp():
    lines = prefetched(softmax_rows, {"x_ptr": "*fp32", "out_ptr": "*fp32", "stride": "i32"}, {"N": 64})
    prefetches = [line for line in lines if '"tile.prefetch"' in line]
    assert len(prefetches) == 1 and "{write = 1 : i32}" in prefetches[0]
    at = index(lines, '"tile.prefetch"')
    assert index(lines, "math.exp") < at < index(lines, "arith.addf")  # in the loop of the exp and its sum
    # its pointers are out_ptr's row, recomputed before the prefetch
    ptrs = prefetches[0].split('"tile.prefetch"(')[1].split(")")[0]
    defining = next(line for line in lines[:at] if line.strip().startswith(f"{ptrs} = "))
    assert '"tile.addptr"' in defining


def test_a_store_in_a_loop_is_prefetched_after_its_block_s_first_load():
    lines = prefetched(normalize_chunks, {"x_ptr": "*fp32", "out_ptr": "*fp32", "w_ptr": "*fp32", "n": "i32"},
                       {"BLOCK": 32})
    assert sum('"tile.prefetch"' in line for line in lines) == 1
    second_loop = [i for i, line in enumerate(lines) if "scf.for" in line][1]
    at = index(lines, '"tile.prefetch"')
    first_load = next(i for i in range(second_loop, len(lines)) if '"tile.load"' in lines[i])
    assert second_loop < first_load < at < index(lines, '"tile.store"')


def test_scattered_stores_are_not_prefetched():
    lines = prefetched(scatter_rows, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"N": 64})
    assert not any('"tile.prefetch"' in line for line in lines)


def test_pointers_from_a_later_load_are_not_prefetched():
    lines = prefetched(loaded_offset, {"x_ptr": "*fp32", "out_ptr": "*fp32", "offset_ptr": "*i32"}, {"N": 64})
    assert not any('"tile.prefetch"' in line for line in lines)


def test_a_tile_stored_after_its_loop_with_integer_remainders_is_not_prefetched():
    lines = prefetched(tile_after_loop, {"a_ptr": "*fp32", "c_ptr": "*fp32", "K": "i32"}, {"BLOCK": 16})
    assert any("arith.remsi" in line for line in lines)
    assert not any('"tile.prefetch"' in line for line in lines)
