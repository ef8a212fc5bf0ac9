"""Tensor descriptors made on the host (``tritium.tools.tensor_descriptor.TensorDescriptor``): Triton's
host checks, the kernel's view of one (its parts as parameters), the launch paths, and the row
gathers and scatters of descriptors made in the kernel. (Copies, padding, loops, matmul, atomics and
gathers through host descriptors are checked by the conformance suite's ``host-desc-*`` cases.)"""

import numpy as np
import pytest
import tritium
import tritium.language as tl
from tritium.errors import ArgumentError, OutOfBoundsError, TritiumError
from tritium.tools.tensor_descriptor import TensorDescriptor

from .kernels.descriptors import scale_kernel


def test_tools_is_reachable_as_in_triton():
    assert tritium.tools.tensor_descriptor.TensorDescriptor is TensorDescriptor


def _aligned(shape, dtype=np.float32):
    raw = np.zeros(int(np.prod(shape)) * np.dtype(dtype).itemsize + 64, np.uint8)
    skip = -raw.__array_interface__["data"][0] % 64
    return raw[skip:skip + int(np.prod(shape)) * np.dtype(dtype).itemsize].view(dtype).reshape(shape)


@pytest.mark.parametrize("make,message", [
    (lambda a: TensorDescriptor(a.reshape(-1)[1:], [63], [1], [16]), r"base must be 16-byte aligned"),
    (lambda a: TensorDescriptor(a, [8, 8], [8], [8, 8]), r"rank mismatch"),
    (lambda a: TensorDescriptor(a, [1] * 6, [1] * 6, [1] * 6), r"the rank must be 1 to 5, got 6"),
    (lambda a: TensorDescriptor(a, [8, 8], [8, 1], [8, 6]), r"block_shape element 1 must be a power of 2, got 6"),
    (lambda a: TensorDescriptor(a, [8, 6], [6, 1], [8, 8]), r"strides must be 16-byte aligned: stride 6 of "
                                                             r"4-byte elements is 24 bytes"),
    (lambda a: TensorDescriptor(a, [8, 4], [8, 2], [8, 4]), r"the last dimension must be contiguous"),
    (lambda a: TensorDescriptor(a, [8, 8], [8, 1], [8, 8], padding="inf"), r"padding must be \"zero\" or \"nan\""),
    (lambda a: TensorDescriptor(a.view(np.int32), [8, 8], [8, 1], [8, 8], padding="nan"),
     r"padding \"nan\" needs a floating-point tensor, got int32"),
])
def test_host_checks_are_triton_s(make, message):
    with pytest.raises(ArgumentError, match=message):
        make(_aligned((8, 8)))


def test_from_tensor_takes_numpy_s_byte_strides_as_elements():
    a = _aligned((6, 16))[:, :12]
    d = TensorDescriptor.from_tensor(a, [4, 8])
    assert (d.shape, d.strides, d.block_shape, d.padding) == ([6, 12], [16, 1], [4, 8], "zero")


def test_from_tensor_takes_torch_strides():
    torch = pytest.importorskip("torch")
    t = torch.zeros(8, 32)[:, :20]
    d = TensorDescriptor.from_tensor(t, [8, 16], padding="nan")
    assert (d.shape, d.strides, d.padding) == ([8, 20], [32, 1], "nan")


class _GradTensor:
    """As a torch CUDA tensor that requires grad: its ``data_ptr`` works, its array interface raises
    (tutorial 06 makes descriptors of such tensors)."""

    dtype, shape, device = "float16", (8, 16), None

    def __init__(self, address: int):
        self.address = address

    def data_ptr(self) -> int:
        return self.address

    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad")


def test_a_descriptor_takes_the_address_of_a_tensor_that_refuses_its_array_interface():
    from tritium.tools.tensor_descriptor import array_address

    assert array_address(_GradTensor(0x7F0000001000)) == 0x7F0000001000


def test_shapes_are_runtime_values_specialised_on_multiples_of_16(target):
    """Launches with other shapes (the same block shape and dtype) run one compiled kernel, through
    the generated launch path after the first, as long as the same dimensions are multiples of 16
    (Triton's integer specialisation): those the compiled kernel knows as such."""
    drv = target.driver
    kernels = {}
    for m, n in ((20, 30), (37, 9), (16, 16), (48, 32), (32, 9)):
        x = np.arange(m * 32, dtype=np.float32).reshape(m, 32)
        src, dst = drv.to_device(x), drv.to_device(np.full((m, 32), -1, np.float32))
        k = scale_kernel[(tritium.cdiv(m, 16), tritium.cdiv(n, 16))](
            TensorDescriptor(src, [m, n], [32, 1], [16, 16]), TensorDescriptor(dst, [m, n], [32, 1], [16, 16]), 2.0,
            BM=16, BN=16)
        kernels.setdefault(id(k), []).append((m % 16 == 0, n % 16 == 0))
        want = np.full((m, 32), -1, np.float32)
        want[:, :n] = 2 * x[:, :n]
        np.testing.assert_array_equal(drv.to_host(dst), want)
        if target.compiles:
            head = next(line for line in k.asm["tile"].splitlines() if "func.func" in line and "scale_kernel" in line)
            # base and row stride: the host checked them; the shape's multiples of 16: the launch's
            assert head.count("tile.divisibility = 16") == 2 * (1 + (m % 16 == 0) + (n % 16 == 0)), head
    if target.compiles:
        assert sorted(kernels.values()) == [[(False, False)] * 2, [(True, False)], [(True, True)] * 2]


def test_a_descriptor_s_specialisation_names_its_dimensions_that_are_multiples_of_16():
    from tritium.runtime.descriptors import shape_key, specialization

    base = 1 << 20
    assert specialization((base, 32, 48, 48)) == "DD"
    assert specialization((base, 30, 48, 48)) == ".D"
    assert specialization((base, 30, 47, 47)) == ""
    assert specialization((base, 2, 64, 32, 2048, 32)) == ".DD"  # rank 3: three shapes, two strides
    desc = TensorDescriptor(np.zeros((4, 64), np.float32), [4, 64], [64, 1], [4, 16])
    assert shape_key(desc) == 0b10


def test_the_kernel_sees_the_parts_as_parameters(compiling_target):
    c = tritium.compile(scale_kernel, signature="tensordesc<fp32[16, 32]>, tensordesc<fp32[16, 32]>, fp32",
                        constants={"BM": 16, "BN": 32}, target=compiling_target.name)
    assert c.signature.arg_names[:4] == ("src", "src.shape[0]", "src.shape[1]", "src.strides[0]")
    assert c.signature.arg_types == ("*fp32", "i32", "i32", "i64") * 2 + ("fp32",)
    assert c.arg_types == {"src": "tensordesc<fp32[16, 32]>", "dst": "tensordesc<fp32[16, 32]>", "factor": "fp32"}
    head = next(line for line in c.asm["tile"].splitlines() if "func.func" in line and "scale_kernel" in line)
    # the base is 16-byte aligned and the row stride a multiple of 4 fp32 elements: the host checked both
    assert head.count("tile.divisibility = 16") == 2 and head.count("tile.divisibility = 4") == 2, head


def test_a_signature_names_a_bad_descriptor_type(compiling_target):
    with pytest.raises(ArgumentError, match=r"unknown type 'tensordesc<fp16\[16 32\]>'.*'tensordesc<fp16\[64, 64\]>'"):
        tritium.compile(scale_kernel, signature="tensordesc<fp16[16 32]>, tensordesc<fp16[16, 32]>, fp32",
                        constants={"BM": 16, "BN": 32}, target=compiling_target.name)


def test_a_compiled_kernel_refuses_an_array_for_a_descriptor(host_target):
    x = _aligned((16, 16))
    d = TensorDescriptor(x, [16, 16], [16, 1], [16, 16])
    k = scale_kernel[(1, 1)](d, d, 1.0, BM=16, BN=16)
    if not host_target.compiles:
        return
    with pytest.raises(ArgumentError, match=r"'src' of type tensordesc<fp32\[16, 16\]>, but it was given an array"):
        k[(1, 1)](x, d, 1.0)
    k[(1, 1)](d, d, 3.0)
    np.testing.assert_array_equal(x, 0)


def test_a_read_only_base_is_refused_where_the_kernel_stores(host_target):
    x = _aligned((16, 16))
    x.flags.writeable = False
    d = TensorDescriptor(x, [16, 16], [16, 1], [16, 16])
    with pytest.raises(ArgumentError, match="stores through 'dst', but that array is read-only"):
        scale_kernel[(1, 1)](TensorDescriptor(_aligned((16, 16)), [16, 16], [16, 1], [16, 16]), d, 1.0, BM=16, BN=16)


def test_a_shape_larger_than_the_array_is_reported_in_debug_mode(host_target):
    x, out = _aligned((4, 16)), _aligned((16, 16))
    with pytest.raises(OutOfBoundsError, match="src") as info:  # 16 rows claimed, 4 there
        scale_kernel[(1, 1)](TensorDescriptor(x, [16, 16], [16, 1], [16, 16]),
                             TensorDescriptor(out, [16, 16], [16, 1], [16, 16]), 1.0, BM=16, BN=16, debug=True)
    assert "scale_kernel" in str(info.value)


@tritium.jit
def inkernel_gather_kernel(x_ptr, rows_ptr, out_ptr, M, N, col, R: tl.constexpr, C: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [1, C])
    rows = tl.load(rows_ptr + tl.arange(0, R))
    tl.store(out_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :], d.gather(rows, col))


def test_gather_of_a_descriptor_made_in_the_kernel(target):
    drv = target.driver
    m, n = 12, 24
    x = np.arange(m * n, dtype=np.float32).reshape(m, n)
    rows = np.array([11, 0, -3, 12, 5, 5, 1, 7], np.int32)
    out = drv.to_device(np.full((8, 16), -1, np.float32))
    inkernel_gather_kernel[(1,)](drv.to_device(x), drv.to_device(rows), out, m, n, 10, R=8, C=16)
    want = np.zeros((8, 16), np.float32)
    for i, r in enumerate(rows):
        if 0 <= r < m:
            want[i, :n - 10] = x[r, 10:]
    np.testing.assert_array_equal(drv.to_host(out), want)


@tritium.jit
def gather_refusal_kernel(x_ptr, WHAT: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, [64, 64], [64, 1], [1, 64 if WHAT != "cols" else 4])
    if WHAT == "rows":
        v = d.gather(tl.arange(0, 4), 0)
    elif WHAT == "2d":
        v = d.gather(tl.zeros((8, 2), tl.int32), 0)
    elif WHAT == "indices":
        v = d.gather(tl.arange(0, 8))
    elif WHAT == "shape":
        d.scatter(tl.zeros((8, 32), tl.float32), tl.arange(0, 8), 0)
    elif WHAT == "dtype":
        d.scatter(tl.zeros((8, 64), tl.float16), tl.arange(0, 8), 0)
    else:
        v = d.gather(tl.arange(0, 8), 0)


@pytest.mark.parametrize("what,message", [
    ("rows", r"desc.gather must have at least 8 rows, got 4"),
    ("cols", r"desc.gather of tl.float32 must have at least 8 columns, got 4"),
    ("2d", r"desc.gather: x_offsets must be a 1-D integer tensor"),
    ("indices", r"desc.gather takes x_offsets and y_offset \(2-D indexing\), got 1 indices"),
    ("shape", r"desc.scatter: the value must have shape \[8, 64\] \(rows x block columns\), got \[8, 32\]"),
    ("dtype", r"desc.scatter: the descriptor holds tl.float32, the value is tl.float16; convert it with .to\(tl.float32\)"),
])
def test_gather_and_scatter_refusals_are_triton_s(target, what, message):
    x = target.driver.to_device(np.zeros((64, 64), np.float32))
    with pytest.raises(TritiumError, match=message) as info:
        gather_refusal_kernel[(1,)](x, WHAT=what)
    assert "gather_refusal_kernel" in str(info.value)


@tritium.jit
def desc_as_pointer_kernel(d, out, B: tl.constexpr):
    tl.store(out + tl.arange(0, B), tl.load(d + tl.arange(0, B)))


def test_a_descriptor_used_as_a_pointer_says_how_to_read_it(target):
    x = target.driver.to_device(np.zeros(16, np.float32))
    with pytest.raises(TritiumError, match=r"cannot use a tensor descriptor \(read it with desc.load\(offsets\)\)"
                                           r" tensor_descriptor\(<\[16\], tl.float32>\) as a tensor") as info:
        desc_as_pointer_kernel[(1,)](TensorDescriptor(x, [16], [1], [16]), x, B=16)
    assert "desc_as_pointer_kernel" in str(info.value)


def test_a_shape_beyond_int32_is_refused_not_wrapped(host_target):
    x, out = _aligned((16, 16)), _aligned((16, 16))
    big = TensorDescriptor(x, [2**31, 16], [16, 1], [16, 16])
    with pytest.raises(ArgumentError, match=r"argument 'src.shape\[0\]' = 2147483648 does not fit i32"):
        scale_kernel[(1, 1)](big, TensorDescriptor(out, [16, 16], [16, 1], [16, 16]), 1.0, BM=16, BN=16)


@pytest.mark.parametrize("dtype, op, allowed", [
    ("fp32", "max", False), ("fp64", "min", False), ("fp16", "max", True), ("bf16", "min", True),
    ("fp32", "add", True), ("fp64", "add", False), ("i32", "max", True),
])
def test_descriptor_reductions_take_what_triton_s_take_on_hopper(dtype, op, allowed):
    """min and max of 16-bit floats (not of fp32 or fp64), add of 16- and 32-bit floats, on every
    target: Triton's descriptor reductions where the hardware reduces blocks."""
    @tritium.jit
    def reduce_kernel(desc, src, OP: tl.constexpr):
        v = tl.load(src + tl.arange(0, 8)[:, None] * 16 + tl.arange(0, 16)[None, :])
        getattr(desc, f"atomic_{OP}")([0, 0], v)

    compile_it = lambda: tritium.compile(reduce_kernel, {"desc": f"tensordesc<{dtype}[8, 16]>", "src": f"*{dtype}"},
                                         {"OP": op}, target="cpu")
    if allowed:
        compile_it()
    else:
        with pytest.raises(tritium.CompilationError, match=f"desc.atomic_{op} does not support"):
            compile_it()


@tritium.jit
def downcast_store_kernel(desc, N, BM: tl.constexpr, BN: tl.constexpr):
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    values = ((om + tl.arange(0, BM)[:, None]) * N + on + tl.arange(0, BN)[None, :]).to(tl.float32) + 0.25
    desc.store([om, on], values)  # fp32 into an fp16 descriptor: converted, as Triton's store does


def test_a_descriptor_store_converts_to_the_descriptor_s_type(host_target):
    out = np.zeros((32, 128), np.float16)
    downcast_store_kernel[(4, 4)](TensorDescriptor(out, out.shape, (128, 1), [8, 32]), 128, BM=8, BN=32)
    np.testing.assert_array_equal(out, (np.arange(32 * 128).reshape(32, 128) + 0.25).astype(np.float16))
