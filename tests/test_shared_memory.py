"""Shared-memory scratch (passes/shared_memory): sizes, offsets by liveness, and barriers where a
scratch reuse needs one, on textual ``tile`` IR."""

import re

import pytest

from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.passes.axis_info import walk
from tritium.layout.scratch import scratch_bytes
from tritium.passes.shared_memory import Buffer, allocate, allocate_shared, place_barriers

B = "#tile.blocked<[1 : i32], [32 : i32], [4 : i32], [0 : i32]>"
C = "#tile.blocked<[4 : i32], [32 : i32], [1 : i32], [0 : i32]>"
#: 4x32: a row in one warp (32 lanes along dim 1), the 4 warps along dim 0
ROWS = "#tile.blocked<[1 : i32, 1 : i32], [1 : i32, 32 : i32], [4 : i32, 1 : i32], [1 : i32, 0 : i32]>"
P = "!tile.ptr<f32, 1 : i32>"


def module(body: str, args: str = "%n: i32") -> str:
    return (f"#B = {B}\n#C = {C}\n#R = {ROWS}\nmodule {{\n func.func public @k({args}) {{\n"
            f"  %r = \"tile.make_range\"() {{start = 0 : i32, end = 128 : i32}} : () -> tensor<128xi32, #B>\n"
            f"  %c0 = arith.constant 0 : i32\n  %c1 = arith.constant 1 : i32\n"
            f"{body}\n return\n }}\n}}")


def convert(name: str, elem: str = "i32", src: str = "%r") -> str:
    return (f'{name} = "tile.convert_layout"({src}) : (tensor<128x{elem}, #B>) -> tensor<128x{elem}, #C> '
            f'loc("{name[1:]}")')


def reduce(name: str, src: str, shape: str, axis: int, result: str) -> str:
    return (f'{name} = "tile.reduce"({src}) ({{\n ^bb0(%u: f32, %v: f32):\n  %w = arith.addf %u, %v : f32\n'
            f'  "tile.reduce_return"(%w) {{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>}} : (f32) -> ()\n }}) {{axis = {axis} : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>}} : '
            f'(tensor<{shape}xf32, #R>) -> {result}')


def allocated(body: str) -> tuple[str, int, list[str]]:
    """The module of ``body`` after allocation, its shared bytes, and its conversions (by location
    name) and barriers ('B') in program order."""
    with tile.context():
        m = ir.Module.parse(module(body))
        total = allocate_shared(m)
        m.operation.verify()
        order = ["B" if op.name == "tile.barrier" else str(op.location)[5:-2] for op in walk(m.operation)
                 if op.name in ("tile.barrier", "tile.convert_layout")]
        return str(m), total, order


def test_conversion_sizes_count_elements_bytes():
    body = "\n".join([convert("%a"),
                      '%f = arith.sitofp %r : tensor<128xi32, #B> to tensor<128xf16, #B>', convert("%b", "f16", "%f"),
                      '%z = arith.constant dense<0> : tensor<128xi32, #B>',
                      '%m = arith.cmpi slt, %r, %z : tensor<128xi32, #B>', convert("%c", "i1", "%m"),
                      f'%p = "tile.splat"(%pp) : ({P}) -> tensor<128x{P}, #B>', convert("%d", P, "%p")])
    with tile.context():
        m = ir.Module.parse(module(body, f"%n: i32, %pp: {P}"))
        ops = [op for op in walk(m.operation) if op.name == "tile.convert_layout"]
        assert [scratch_bytes(op) for op in ops] == [512, 256, 128, 1024]  # i1 is a byte, a pointer 8
        assert scratch_bytes(ops[3], lambda addrspace: 32) == 512  # a target with 32-bit pointers


def test_a_conversion_between_equal_distributions_needs_no_scratch():
    # [4] sliced along dim 1 from #R or from #R with 4 elements per thread along dim 1: the same
    w = ("#tile.slice<1 : i32, #tile.blocked<[1 : i32, 4 : i32], [1 : i32, 32 : i32], [4 : i32, 1 : i32], "
         "[1 : i32, 0 : i32]>>")
    body = f"""
    %s = "tile.splat"(%f) : (f32) -> tensor<4xf32, #tile.slice<1 : i32, #R>>
    %same = "tile.convert_layout"(%s) : (tensor<4xf32, #tile.slice<1 : i32, #R>>) -> tensor<4xf32, {w}>
    %other = "tile.convert_layout"(%s) : (tensor<4xf32, #tile.slice<1 : i32, #R>>) -> tensor<4xf32, #B>"""
    with tile.context():
        m = ir.Module.parse(module(body, "%n: i32, %f: f32"))
        assert [scratch_bytes(op) for op in walk(m.operation) if op.name == "tile.convert_layout"] == [0, 16]
        assert allocate_shared(m) == 16
        assert str(m).count("tile.shared_offset") == 1


def test_reductions_need_scratch_only_across_warps():
    body = "\n".join([
        '%x = "tile.splat"(%f) : (f32) -> tensor<4x32xf32, #R>',
        reduce("%along_lanes", "%x", "4x32", 1, "tensor<4xf32, #tile.slice<1 : i32, #R>>"),
        reduce("%across_warps", "%x", "4x32", 0, "tensor<32xf32, #tile.slice<0 : i32, #R>>"),
        '%y = "tile.splat"(%f) : (f32) -> tensor<2x32xf32, #R>',  # 4 warps on 2 rows: 2 distinct
        reduce("%two_warps", "%y", "2x32", 0, "tensor<32xf32, #tile.slice<0 : i32, #R>>"),
        '%s = "tile.splat"(%f) : (f32) -> tensor<4x1xf32, #R>',
        reduce("%scalar", "%s", "4x1", 0, "tensor<1xf32, #tile.slice<0 : i32, #R>>"),
    ])
    with tile.context():
        m = ir.Module.parse(module(body, "%n: i32, %f: f32"))
        sizes = [scratch_bytes(op) for op in walk(m.operation) if op.name == "tile.reduce"]
    # within a warp: shuffles, no scratch; across 4 warps: 4 partials of each of 32 results
    assert sizes == [0, 4 * 32 * 4, 2 * 32 * 4, 4 * 1 * 4]


def test_allocation_reuses_bytes_by_liveness():
    a, b, c, d = Buffer(0, 4, 100), Buffer(2, 6, 40), Buffer(5, 9, 64), Buffer(7, 8, 16)
    total = allocate([a, b, c, d])
    assert (a.offset, b.offset) == (0, 112)  # live together: apart, 16-byte aligned
    assert c.offset == 0                     # a is dead by then; b is not, but c fits below it
    assert d.offset == 64                    # beside c, below b's bytes (b is dead by then)
    assert total == 152
    assert allocate([]) == 0
    # a gap between live buffers is used when it is large enough
    x, y, z = Buffer(0, 9, 32), Buffer(0, 9, 64), Buffer(3, 3, 16)
    allocate([x, y, z])
    assert sorted([(x.offset, 32), (y.offset, 64), (z.offset, 16)]) == [(0, 64), (64, 32), (96, 16)]


def test_straight_line_uses_share_offset_zero_with_barriers_between():
    text, total, order = allocated("\n".join([
        convert("%a"), convert("%b"),
        "%f = arith.sitofp %r : tensor<128xi32, #B> to tensor<128xf32, #B>", convert("%c", "f32", "%f")]))
    assert re.findall(r"tile.shared_offset = (\d+)", text) == ["0", "0", "0"]
    assert total == 512
    assert order == ["a", "B", "b", "B", "c"]  # none before the first use


def test_no_barrier_between_disjoint_bytes():
    with tile.context():
        m = ir.Module.parse(module("\n".join([convert("%a"), convert("%b")])))
        ops = [op for op in walk(m.operation) if op.name == "tile.convert_layout"]
        ops[0].attributes["tile.shared_offset"] = tile.i32_attr(0)
        ops[1].attributes["tile.shared_offset"] = tile.i32_attr(512)
        place_barriers(m)
        assert '"tile.barrier"' not in str(m)
        ops[1].attributes["tile.shared_offset"] = tile.i32_attr(496)  # one 16-byte overlap
        place_barriers(m)
        assert str(m).count('"tile.barrier"') == 1


LOOP = """
  scf.for %{iv} = %c0 to %n step %c1 : i32 {{
{body}
  }}
"""


@pytest.mark.parametrize("before, body, expected", [
    # a single use in a loop body meets its own previous iteration
    ("", convert("%a"), ["B", "a"]),
    # two uses: each waits for the other
    ("", convert("%a") + "\n" + convert("%b"), ["B", "a", "B", "b"]),
    # a use before the loop and none in it: nothing to wait for
    (convert("%x"), "%k = arith.addi %n, %n : i32", ["x"]),
    # a use before the loop and one in it: the first iteration waits for it anyway
    (convert("%x"), convert("%a"), ["x", "B", "a"]),
])
def test_loops_wait_for_the_previous_iteration(before, body, expected):
    assert allocated(before + LOOP.format(iv="i", body=body))[2] == expected


def test_nested_loops_and_branches():
    body = (convert("%x") + LOOP.format(iv="i", body=LOOP.format(iv="j", body=convert("%a"))) +
            """
  %cond = arith.cmpi sgt, %n, %c0 : i32
  scf.if %cond {
""" + convert("%t") + """
  }
""" + convert("%after") + "\n" + convert("%again"))
    text, _, order = allocated(body)
    inner = text.index("scf.for", text.index("scf.for") + 1)
    assert text.index('"tile.barrier"', inner) < text.index('"tile.convert_layout"', inner)
    # the branch's use follows the loop's; the use after the if follows either path
    assert order == ["x", "B", "a", "B", "t", "B", "after", "B", "again"]


def test_a_branch_without_scratch_keeps_the_state():
    body = convert("%x") + """
  %cond = arith.cmpi sgt, %n, %c0 : i32
  scf.if %cond {
    "tile.barrier"() : () -> ()
  }
""" + convert("%y")
    assert allocated(body)[2] == ["x", "B", "B", "y"]  # the if may not run: %y still waits
