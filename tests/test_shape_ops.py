"""Triton's shape builtins (``reshape``, ``view``, ``ravel``, ``permute``, ``trans``, ``join``,
``split``, ``interleave``, ``cat``, ``flip``) against numpy on every installed target: 1-D to 3-D
blocks, several dtypes, blocks of pointers loaded through, reductions around them, and the
located errors for what Triton refuses."""

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.passes.axis_info import AxisInfo

from .kernels.shapes import (bad_shape_kernel, in_place_kernel, loop_kernel, masked_pointer_kernel, pointer_kernel,
                             shape_kernel, split_pointers_kernel, split_scalars_kernel)
from .kernels.frontend_only import FrontendOnly


def data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), shape).astype(dtype)
    return (rng.standard_normal(shape) * 10).astype(dtype)


def run(target, op, x, out_shape, arg=None, y=None, out_dtype=None, out2_shape=None):
    """``shape_kernel`` on ``x`` (and ``y``); returns both outputs, shaped."""
    dev = target.driver
    y = data(x.shape, x.dtype, 1) if y is None else y
    dims = x.shape + (1,) * (3 - x.ndim)
    out_dtype = out_dtype or x.dtype
    out = dev.to_device(np.full(out_shape, 7, out_dtype))
    out2 = dev.to_device(np.full(out2_shape or out_shape, 7, out_dtype))
    shape_kernel[(1,)](dev.to_device(x), dev.to_device(y), out, out2, OP=op, ARG=arg, S0=dims[0], S1=dims[1],
                       S2=dims[2], RANK=x.ndim)
    return dev.to_host(out).reshape(out_shape), dev.to_host(out2).reshape(out2_shape or out_shape)


DTYPES = [np.float32, np.float16, np.int8, np.int64, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,new", [((64,), (8, 8)), ((4, 16), (64,)), ((4, 16), (16, 4)), ((2, 4, 8), (8, 8)),
                                       ((8, 8), (2, 4, 8)), ((16, 2), (4, 8)), ((2, 2, 16), (4, 2, 8))])
def test_reshape(target, dtype, shape, new):
    x = data(shape, dtype)
    got, _ = run(target, "reshape", x, new, arg=new)
    np.testing.assert_array_equal(got, x.reshape(new))


@pytest.mark.parametrize("op", ["reshape_varargs", "reshape_method", "view"])
def test_reshape_spellings(target, op):
    x = data((4, 16), np.float32)
    got, _ = run(target, op, x, (8, 8), arg=(8, 8))
    np.testing.assert_array_equal(got, x.reshape(8, 8))


@pytest.mark.parametrize("op", ["ravel", "ravel_method"])
def test_ravel(target, op):
    x = data((2, 4, 8), np.int64)
    got, _ = run(target, op, x, (64,))
    np.testing.assert_array_equal(got, x.ravel())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dims", [((4, 16), (1, 0)), ((8, 8), (1, 0)), ((2, 4, 8), (2, 0, 1)),
                                        ((2, 4, 8), (1, 0, 2)), ((2, 4, 8), (0, 2, 1)), ((4, 2, 8), (2, 1, 0))])
def test_permute(target, dtype, shape, dims):
    x = data(shape, dtype)
    want = np.transpose(x, dims)
    got, _ = run(target, "permute", x, want.shape, arg=dims)
    np.testing.assert_array_equal(got, want)


def test_trans_spellings(target):
    x = data((2, 4, 8), np.float32)
    got, _ = run(target, "trans", x, (2, 8, 4))  # no dims: the last two swap
    np.testing.assert_array_equal(got, np.swapaxes(x, 1, 2))
    got, _ = run(target, "trans_method", x, (2, 8, 4))
    np.testing.assert_array_equal(got, np.swapaxes(x, 1, 2))
    got, _ = run(target, "trans_dims", x, (8, 2, 4), arg=(2, 0, 1))
    np.testing.assert_array_equal(got, np.transpose(x, (2, 0, 1)))
    got, _ = run(target, "permute_method", x, (4, 2, 8), arg=(1, 0, 2))
    np.testing.assert_array_equal(got, np.transpose(x, (1, 0, 2)))


def test_transpose_property_and_expand_dims_of_several_axes(target):
    x = data((4, 16), np.int8)
    got, _ = run(target, "T", x, (16, 4))
    np.testing.assert_array_equal(got, x.T)
    x = data((16,), np.float32)
    for axes in [(0, 2), (-1, 0), (2, -3)]:
        got, _ = run(target, "expand_dims", x, (1, 16, 1), arg=axes)
        np.testing.assert_array_equal(got, x[None, :, None])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(16,), (4, 8)])
def test_join_split(target, dtype, shape):
    x, y = data(shape, dtype), data(shape, dtype, 1)
    got, _ = run(target, "join", x, shape + (2,), y=y)
    np.testing.assert_array_equal(got, np.stack([x, y], -1))
    a, b = run(target, "split", np.stack([x, y], -1), shape)
    np.testing.assert_array_equal(a, x)
    np.testing.assert_array_equal(b, y)


def test_join_broadcasts_a_scalar(target):
    x = data((8,), np.int32)
    got, _ = run(target, "join_scalar", x, (8, 2))
    np.testing.assert_array_equal(got, np.stack([x, np.full(8, 3, np.int32)], -1))


def test_split_method_and_inverse(target):
    x = data((4, 8, 2), np.float32)
    a, b = run(target, "split_method", x, (4, 8))
    np.testing.assert_array_equal(a, x[..., 0])
    np.testing.assert_array_equal(b, x[..., 1])
    x = data((4, 16), np.float32)
    got, _ = run(target, "split_join", x, (4, 16), arg=(4, 8, 2))
    pairs = x.reshape(4, 8, 2)
    np.testing.assert_array_equal(got, np.stack([pairs[..., 1] * 2, pairs[..., 0]], -1).reshape(4, 16))


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.int64])
@pytest.mark.parametrize("shape", [(16,), (4, 8), (2, 4, 4)])
def test_interleave(target, dtype, shape):
    x, y = data(shape, dtype), data(shape, dtype, 1)
    want = np.stack([x, y], -1).reshape(shape[:-1] + (2 * shape[-1],))
    got, _ = run(target, "interleave", x, want.shape, y=y)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
@pytest.mark.parametrize("n", [1, 4, 64])
def test_cat(target, dtype, n):
    x, y = data((n,), dtype), data((n,), dtype, 1)
    got, _ = run(target, "cat", x, (2 * n,), y=y)
    np.testing.assert_array_equal(got, np.concatenate([x, y]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim", [((16,), 0), ((4, 8), 0), ((4, 8), 1), ((4, 8), -1), ((2, 4, 8), 1),
                                       ((2, 4, 8), 2), ((2, 4, 8), 0)])
def test_flip(target, dtype, shape, dim):
    x = data(shape, dtype)
    got, _ = run(target, "flip", x, shape, arg=dim)
    np.testing.assert_array_equal(got, np.flip(x, dim))


def test_flip_spellings(target):
    x = data((4, 8), np.float32)
    got, _ = run(target, "flip_default", x, (4, 8))
    np.testing.assert_array_equal(got, np.flip(x, 1))
    got, _ = run(target, "flip_method", x, (4, 8), arg=0)
    np.testing.assert_array_equal(got, np.flip(x, 0))


def test_with_reductions(target):
    x = data((4, 16), np.float16)
    got, _ = run(target, "trans_sum", x, (4,), arg=0, out_dtype=np.float32)
    np.testing.assert_allclose(got, x.astype(np.float64).sum(1), rtol=1e-5)
    x = data((8, 16), np.int8)
    got, _ = run(target, "sum_reshape", x, (2, 4), arg=(2, 4), out_dtype=np.float32)
    np.testing.assert_array_equal(got, x.astype(np.float32).sum(1).reshape(2, 4))


def test_chain_of_reindexing_ops(target):
    x = data((8, 16), np.float32)
    got, _ = run(target, "chain", x, (8, 16), arg=(16, 8))
    want = np.flip((x.reshape(16, 8).T + 1).reshape(8, 16), 0)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op,shape,arg,ref", [
    ("permute", (8, 16), (1, 0), lambda x: x.T),
    ("permute", (2, 4, 8), (2, 1, 0), lambda x: np.transpose(x, (2, 1, 0))),
    ("permute", (2, 4, 8), (1, 0, 2), lambda x: np.transpose(x, (1, 0, 2))),
    ("reshape", (4, 16), (16, 4), lambda x: x.reshape(16, 4)),
    ("flip", (4, 16), 1, lambda x: np.flip(x, 1)),
    ("flip", (4, 16), 0, lambda x: np.flip(x, 0)),
    ("cat", (16,), None, lambda x: np.concatenate([x, x])),
    ("interleave", (4, 8), None, lambda x: np.repeat(x, 2, axis=1)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_loads_through_reindexed_pointers(target, op, shape, arg, ref, dtype):
    """The pointers' axis info must not claim contiguity that the re-indexing broke (a vector load
    of a transposed row would read the wrong elements)."""
    dev = target.driver
    x = data(shape, dtype)
    want = ref(x)
    out = dev.to_device(np.full(want.shape, 7, dtype))
    dims = shape + (1,) * (3 - len(shape))
    pointer_kernel[(1,)](dev.to_device(x), out, OP=op, ARG=arg, S0=dims[0], S1=dims[1], S2=dims[2],
                         RANK=len(shape))
    np.testing.assert_array_equal(dev.to_host(out).reshape(want.shape), want)


def test_masked_load_through_transposed_pointers(target):
    dev = target.driver
    x = data((8, 16), np.float32)
    out = dev.to_device(np.zeros((16, 8), np.float32))
    masked_pointer_kernel[(1,)](dev.to_device(x), out, 50, M=8, N=16)
    want = np.where(np.arange(128).reshape(8, 16) < 50, x, -1).T
    np.testing.assert_array_equal(dev.to_host(out), want)


@pytest.mark.parametrize("op,ref", [("trans", np.transpose), ("flip", lambda x: np.flip(x, 1))])
def test_stored_over_its_own_input(target, op, ref):
    """As on a GPU, where the re-indexing passes through a barrier: all of x is read before any store."""
    dev = target.driver
    x = data((16, 16), np.float32)
    buf = dev.to_device(x.copy())
    in_place_kernel[(1,)](buf, N=16, OP=op)
    np.testing.assert_array_equal(dev.to_host(buf), ref(x))


def loop_reference(x: np.ndarray) -> np.ndarray:
    return sum((i + 1) * np.flip(x[i].T, 0) for i in range(len(x)))


def test_in_a_loop(target):
    dev = target.driver
    x = data((3, 16, 16), np.float32)
    out = dev.to_device(np.zeros((16, 16), np.float32))
    loop_kernel[(1,)](dev.to_device(x), out, 3, N=16)
    np.testing.assert_allclose(dev.to_host(out), loop_reference(x.astype(np.float64)), rtol=1e-6, atol=1e-5)


def test_split_and_reshape_to_scalars(target):
    dev = target.driver
    x = np.array([3, 5, 7], np.int32)
    out = dev.to_device(np.zeros(1, np.int32))
    split_scalars_kernel[(1,)](dev.to_device(x), out)
    assert dev.to_host(out)[0] == 357
    split_pointers_kernel[(1,)](dev.to_device(x), out)
    assert dev.to_host(out)[0] == 357


def test_names_and_methods_are_tritons():
    for name in ("reshape", "view", "ravel", "permute", "trans", "join", "split", "interleave", "cat", "flip"):
        assert hasattr(tl, name) and name in tl.__all__
    for name in ("reshape", "view", "ravel", "permute", "trans", "split", "flip"):
        assert getattr(tl.tensor, name) is getattr(tl, name)
    for name in ("join", "cat", "interleave"):  # Triton has no such tensor methods
        assert not hasattr(tl.tensor, name)
    assert tl.TRITON_MAX_TENSOR_NUMEL == 1048576


@pytest.mark.parametrize("op,message", [
    ("count", "tl.reshape cannot change the number of elements: the input [4, 8] has 32, the shape [4, 4] has 16"),
    ("minus_one", "shape element 0 must be a power of 2, got -1"),
    ("not_pow2", "shape element 1 must be a power of 2, got 3"),
    ("dims", "tl.permute: dims must be a permutation of [0, 1], got [0, 0]"),
    ("dims_rank", "tl.permute: dims [1, 0, 2] must have one entry per dimension of the 2-d input"),
    ("trans_1d", "tl.trans without dims swaps the last two dimensions, but the input is 1-D"),
    ("split", "tl.split needs a last dimension of size 2, got shape [4, 8]"),
    ("cat", "tl.cat supports only can_reorder=True"),
    ("join_dtype", "tl.join needs two tensors of one dtype, got tl.float32 and tl.int8"),
    ("flip_dim", "tl.flip: dim must be a constant integer in [-2, 2) for a 2-d input, got 2"),
    ("T_3d", "x.T: dims [1, 0] must have one entry per dimension of the 3-d input"),
    ("expand_twice", "tl.expand_dims received duplicate axes, normalized axes = [1, 1]"),
    ("expand_range", "tl.expand_dims: invalid axis 4, expected -4 <= axis < 4"),
])
def test_what_triton_refuses(op, message):
    with pytest.raises(tritium.CompilationError) as info:
        tritium.compile(bad_shape_kernel, signature="*fp32", constants={"OP": op}, target=FrontendOnly())
    text = str(info.value)
    assert message in text and "shapes.py:" in text and "bad_shape_kernel" in text


def test_view_warns_as_triton_does(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))  # compiled afresh, not found in a cache
    with pytest.warns(UserWarning, match="view is deprecated"):
        tritium.compile(shape_kernel, signature="*fp32,*fp32,*fp32,*fp32",
                        constants={"OP": "view", "ARG": (2, 32), "S0": 4, "S1": 16, "S2": 1, "RANK": 2},
                        target=FrontendOnly())


ROWS = """
    %r = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32>
    %row = "tile.expand_dims"(%r) {axis = 0 : i32} : (tensor<16xi32>) -> tensor<1x16xi32>
    %rows = "tile.broadcast"(%row) : (tensor<1x16xi32>) -> tensor<4x16xi32>
    %c = "tile.make_range"() {start = 0 : i32, end = 4 : i32} : () -> tensor<4xi32>
    %col = "tile.expand_dims"(%c) {axis = 1 : i32} : (tensor<4xi32>) -> tensor<4x1xi32>
    %c16 = arith.constant dense<16> : tensor<4x1xi32>
    %starts = arith.muli %col, %c16 : tensor<4x1xi32>
    %startb = "tile.broadcast"(%starts) : (tensor<4x1xi32>) -> tensor<4x16xi32>
    %offs = arith.addi %startb, %rows : tensor<4x16xi32> loc("offs")
    %t = "tile.trans"(%offs) {order = [1 : i32, 0 : i32]} : (tensor<4x16xi32>) -> tensor<16x4xi32> loc("t")
    %flat = "tile.reshape"(%offs) : (tensor<4x16xi32>) -> tensor<64xi32> loc("flat")
    %narrow = "tile.reshape"(%offs) : (tensor<4x16xi32>) -> tensor<8x8xi32> loc("narrow")
    %fl = "tile.flip"(%offs) {axis = 1 : i32} : (tensor<4x16xi32>) -> tensor<4x16xi32> loc("flip")
    %j = "tile.join"(%offs, %offs) : (tensor<4x16xi32>, tensor<4x16xi32>) -> tensor<4x16x2xi32> loc("join")
    %s = "tile.split"(%j) {part = 0 : i32} : (tensor<4x16x2xi32>) -> tensor<4x16xi32> loc("split")
"""


def test_axis_info_of_reindexed_offsets():
    """Facts that stay true after re-indexing, and no contiguity where the order changed."""
    from .test_axis_info import facts

    f = facts(ROWS)
    assert f["offs"] == AxisInfo((1, 16), (1, 16), (1, 1))  # rows of 16 contiguous offsets from 16 * i
    assert f["t"] == AxisInfo((16, 1), (16, 1), (1, 1))
    assert f["flat"] == AxisInfo((16,), (16,), (1,))  # the runs of a row stay runs, no longer ones
    assert f["narrow"] == AxisInfo((1, 8), (1, 8), (1, 1))
    assert f["flip"] == AxisInfo((1, 1), (1, 1), (1, 1))
    assert f["join"] == AxisInfo((1, 1, 1), (1, 1, 1), (1, 1, 1))
    assert f["split"] == AxisInfo((1, 1), (1, 1), (1, 1))


@tritium.jit
def keep_dims_kernel(z_ptr, x_ptr):
    """Triton's test_reduce stores a kept-dims sum through ``Z[None, None, :]`` of a scalar pointer."""
    x = tl.load(x_ptr + tl.arange(0, 8)[:, None] * 4 + tl.arange(0, 4)[None, :])
    s = tl.sum(tl.sum(x, axis=1, keep_dims=True), axis=0, keep_dims=True)
    z = z_ptr[None, None, :]
    tl.static_assert(z.shape == [1, 1])
    tl.store(z, s)
    row = tl.arange(0, 4)[None]  # a missing ':' keeps the dimension
    tl.static_assert(row.shape == [1, 4])
    tl.store(z_ptr + 1 + row, tl.sum(x, axis=0)[None, :])


def test_indexing_adds_dimensions_as_triton_does(target):
    dev = target.driver
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    z = dev.to_device(np.zeros(5, np.float32))
    keep_dims_kernel[(1,)](z, dev.to_device(x))
    np.testing.assert_array_equal(dev.to_host(z), [x.sum(), *x.sum(axis=0)])


@tritium.jit
def sliced(x_ptr, out_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(out_ptr + tl.arange(0, 8), x[8:])


def test_slicing_a_block_is_refused_in_triton_s_words(target):
    """Triton's test_invalid_slice looks for 'unsupported tensor index'; the rest says what to do."""
    with pytest.raises(tritium.CompilationError, match="unsupported tensor index: tensors can only be indexed with "
                                                       r"':' and None .* use tl.load with pointers"):
        sliced[(1,)](target.driver.to_device(np.zeros(16, np.float32)), target.driver.to_device(np.zeros(8, np.float32)))
