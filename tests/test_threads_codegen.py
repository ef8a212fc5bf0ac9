"""Core's per-thread code generator (``tritium.codegen.threads``) on real kernels.

Kernels are compiled to ``tile-opt``, given layouts here (one blocked layout per rank and its
slices, chosen by shape; the GPU layout stage is tested on its own), then

- run on the host by the SIMT emulator (``tritium_simt.emulator``) (one OS thread per GPU thread, barriers and shuffles
  through Python) and compared with numpy: what the generated code computes;
- compiled to PTX through the nvptx target's hooks and ``ptx`` stage: what it becomes on the GPU
  (16-byte vectors, shuffles, barriers), assembled with ``ptxas`` where installed; these tests
  skip where the tritium-nvptx package is not installed.
"""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
import types

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.codegen.device import DeviceHooks
from tritium.codegen.threads import generate, scratch_bytes
from tritium.codegen.threads.indexing import evaluate
from tritium.codegen.threads.memory import vector_width
from tritium.errors import NotImplementedYet, TritiumError
from tritium.ir import tile
from tritium.runtime import debug_output
from tritium.ir.mlir import ir
from tritium.layout import assign_encodings
from tritium.layout.distributed import Blocked, Slice, default_blocked, distribute
from tritium.runtime.compiler import compile_specialized
from tritium.passes.axis_info import walk

from .kernels.basic import add_kernel, loops_kernel
from .kernels.frontend_only import FrontendOnly
from tritium_simt import emulator as threads_emulator
from tritium_simt.emulator import run


@tritium.jit
def softmax_kernel(x_ptr, out_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


@tritium.jit
def softmax_rows_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.program_id(0) * R + tl.arange(0, R)
    offs = rows[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    tl.store(out_ptr + offs, e / tl.sum(e, axis=1)[:, None])


@tritium.jit
def reduce_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr, OP: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :])
    if OP == "sum":
        y = tl.sum(x, axis=AXIS)
    elif OP == "max":
        y = tl.max(x, axis=AXIS)
    else:
        y = tl.min(x, axis=AXIS)
    if AXIS == 0:
        tl.store(out_ptr + c, y)
    elif AXIS == 1:
        tl.store(out_ptr + r, y)
    else:
        tl.store(out_ptr, y)


@tritium.jit
def branches_kernel(x_ptr, out_ptr, flag, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if flag > 0:
        y = x * 2.0
    else:
        y = x - 1.0
    i = 0
    while i < n:
        y = y + i
        i += 1
    tl.store(out_ptr + offs, y + tl.num_programs(0))


@tritium.jit
def print_kernel(x_ptr):
    tl.device_print("x", tl.load(x_ptr))


@tritium.jit
def prints_kernel(x_ptr, n_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    tl.device_print("x", x)
    tl.device_print("bits", x, hex=True)
    tl.device_print("n 100%", tl.load(n_ptr), tl.load(n_ptr) * 2)
    tl.device_print("done")
    tl.device_assert(x > -2.5, "not below -2.5")


def tile_opt(kernel, signature: dict[str, str], constants: dict, divisible: tuple[str, ...] = (), **options) -> str:
    """The kernel at ``tile-opt``, with ``divisible`` arguments specialised as multiples of 16."""
    specs = {name: "D" for name in divisible}
    return compile_specialized(kernel, FrontendOnly(), signature, constants, specs, options).asm["tile-opt"]


def with_layouts(text: str, num_warps: int, warp_size: int, vector: int = 4,
                 slices: dict[int, int] | None = None) -> ir.Module:
    """Parse ``text`` and give every tensor ``default_blocked`` of the largest shape of its rank;
    rank-1 tensors of a length in ``slices`` get that dimension's slice of the rank-2 layout.
    Reductions and conversions get distinct ``tile.shared_offset`` (no reuse, so no barriers)."""
    module = ir.Module.parse(text)
    shapes: dict[int, tuple[int, ...]] = {}

    for op in walk(module.operation):
        for res in op.results:
            if isinstance(res.type, ir.RankedTensorType):
                shape = tuple(res.type.shape)
                if shapes.get(len(shape), ()) < shape:
                    shapes[len(shape)] = shape
    blocked = {rank: default_blocked(shape, num_warps, warp_size, vector) for rank, shape in shapes.items()}

    def encode(t: ir.RankedTensorType) -> ir.Attribute:
        if t.rank == 1 and slices and t.shape[0] in slices:
            return Slice(slices[t.shape[0]], blocked[2]).attr()
        return blocked[t.rank].attr()

    assign_encodings(module, encode)
    offset = 0
    for op in walk(module.operation):
        if op.name in ("tile.reduce", "tile.convert_layout"):
            op.attributes["tile.shared_offset"] = tile.i32_attr(offset)
            offset += 4096
    return module


def nvptx_hooks():
    """The nvptx target's ``NvptxHooks`` (the test skips without the tritium-nvptx package)."""
    return pytest.importorskip("tritium_nvptx.hooks", reason="tritium-nvptx is not installed").NvptxHooks


def nvptx(module: ir.Module, num_warps: int, hooks=None) -> tuple[str, str]:
    """(LLVM IR, PTX for sm_90) of ``module`` through the nvptx target's hooks (or ``hooks``) and ``ptx`` stage."""
    hooks = hooks or nvptx_hooks()()
    from tritium_nvptx import compiler
    from tritium_nvptx.target import NvptxTarget

    text = generate(module, hooks, compiler.TRIPLE, compiler.datalayout(), num_warps)
    target = NvptxTarget()
    ctx = types.SimpleNamespace(target=target, options=target.parse_options({"arch": "sm_90", "num_warps": num_warps}),
                                metadata={"shared": 0}, signature=types.SimpleNamespace(name="kernel"))
    return text, compiler.ptx(text, ctx)


# -- indexing --------------------------------------------------------------------------------------

DISTRIBUTIONS = [
    (Blocked((4,), (32,), (4,), (0,)), (1024,)),
    (Blocked((4,), (32,), (4,), (0,)), (64,)),      # fewer elements than threads: copies
    (Blocked((1,), (8,), (2,), (0,)), (4,)),
    (Blocked((2, 4), (4, 8), (2, 2), (1, 0)), (32, 64)),
    (Blocked((1, 4), (8, 4), (1, 4), (1, 0)), (8, 8)),
    (Blocked((4, 1), (8, 4), (4, 1), (0, 1)), (16, 64)),
    (Slice(1, Blocked((2, 4), (4, 8), (2, 2), (1, 0))), (32,)),
    (Slice(0, Blocked((2, 4), (4, 8), (2, 2), (1, 0))), (64,)),
    (Slice(0, Blocked((1, 4), (8, 4), (1, 4), (1, 0))), (8,)),
]


@pytest.mark.parametrize("layout,shape", DISTRIBUTIONS, ids=[f"{l}-{s}" for l, s in DISTRIBUTIONS])
def test_thread_plan_gives_each_registers_coordinates(layout, shape):
    dist = distribute(layout, shape)
    lanes = 1 << len(dist.lane_bases)
    warps = 1 << len(dist.warp_bases)
    for lane, warp in itertools.product(range(lanes), range(warps)):
        assert evaluate(dist, lane, warp) == dist.coordinates(lane, warp)


def test_vector_width_follows_the_registers_a_thread_holds_in_a_row():
    assert vector_width(distribute(Blocked((4,), (32,), (4,), (0,)), (1024,)), 4) == 4
    assert vector_width(distribute(Blocked((4,), (32,), (4,), (0,)), (1024,)), 2) == 2
    assert vector_width(distribute(Blocked((8,), (32,), (4,), (0,)), (2048,)), 16) == 8
    assert vector_width(distribute(Blocked((1,), (32,), (4,), (0,)), (1024,)), 4) == 1
    # along dim 0 the registers (order [1, 0]) are not consecutive elements in memory order
    assert vector_width(distribute(Blocked((4, 1), (8, 4), (4, 1), (1, 0)), (32, 4)), 4) == 1
    assert vector_width(distribute(Slice(1, Blocked((1, 4), (8, 4), (4, 1), (1, 0))), (32,)), 4) == 1


# -- what the code computes (host emulation) --------------------------------------------------------

def test_vector_add_runs_masked():
    text = tile_opt(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                    {"BLOCK": 128}, divisible=("x_ptr", "y_ptr", "out_ptr", "n"))
    n = 304  # a multiple of 16, as specialised: the mask is constant over 4 elements
    x = np.random.default_rng(0).standard_normal(384).astype(np.float32)
    y = np.random.default_rng(1).standard_normal(384).astype(np.float32)
    out = np.full(384, -7.0, np.float32)
    with tile.context():
        llvm_ir = run(with_layouts(text, 2, 8), (3,), [x, y, out, n])
    assert "load <4 x float>" in llvm_ir and "store <4 x float>" in llvm_ir
    np.testing.assert_array_equal(out[:n], x[:n] + y[:n])
    assert (out[n:] == -7.0).all()


def test_elements_held_by_several_threads_are_stored_once():
    text = tile_opt(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                    {"BLOCK": 16}, divisible=("x_ptr", "y_ptr", "out_ptr", "n"))
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    before = threads_emulator.stored_elements
    with tile.context():
        module = with_layouts(text, 2, 8)  # 16 threads x 4 elements: each element held by 4 threads
        run(module, (1,), [x, x, out, 16])
    assert threads_emulator.stored_elements - before == 16
    np.testing.assert_array_equal(out, 2 * x)


@pytest.mark.parametrize("n,divisible", [(200, ()), (192, ("x_ptr", "out_ptr", "stride", "n"))])
def test_softmax_row_reduces_across_warps_with_other(n, divisible):
    """Unaligned, the masked loads are scalar; aligned, they are vectors whose ``other`` is one too."""
    text = tile_opt(softmax_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "stride": "i32", "n": "i32"},
                    {"BLOCK": 256}, divisible=divisible)
    x = np.random.default_rng(2).standard_normal((3, 256)).astype(np.float32)
    out = np.zeros_like(x)
    with tile.context():
        llvm_ir = run(with_layouts(text, 2, 8), (3,), [x, out, 256, n])
    assert ("load <4 x float>" in llvm_ir) == bool(divisible)
    ref = np.exp(x[:, :n].astype(np.float64) - x[:, :n].max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out[:, :n], ref, rtol=1e-5)
    assert (out[:, n:] == 0).all()


@tritium.jit
def bool_kernel(x_ptr, flags_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(flags_ptr + offs, x > 0)
    flags = tl.load(flags_ptr + offs)
    tl.store(out_ptr + offs, tl.where(flags, x, -x))


def test_booleans_are_bytes_in_memory():
    text = tile_opt(bool_kernel, {"x_ptr": "*fp32", "flags_ptr": "*i1", "out_ptr": "*fp32"}, {"BLOCK": 64},
                    divisible=("x_ptr", "flags_ptr", "out_ptr"))
    x = np.random.default_rng(11).standard_normal(64).astype(np.float32)
    flags = np.full(64, 7, np.uint8)
    out = np.zeros_like(x)
    with tile.context():
        llvm_ir = run(with_layouts(text, 2, 8), (1,), [x, flags, out])
    assert "store <4 x i8>" in llvm_ir
    np.testing.assert_array_equal(flags, (x > 0).astype(np.uint8))
    np.testing.assert_array_equal(out, np.abs(x))


def test_softmax_over_rows_of_a_2d_tile():
    text = tile_opt(softmax_rows_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"R": 16, "C": 32},
                    divisible=("x_ptr", "out_ptr"))
    x = np.random.default_rng(3).standard_normal((32, 32)).astype(np.float32)
    out = np.zeros_like(x)
    with tile.context():
        run(with_layouts(text, 2, 8, slices={16: 1, 32: 0}), (2,), [x, out])
    ref = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, ref / ref.sum(axis=1, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("num_warps,warp_size", [(2, 8), (4, 4)])
def test_reductions(op, axis, num_warps, warp_size):
    rows, cols = 16, 32
    text = tile_opt(reduce_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"},
                    {"R": rows, "C": cols, "AXIS": axis, "OP": op}, divisible=("x_ptr", "out_ptr"))
    x = np.random.default_rng(4).standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros(max(rows, cols), np.float32)
    with tile.context():
        run(with_layouts(text, num_warps, warp_size, slices={rows: 1, cols: 0}), (1,), [x, out],
            num_warps=num_warps, warp_size=warp_size)
    ref = getattr(x.astype(np.float64), op)(axis=axis)
    got = out[:np.size(ref)]
    np.testing.assert_allclose(got, np.ravel(ref), rtol=1e-5)


@pytest.mark.parametrize("dtype,op", [("float64", "sum"), ("int64", "max")])
def test_reductions_shuffle_64_bit_values_as_two_words(dtype, op):
    rows, cols = 8, 16
    short = {"float64": "fp64", "int64": "i64"}[dtype]
    text = tile_opt(reduce_kernel, {"x_ptr": "*" + short, "out_ptr": "*" + short},
                    {"R": rows, "C": cols, "AXIS": 1, "OP": op})
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((rows, cols)) * 20).astype(dtype)
    if dtype == "int64":
        x = x * (1 << 40) - (1 << 35)  # values that need the high word
    out = np.zeros(rows, dtype)
    with tile.context():
        run(with_layouts(text, 2, 8, vector=2, slices={rows: 1, cols: 0}), (1,), [x, out])
    ref = getattr(x.astype(np.float64 if dtype.startswith("float") else np.int64), op)(axis=1)
    np.testing.assert_allclose(out, ref.astype(dtype), rtol=1e-12)


NARROW_REDUCE = """
#a = #tile.blocked<[2 : i32], [8 : i32], [2 : i32], [0 : i32]>
func.func public @narrow(%x: !tile.ptr<T, 1 : i32>, %out: !tile.ptr<T, 1 : i32>) {
  %r = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32, #a>
  %xs = "tile.splat"(%x) : (!tile.ptr<T, 1 : i32>) -> tensor<64x!tile.ptr<T, 1 : i32>, #a>
  %p = "tile.addptr"(%xs, %r) : (tensor<64x!tile.ptr<T, 1 : i32>, #a>, tensor<64xi32, #a>) -> tensor<64x!tile.ptr<T, 1 : i32>, #a>
  %v = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<64x!tile.ptr<T, 1 : i32>, #a>) -> tensor<64xT, #a>
  %m = "tile.reduce"(%v) ({
  ^bb0(%a: T, %b: T):
    %c = arith.maxsi %a, %b : T
    "tile.reduce_return"(%c) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (T) -> ()
  }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, tile.shared_offset = 0 : i32} : (tensor<64xT, #a>) -> T
  "tile.store"(%out, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<T, 1 : i32>, T) -> ()
  return
}
"""


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_reductions_shuffle_narrow_values_widened_to_32_bits(dtype):
    """(The frontend widens its reductions to 32 bits; a layout-stage module need not.)"""
    x = np.random.default_rng(7).integers(-100, 100, 64).astype(dtype)
    out = np.zeros(1, dtype)
    with tile.context():
        llvm_ir = run(ir.Module.parse(NARROW_REDUCE.replace("T", "i" + dtype[3:])), (1,), [x, out])
    assert "emulator_shuffle" in llvm_ir
    assert out[0] == x.max()


def test_loops_carry_tensors_and_branch_on_scalars():
    text = tile_opt(loops_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 32})
    n = 100
    x = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    out = np.zeros(2, np.float32)
    with tile.context():
        run(with_layouts(text, 2, 8, vector=1), (1,), [x, out, n])
    total = x.astype(np.float64).sum()
    np.testing.assert_allclose(out[0], 2 * total if total > 0 else -total, rtol=1e-5)
    assert out[1] == 6  # 100 halves to 1 in 6 steps


@pytest.mark.parametrize("flag", [1, 0])
def test_if_and_while_carry_tensors(flag):
    text = tile_opt(branches_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "flag": "i32", "n": "i32"},
                    {"BLOCK": 64})
    assert "scf.if" in text and "scf.while" in text
    x = np.random.default_rng(8).standard_normal(128).astype(np.float32)
    out = np.zeros_like(x)
    with tile.context():
        run(with_layouts(text, 2, 8), (2,), [x, out, flag, 5])
    y = x.astype(np.float64) * 2 if flag else x.astype(np.float64) - 1
    np.testing.assert_allclose(out, y + sum(range(5)) + 2, rtol=1e-6)


CONVERT = """
#a = #tile.blocked<[1 : i32], [8 : i32], [2 : i32], [0 : i32]>
#b = #tile.blocked<[4 : i32], [8 : i32], [2 : i32], [0 : i32]>
func.func public @convert(%out: !tile.ptr<i32, 1 : i32>) {
  %r = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32, #a>
  %c = arith.constant dense<[%VALUES%]> : tensor<64xi32, #a>
  %v = arith.muli %r, %c : tensor<64xi32, #a>
  %w = "tile.convert_layout"(%v) {tile.shared_offset = %OFFSET% : i32} : (tensor<64xi32, #a>) -> tensor<64xi32, #b>
  %p = "tile.splat"(%out) : (!tile.ptr<i32, 1 : i32>) -> tensor<64x!tile.ptr<i32, 1 : i32>, #b>
  %r2 = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32, #b>
  %q = "tile.addptr"(%p, %r2) : (tensor<64x!tile.ptr<i32, 1 : i32>, #b>, tensor<64xi32, #b>) -> tensor<64x!tile.ptr<i32, 1 : i32>, #b>
  "tile.store"(%q, %w) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x!tile.ptr<i32, 1 : i32>, #b>, tensor<64xi32, #b>) -> ()
  return
}
"""


@pytest.mark.parametrize("offset", [0, 4])
def test_convert_layout_moves_elements_through_shared_memory(offset):
    values = np.arange(64, dtype=np.int32) % 7 - 3
    out = np.zeros(64, np.int32)
    with tile.context():
        module = ir.Module.parse(CONVERT.replace("%VALUES%", ", ".join(map(str, values)))
                                 .replace("%OFFSET%", str(offset)))
        assert [scratch_bytes(op.operation) for op in module.body.operations[0].regions[0].blocks[0].operations
                if op.operation.name == "tile.convert_layout"] == [64 * 4]
        llvm_ir = run(module, (1,), [out])
    assert "emulator_barrier" in llvm_ir
    # the destination holds 4 consecutive elements per thread: one 16-byte read where aligned
    assert ("load <4 x i32>" in llvm_ir) == (offset == 0)
    np.testing.assert_array_equal(out, np.arange(64) * values)


def test_scratch_bytes_of_reductions_count_partials_of_warps_along_the_axis():
    def scratch(kernel, signature, constants, num_warps, warp_size, slices=None):
        with tile.context():
            module = with_layouts(tile_opt(kernel, signature, constants), num_warps, warp_size, slices=slices)
            ops = [op.operation for op in module.body.operations[0].regions[0].blocks[0].operations]
            return [scratch_bytes(op) for op in ops if op.name == "tile.reduce"]

    one_row = {"x_ptr": "*fp32", "out_ptr": "*fp32", "stride": "i32", "n": "i32"}
    assert scratch(softmax_kernel, one_row, {"BLOCK": 1024}, 4, 32) == [4 * 4, 4 * 4]
    assert scratch(softmax_kernel, one_row, {"BLOCK": 32}, 1, 32) == [0, 0]
    rows = {"x_ptr": "*fp32", "out_ptr": "*fp32"}
    # 16x32 over 2 warps of 8 lanes: lanes along the rows' 32 columns, warps along the 16 rows
    assert scratch(softmax_rows_kernel, rows, {"R": 16, "C": 32}, 2, 8, {16: 1, 32: 0}) == [0, 0]
    by_column = {"R": 16, "C": 32, "AXIS": 0, "OP": "sum"}
    assert scratch(reduce_kernel, rows, by_column, 2, 8, {16: 1, 32: 0}) == [2 * 32 * 4]


EXPAND_SLICE = """
#p = #tile.blocked<[1 : i32, 2 : i32], [4 : i32, 2 : i32], [1 : i32, 2 : i32], [1 : i32, 0 : i32]>
#s = #tile.slice<1 : i32, #p>
func.func public @outer(%out: !tile.ptr<i32, 1 : i32>) {
  %r = "tile.make_range"() {start = 0 : i32, end = 4 : i32} : () -> tensor<4xi32, #s>
  %e = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<4xi32, #s>) -> tensor<4x1xi32, #p>
  %b = "tile.broadcast"(%e) : (tensor<4x1xi32, #p>) -> tensor<4x8xi32, #p>
  %c8 = arith.constant dense<8> : tensor<4x8xi32, #p>
  %row = arith.muli %b, %c8 : tensor<4x8xi32, #p>
  %col = "tile.make_range"() {start = 0 : i32, end = 8 : i32} : () -> tensor<8xi32, #tile.slice<0 : i32, #p>>
  %ce = "tile.expand_dims"(%col) {axis = 0 : i32} : (tensor<8xi32, #tile.slice<0 : i32, #p>>) -> tensor<1x8xi32, #p>
  %cb = "tile.broadcast"(%ce) : (tensor<1x8xi32, #p>) -> tensor<4x8xi32, #p>
  %offs = arith.addi %row, %cb : tensor<4x8xi32, #p>
  %val = arith.muli %b, %cb : tensor<4x8xi32, #p>
  %ps = "tile.splat"(%out) : (!tile.ptr<i32, 1 : i32>) -> tensor<4x8x!tile.ptr<i32, 1 : i32>, #p>
  %q = "tile.addptr"(%ps, %offs) : (tensor<4x8x!tile.ptr<i32, 1 : i32>, #p>, tensor<4x8xi32, #p>) -> tensor<4x8x!tile.ptr<i32, 1 : i32>, #p>
  "tile.store"(%q, %val) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<4x8x!tile.ptr<i32, 1 : i32>, #p>, tensor<4x8xi32, #p>) -> ()
  return
}
"""


def test_expand_dims_of_slices_and_broadcast():
    out = np.zeros(32, np.int32)
    with tile.context():
        run(ir.Module.parse(EXPAND_SLICE), (1,), [out], num_warps=2, warp_size=8)
    np.testing.assert_array_equal(out.reshape(4, 8), np.outer(np.arange(4), np.arange(8)))


def two_d_kernel(layout: Blocked, shape: tuple[int, int], tail: str, out_layout: str = "#p") -> str:
    """A kernel that loads ``x`` (row-major, ``shape``) in ``layout`` (``#p``, with its slices
    ``#s0`` and ``#s1``) as ``%v``, then runs ``tail``, which may use ``%offs`` (the row-major
    offsets in ``#p``) and, when ``out_layout`` is another encoding, ``%offs_out`` (in that one)."""
    rows, cols = shape

    def offsets(enc: str, suffix: str) -> str:
        s0, s1 = f"#tile.slice<0 : i32, {enc}>", f"#tile.slice<1 : i32, {enc}>"
        t = f"tensor<{rows}x{cols}xi32, {enc}>"
        return f"""
  %r{suffix} = "tile.make_range"() {{start = 0 : i32, end = {rows} : i32}} : () -> tensor<{rows}xi32, {s1}>
  %re{suffix} = "tile.expand_dims"(%r{suffix}) {{axis = 1 : i32}} : (tensor<{rows}xi32, {s1}>) -> tensor<{rows}x1xi32, {enc}>
  %rb{suffix} = "tile.broadcast"(%re{suffix}) : (tensor<{rows}x1xi32, {enc}>) -> {t}
  %cc{suffix} = arith.constant dense<{cols}> : {t}
  %ro{suffix} = arith.muli %rb{suffix}, %cc{suffix} : {t}
  %c{suffix} = "tile.make_range"() {{start = 0 : i32, end = {cols} : i32}} : () -> tensor<{cols}xi32, {s0}>
  %ce{suffix} = "tile.expand_dims"(%c{suffix}) {{axis = 0 : i32}} : (tensor<{cols}xi32, {s0}>) -> tensor<1x{cols}xi32, {enc}>
  %cb{suffix} = "tile.broadcast"(%ce{suffix}) : (tensor<1x{cols}xi32, {enc}>) -> {t}
  %offs{suffix} = arith.addi %ro{suffix}, %cb{suffix} : {t}"""

    ptrs = f"tensor<{rows}x{cols}x!tile.ptr<f32, 1 : i32>, #p>"
    return f"""
#p = {layout.attr()}
#s0 = #tile.slice<0 : i32, #p>
#s1 = #tile.slice<1 : i32, #p>
func.func public @k(%x: !tile.ptr<f32, 1 : i32>, %out: !tile.ptr<f32, 1 : i32>) {{{offsets("#p", "")}
  %xs = "tile.splat"(%x) : (!tile.ptr<f32, 1 : i32>) -> {ptrs}
  %xp = "tile.addptr"(%xs, %offs) : ({ptrs}, tensor<{rows}x{cols}xi32, #p>) -> {ptrs}
  %v = "tile.load"(%xp) {{operandSegmentSizes = array<i32: 1, 0, 0>}} : ({ptrs}) -> tensor<{rows}x{cols}xf32, #p>
  {offsets(out_layout, "_out") if out_layout != "#p" else ""}
  {tail}
  return
}}
"""


LAYOUTS_2D = [  # 2 warps of 8 lanes
    Blocked((1, 4), (2, 4), (2, 1), (1, 0)),
    Blocked((2, 2), (4, 2), (1, 2), (0, 1)),
    Blocked((4, 1), (8, 1), (1, 2), (0, 1)),
    Blocked((1, 1), (1, 8), (2, 1), (1, 0)),
    Blocked((2, 8), (2, 4), (2, 1), (1, 0)),
]


@pytest.mark.parametrize("layout", LAYOUTS_2D, ids=str)
@pytest.mark.parametrize("shape", [(16, 32), (4, 8)])
@pytest.mark.parametrize("axis", [0, 1])
def test_reductions_in_any_blocked_layout(layout, shape, axis):
    n = shape[1 - axis]
    result = f"tensor<{n}xf32, #s{axis}>"
    ptrs = f"tensor<{n}x!tile.ptr<f32, 1 : i32>, #s{axis}>"
    tail = f"""
  %m = "tile.reduce"(%v) ({{
  ^bb0(%a: f32, %b: f32):
    %sum = arith.addf %a, %b : f32
    "tile.reduce_return"(%sum) {{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>}} : (f32) -> ()
  }}) {{axis = {axis} : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, tile.shared_offset = 0 : i32}} : (tensor<{shape[0]}x{shape[1]}xf32, #p>) -> {result}
  %i = "tile.make_range"() {{start = 0 : i32, end = {n} : i32}} : () -> tensor<{n}xi32, #s{axis}>
  %os = "tile.splat"(%out) : (!tile.ptr<f32, 1 : i32>) -> {ptrs}
  %op = "tile.addptr"(%os, %i) : ({ptrs}, tensor<{n}xi32, #s{axis}>) -> {ptrs}
  "tile.store"(%op, %m) {{operandSegmentSizes = array<i32: 1, 1, 0>}} : ({ptrs}, {result}) -> ()"""
    x = np.random.default_rng(9).integers(-50, 50, shape).astype(np.float32)
    out = np.zeros(n, np.float32)
    before = threads_emulator.stored_elements
    with tile.context():
        run(ir.Module.parse(two_d_kernel(layout, shape, tail)), (1,), [x, out])
    np.testing.assert_array_equal(out, x.sum(axis=axis))
    assert threads_emulator.stored_elements - before == n


@pytest.mark.parametrize("source,dest", list(itertools.permutations(LAYOUTS_2D[:4], 2)), ids=str)
def test_convert_layout_between_blocked_layouts(source, dest):
    shape = (16, 32)
    x = np.random.default_rng(10).standard_normal(shape).astype(np.float32)
    out = np.zeros(shape, np.float32)
    with tile.context():
        enc = str(dest.attr())
        t = f"tensor<16x32xf32, {enc}>"
        ptrs = f"tensor<16x32x!tile.ptr<f32, 1 : i32>, {enc}>"
        tail = f"""
  %w = "tile.convert_layout"(%v) {{tile.shared_offset = 0 : i32}} : (tensor<16x32xf32, #p>) -> {t}
  %os = "tile.splat"(%out) : (!tile.ptr<f32, 1 : i32>) -> {ptrs}
  %op = "tile.addptr"(%os, %offs_out) : ({ptrs}, tensor<16x32xi32, {enc}>) -> {ptrs}
  "tile.store"(%op, %w) {{operandSegmentSizes = array<i32: 1, 1, 0>}} : ({ptrs}, {t}) -> ()"""
        run(ir.Module.parse(two_d_kernel(source, shape, tail, enc)), (1,), [x, out])
    np.testing.assert_array_equal(out, x)


def test_device_print_and_assert(capfd):
    text = tile_opt(prints_kernel, {"x_ptr": "*fp32", "n_ptr": "*i32"}, {}, debug=True)
    x = np.linspace(-4, 3.5, 16, dtype=np.float32)
    n = np.array([-7], np.int32)
    capfd.readouterr()
    before = len(threads_emulator.failed_assertions)
    with tile.context():
        run(with_layouts(text, 2, 8), (2,), [x, n])  # 16 threads x 4: each element held by 4 threads
    printed = capfd.readouterr().out.splitlines()
    expected = []
    for pid in ((0, 0, 0), (1, 0, 0)):
        expected += debug_output.print_lines(" x: ", pid, [(x, tl.float32)], False)
        expected += debug_output.print_lines(" bits: ", pid, [(x, tl.float32)], True)
        expected += debug_output.print_lines(" n 100%: ", pid, [(n[0], tl.int32), (n[0] * 2, tl.int32)], False)
        expected += debug_output.print_lines(" done", pid, [], False)
    assert len(printed) == 2 * (16 + 16 + 2 + 1) and sorted(printed) == sorted(expected)
    failed = threads_emulator.failed_assertions[before:]
    assert len(failed) == 2 * 4 and len({line for line, *_ in failed}) == 1  # 4 holders of -4.0 and -3.5


# -- what it becomes on NVIDIA GPUs -------------------------------------------------------------------

def test_vector_add_uses_16_byte_global_accesses():
    text = tile_opt(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                    {"BLOCK": 1024}, divisible=("x_ptr", "y_ptr", "out_ptr", "n"))
    with tile.context():
        llvm_ir, ptx = nvptx(with_layouts(text, 4, 32), 4)
    assert 'define ptx_kernel void @"add_kernel"(ptr addrspace(1)' in llvm_ir
    assert ".visible .entry add_kernel(" in ptx
    assert len(re.findall(r"ld\.global\.v4\.[bf]32", ptx)) == 4
    assert len(re.findall(r"st\.global\.v4\.[bf]32", ptx)) == 2


@pytest.mark.parametrize("dtype,per_thread,access", [("i8", 16, "v4.b32"), ("fp16", 8, "v4.b32"),
                                                     ("fp64", 2, "v2.b64"), ("i1", 16, "v4.b32")])
def test_every_element_type_moves_in_16_byte_accesses(dtype, per_thread, access):
    text = tile_opt(add_kernel, {"x_ptr": "*" + dtype, "y_ptr": "*" + dtype, "out_ptr": "*" + dtype, "n": "i32"},
                    {"BLOCK": 2048}, divisible=("x_ptr", "y_ptr", "out_ptr", "n"))
    with tile.context():
        _, ptx = nvptx(with_layouts(text, 4, 32, vector=per_thread), 4)
    assert set(re.findall(r"(?:ld|st)\.global\.(\S+)", ptx)) == {access}


def test_vector_add_without_alignment_stays_scalar():
    text = tile_opt(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                    {"BLOCK": 1024})
    with tile.context():
        _, ptx = nvptx(with_layouts(text, 4, 32), 4)
    assert not re.search(r"\.v[24]\.", ptx)
    assert re.search(r"ld\.global\.[bf]32", ptx)


def test_softmax_shuffles_within_warps_and_meets_at_barriers():
    text = tile_opt(softmax_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "stride": "i32", "n": "i32"},
                    {"BLOCK": 1024})
    with tile.context():
        _, ptx = nvptx(with_layouts(text, 4, 32), 4)
    assert len(re.findall(r"shfl\.sync\.bfly\.b32", ptx)) == 2 * 5  # two reductions over 32 lanes
    assert "bar.sync" in ptx or "barrier.sync" in ptx
    assert ".extern .shared .align 1024 .b8 tritium_shared[]" in ptx  # a swizzled tile's period
    assert "ex2.approx" in ptx


def test_half_precision_loads_8_elements_per_vector_and_reduces_in_f32():
    text = tile_opt(reduce_kernel, {"x_ptr": "*fp16", "out_ptr": "*fp16"},
                    {"R": 32, "C": 64, "AXIS": 1, "OP": "max"}, divisible=("x_ptr", "out_ptr"))
    with tile.context():
        llvm_ir, ptx = nvptx(with_layouts(text, 4, 32, vector=8, slices={32: 1, 64: 0}), 4)
    assert "load <8 x half>" in llvm_ir
    assert "shfl.sync.bfly.b32" in ptx and "max.f32" in ptx
    assert re.search(r"ld\.global\.v4\.b32", ptx)  # 8 halves in 16 bytes


def test_loops_compile_to_ptx():
    text = tile_opt(loops_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 256})
    with tile.context():
        _, ptx = nvptx(with_layouts(text, 4, 32), 4)
    assert "shfl.sync.bfly" in ptx
    tid = re.search(r"mov\.u32\s+(%r\d+), %tid\.x;", ptx).group(1)
    assert re.search(rf"setp\.(eq|ne)\.[bsu]32\s+%p\d+, {tid}, 0;", ptx)  # scalar stores by thread 0 only


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_ptx_assembles_with_ptxas(tmp_path):
    text = tile_opt(softmax_rows_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"R": 8, "C": 256},
                    divisible=("x_ptr", "out_ptr"))
    with tile.context():
        _, ptx = nvptx(with_layouts(text, 4, 32, slices={8: 1, 256: 0}), 4)
    (tmp_path / "k.ptx").write_text(ptx)
    done = subprocess.run(["ptxas", "-arch=sm_90", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "k.cubin").stat().st_size > 0


# -- errors --------------------------------------------------------------------------------------------

def test_device_print_on_a_target_without_printf_is_not_implemented_yet():
    no_printf = type("NoPrintf", (nvptx_hooks(),), {"printf": DeviceHooks.printf})
    text = tile_opt(print_kernel, {"x_ptr": "*fp32"}, {})
    with tile.context(), pytest.raises(NotImplementedYet, match=r"in kernel 'print_kernel' at .*: tl.device_print is not implemented on this target"):
        nvptx(with_layouts(text, 4, 32), 4, no_printf())


def test_layouts_for_another_thread_count_are_refused():
    text = tile_opt(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                    {"BLOCK": 64})
    with tile.context(), pytest.raises(TritiumError, match=r"the kernel runs 32 x 8"):
        generate(with_layouts(text, 4, 32), nvptx_hooks()(), "nvptx64-nvidia-cuda", "", 8)


MIXED_LAYOUTS = """
#a = #tile.blocked<[1 : i32], [32 : i32], [2 : i32], [0 : i32]>
#b = #tile.blocked<[4 : i32], [32 : i32], [2 : i32], [0 : i32]>
func.func public @mixed(%out: !tile.ptr<i32, 1 : i32>) {
  %v = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32, #a>
  %p = "tile.splat"(%out) : (!tile.ptr<i32, 1 : i32>) -> tensor<64x!tile.ptr<i32, 1 : i32>, #b>
  "tile.store"(%p, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x!tile.ptr<i32, 1 : i32>, #b>, tensor<64xi32, #a>) -> ()
  return
}
"""


def test_operands_in_another_layout_than_their_op_are_refused():
    with tile.context(), pytest.raises(TritiumError, match="tile.store on tensors of different layouts.*convert_layout"):
        nvptx(ir.Module.parse(MIXED_LAYOUTS), 2)


def test_tensors_without_layouts_are_refused():
    text = tile_opt(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                    {"BLOCK": 64})
    with tile.context(), pytest.raises(TritiumError, match="has no layout"):
        nvptx(ir.Module.parse(text), 4)


def test_hooks_read_the_kernel_context():
    """The per-thread generator sets ``hooks.kernel`` before the kernel's body: a hook reads the
    kernel's arguments, options and program ids from it."""
    seen = []

    class Reading(threads_emulator.HostThreadHooks):
        def program_id(self, b, axis):
            seen.append((self.kernel.name, self.kernel.function is b.function, len(self.kernel.args),
                         self.kernel.num_warps, self.kernel.debug))
            return super().program_id(b, axis)

    text = tile_opt(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 128})
    with tile.context():
        hooks = Reading(8)
        generate(with_layouts(text, 2, 8), hooks, "", "", 2)
    assert hooks.kernel.name == "add_kernel" and len(hooks.kernel.args) == 4
    assert (hooks.kernel.num_warps, hooks.kernel.debug) == (2, False)
    assert seen and all(s == ("add_kernel", True, 4, 2, False) for s in seen)
