"""The GPU ``tile-layout`` stage (passes/gpu_layout): layouts chosen from axis info, slice layouts,
where ``tile.convert_layout`` stays and where it goes, on kernels from the frontend and on textual
``tile`` IR."""

import itertools
import math
import re
from types import SimpleNamespace

import pytest

import tritium
import tritium.language as tl
from tritium.codegen.device import DeviceHooks
from tritium.errors import TritiumError
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.layout.choose import access_order, vector_width
from tritium.layout.distributed import Blocked, Slice, default_blocked, distribute, layout_of_type
from tritium.passes.axis_info import AxisInfo, walk
from tritium.passes.convert_layout import remove_conversions
from tritium.passes.gpu_layout import assign_gpu_layouts, layout_stage
from tritium.runtime.compiler import compile_specialized

from .kernels.basic import add_kernel, loops_kernel, reduce2d_kernel, softmax1d
from .kernels.frontend_only import FrontendOnly


def laid_out(kernel, types, constants, specs=None, num_warps=4, warp_size=32):
    """The tile-layout text of ``kernel`` and its shared bytes (the tile-opt output laid out)."""
    asm = compile_specialized(kernel, FrontendOnly(), types, constants, specs or {}, {}).asm
    return laid_out_text(asm["tile-opt"], num_warps, warp_size)


def laid_out_text(text, num_warps=4, warp_size=32):
    with tile.context():
        module, shared = assign_gpu_layouts(ir.Module.parse(text), num_warps, warp_size)
        return str(module), shared


def layouts_of(text, op_name):
    """The layout of every tensor result of the ``op_name`` ops in the module ``text``, in program
    order."""
    with tile.context():
        module = ir.Module.parse(text)
        return [layout_of_type(r.type) for op in walk(module.operation) if op.name == op_name
                for r in op.results if isinstance(r.type, ir.RankedTensorType)]


def blocked(spt, tpw, wpc, order):
    return Blocked(tuple(spt), tuple(tpw), tuple(wpc), tuple(order))


ADD_TYPES = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
ALIGNED = {"x_ptr": "D", "y_ptr": "D", "out_ptr": "D"}


@pytest.mark.parametrize("dtype, block, warp_size, expected", [
    ("fp32", 1024, 32, blocked([4], [32], [4], [0])),   # 16 bytes of fp32
    ("fp16", 1024, 32, blocked([8], [32], [4], [0])),   # 16 bytes of fp16
    ("fp32", 128, 32, blocked([1], [32], [4], [0])),    # 128 elements for 128 threads: one each
    ("fp32", 256, 32, blocked([2], [32], [4], [0])),
    ("fp32", 1024, 64, blocked([4], [64], [4], [0])),   # a wave64 target
])
def test_vector_add_layouts(dtype, block, warp_size, expected):
    types = {k: (f"*{dtype}" if v.startswith("*") else v) for k, v in ADD_TYPES.items()}
    text, shared = laid_out(add_kernel, types, {"BLOCK": block}, ALIGNED, warp_size=warp_size)
    assert set(layouts_of(text, "tile.load")) == {expected}
    assert set(layouts_of(text, "tile.make_range")) == {expected}
    assert "tile.convert_layout" not in text and "tile.barrier" not in text
    assert shared == 0


def test_a_one_element_tile_has_a_layout():
    text, _ = laid_out(add_kernel, ADD_TYPES, {"BLOCK": 1}, ALIGNED)
    assert set(layouts_of(text, "tile.load")) == {blocked([1], [32], [4], [0])}


def test_unaligned_pointers_get_no_vectors():
    text, _ = laid_out(add_kernel, ADD_TYPES, {"BLOCK": 1024})  # no divisibility: 4-byte aligned
    assert set(layouts_of(text, "tile.load")) == {blocked([1], [32], [4], [0])}


def test_vector_width_rule():
    info = AxisInfo((64,), (16,), (1,))
    assert vector_width(info, 0, 4, 4096, 128) == 4
    assert vector_width(info, 0, 2, 4096, 128) == 8
    assert vector_width(info, 0, 1, 4096, 128) == 16
    assert vector_width(info, 0, 8, 4096, 128) == 2
    assert vector_width(AxisInfo((2,), (16,), (1,)), 0, 4, 4096, 128) == 2  # contiguity
    assert vector_width(AxisInfo((64,), (8,), (1,)), 0, 4, 4096, 128) == 2  # alignment
    assert vector_width(info, 0, 4, 256, 128) == 2                          # few elements
    assert access_order(AxisInfo((1, 64), (1, 1), (1, 1))) == (1, 0)
    assert access_order(AxisInfo((64, 1), (1, 1), (1, 1))) == (0, 1)
    assert access_order(AxisInfo((1, 1), (1, 1), (1, 1))) == (1, 0)  # ties: the last dimension first


@tritium.jit
def softmax2d(x_ptr, y_ptr, stride, n, BLOCK: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = cols[None, :] < n
    x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=-float("inf"))
    m = tl.max(x, axis=1)
    e = tl.exp(x - m[:, None])
    s = tl.sum(e, axis=1)
    tl.store(y_ptr + rows[:, None] * stride + cols[None, :], e / s[:, None], mask=mask)


SOFTMAX_TYPES = {"x_ptr": "*fp32", "y_ptr": "*fp32", "stride": "i32", "n": "i32"}


def test_softmax_2d_needs_no_conversion():
    text, shared = laid_out(softmax2d, SOFTMAX_TYPES, {"BLOCK": 256, "ROWS": 4},
                            {"x_ptr": "D", "y_ptr": "D", "stride": "D"})
    assert "tile.convert_layout" not in text
    # 4x256 fp32: 4-wide vectors, 32 threads along a row, two warps along it and two across rows
    parent = blocked([1, 4], [1, 32], [2, 2], [1, 0])
    assert layouts_of(text, "tile.load") == [parent]
    assert layouts_of(text, "tile.reduce") == [Slice(1, parent), Slice(1, parent)]
    # rows are built directly in the slice that expand_dims turns into the parent
    ranges = layouts_of(text, "tile.make_range")
    assert sorted(map(str, ranges)) == sorted(map(str, [Slice(1, parent), Slice(0, parent)]))
    assert set(layouts_of(text, "tile.expand_dims")) == {parent}
    # both reductions cross the two warps along a row: 2 warps x 4 rows x 4 bytes, at offset 0,
    # so the second waits for every thread to be done with the first
    assert re.findall(r"tile.shared_offset = (\d+)", text) == ["0", "0"]
    assert shared == 32
    second_reduce = [m.start() for m in re.finditer(r'"tile.reduce"', text)][1]
    assert text.count('"tile.barrier"') == 1 and text.index('"tile.barrier"') < second_reduce


def test_softmax_1d_needs_no_conversion():
    text, shared = laid_out(softmax1d, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024},
                            {"x_ptr": "D", "y_ptr": "D", "n": "D"})
    assert "tile.convert_layout" not in text
    assert set(layouts_of(text, "tile.load")) == {blocked([4], [32], [4], [0])}
    assert text.count('"tile.reduce"') == 2 and ") -> f32" in text  # reductions to scalars
    assert shared == 16  # 4 warps x 4 bytes, reused by the second reduction after a barrier
    assert text.count('"tile.barrier"') == 1


def test_loop_carried_tensor_keeps_its_layout():
    text, shared = laid_out(loops_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 256})
    assert "tile.convert_layout" not in text
    b = "#tile.blocked<[1 : i32], [32 : i32], [4 : i32], [0 : i32]>"  # 2 per thread would need alignment
    assert f"iter_args(%arg4 = %0) -> (tensor<256xf32, {b}>)" in text
    assert f"scf.yield %16 : tensor<256xf32, {b}>" in text
    assert shared == 16  # the final sum across 4 warps


def test_store_of_a_reduction_converts_it():
    text, shared = laid_out(reduce2d_kernel, {"x_ptr": "*fp32", "out0_ptr": "*fp32", "out1_ptr": "*fp32"},
                            {"M": 16, "N": 16, "KIND": "sum"})
    # the stores take the coalesced rank-1 layout; each reduction's slice is converted to it
    converts = layouts_of(text, "tile.convert_layout")
    assert converts == [default_blocked((16,), 4, 32)] * 2
    assert text.count('"tile.convert_layout"') == 2 and text.count('"tile.make_range"') == 3


P = "!tile.ptr<f32, 1 : i32>"
DIV16 = "{tile.divisibility = 16 : i32}"


def use(value: str, t: str) -> str:
    """An op that keeps ``value`` alive (prints it) and takes it in any layout."""
    return (f'"tile.print"({value}) {{prefix = "", hex = 0 : i32, is_signed = 0 : i32, operand = 0 : i32, '
            f'count = 1 : i32}} : ({t}) -> ()')


def kernel(body: str, args: str = f"%p: {P} {DIV16}, %n: i32") -> str:
    return f"module {{\n func.func public @k({args}) {{\n{body}\n return\n }}\n}}"


LOAD16x16 = f"""
    %r = "tile.make_range"() {{start = 0 : i32, end = 16 : i32}} : () -> tensor<16xi32>
    %row = "tile.expand_dims"(%r) {{axis = 1 : i32}} : (tensor<16xi32>) -> tensor<16x1xi32>
    %c16 = arith.constant dense<16> : tensor<16x1xi32>
    %rs = arith.muli %row, %c16 : tensor<16x1xi32>
    %col = "tile.expand_dims"(%r) {{axis = 0 : i32}} : (tensor<16xi32>) -> tensor<1x16xi32>
    %rb = "tile.broadcast"(%rs) : (tensor<16x1xi32>) -> tensor<16x16xi32>
    %cb = "tile.broadcast"(%col) : (tensor<1x16xi32>) -> tensor<16x16xi32>
    %off = arith.addi %rb, %cb : tensor<16x16xi32>
    %ps = "tile.splat"(%p) : ({P}) -> tensor<16x16x{P}>
    %ptrs = "tile.addptr"(%ps, %off) : (tensor<16x16x{P}>, tensor<16x16xi32>) -> tensor<16x16x{P}>
    %x = "tile.load"(%ptrs) {{operandSegmentSizes = array<i32: 1, 0, 0>}} : (tensor<16x16x{P}>) -> tensor<16x16xf32>
    %a0 = "tile.reduce"(%x) ({{
    ^bb0(%u: f32, %v: f32):
      %w = arith.addf %u, %v : f32
      "tile.reduce_return"(%w) {{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>}} : (f32) -> ()
    }}) {{axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>}} : (tensor<16x16xf32>) -> tensor<16xf32>
    %a1 = "tile.reduce"(%x) ({{
    ^bb0(%u: f32, %v: f32):
      %w = arith.maxnumf %u, %v : f32
      "tile.reduce_return"(%w) {{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>}} : (f32) -> ()
    }}) {{axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>}} : (tensor<16x16xf32>) -> tensor<16xf32>
"""


def test_reductions_along_different_axes_are_converted_to_one_layout():
    text, shared = laid_out_text(kernel(LOAD16x16 + """
    %sum = arith.addf %a0, %a1 : tensor<16xf32> loc("sum")
    %prod = arith.mulf %a0, %a1 : tensor<16xf32>
""" + use("%sum", "tensor<16xf32>") + use("%prod", "tensor<16xf32>")))
    (load,) = layouts_of(text, "tile.load")
    converts = layouts_of(text, "tile.convert_layout")
    assert converts == [Slice(0, load)]  # the second operand goes to the first's layout, once
    assert layouts_of(text, "arith.addf")[-1] == Slice(0, load)
    assert "tile.shared_offset" in text and shared > 0


def test_expand_dims_of_a_loaded_tensor_is_converted():
    text, _ = laid_out_text(kernel(f"""
    %r = "tile.make_range"() {{start = 0 : i32, end = 64 : i32}} : () -> tensor<64xi32>
    %ps = "tile.splat"(%p) : ({P}) -> tensor<64x{P}>
    %ptrs = "tile.addptr"(%ps, %r) : (tensor<64x{P}>, tensor<64xi32>) -> tensor<64x{P}>
    %x = "tile.load"(%ptrs) {{operandSegmentSizes = array<i32: 1, 0, 0>}} : (tensor<64x{P}>) -> tensor<64xf32>
    %e = "tile.expand_dims"(%x) {{axis = 1 : i32}} : (tensor<64xf32>) -> tensor<64x1xf32>
    %s = "tile.reduce"(%e) ({{
    ^bb0(%u: f32, %v: f32):
      %w = arith.addf %u, %v : f32
      "tile.reduce_return"(%w) {{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>}} : (f32) -> ()
    }}) {{axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>}} : (tensor<64x1xf32>) -> tensor<64xf32>
""" + use("%s", "tensor<64xf32>")))
    (e,) = layouts_of(text, "tile.expand_dims")
    assert layouts_of(text, "tile.convert_layout") == [Slice(1, e)]
    assert layouts_of(text, "tile.make_range") == [layouts_of(text, "tile.load")[0]]  # no clone needed


def loop_adding(lhs: str, rhs: str) -> str:
    """Laid-out text of a loop whose carried ``%a`` (init ``%a1``, slice 1 of the load) becomes
    ``lhs + rhs``, where ``%a0`` (slice 0) is available."""
    text, _ = laid_out_text(kernel(LOAD16x16 + f"""
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %a1) -> (tensor<16xf32>) : i32 {{
      %b = arith.addf {lhs}, {rhs} : tensor<16xf32>
      scf.yield %b : tensor<16xf32>
    }}
""" + use("%acc", "tensor<16xf32>")))
    return text


def test_loop_yield_is_converted_to_the_carried_layout():
    text = loop_adding("%a", "%a0")
    (load,) = layouts_of(text, "tile.load")
    carried = Slice(1, load)  # the init's
    assert layouts_of(text, "scf.for") == [carried]
    # a0 (slice 0) is converted to the carried layout once, where it is defined, not in every
    # iteration; the sum is yielded without conversion
    assert layouts_of(text, "tile.convert_layout") == [carried]
    assert re.search(r"iter_args\(%arg3 = %\d+\) -> \(tensor<16xf32, #tile.slice<1 : i32", text)
    assert text.index('"tile.convert_layout"') < text.index("scf.for")
    assert '"tile.barrier"' not in text[text.index("scf.for"):]


def test_a_yield_in_another_layout_is_converted_in_the_body():
    text = loop_adding("%a0", "%a")
    (load,) = layouts_of(text, "tile.load")
    assert layouts_of(text, "scf.for") == [Slice(1, load)]
    assert layouts_of(text, "arith.addf")[-1] == Slice(0, load)  # a0 decides, the carried value converts
    body = text[text.index("scf.for"):]
    assert layouts_of(text, "tile.convert_layout") == [Slice(0, load), Slice(1, load)]
    assert body.count('"tile.convert_layout"') == 2 and body.count('"tile.barrier"') == 2
    assert re.search(r'"tile.convert_layout"\(%\d+\) .*\n\s*scf.yield', body)


def test_while_loops_carry_one_layout():
    text, _ = laid_out_text(kernel(LOAD16x16 + """
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %res:2 = scf.while (%i = %c0, %a = %a1) : (i32, tensor<16xf32>) -> (i32, tensor<16xf32>) {
      %go = arith.cmpi slt, %i, %n : i32
      scf.condition(%go) %i, %a : i32, tensor<16xf32>
    } do {
    ^bb0(%j: i32, %b: tensor<16xf32>):
      %j1 = arith.addi %j, %c1 : i32
      %b1 = arith.addf %a0, %b : tensor<16xf32>
      scf.yield %j1, %b1 : i32, tensor<16xf32>
    }
""" + use("%res#1", "tensor<16xf32>")))
    (load,) = layouts_of(text, "tile.load")
    assert layouts_of(text, "scf.while") == [Slice(1, load)]  # the init's (a1)
    # in `do`, the carried value goes to a0's layout and the sum back for the yield
    assert layouts_of(text, "tile.convert_layout") == [Slice(0, load), Slice(1, load)]
    after = text[text.index("} do {"):]
    assert after.count('"tile.convert_layout"') == 2 and after.count('"tile.barrier"') == 2


def test_if_branches_yield_one_layout():
    text, _ = laid_out_text(kernel(LOAD16x16 + """
    %c0 = arith.constant 0 : i32
    %cond = arith.cmpi sgt, %n, %c0 : i32
    %res = scf.if %cond -> (tensor<16xf32>) {
      scf.yield %a0 : tensor<16xf32>
    } else {
      scf.yield %a1 : tensor<16xf32>
    }
""" + use("%res", "tensor<16xf32>")))
    (load,) = layouts_of(text, "tile.load")
    assert layouts_of(text, "scf.if") == [Slice(0, load)]
    assert layouts_of(text, "tile.convert_layout") == [Slice(0, load)]
    assert text.index('"tile.convert_layout"') < text.index("scf.if")  # where a1 is defined


def test_needless_conversions_are_removed():
    b = "#tile.blocked<[1 : i32], [32 : i32], [4 : i32], [0 : i32]>"
    c = "#tile.blocked<[2 : i32], [32 : i32], [2 : i32], [0 : i32]>"
    text = f"""
#B = {b}
#C = {c}
module {{
  func.func public @k(%p: {P}) {{
    %r = "tile.make_range"() {{start = 0 : i32, end = 64 : i32}} : () -> tensor<64xi32, #B>
    %ps = "tile.splat"(%p) : ({P}) -> tensor<64x{P}, #B>
    %ptrs = "tile.addptr"(%ps, %r) : (tensor<64x{P}, #B>, tensor<64xi32, #B>) -> tensor<64x{P}, #B>
    %x = "tile.load"(%ptrs) {{operandSegmentSizes = array<i32: 1, 0, 0>}} : (tensor<64x{P}, #B>) -> tensor<64xf32, #B>
    %same = "tile.convert_layout"(%x) : (tensor<64xf32, #B>) -> tensor<64xf32, #B>
    %y = "tile.convert_layout"(%same) : (tensor<64xf32, #B>) -> tensor<64xf32, #C>
    %z = "tile.convert_layout"(%y) : (tensor<64xf32, #C>) -> tensor<64xf32, #B>
    %w = "tile.convert_layout"(%z) : (tensor<64xf32, #B>) -> tensor<64xf32, #C>
    %rc = "tile.convert_layout"(%r) : (tensor<64xi32, #B>) -> tensor<64xi32, #C>
    %ps2 = "tile.splat"(%p) : ({P}) -> tensor<64x{P}, #C>
    %ptrs2 = "tile.addptr"(%ps2, %rc) : (tensor<64x{P}, #C>, tensor<64xi32, #C>) -> tensor<64x{P}, #C>
    "tile.store"(%ptrs2, %w) {{operandSegmentSizes = array<i32: 1, 1, 0>}}
        : (tensor<64x{P}, #C>, tensor<64xf32, #C>) -> ()
    "tile.store"(%ptrs, %z) {{operandSegmentSizes = array<i32: 1, 1, 0>}}
        : (tensor<64x{P}, #B>, tensor<64xf32, #B>) -> ()
    return
  }}
}}"""
    with tile.context():
        module = ir.Module.parse(text)
        remove_conversions(module)
        module.operation.verify()
        out = str(module)
    # %same goes, %z is %x, %y and %w are one conversion of %x, %r is rebuilt as a range in #C
    assert out.count('"tile.convert_layout"') == 1
    assert re.search(r'"tile.convert_layout"\(%\d+\) : \(tensor<64xf32, #tile.blocked<\[1', out)
    assert f"() -> tensor<64xi32, {c}>" in out and out.count('"tile.make_range"') == 2


def test_layout_stage_records_metadata_and_is_described():
    asm = compile_specialized(softmax1d, FrontendOnly(), {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"},
                              {"BLOCK": 1024}, {"x_ptr": "D", "y_ptr": "D", "n": "D"}, {}).asm
    stage = layout_stage(DeviceHooks())
    ctx = SimpleNamespace(options=SimpleNamespace(num_warps=8, num_stages=3), target=FrontendOnly(), metadata={})
    with tile.context():
        out = stage(ir.Module.parse(asm["tile-opt"]), ctx)
        assert layouts_of(str(out), "tile.load") == [blocked([4], [32], [8], [0])]
    assert ctx.metadata == {"shared": 32, "num_warps": 8}
    assert stage.__doc__.splitlines()[0].startswith("Distributed GPU layouts")


@pytest.mark.parametrize("num_warps, warp_size", [(3, 32), (4, 48), (0, 32)])
def test_warp_counts_must_be_powers_of_two(num_warps, warp_size):
    with pytest.raises(TritiumError, match="power of two"):
        laid_out(add_kernel, ADD_TYPES, {"BLOCK": 128}, num_warps=num_warps, warp_size=warp_size)


SHAPES = [(1,), (16,), (128,), (1024,), (4, 256), (16, 16), (64, 1), (1, 64), (2, 8), (2, 4, 32)]


@pytest.mark.parametrize("shape", SHAPES)
def test_chosen_layouts_cover_every_element(shape):
    """Every element of a tile is held by some thread, in every layout the stage can choose for a
    tile of its rank (a layout chosen for one shape serves all shapes of the rank) and in the
    slices of those layouts."""
    largest = max((s for s in SHAPES if len(s) == len(shape)), key=math.prod)
    for num_warps, warp_size, vector in itertools.product((1, 4, 8), (32, 64), (1, 16)):
        for chosen_for, order in itertools.product({shape, largest}, itertools.permutations(range(len(shape)))):
            layout = default_blocked(chosen_for, num_warps, warp_size, vector, order)
            assert _covered(distribute(layout, shape), num_warps, warp_size) == _all(shape), (layout, shape)
            for dim in range(len(shape) if len(shape) > 1 else 0):
                sliced = shape[:dim] + shape[dim + 1:]
                assert _covered(distribute(Slice(dim, layout), sliced), num_warps, warp_size) == _all(sliced)


def _all(shape):
    return set(itertools.product(*map(range, shape)))


def _covered(dist, num_warps, warp_size):
    return {c for lane in range(warp_size) for warp in range(num_warps) for c in dist.coordinates(lane, warp)}


@tritium.jit
def row_max_loop(x_ptr, out_ptr, n, stride, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """Running row maxima and sums over column blocks, as attention's m_i and l_i."""
    rows = tl.arange(0, ROWS)
    m = tl.zeros((ROWS,), dtype=tl.float32) - float("inf")
    s = tl.zeros((ROWS,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :])
        m_new = tl.maximum(m, tl.max(x, axis=1))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new[:, None]), axis=1)
        m = m_new
    tl.store(out_ptr + rows, s)


def test_loop_accumulators_of_reductions_carry_the_slice_layout():
    text, _ = laid_out(row_max_loop, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "stride": "i32"},
                       {"ROWS": 16, "BLOCK": 64}, {"x_ptr": "D", "stride": "D"})
    (load,) = layouts_of(text, "tile.load")
    assert layouts_of(text, "scf.for") == [Slice(1, load), Slice(1, load)]
    body = text[text.index("scf.for"):text.index("scf.yield")]
    assert '"tile.convert_layout"' not in body
    # the only conversion: the sums, to the store's layout after the loop
    assert layouts_of(text, "tile.convert_layout") == [default_blocked((16,), 4, 32)]


def test_loads_only_products_read_take_their_own_layout_and_their_pointers_advance_in_it():
    """Tutorial 03 at BM=128, BN=256, BK=64: the stored result decides the rank's layout (threads
    along 256 columns), which would have four threads load each element of A (64 columns). A's
    load takes its own layout, with no copies, and the loop carries A's pointers in it: nothing is
    converted (on the FMA path here; a matrix unit's epilogue converts its result once)."""
    from .kernels.dots import matmul_kernel

    scalars = ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")
    types = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **{s: "i32" for s in scalars}}
    specs = {name: "D" for name in types} | {"stride_ak": "1", "stride_bn": "1", "stride_cn": "1"}
    constants = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8}
    text, _ = laid_out(matmul_kernel, types, constants, specs, num_warps=8)
    a_load, b_load = layouts_of(text, "tile.load")[:2]
    assert a_load == blocked([1, 8], [4, 8], [8, 1], [1, 0])
    assert b_load == blocked([1, 8], [1, 32], [8, 1], [1, 0])
    for layout, shape in ((a_load, (128, 64)), (b_load, (64, 256))):
        assert not distribute(layout, shape).copies(distribute(layout, shape).lane_bases)
    assert not layouts_of(text, "tile.convert_layout")


@tritium.jit
def matmul_wt_loop(a_ptr, w_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        w = tl.load(w_ptr + rn[:, None] * K + (k0 + rk)[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))


def test_a_load_a_product_reads_through_a_transpose_takes_its_own_layout_too():
    """``tl.dot(a, tl.trans(w))`` at BM=128, BN=256, BK=64: w's ``[256, 64]`` block would take the
    stored result's layout (threads along 256 columns), four threads loading each element."""
    types = {"a_ptr": "*fp16", "w_ptr": "*fp16", "c_ptr": "*fp16", "K": "i32"}
    text, _ = laid_out(matmul_wt_loop, types, {"BM": 128, "BN": 256, "BK": 64}, {name: "D" for name in types},
                       num_warps=8)
    a_load, w_load = layouts_of(text, "tile.load")[:2]
    assert w_load == blocked([1, 8], [4, 8], [8, 1], [1, 0])
    for layout, shape in ((a_load, (128, 64)), (w_load, (256, 64))):
        assert not distribute(layout, shape).copies(distribute(layout, shape).lane_bases)
