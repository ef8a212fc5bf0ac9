"""Scans and reductions of several tensors in core's per-thread code generator, run on the host by
the SIMT emulator (``tritium_simt.emulator``) (one OS thread per GPU thread) after the real GPU ``tile-layout`` stage, and
compiled to PTX through the nvptx target where it is installed. Combine functions that are not
commutative check that every step keeps the order."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.layout.distributed import Blocked, distribute
from tritium.layout.propagate import scan_layout
from tritium.passes.gpu_layout import assign_gpu_layouts

from .test_threads_codegen import nvptx, tile_opt
from tritium_simt.emulator import run


@tritium.jit
def _mul(a, b):
    return a * b


@tritium.jit
def scan_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr, OP: tl.constexpr,
                REVERSE: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    if OP == "cumsum":
        y = tl.cumsum(x, AXIS, reverse=REVERSE)
    else:
        y = tl.associative_scan(x, AXIS, _mul, reverse=REVERSE)
    tl.store(out_ptr + offs, y)


@tritium.jit
def argmax_kernel(x_ptr, v_ptr, i_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :])
    v, i = tl.max(x, AXIS, return_indices=True)
    if AXIS == 0:
        tl.store(v_ptr + c, v)
        tl.store(i_ptr + c, i)
    else:
        tl.store(v_ptr + r, v)
        tl.store(i_ptr + r, i)


def laid_out(kernel, signature, constants, num_warps, warp_size) -> ir.Module:
    text = tile_opt(kernel, signature, constants)
    with tile.context():
        module, _ = assign_gpu_layouts(ir.Module.parse(text), num_warps, warp_size)
        return ir.Module.parse(str(module))


SCAN_SIG = {"x_ptr": "*i32", "out_ptr": "*i32"}


@pytest.mark.parametrize("shape", [(4, 16), (16, 4), (8, 8)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("reverse", [False, True])
def test_scans_inside_threads(shape, axis, op, reverse):
    rng = np.random.default_rng(1)
    x = rng.integers(-3, 4, size=shape).astype(np.int32)
    out = np.full(shape, -7, np.int32)
    constants = {"R": shape[0], "C": shape[1], "AXIS": axis, "OP": op, "REVERSE": reverse}
    with tile.context():
        module = laid_out(scan_kernel, SCAN_SIG, constants, num_warps=2, warp_size=8)
        run(module, (1,), [x, out], num_warps=2, warp_size=8)
    fn = np.cumsum if op == "cumsum" else np.cumprod
    src = np.flip(x, axis) if reverse else x
    expected = fn(src.astype(np.int64), axis=axis).astype(np.int32)
    np.testing.assert_array_equal(out, np.flip(expected, axis) if reverse else expected)


@pytest.mark.parametrize("shape", [(4, 32), (32, 4), (16, 16)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("num_warps", [1, 4])
def test_argmax_carries_indices_across_lanes_and_warps(shape, axis, num_warps):
    rng = np.random.default_rng(2)
    x = rng.integers(0, 5, size=shape).astype(np.float32)  # many ties: the lowest index wins
    n = shape[1 - axis]
    v, i = np.zeros(n, np.float32), np.full(n, -1, np.int32)
    with tile.context():
        module = laid_out(argmax_kernel, {"x_ptr": "*fp32", "v_ptr": "*fp32", "i_ptr": "*i32"},
                          {"R": shape[0], "C": shape[1], "AXIS": axis}, num_warps=num_warps, warp_size=8)
        run(module, (1,), [x, v, i], num_warps=num_warps, warp_size=8)
    np.testing.assert_array_equal(v, x.max(axis=axis))
    np.testing.assert_array_equal(i, x.argmax(axis=axis))


@pytest.mark.parametrize("num_warps", [1, 4])
def test_scan_and_argmax_compile_to_ptx(num_warps):
    with tile.context():
        scan = laid_out(scan_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"},
                        {"R": 32, "C": 32, "AXIS": 1, "OP": "cumsum", "REVERSE": True}, num_warps, 32)
        _, ptx = nvptx(scan, num_warps)
        assert ("add.f32" in ptx or "add.rn.f32" in ptx) and "shfl.sync.bfly" in ptx  # lanes share the axis
        arg = laid_out(argmax_kernel, {"x_ptr": "*fp32", "v_ptr": "*fp32", "i_ptr": "*i32"},
                       {"R": 16, "C": 128, "AXIS": 1}, num_warps, 32)
        _, ptx2 = nvptx(arg, num_warps)
        assert "shfl.sync.bfly" in ptx2
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not installed")
    for text in (ptx, ptx2):
        done = subprocess.run([ptxas, "-arch=sm_90", "-o", "/dev/null", "-"], input=text.encode(),
                              capture_output=True)
        assert done.returncode == 0, done.stderr.decode()


@tritium.jit
def _sum_prod_min(a, b, c, d, e, f):
    return a + d, b * e, tl.minimum(c, f)


@tritium.jit
def tuple_kernel(x_ptr, y_ptr, z_ptr, o1_ptr, o2_ptr, o3_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    offs = r[:, None] * C + c[None, :]
    s, p, m = tl.reduce((tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(z_ptr + offs)), AXIS, _sum_prod_min)
    if AXIS == 0:
        tl.store(o1_ptr + c, s)
        tl.store(o2_ptr + c, p)
        tl.store(o3_ptr + c, m)
    else:
        tl.store(o1_ptr + r, s)
        tl.store(o2_ptr + r, p)
        tl.store(o3_ptr + r, m)


@pytest.mark.parametrize("shape,axis", [((64, 4), 0), ((4, 64), 1), ((16, 16), 0)])
def test_three_tensors_of_different_widths_meet_across_warps(shape, axis):
    """fp32, int64 and int16 partials each get their own aligned region of the scratch."""
    rng = np.random.default_rng(6)
    x = rng.integers(-50, 50, size=shape).astype(np.float32)
    y = rng.choice([-1, 1, 2], size=shape).astype(np.int64)
    z = rng.integers(-1000, 1000, size=shape).astype(np.int16)
    n = shape[1 - axis]
    o1, o2, o3 = np.zeros(n, np.float32), np.zeros(n, np.int64), np.zeros(n, np.int16)
    sig = {"x_ptr": "*fp32", "y_ptr": "*i64", "z_ptr": "*i16", "o1_ptr": "*fp32", "o2_ptr": "*i64", "o3_ptr": "*i16"}
    with tile.context():
        module = laid_out(tuple_kernel, sig, {"R": shape[0], "C": shape[1], "AXIS": axis}, num_warps=4, warp_size=8)
        run(module, (1,), [x, y, z, o1, o2, o3], num_warps=4, warp_size=8)
    np.testing.assert_array_equal(o1, x.sum(axis=axis))  # small integers: exact in any order
    np.testing.assert_array_equal(o2, y.prod(axis=axis))
    np.testing.assert_array_equal(o3, z.min(axis=axis))


@tritium.jit
def argmax1d_kernel(x_ptr, i_ptr, N: tl.constexpr):
    tl.store(i_ptr, tl.argmax(tl.load(x_ptr + tl.arange(0, N)), 0))


@pytest.mark.parametrize("n", [16, 64])
def test_lanes_agree_on_a_nan_in_the_last_position(n):
    """The lower lane is on the left of every combine, so Triton's NaN rule gives one answer in all lanes."""
    x = np.arange(n, dtype=np.float32)
    x[-1] = np.nan
    i = np.full(1, -1, np.int32)
    with tile.context():
        module = laid_out(argmax1d_kernel, {"x_ptr": "*fp32", "i_ptr": "*i32"}, {"N": n}, num_warps=2, warp_size=8)
        run(module, (1,), [x, i], num_warps=2, warp_size=8)
    assert i[0] == n - 1


@pytest.mark.parametrize("shape,axis", [((64, 1), 1), ((1, 64), 0), ((1, 256), 1), ((256, 1), 0)])
def test_scans_of_one_element_lines_and_long_lines(shape, axis):
    x = np.random.default_rng(8).integers(-9, 10, size=shape).astype(np.int32)
    out = np.full(shape, -7, np.int32)
    constants = {"R": shape[0], "C": shape[1], "AXIS": axis, "OP": "cumsum", "REVERSE": False}
    with tile.context():
        module = laid_out(scan_kernel, SCAN_SIG, constants, num_warps=2, warp_size=8)
        run(module, (1,), [x, out], num_warps=2, warp_size=8)
    np.testing.assert_array_equal(out, np.cumsum(x, axis=axis))


@tritium.jit
def _affine(a1, b1, a2, b2):
    """x -> a1*x + b1, then x -> a2*x + b2: associative, not commutative."""
    return a1 * a2, b1 * a2 + b2


@tritium.jit
def affine_kernel(a_ptr, b_ptr, oa_ptr, ob_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr,
                  REVERSE: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    a, b = tl.associative_scan((tl.load(a_ptr + offs), tl.load(b_ptr + offs)), AXIS, _affine, reverse=REVERSE)
    tl.store(oa_ptr + offs, a)
    tl.store(ob_ptr + offs, b)


@pytest.mark.parametrize("shape,axis", [((2, 32), 1), ((32, 2), 0), ((1, 64), 1), ((8, 8), 0), ((4, 8), 1)])
@pytest.mark.parametrize("reverse", [False, True])
def test_a_scan_that_is_not_commutative_keeps_the_order_across_lanes(shape, axis, reverse):
    rng = np.random.default_rng(11)
    a = rng.choice([-1, 1, 2], size=shape).astype(np.int32)
    b = rng.integers(-5, 6, size=shape).astype(np.int32)
    oa, ob = np.zeros(shape, np.int32), np.zeros(shape, np.int32)
    sig = {"a_ptr": "*i32", "b_ptr": "*i32", "oa_ptr": "*i32", "ob_ptr": "*i32"}
    with tile.context():
        module = laid_out(affine_kernel, sig, {"R": shape[0], "C": shape[1], "AXIS": axis, "REVERSE": reverse},
                          num_warps=2, warp_size=8)
        run(module, (1,), [a, b, oa, ob], num_warps=2, warp_size=8)
    ra, rb = np.moveaxis(a.astype(np.int64), axis, 0).copy(), np.moveaxis(b.astype(np.int64), axis, 0).copy()
    acc = None
    for k in (range(shape[axis] - 1, -1, -1) if reverse else range(shape[axis])):
        acc = (ra[k].copy(), rb[k].copy()) if acc is None else (acc[0] * ra[k], acc[1] * ra[k] + rb[k])
        ra[k], rb[k] = acc
    np.testing.assert_array_equal(oa, np.moveaxis(ra, 0, axis).astype(np.int32))
    np.testing.assert_array_equal(ob, np.moveaxis(rb, 0, axis).astype(np.int32))


@pytest.mark.parametrize("shape,axis,default,expected", [
    ((1024,), 0, Blocked((4,), (32,), (4,), (0,)), Blocked((32,), (32,), (4,), (0,))),  # warps hold copies
    ((16, 64), 1, Blocked((1, 4), (4, 8), (4, 1), (1, 0)), Blocked((1, 2), (1, 32), (4, 1), (1, 0))),
    ((64, 16), 0, Blocked((1, 4), (8, 4), (4, 1), (1, 0)), Blocked((2, 1), (32, 1), (1, 4), (1, 0))),
    ((8, 4), 1, Blocked((1, 4), (8, 4), (4, 1), (1, 0)), Blocked((1, 1), (8, 4), (4, 1), (1, 0))),
])
def test_scan_layout_puts_a_warps_lanes_along_the_axis(shape, axis, default, expected):
    layout = scan_layout(shape, axis, default)
    assert layout == expected
    dist = distribute(layout, shape)
    assert not any(basis[axis] for basis in dist.warp_bases)


@tritium.jit
def kinds_kernel(x_ptr, o_ptr):
    x = tl.load(x_ptr + tl.arange(0, 64))
    tl.store(o_ptr, tl.sum(x, 0) + tl.max(x, 0) + tl.argmax(x, 0) + tl.reduce(x, 0, _mul) + tl.reduce(x, 0, _first))


@tritium.jit
def _first(a, b):
    return a + 0 * b


def test_only_combines_that_may_be_swapped_skip_the_lane_ordering():
    from tritium.codegen.threads.reduce import commutative
    from tritium.passes.axis_info import walk

    with tile.context():
        module = laid_out(kinds_kernel, {"x_ptr": "*fp32", "o_ptr": "*fp32"}, {}, 2, 8)
        kinds = [commutative(op) for op in walk(module.operation) if op.name == "tile.reduce"]
    assert kinds == [True, True, False, True, False]  # sum, max, argmax's tie-break, a product, a + 0*b
