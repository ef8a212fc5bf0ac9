"""Triton's type objects in ``tritium.language``: ``tl.void``, ``tl.pi32_t``, ``tl.block_type``
(``x.type`` of a block), ``tl.constexpr_type``, ``tl.tuple``, ``tl.slice``, ``tl.const`` pointers
that refuse writes, and ``while tl.condition(...)``; in host code and inside kernels."""

import re

import numpy as np
import pytest
import tritium
import tritium.language as tl


def test_host_side_types_behave_as_tritons():
    assert tl.void.is_void() and tl.void.primitive_bitwidth == 0 and not tl.float32.is_void()
    assert tl.pi32_t == tl.pointer_type(tl.int32) and tl.pi32_t.is_ptr() and not tl.pi32_t.is_const()
    assert tl.pointer_type(tl.int32, const=True) != tl.pi32_t and tl.pointer_type(tl.int32, const=True).is_const()
    b = tl.block_type(tl.float16, [4, tl.constexpr(8)])
    assert b.is_block() and b.shape == (4, 8) and b.numel == 32 and b.scalar == tl.float16
    assert b == tl.block_type(tl.float16, (4, 8)) and b != tl.block_type(tl.float32, (4, 8)) and b != tl.float16
    assert b.with_element_ty(tl.int8) == tl.block_type(tl.int8, [4, 8])
    assert not tl.float16.is_block() and tl.float16.scalar == tl.float16
    with pytest.raises(TypeError, match="0d block_type"):
        tl.block_type(tl.float32, [])
    with pytest.raises(TypeError, match="expected `dtype`"):
        tl.pointer_type("fp32")
    assert tl.constexpr(3).type == tl.constexpr_type(3) != tl.constexpr_type(4)
    t = tl.tuple([tl.constexpr(1), 2, 3])
    assert isinstance(t, tuple) and t == (1, 2, 3) and len(t) == 3
    assert list(t.type) == [tl.constexpr_type(1), tl.constexpr_type(2), tl.constexpr_type(3)]
    assert t[tl.slice(1, None, None)] == (2, 3) and isinstance(t[1:], tl.tuple) and t[tl.constexpr(0)] == 1
    assert isinstance(t + (4,), tl.tuple) and t + (4,) == (1, 2, 3, 4)
    assert tl.slice(0, 2, 1).type.name == "slice_type"


@tritium.jit
def types_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    pair = tl.tuple([x, x * 2])
    tl.static_assert(x.type == tl.block_type(tl.float32, [BLOCK]))
    tl.static_assert(x.type.scalar == tl.float32 and x.type.is_block())
    tl.static_assert(tl.sum(x, 0).type == tl.float32 and not tl.sum(x, 0).type.is_block())
    tl.static_assert(x_ptr.type.element_ty == tl.float32)
    tl.static_assert(len(pair) == 2)
    both = pair[tl.slice(0, 2, None)]
    tl.store(out_ptr + offs, both[0] + both[1])


def test_kernels_read_block_types_and_build_tuples(target):
    x = np.arange(16, dtype=np.float32)
    xd, out = target.driver.to_device(x), target.driver.to_device(np.zeros(16, np.float32))
    types_kernel[(1,)](xd, out, BLOCK=16)
    np.testing.assert_array_equal(target.driver.to_host(out), 3 * x)


@tritium.jit
def count_kernel(n_ptr, out_ptr):
    n = tl.load(n_ptr)
    i = 0
    total = 0
    while tl.condition(i < n, disable_licm=True):
        total += i
        i += 1
    tl.store(out_ptr, total)


def test_while_with_tl_condition_runs_the_loop(target):
    out = target.driver.to_device(np.zeros(1, np.int32))
    count_kernel[(1,)](target.driver.to_device(np.array([10], np.int32)), out)
    assert target.driver.to_host(out)[0] == sum(range(10))


@tritium.jit
def copy_from_const(src: tl.const, dst, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.static_assert(src.dtype.is_const() and not dst.dtype.is_const())
    tl.store(dst + offs, tl.load(src + offs) + 1)


@tritium.jit
def store_to_const(src: tl.const, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(src + offs, tl.load(src + offs) + 1)


@tritium.jit
def atomic_on_const(src: "tl.const"):
    tl.atomic_add(src, 1)


def test_const_pointers_read_but_refuse_writes(target):
    src = target.driver.to_device(np.arange(8, dtype=np.int32))
    dst = target.driver.to_device(np.zeros(8, np.int32))
    copy_from_const[(1,)](src, dst, N=8)
    np.testing.assert_array_equal(target.driver.to_host(dst), np.arange(8) + 1)
    # Triton's words first, as its test_const looks for them
    with pytest.raises(tritium.CompilationError, match="Cannot store to a constant pointer: tl.store cannot write "
                                                       "through a pointer to constant data"):
        store_to_const[(1,)](src, N=8)
    with pytest.raises(tritium.CompilationError, match="tl.atomic_add cannot write through a pointer to constant"):
        atomic_on_const[(1,)](src)
    np.testing.assert_array_equal(target.driver.to_host(src), np.arange(8))
    with pytest.raises(tritium.CompilationError, match="Ternary expression with dynamic condition has inconsistent "
                                                       "types const_pointer<tl.int32> and pointer<tl.int32>"):
        const_or_not[(1,)](src, dst, 2)


@tritium.jit
def const_or_not(src: tl.const, dst, n):
    """A pointer picked at run time must have one type: const and not-const ones differ."""
    tl.store(src if n > 1 else dst, 1)


@tritium.jit
def drops_advance(x_ptr, out_ptr):
    p = tl.make_block_ptr(x_ptr, (16,), (1,), (0,), (8,), (0,))
    tl.advance(p, (8,))  # dropped: p does not move
    tl.store(out_ptr + tl.arange(0, 8), tl.load(p))


@tritium.must_use_result("twice_of's result is the point; assign it")
@tritium.jit
def twice_of(x):
    return x * 2


@tritium.must_use_result
@tritium.jit
def thrice_of(x):
    return x * 3


@tritium.jit
def drops_marked(out_ptr, WHICH: tl.constexpr):
    x = tl.load(out_ptr)
    if WHICH == 2:
        twice_of(x)
    else:
        thrice_of(x)
    tl.store(out_ptr, twice_of(x) + thrice_of(x))


def test_dropping_a_result_that_must_be_used_is_a_compile_error(target):
    x = target.driver.to_device(np.arange(16, dtype=np.float32))
    out = target.driver.to_device(np.zeros(8, np.float32))
    with pytest.raises(tritium.CompilationError, match=r"(?s)tl.advance has no side effects.*tl.advance\(p, \(8,\)\)"):
        drops_advance[(1,)](x, out)
    one = target.driver.to_device(np.ones(1, np.float32))
    with pytest.raises(tritium.CompilationError, match="twice_of's result is the point; assign it"):
        drops_marked[(1,)](one, WHICH=2)
    with pytest.raises(tritium.CompilationError, match=r"the result of thrice_of\(\.\.\.\) is not used"):
        drops_marked[(1,)](one, WHICH=3)


def test_kernel_interfaces_and_interpreter_errors_have_tritons_names(monkeypatch):
    from tritium.errors import KernelRuntimeError, OutOfBoundsError

    for k in (types_kernel, tritium.autotune([tritium.Config({})], key=[])(types_kernel),
              tritium.heuristics({"X": lambda args: 1})(types_kernel)):
        assert isinstance(k, tritium.KernelInterface)
    assert issubclass(OutOfBoundsError, tritium.InterpreterError) and tritium.InterpreterError is KernelRuntimeError
    import tritium.runtime.errors as runtime_errors  # Triton's path: triton.runtime.errors.InterpreterError

    assert runtime_errors.InterpreterError is tritium.InterpreterError
    monkeypatch.setenv("TRITIUM_TARGET", "interpreter")
    out = np.zeros(4, np.float32)
    with pytest.raises(tritium.InterpreterError, match="out of bounds|outside"):
        types_kernel[(1,)](out, out, BLOCK=16)  # reads 16 elements of a 4-element array


class _TorchDtype:
    """Stands in for ``torch.float32`` (no torch here): a class named dtype from module torch."""

    def __str__(self) -> str:
        return "torch.float32"


_TorchDtype.__name__, _TorchDtype.__module__ = "dtype", "torch"


@tritium.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def test_warmup_takes_torch_dtypes_for_tensors_as_mock_tensors(compiling_target, host_target):
    f32 = _TorchDtype()
    mock = tritium.MockTensor.wrap_dtype(f32)
    assert isinstance(mock, tritium.MockTensor) and mock.dtype is f32 and mock.data_ptr() == 0
    assert tritium.MockTensor(f32, [4, 8]).stride() == (8, 1) and tritium.MockTensor.wrap_dtype(3) == 3
    compiled = scale_kernel.warmup(f32, f32, 100, BLOCK=64, grid=(2,))
    assert compiled.signature.arg_types == ("*fp32", "*fp32", "i32")
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    scale_kernel[(2,)](x, out, 100, BLOCK=64)  # numpy's arrays are 16-byte aligned: the warmed-up kernel
    np.testing.assert_array_equal(out, 2 * x)
    assert {id(k) for k in scale_kernel.kernels.values()} == {id(compiled)}  # the launch found it
    with pytest.raises(tritium.TritiumError, match="MockTensor"):
        scale_kernel[(2,)](mock, out, 100, BLOCK=64)  # a mock has no memory: only warmup takes it


@tritium.jit
def broken_kernel(x_ptr):
    tl.store(x_ptr, undefined_name)  # noqa: F821


def test_async_compile_mode_compiles_warmups_in_the_background(compiling_target, host_target):
    from concurrent.futures import ThreadPoolExecutor

    f32 = _TorchDtype()
    with ThreadPoolExecutor(2) as pool:
        with tritium.AsyncCompileMode(pool) as mode:
            with pytest.raises(RuntimeError, match="another AsyncCompileMode is already active"):
                tritium.AsyncCompileMode(pool).__enter__()
            future = scale_kernel.warmup(f32, f32, 100, BLOCK=32, grid=(4,))
            assert isinstance(future, tritium.FutureKernel)
            assert scale_kernel.warmup(f32, f32, 100, BLOCK=32, grid=(4,)) is future  # one compile per key
    assert future.future.done()  # leaving the block waited for it
    assert mode.future_kernels and future.result().signature.arg_types == ("*fp32", "*fp32", "i32")
    assert future.asm["tile"] == future.result().asm["tile"]  # the compiled kernel's attributes
    x, out = np.arange(100, dtype=np.float32), np.zeros(100, np.float32)
    scale_kernel[(4,)](x, out, 100, BLOCK=32)
    np.testing.assert_array_equal(out, 2 * x)
    assert future.result() in scale_kernel.kernels.values()  # the launch used the background compile


def test_async_compile_errors_raise_when_the_block_ends_unless_ignored(compiling_target, host_target):
    from concurrent.futures import ThreadPoolExecutor

    f32 = _TorchDtype()
    with ThreadPoolExecutor(1) as pool:
        with pytest.raises(tritium.CompilationError, match="undefined_name"):
            with tritium.AsyncCompileMode(pool):
                broken_kernel.warmup(f32, grid=(1,))
        with tritium.AsyncCompileMode(pool, ignore_errors=True):
            future = broken_kernel.warmup(f32, grid=(1,))
        assert future.result(ignore_errors=True) is None


def test_set_allocator_keeps_the_allocator_of_its_context():
    import contextvars

    from tritium.runtime.allocation import current_allocator

    def allocator(size, alignment, stream):
        return bytearray(size)

    def in_a_new_context():
        tritium.set_allocator(allocator)
        return current_allocator()

    assert contextvars.copy_context().run(in_a_new_context) is allocator
    assert current_allocator() is None  # the context that set it had it, as in Triton
    with pytest.raises(TypeError, match="set_allocator takes a callable"):
        tritium.set_allocator(42)


def test_triton_s_dtype_lists_mantissa_widths_and_signature_strings():
    """What Triton's tests and helpers iterate over and parse (``tl.dtype.FP_TYPES``, ...)."""
    assert tl.dtype.SINT_TYPES == ["int8", "int16", "int32", "int64"]
    assert tl.dtype.UINT_TYPES == ["int1", "uint8", "uint16", "uint32", "uint64"]
    assert tl.dtype.STANDARD_FP_TYPES == ["fp16", "bf16", "fp32", "fp64"] and tl.dtype.OTHER_TYPES == ["void"]
    assert all(tl.str_to_ty(n).is_floating() for n in tl.dtype.FP_TYPES)
    assert [tl.str_to_ty(n).fp_mantissa_width for n in tl.dtype.STANDARD_FP_TYPES] == [10, 7, 23, 52]
    assert tl.float8e4nv.fp_mantissa_width == 3 and tl.float8e5.fp_mantissa_width == 2
    with pytest.raises(AttributeError, match="not a floating-point type"):
        tl.int32.fp_mantissa_width
    # the bias of each format against its largest finite exponent field: fp32's is 2**(254 - 127)
    assert [tl.str_to_ty(n).exponent_bias for n in tl.dtype.STANDARD_FP_TYPES] == [15, 127, 127, 1023]
    assert (tl.float8e4nv.exponent_bias, tl.float8e5.exponent_bias, tl.float8e4b15.exponent_bias) == (7, 15, 15)
    with pytest.raises(AttributeError, match="not a floating-point type"):
        tl.int8.exponent_bias
    assert tl.str_to_ty("i32") == tl.int32 and tl.str_to_ty("u1") == tl.str_to_ty("B") == tl.int1
    assert tl.str_to_ty("*fp16") == tl.pointer_type(tl.float16) and not tl.str_to_ty("*fp16").is_const()
    assert tl.str_to_ty("*kbf16") == tl.pointer_type(tl.bfloat16, const=True) and tl.str_to_ty("*kbf16").is_const()
    assert tl.str_to_ty("constexpr", 8) == tl.constexpr_type(8)
    with pytest.raises(ValueError, match="unknown type 'f33'"):
        tl.str_to_ty("f33")


@tritium.jit
def static_assert_kernel(x_ptr, N: tl.constexpr):
    tl.static_assert(N < 8, "N too large")
    tl.store(x_ptr + tl.arange(0, N), tl.zeros((N,), tl.int32))


def test_a_failed_static_assert_is_triton_s_compile_time_assertion_failure(target):
    """``triton.compiler.errors.CompileTimeAssertionFailure`` (a ``CompilationError``), whose
    ``error_message`` is the message alone."""
    from tritium.errors import CompilationError, CompileTimeAssertionFailure

    with pytest.raises(CompileTimeAssertionFailure) as e:
        static_assert_kernel[(1,)](target.driver.to_device(np.zeros(16, np.int32)), N=16)
    assert isinstance(e.value, CompilationError) and e.value.error_message == "static assertion failed: N too large"


@tritium.jit
def list_literal_kernel(x_ptr, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.static_assert(x.shape == [M, N])  # a list literal is a tl.tuple, as in Triton
    shape = [M, N]
    tl.static_assert(isinstance(shape, tl.tuple) and shape[1] == N)
    tl.store(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], tl.reshape(x * 2, [M, N]))


def test_list_literals_are_tl_tuples(target):
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    buf = target.driver.to_device(x)
    list_literal_kernel[(1,)](buf, M=2, N=4)
    np.testing.assert_array_equal(target.driver.to_host(buf), x * 2)


@tritium.jit
def one_element_condition_kernel(x_ptr, out_ptr):
    v = tl.load(x_ptr + tl.arange(0, 1))
    if v > 0:
        tl.store(out_ptr, 1)
    else:
        tl.store(out_ptr, 2)


def test_a_condition_on_a_one_element_block_is_its_element_with_a_warning(target):
    """As in Triton, which warns (when the kernel compiles) and takes the element; ``if (v >
    0).item()`` says it outright."""
    dev = target.driver
    got = []
    with pytest.warns(UserWarning, match=r"a condition on a block of shape \[1\] is read as its one element.*"
                                         r"write \(v > 0\)\.item\(\)"):
        for value in (3, -3):
            out = dev.to_device(np.zeros(1, np.int32))
            one_element_condition_kernel[(1,)](dev.to_device(np.array([value], np.int32)), out)
            got.append(int(dev.to_host(out)[0]))
    assert got == [1, 2]


@tritium.jit
def store_int_kernel(out_ptr, v):
    tl.store(out_ptr, v)


def test_an_integer_argument_beyond_64_bits_is_an_overflow_error(target):
    """Triton's launcher raises ``OverflowError``; tritium's ``ArgumentError`` is one too, naming the argument."""
    with pytest.raises(OverflowError, match="argument 'v' = 18446744073709551616"):
        store_int_kernel[(1,)](target.driver.to_device(np.zeros(1, np.int64)), 2**64)


@tritium.jit
def bad_pointer_cast(x_ptr, WHAT: tl.constexpr):
    if WHAT == "ptr-to-i32":
        tl.store(x_ptr, x_ptr.to(tl.int32))
    else:
        tl.store(tl.load(x_ptr).to(tl.float32).to(tl.pointer_type(tl.int32)), 1)


@pytest.mark.parametrize("what, message", [
    ("ptr-to-i32", "cannot cast pointer<tl.int32> to tl.int32: a pointer converts to int64 (its address) or int1"),
    ("float-to-ptr", "cannot cast tl.float32 to pointer<tl.int32>: pointers convert to and from integers"),
])
def test_pointer_casts_refused_as_triton_refuses_them(target, what, message):
    """Triton converts pointers to pointers, integers to pointers and pointers to int64 or int1
    (the conformance case ``pointer-casts`` checks their values); nothing else."""
    with pytest.raises(tritium.CompilationError, match=re.escape(message)):
        bad_pointer_cast[(1,)](target.driver.to_device(np.zeros(1, np.int32)), WHAT=what)
