"""What kernels accept as arguments on host targets: numpy arrays, DLPack and buffer-protocol
objects, torch CPU tensors when torch is installed, Python and numpy scalars."""

import array

import numpy as np
import pytest

import tritium

from .kernels.basic import add_kernel


class DLPackOnly:
    """Exposes nothing but the DLPack protocol (no dtype, no array interface)."""

    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, **kwargs):
        return self._arr.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


def test_dlpack_and_buffer_protocol(host_target):
    x = np.arange(40, dtype=np.float32)
    y = array.array("f", [2.0] * 40)
    out = np.zeros(40, np.float32)
    add_kernel[(3,)](DLPackOnly(x), y, DLPackOnly(out), 40, BLOCK=16)
    np.testing.assert_array_equal(out, x + 2)


def test_strided_view_is_addressed_by_pointer(host_target):
    base = np.arange(64, dtype=np.float32)
    out = np.zeros(32, np.float32)
    add_kernel[(1,)](base[::2], base[::2], out, 32, BLOCK=32)  # pointer semantics: contiguous reads
    np.testing.assert_array_equal(out, 2 * base[:32])


def test_numpy_scalars_keep_their_dtype(host_target):
    x = np.arange(8, dtype=np.int64)
    out = np.zeros(8, np.int64)
    add_kernel[(1,)](x, x, out, np.int64(5), BLOCK=8)
    np.testing.assert_array_equal(out[:5], 2 * x[:5])
    np.testing.assert_array_equal(out[5:], 0)


def test_raw_bytes_are_refused(host_target):
    with pytest.raises(tritium.ArgumentError, match="numpy.frombuffer"):
        add_kernel[(1,)](bytearray(64), np.zeros(16, np.float32), np.zeros(16, np.float32), 16, BLOCK=16)


def test_torch_cpu_tensors(host_target):
    torch = pytest.importorskip("torch")
    x = torch.arange(100, dtype=torch.float32)
    out = torch.zeros(100, dtype=torch.float32)
    add_kernel[(tritium.cdiv(100, 32),)](x, x, out, 100, BLOCK=32)
    assert torch.equal(out, 2 * x)


def test_read_only_output_is_refused_inputs_are_fine(host_target):
    x = np.arange(16, dtype=np.float32)
    x.flags.writeable = False
    out = np.zeros(16, np.float32)
    add_kernel[(1,)](x, x, out, 16, BLOCK=16)  # reading a read-only array is fine
    np.testing.assert_array_equal(out, 2 * x)
    frozen = np.zeros(16, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(tritium.ArgumentError, match="stores through 'out_ptr'.*read-only"):
        add_kernel[(1,)](x, x, frozen, 16, BLOCK=16)
    assert not frozen.any()


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_compiled_kernel_refuses_arrays_of_another_type(compiling_target, dtype):
    k = tritium.compile(add_kernel, signature="*fp32, *fp32, *fp32, i32", constants={"BLOCK": 16},
                        target=compiling_target)
    dev = compiling_target.driver
    x = dev.to_device(np.arange(16, dtype=np.float32))
    out = dev.to_device(np.zeros(16, np.float32))
    bad = dev.to_device(np.arange(16, dtype=dtype))
    name = np.dtype(dtype).name
    short = {"float64": "fp64", "int32": "i32"}[name]
    with pytest.raises(tritium.errors.ArgumentError,
                       match=rf"kernel 'add_kernel' was compiled with 'y_ptr' of type \*fp32, but it was given an "
                             rf"array of {short} \(\*{short}\)"):
        k[(1,)](x, bad, out, 16)
    assert not dev.to_host(out).any()
    with pytest.raises(tritium.errors.ArgumentError, match=r"'n' of type i32, but it was given a scalar of type fp32"):
        k[(1,)](x, x, out, 16.0)
    with pytest.raises(tritium.errors.ArgumentError, match=r"'out_ptr' of type \*fp32, but it was given a scalar"):
        k[(1,)](x, x, 0, 16)
    k[(1,)](x, x, out, np.int64(16))  # an integer of another width fits an integer parameter
    np.testing.assert_array_equal(dev.to_host(out), 2 * dev.to_host(x))


def test_unknown_signature_type_lists_the_valid_ones():
    from .kernels.frontend_only import FrontendOnly

    with pytest.raises(tritium.errors.ArgumentError, match=r"kernel 'add_kernel': unknown type 'float' for 'y_ptr'"
                                                           r" in the signature; valid types are i1, i8, .*, u64, fp16, bf16, fp32, fp64, '\*' before"
                                                           r".*'tensordesc<fp16\[64, 64\]>' for a tensor descriptor"):
        tritium.compile(add_kernel, signature="*fp32, float, *fp32, i32", constants={"BLOCK": 16},
                        target=FrontendOnly())


def _store_scalar(out_ptr, val, EXPECT: tritium.language.constexpr):
    """Stores ``val`` as fp64 after checking its type: the annotation under test decides it."""
    tritium.language.static_assert(val.dtype == EXPECT)
    tritium.language.store(out_ptr, val.to(tritium.language.float64))


def _annotated(annotation) -> tritium.JITFunction:
    """``_store_scalar`` with ``val`` annotated (Triton's tests set ``__annotations__`` so)."""
    import types

    fn = types.FunctionType(_store_scalar.__code__, _store_scalar.__globals__, "_store_scalar")
    fn.__annotations__ = {"val": annotation, "EXPECT": tritium.language.constexpr}
    return tritium.jit(fn)


def _bf16(x: float) -> float:
    """x rounded to bfloat16 (nearest, ties to even, through float32), independently of tritium."""
    bits = int(np.array(x, np.float32).view(np.uint32))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return float(np.array(bits, np.uint32).view(np.float32))


@pytest.mark.parametrize("annotation,expect,value,want", [
    ("tl.float16", "float16", 0.1, float(np.float16(0.1))),
    ("fp16", "float16", 0.1, float(np.float16(0.1))),
    ("half", "float16", 65504.0, 65504.0),
    ("tl.float64", "float64", 0.1, 0.1),  # fp32 would give 0.10000000149...
    ("fp64", "float64", 1 / 3, 1 / 3),
    ("i64", "int64", 5, 5.0),  # an unannotated 5 is int32
    ("tl.int64", "int64", 2**40 + 1, float(2**40 + 1)),
    ("u8", "uint8", 200, 200.0),
    ("int", "int32", 7, 7.0),
    ("float", "float32", 0.1, float(np.float32(0.1))),
])
def test_annotations_fix_the_type_of_scalar_parameters(target, annotation, expect, value, want):
    import tritium.language as tl

    ann = getattr(tl, annotation[3:]) if annotation.startswith("tl.") else annotation
    kernel = _annotated(ann)
    dev = target.driver
    for _ in range(2):  # the first launch compiles, the second takes the generated fast path
        out = dev.to_device(np.zeros(1, np.float64))
        kernel[(1,)](out, value, EXPECT=getattr(tl, expect))
        assert dev.to_host(out)[0] == want


def test_bf16_annotation_rounds_the_argument(target):
    import tritium.language as tl

    dev = target.driver
    out = dev.to_device(np.zeros(1, np.float64))
    _annotated(tl.bfloat16)[(1,)](out, 0.1, EXPECT=tl.bfloat16)
    assert dev.to_host(out)[0] == _bf16(0.1) != float(np.float32(0.1))


def test_annotated_integers_specialise_on_divisibility_only(target):
    """As Triton: an annotated int equal to 1 is not a constant of the kernel, 1, 16 and 17 all
    give their own value."""
    import tritium.language as tl

    kernel = _annotated("i32")
    dev = target.driver
    for value in (1, 16, 17, 1):
        out = dev.to_device(np.zeros(1, np.float64))
        kernel[(1,)](out, value, EXPECT=tl.int32)
        assert dev.to_host(out)[0] == value


def test_annotated_scalar_refuses_an_array(host_target):
    import tritium.language as tl

    with pytest.raises(tritium.ArgumentError, match="kernel '_store_scalar'.*'val'.*fp16"):
        _annotated(tl.float16)[(1,)](np.zeros(1, np.float64), np.zeros(4, np.float16), EXPECT=tl.float16)
