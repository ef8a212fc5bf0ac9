"""The shape builtins through the GPU path: the real ``tile-layout`` stage (layouts, shared memory,
barriers), core's per-thread code generator, and the SIMT emulator (``tritium_simt.emulator``) running every thread of a
program on the host, with several warps and lanes, against numpy; and the same kernels through the
nvptx target to PTX and ``ptxas``."""

from __future__ import annotations

import subprocess
import tempfile

import numpy as np
import pytest

from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.layout.distributed import layout_of_type
from tritium.layout.reindexed import register_map
from tritium.passes.axis_info import walk
from tritium.passes.gpu_layout import assign_gpu_layouts
from tritium.runtime.compiler import compile_specialized

from .kernels.frontend_only import FrontendOnly
from .kernels.shapes import (in_place_kernel, loop_kernel, pairs_kernel, pointer_kernel, shape_kernel, split_pointers_kernel,
                             split_scalars_kernel)
from .test_shape_ops import data, loop_reference
from .test_threads_codegen import nvptx
from tritium_simt.emulator import run

_SIG = {np.float32: "fp32", np.float16: "fp16", np.int8: "i8", np.int64: "i64", np.int32: "i32"}


def laid_out(kernel, signature: dict[str, str], constants: dict, num_warps: int, warp_size: int):
    """The kernel at ``tile-layout`` for ``num_warps`` warps of ``warp_size`` lanes (call in a context)."""
    specs = {name: "D" for name, t in signature.items() if t.startswith("*")}
    text = compile_specialized(kernel, FrontendOnly(), signature, constants, specs, {}).asm["tile-opt"]
    module, _ = assign_gpu_layouts(ir.Module.parse(text), num_warps, warp_size)
    return module


def shape_case(op, x, out_shape, arg=None, num_warps=2, warp_size=8, y=None, out2_shape=None):
    """``shape_kernel`` emulated; returns both outputs, shaped."""
    y = data(x.shape, x.dtype, 1) if y is None else y
    dims = x.shape + (1,) * (3 - x.ndim)
    t = "*" + _SIG[x.dtype.type]
    out = np.full(out_shape, 7, x.dtype)
    out2 = np.full(out2_shape or out_shape, 7, x.dtype)
    constants = {"OP": op, "ARG": arg, "S0": dims[0], "S1": dims[1], "S2": dims[2], "RANK": x.ndim}
    with tile.context():
        module = laid_out(shape_kernel, {"x_ptr": t, "y_ptr": t, "out_ptr": t, "out2_ptr": t}, constants,
                          num_warps, warp_size)
        run(module, (1,), [np.ascontiguousarray(x), y, out, out2], num_warps, warp_size)
    return out, out2


LAUNCHES = [(1, 4), (2, 8), (4, 4)]


@pytest.mark.parametrize("num_warps,warp_size", LAUNCHES)
@pytest.mark.parametrize("shape,new", [((64,), (8, 8)), ((4, 16), (16, 4)), ((2, 4, 8), (8, 8)), ((16, 2), (32,))])
def test_reshape(num_warps, warp_size, shape, new):
    x = data(shape, np.float32)
    got, _ = shape_case("reshape", x, new, new, num_warps, warp_size)
    np.testing.assert_array_equal(got, x.reshape(new))


@pytest.mark.parametrize("num_warps,warp_size", LAUNCHES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.int64])
@pytest.mark.parametrize("shape,dims", [((8, 16), (1, 0)), ((2, 4, 8), (2, 0, 1)), ((2, 4, 8), (1, 0, 2))])
def test_permute(num_warps, warp_size, dtype, shape, dims):
    x = data(shape, dtype)
    want = np.transpose(x, dims)
    got, _ = shape_case("permute", x, want.shape, dims, num_warps, warp_size)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("num_warps,warp_size", LAUNCHES)
@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_join_split_interleave_cat(num_warps, warp_size, dtype):
    x, y = data((4, 8), dtype), data((4, 8), dtype, 1)
    got, _ = shape_case("join", x, (4, 8, 2), None, num_warps, warp_size, y=y)
    np.testing.assert_array_equal(got, np.stack([x, y], -1))
    a, b = shape_case("split", np.stack([x, y], -1), (4, 8), None, num_warps, warp_size)
    np.testing.assert_array_equal(a, x)
    np.testing.assert_array_equal(b, y)
    got, _ = shape_case("interleave", x, (4, 16), None, num_warps, warp_size, y=y)
    np.testing.assert_array_equal(got, np.stack([x, y], -1).reshape(4, 16))
    got, _ = shape_case("cat", x.ravel(), (64,), None, num_warps, warp_size, y=y.ravel())
    np.testing.assert_array_equal(got, np.concatenate([x.ravel(), y.ravel()]))


@pytest.mark.parametrize("num_warps,warp_size", LAUNCHES)
@pytest.mark.parametrize("shape,dim", [((64,), 0), ((4, 16), 1), ((4, 16), 0), ((2, 4, 8), 1)])
def test_flip(num_warps, warp_size, shape, dim):
    x = data(shape, np.float32)
    got, _ = shape_case("flip", x, shape, dim, num_warps, warp_size)
    np.testing.assert_array_equal(got, np.flip(x, dim))


@pytest.mark.parametrize("op,arg,out_shape,ref", [
    ("chain", (16, 8), (8, 16), lambda x: np.flip((x.reshape(16, 8).T + 1).reshape(8, 16), 0)),
    ("trans_sum", 0, (8,), lambda x: x.sum(1)),
    ("sum_reshape", (2, 4), (2, 4), lambda x: x.sum(1).reshape(2, 4)),
])
def test_combined_with_reductions_and_arithmetic(op, arg, out_shape, ref):
    x = data((8, 16), np.float32)
    got, _ = shape_case(op, x, out_shape, arg, 4, 8)
    np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=1e-6)


@pytest.mark.parametrize("op,shape,arg,ref", [
    ("permute", (8, 16), (1, 0), lambda x: x.T),
    ("reshape", (4, 16), (16, 4), lambda x: x.reshape(16, 4)),
    ("flip", (4, 16), 1, lambda x: np.flip(x, 1)),
    ("interleave", (4, 8), None, lambda x: np.repeat(x, 2, axis=1)),
])
def test_loads_through_reindexed_pointers(op, shape, arg, ref):
    x = data(shape, np.float32)
    want = ref(x)
    out = np.full(want.shape, 7, np.float32)
    dims = shape + (1,) * (3 - len(shape))
    constants = {"OP": op, "ARG": arg, "S0": dims[0], "S1": dims[1], "S2": dims[2], "RANK": len(shape)}
    with tile.context():
        module = laid_out(pointer_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, constants, 2, 8)
        run(module, (1,), [x, out], 2, 8)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("num_warps,warp_size", LAUNCHES)
def test_flip_within_threads_moves_no_data(num_warps, warp_size):
    """Pairs loaded as (N, 2) lie in one thread each: flipping them renames registers."""
    x = data((64, 2), np.float32)
    with tile.context():
        module = laid_out(shape_kernel, {n: "*fp32" for n in ("x_ptr", "y_ptr", "out_ptr", "out2_ptr")},
                          {"OP": "flip", "ARG": 1, "S0": 64, "S1": 2, "S2": 1, "RANK": 2}, num_warps, warp_size)
        assert not any("tile.shared_offset" in op.attributes for op in walk(module.operation))
    got, _ = shape_case("flip", x, (64, 2), 1, num_warps, warp_size)
    np.testing.assert_array_equal(got, x[:, ::-1])


@pytest.mark.parametrize("op,ref", [("trans", np.transpose), ("flip", lambda x: np.flip(x, 1))])
def test_stored_over_its_own_input(op, ref):
    x = data((16, 16), np.float32)
    buf = x.copy()
    with tile.context():
        module = laid_out(in_place_kernel, {"x_ptr": "*fp32"}, {"N": 16, "OP": op}, 4, 8)
        run(module, (1,), [buf], 4, 8)
    np.testing.assert_array_equal(buf, ref(x))


def test_in_a_loop():
    x = data((3, 16, 16), np.float32)
    out = np.zeros((16, 16), np.float32)
    with tile.context():
        module = laid_out(loop_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "ITERS": "i32"}, {"N": 16}, 4, 8)
        run(module, (1,), [x, out, 3], 4, 8)
    np.testing.assert_allclose(out, loop_reference(x.astype(np.float64)), rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("kernel", [split_scalars_kernel, split_pointers_kernel])
def test_split_and_reshape_to_scalars(kernel):
    x, out = np.array([3, 5, 7], np.int32), np.zeros(1, np.int32)
    with tile.context():
        run(laid_out(kernel, {"x_ptr": "*i32", "out_ptr": "*i32"}, {}, 2, 8), (1,), [x, out], 2, 8)
    assert out[0] == 357


@pytest.mark.parametrize("num_warps,warp_size", [(4, 32), (2, 8)])
def test_scratch_only_where_elements_change_threads_and_barriers_between(num_warps, warp_size):
    """trans permutes the layout and reshape keeps positions in their threads (registers renamed,
    no scratch); a flip across threads goes through shared memory, and each scratch user waits
    until every thread has read the previous one's bytes."""
    with tile.context():
        module = laid_out(shape_kernel, {n: "*fp32" for n in ("x_ptr", "y_ptr", "out_ptr", "out2_ptr")},
                          {"OP": "chain", "ARG": (16, 8), "S0": 8, "S1": 16, "S2": 1, "RANK": 2}, num_warps, warp_size)
        ops = list(walk(module.operation))
        reindexing = {op.name: op for op in ops if op.name in tile.REINDEXING}
        assert list(reindexing) == ["tile.reshape", "tile.trans", "tile.flip"]
        for op in reindexing.values():
            assert ("tile.shared_offset" in op.attributes) == (register_map(op) is None)
        trans = reindexing["tile.trans"]
        src, res = (layout_of_type(v.type) for v in (trans.operands[0], trans.results[0]))
        assert res.size_per_thread == src.size_per_thread[::-1] and res.threads_per_warp == src.threads_per_warp[::-1]
        assert register_map(trans) is not None and register_map(reindexing["tile.reshape"]) is not None
        assert "tile.shared_offset" in reindexing["tile.flip"].attributes
        users = [i for i, op in enumerate(ops) if "tile.shared_offset" in op.attributes]
        for a, b in zip(users, users[1:]):
            assert any(op.name == "tile.barrier" for op in ops[a:b + 1])


@pytest.mark.parametrize("num_warps,warp_size", LAUNCHES)
def test_split_and_join_of_pairs_stay_in_registers(num_warps, warp_size):
    """(a, b) pairs loaded as (N, 2): split and join move no data, so they use no shared memory."""
    x = data((64, 2), np.float32)
    out = np.full((64, 2), 7, np.float32)
    with tile.context():
        module = laid_out(pairs_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"N": 64}, num_warps, warp_size)
        ops = list(walk(module.operation))
        assert [op.name for op in ops if op.name in tile.REINDEXING] == ["tile.split", "tile.split", "tile.join"]
        assert not any("tile.shared_offset" in op.attributes for op in ops)
        run(module, (1,), [x, out], num_warps, warp_size)
    np.testing.assert_array_equal(out, np.stack([x[:, 1] * 2, x[:, 0]], -1))


@pytest.mark.parametrize("op,arg,dtype", [("permute", (1, 0), np.float16), ("reshape", (16, 4), np.int64),
                                          ("flip", 0, np.int8), ("join", None, np.float32),
                                          ("interleave", None, np.float32), ("cat", None, np.float32),
                                          ("split", None, np.int64)])
def test_nvptx_assembles(op, arg, dtype):
    """PTX of the kernels through the nvptx hooks, assembled by ptxas where it is installed."""
    shape = {"cat": (64,), "split": (32, 2)}.get(op, (4, 16))
    t = "*" + _SIG[dtype]
    dims = shape + (1,) * (3 - len(shape))
    constants = {"OP": op, "ARG": arg, "S0": dims[0], "S1": dims[1], "S2": dims[2], "RANK": len(shape)}
    with tile.context():
        module = laid_out(shape_kernel, {n: t for n in ("x_ptr", "y_ptr", "out_ptr", "out2_ptr")}, constants, 4, 32)
        _, ptx = nvptx(module, 4)
    assert "bar.sync" in ptx and ("st.shared" in ptx)
    _ptxas(ptx)


def _ptxas(ptx: str) -> None:
    from tritium_nvptx import toolchain

    ptxas = toolchain.ptxas_path()
    if not ptxas:
        pytest.skip("ptxas is not installed")
    with tempfile.TemporaryDirectory() as d:
        with open(f"{d}/k.ptx", "w") as f:
            f.write(ptx)
        done = subprocess.run([ptxas, "-arch=sm_90", f"{d}/k.ptx", "-o", f"{d}/k.cubin"], capture_output=True,
                              text=True)
        assert done.returncode == 0, done.stderr
