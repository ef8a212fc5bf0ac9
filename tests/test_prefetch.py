"""``passes.prefetch``: after each load whose pointers depend on ``tl.program_id(0)``, a
``tile.prefetch`` of the pointers the next program will load, where they can be recomputed."""

from __future__ import annotations

import tritium
import tritium.language as tl
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.passes.prefetch import prefetch_next_program

from .test_threads_codegen import tile_opt


@tritium.jit
def row_kernel(x_ptr, w_ptr, out_ptr, stride, N: tl.constexpr):
    """A row a program (its pointers from the program id) and a vector every program reads (``w``)."""
    row = tl.program_id(0)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + row * stride + cols)
    tl.store(out_ptr + row * stride + cols, x * tl.load(w_ptr + cols))


@tritium.jit
def chunked_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Tutorial 05's shape: the row read in chunks by a loop, twice."""
    x_ptr += tl.program_id(0) * n
    total = tl.zeros([BLOCK], tl.float32)
    for off in range(0, n, BLOCK):
        total += tl.load(x_ptr + off + tl.arange(0, BLOCK), mask=off + tl.arange(0, BLOCK) < n, other=0.0)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        tl.store(out_ptr + tl.program_id(0) * n + cols, tl.load(x_ptr + cols, mask=cols < n) / tl.sum(total),
                 mask=cols < n)


@tritium.jit
def carried_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Pointers a loop carries and advances: not recomputed for the next program."""
    ptrs = x_ptr + tl.program_id(0) * n + tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], tl.float32)
    for _ in range(0, n, BLOCK):
        total += tl.load(ptrs)
        ptrs += BLOCK
    tl.store(out_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), total)


def prefetched(kernel, types: dict[str, str], constants: dict) -> str:
    with tile.context():
        module = ir.Module.parse(tile_opt(kernel, types, constants))
        prefetch_next_program(module)
        return str(module)


def test_the_next_program_s_row_is_prefetched_after_this_one_s_load():
    text = prefetched(row_kernel, {"x_ptr": "*fp32", "w_ptr": "*fp32", "out_ptr": "*fp32", "stride": "i32"},
                      {"N": 64})
    assert text.count('"tile.prefetch"') == 1  # x's row; w is the same for every program
    lines = text.splitlines()
    pid = next(line.split(" = ")[0].strip() for line in lines if '"tile.program_id"' in line)
    nxt = next(line for line in lines if "arith.addi" in line and pid in line)  # program_id + 1
    one = nxt.split(", ")[-1].split(" :")[0]
    assert any(line.strip().startswith(f"{one} = arith.constant 1 ") for line in lines)
    load = next(i for i, line in enumerate(lines) if '"tile.load"' in line)
    assert load < next(i for i, line in enumerate(lines) if '"tile.prefetch"' in line)


def test_loads_in_loops_prefetch_the_next_program_s_chunk():
    text = prefetched(chunked_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 32})
    assert text.count('"tile.prefetch"') == 2
    for body in text.split("scf.for")[1:]:
        assert '"tile.prefetch"' in body.split("scf.yield")[0]


def test_pointers_a_loop_carries_are_left_alone():
    text = prefetched(carried_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 32})
    assert '"tile.prefetch"' not in text
