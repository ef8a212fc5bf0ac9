"""Tensor descriptors' refusals, as Triton's: each a clear error naming the kernel and what to change.
(Their loads, stores and atomics are checked by the conformance suite's ``tensordesc-*`` cases.)"""

import numpy as np
import pytest
import tritium
import tritium.language as tl
from tritium.errors import TritiumError


@tritium.jit
def desc_kernel(x_ptr, n, WHAT: tl.constexpr):
    if WHAT == "stride":
        d = tl.make_tensor_descriptor(x_ptr, [n, n], [1, n], [16, 16])
    elif WHAT == "row":
        d = tl.make_tensor_descriptor(x_ptr, [n, n], [n, 1], [16, 2])
    elif WHAT == "nan-int":
        d = tl.make_tensor_descriptor(x_ptr, [n, n], [n, 1], [16, 16], padding_option="nan")
    else:
        d = tl.make_tensor_descriptor(x_ptr, [n, n], [n, 1], [16, 16])
    if WHAT == "tl.load":
        v = tl.load(d)
    elif WHAT == "offsets":
        v = d.load([0])
    elif WHAT == "gather":
        v = d.gather(tl.arange(0, 16), 0)
    elif WHAT == "scatter":
        d.scatter(tl.zeros((4, 16), tl.float32), tl.arange(0, 4), 0)
    else:
        v = d.load([0, 0])
    d.store([0, 0], v)


@pytest.mark.parametrize("what,message", [
    ("stride", r"the last dimension must be contiguous \(stride 1, a constant\)"),
    ("row", r"Descriptor block shape must have at least 16 bytes in the last dimension, got 2 x 4 = 8 bytes; "
            r"widen block_shape\[-1\]"),
    ("nan-int", r"padding \"nan\" needs a floating-point tensor, got tl.int32"),
    ("tl.load", r"tl.load takes pointers and block pointers, not a tensor descriptor: use desc.load\(offsets\)"),
    ("offsets", r"desc.load: the 2-d descriptor needs 2 offsets, got 1"),
    ("gather", r"desc.gather needs a 2-D descriptor whose block is one row, got block_shape \[16, 16\]"),
    ("scatter", r"desc.scatter needs a 2-D descriptor whose block is one row"),
])
def test_refusals_name_the_kernel_and_the_fix(target, what, message):
    x = target.driver.to_device(np.zeros((16, 16), np.int32 if what == "nan-int" else np.float32))
    with pytest.raises(TritiumError, match=message) as info:
        desc_kernel[(1,)](x, 16, WHAT=what)
    assert "desc_kernel" in str(info.value)


@tritium.jit
def strided_copy(x_ptr, out_ptr, n, stride_row, stride_col, BLOCK: tl.constexpr):
    """A descriptor whose strides are arguments: the last one, 1, is the constant compiled targets
    specialise it to (Triton's test_tensor_descriptor_load3d passes it so)."""
    d = tl.make_tensor_descriptor(x_ptr, [n, n], [stride_row, stride_col], [BLOCK, BLOCK])
    block = d.load([0, 0])
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs[:, None] * BLOCK + offs[None, :], block)


def test_a_last_stride_of_one_passed_as_an_argument_is_the_constant(target):
    x = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
    out = target.driver.to_device(np.zeros((8, 8), np.float32))
    strided_copy[(1,)](target.driver.to_device(x), out, 16, 16, 1, BLOCK=8)
    np.testing.assert_array_equal(target.driver.to_host(out), x[:8, :8])
