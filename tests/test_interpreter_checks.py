"""The interpreter agrees with the compiler: the same refusals, the same typing of loops, bools
and constexprs (checked against numpy on every target), and checked memory accesses."""

import sys
import types

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.errors import OutOfBoundsError
from tritium.runtime.host import host_span

from .kernels import attr_helpers as helpers
from .kernels import control

MODE = tl.constexpr("fast")


@pytest.fixture
def interpreter(monkeypatch):
    monkeypatch.setenv("TRITIUM_TARGET", "interpreter")


# -- bools ---------------------------------------------------------------------------------------

@tritium.jit
def bool_arith(a_ptr, b_ptr, sum_ptr, diff_ptr, not_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    ca = tl.load(a_ptr + offs) > 0
    cb = tl.load(b_ptr + offs) > 0
    tl.store(sum_ptr + offs, (ca + cb).to(tl.int32))
    tl.store(diff_ptr + offs, (ca - cb).to(tl.int32))
    c = tl.load(a_ptr) > 0
    tl.store(not_ptr, (not c).to(tl.int32))


def test_bool_arithmetic_wraps_like_i1(target):
    dev = target.driver
    a = np.array([0, 1, 0, 1], np.int32)
    b = np.array([0, 0, 1, 1], np.int32)
    s, d, n = (dev.to_device(np.full(size, -1, np.int32)) for size in (4, 4, 1))
    bool_arith[(1,)](dev.to_device(a), dev.to_device(b), s, d, n, BLOCK=4)
    np.testing.assert_array_equal(dev.to_host(s), a ^ b)  # True + True wraps to False
    np.testing.assert_array_equal(dev.to_host(d), a ^ b)
    assert dev.to_host(n)[0] == 1  # not False


# -- loops ---------------------------------------------------------------------------------------

@tritium.jit
def loop_typing(x_ptr, h_ptr, out_ptr, n, big):
    x = tl.load(x_ptr)
    acc = 0
    for i in range(4):
        acc = x + i * 100  # i is int32: no int8 wrap-around
    tl.store(out_ptr, acc)
    f = 0.0
    for i in range(n):
        f += i.to(tl.float32) * 0.5
    tl.store(out_ptr + 1, f.to(tl.int32))
    h = 0.0  # carried: an fp32 tensor, so fp16 values accumulate in fp32
    for i in tl.range(0, 2):
        h += tl.load(h_ptr + i)
    tl.store(out_ptr + 2, h.to(tl.int32))
    j = 0
    w = x.to(tl.int32)
    while j < n:
        w = x + j * 100
        j += 1
    tl.store(out_ptr + 3, w)
    for k in range(big, big + 1):
        tl.static_assert(k.dtype == tl.int64)
        tl.store(out_ptr + 4, (k - big + 7).to(tl.int32))
    for s in tl.static_range(2):
        tl.store(out_ptr + 5 + s, x + 127 + s)  # a Python int: stays int8, as compiled


def test_loop_variables_are_tensors(target):
    dev = target.driver
    x = dev.to_device(np.array([1], np.int8))
    h = dev.to_device(np.array([2048, 1], np.float16))
    out = dev.to_device(np.full(7, -1, np.int32))
    loop_typing[(1,)](x, h, out, 4, 2**33)
    wrap = np.array([128, 129], np.int32).astype(np.int8)
    np.testing.assert_array_equal(dev.to_host(out), [301, 3, 2049, 301, 7, *wrap])


@tritium.jit
def branch_typing(x_ptr, y_ptr, out_ptr):
    x = tl.load(x_ptr)  # int8
    y = tl.load(y_ptr)
    if x > 0:
        v = 100  # an int32 tensor after the if, as compiled
    else:
        v = 50
    tl.store(out_ptr, x + v)
    w = 1 if x > 0 else 2  # tl.where: an int32 tensor
    tl.store(out_ptr + 1, x + w * 100)
    tl.store(out_ptr + 2, (x and y).to(tl.int32))  # logical: an int1 tensor
    tl.store(out_ptr + 3, (y or x).to(tl.int32))


def test_branches_and_logic_on_tensors(target):
    dev = target.driver
    out = dev.to_device(np.full(4, -1, np.int32))
    branch_typing[(1,)](dev.to_device(np.array([100], np.int8)), dev.to_device(np.array([5], np.int8)), out)
    np.testing.assert_array_equal(dev.to_host(out), [200, 200, 1, 1])


@tritium.jit
def calls_module_helper(x_ptr, out_ptr):
    tl.store(out_ptr, helpers.ramp(tl.load(x_ptr)))


def test_helpers_reached_as_attributes_are_interpreted_alike(target):
    dev = target.driver
    out = dev.to_device(np.zeros(1, np.int32))
    calls_module_helper[(1,)](dev.to_device(np.array([100], np.int8)), out)
    assert dev.to_host(out)[0] == 200


# -- constexpr -----------------------------------------------------------------------------------

@tritium.jit
def by_mode(out_ptr, N: tl.constexpr):
    if MODE == "fast":
        tl.store(out_ptr, N * 2 + 1)
    else:
        tl.store(out_ptr, -1)


def test_module_constexpr_string(target):
    out = target.driver.to_device(np.zeros(1, np.int32))
    by_mode[(1,)](out, N=3)
    assert target.driver.to_host(out)[0] == 7


def test_constexpr_operators():
    m, n = tl.constexpr("fast"), tl.constexpr(6)
    assert (m == "fast") and not (m != "fast") and ("fast" == m)
    assert (n + 1).value == 7 and (1 - n).value == -5 and (n // 4).value == 1 and (-n).value == -6
    assert (n > 5) and (2 ** tl.constexpr(3)).value == 8 and {n: 1}[tl.constexpr(6)] == 1


# -- one language: the same refusals and results ---------------------------------------------------

@tritium.jit
def early_return(x_ptr, out_ptr):
    x = tl.load(x_ptr)
    if x > 0:
        tl.store(out_ptr, x)
        return
    tl.store(out_ptr, -x)


def _outcome(kernel, args, monkeypatch, target):
    monkeypatch.setenv("TRITIUM_TARGET", target)
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        kernel[(1,)](*args[:-1], **args[-1])
    except tritium.CompilationError as e:
        return "error", str(e)
    return "ok", [a.tolist() for a in args[:-1] if isinstance(a, np.ndarray)]


@pytest.mark.parametrize("kernel, args", [
    (early_return, [np.array([3], np.int32), np.zeros(1, np.int32), {}]),
    (control.loop_changes_type, [np.zeros(1, np.float32), 3, {}]),
    (control.scalar_or_block, [np.ones(4, np.float32), np.zeros(4, np.float32), 3, {"BLOCK": 4}]),
])
def test_interpreter_and_compiler_agree(compiling_target, host_target, kernel, args, monkeypatch):
    """Either both refuse with the same located message or both give the same result."""
    compiled = _outcome(kernel, args, monkeypatch, compiling_target.name)
    assert _outcome(kernel, args, monkeypatch, "interpreter") == compiled


@tritium.jit
def stops(x_ptr):
    breakpoint()
    tl.store(x_ptr, 1.0)


def test_breakpoint_runs_in_the_interpreter(interpreter, monkeypatch):
    hits = []
    monkeypatch.setattr(sys, "breakpointhook", lambda *a, **k: hits.append(sys._getframe(1).f_code.co_name))
    x = np.zeros(1, np.float32)
    stops[(2,)](x)
    assert hits == ["stops", "stops"] and x[0] == 1.0


def test_compiled_breakpoint_is_refused(compiling_target, host_target):
    with pytest.raises(tritium.CompilationError, match="breakpoint.. works only .* TRITIUM_TARGET=interpreter"):
        stops[(1,)](np.zeros(1, np.float32))


# -- memory checks -------------------------------------------------------------------------------

@tritium.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, MASKED: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n if MASKED else None
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@tritium.jit
def shifted_store(x_ptr, y_ptr, shift, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs + shift, tl.load(x_ptr + offs))


@tritium.jit
def where_pointer(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = tl.where(offs < 2, x_ptr, y_ptr)  # lanes point into different arguments
    tl.store(out_ptr + offs, tl.load(p + offs))


def test_out_of_bounds_store_is_located(interpreter):
    x, y = np.arange(16, dtype=np.float32), np.zeros(8, np.float32)
    with pytest.raises(OutOfBoundsError) as info:
        copy_kernel[(2,)](x, y, 8, BLOCK=8, MASKED=False)
    msg = str(info.value)
    assert "kernel 'copy_kernel'" in msg and "test_interpreter_checks.py" in msg
    assert "tl.store(y_ptr + offs" in msg  # the line of the store, not the load
    assert "program (1, 0, 0)" in msg and "'y_ptr'" in msg
    assert "[8, 9, 10, 11, 12, 13, 14, 15]" in msg and "8 of 8 active lanes" in msg
    np.testing.assert_array_equal(y, x[:8])  # program 0 ran; program 1 wrote nothing


def test_masked_lanes_are_not_checked(interpreter):
    x, y = np.arange(10, dtype=np.float32), np.zeros(10, np.float32)
    copy_kernel[(2,)](x, y, 10, BLOCK=8, MASKED=True)
    np.testing.assert_array_equal(y, x)


def test_load_out_of_bounds_names_the_argument(interpreter):
    x, y = np.arange(8, dtype=np.float32), np.zeros(16, np.float32)
    with pytest.raises(OutOfBoundsError, match=r"load from 'x_ptr' .* \[8, 9, 10, 11, 12, 13, 14, 15\]"):
        copy_kernel[(2,)](x, y, 16, BLOCK=8, MASKED=False)


def test_negative_offsets_and_views(interpreter):
    base = np.zeros(12, np.int32)
    view = base[4:8]  # the view's memory only, though its neighbours are allocated
    with pytest.raises(OutOfBoundsError, match=r"store to 'y_ptr' .* \[-2, -1\] \(2 of 4 active lanes\)"):
        shifted_store[(1,)](np.ones(4, np.int32), view, -2, BLOCK=4)
    assert not base.any()
    with pytest.raises(OutOfBoundsError, match=r"\[4\] \(1 of 4"):
        shifted_store[(1,)](np.ones(4, np.int32), view, 1, BLOCK=4)
    shifted_store[(1,)](np.arange(1, 5, dtype=np.int32), view, 0, BLOCK=4)
    np.testing.assert_array_equal(base, [0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0])


class _GradTensor:
    """Stands in for a CPU torch tensor that requires grad: numpy memory behind ``data_ptr``, and a
    DLPack export refused until detached, as torch refuses it."""

    requires_grad = True

    def __init__(self, array: np.ndarray):
        self.array, self.dtype, self.shape = array, array.dtype, array.shape

    def data_ptr(self) -> int:
        return self.array.ctypes.data

    def __dlpack__(self, **kwargs):
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")

    def __dlpack_device__(self):
        return (1, 0)

    def detach(self) -> np.ndarray:
        return self.array


def test_arrays_that_require_grad_are_read_whole(interpreter):
    """The memory of a tensor that requires grad is its detached view's (it was taken as 0 bytes,
    so every access was a false out-of-bounds error)."""
    x, y = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    copy_kernel[(2,)](_GradTensor(x), y, 16, BLOCK=8, MASKED=False)
    np.testing.assert_array_equal(y, x)
    with pytest.raises(OutOfBoundsError, match=r"load from 'x_ptr' .* \[16, 17"):  # its real bounds
        copy_kernel[(3,)](_GradTensor(x), np.zeros(24, np.float32), 24, BLOCK=8, MASKED=False)


def test_torch_tensors_that_require_grad(interpreter):
    torch = pytest.importorskip("torch")
    x = torch.arange(16, dtype=torch.float32, requires_grad=True)
    y = torch.zeros(16, dtype=torch.float32)
    copy_kernel[(2,)](x, y, 16, BLOCK=8, MASKED=False)
    assert torch.equal(y, x.detach())


def _stores_seven(out_ptr):
    tl.store(out_ptr, 7)


def test_a_renamed_function_is_interpreted(target):
    """A kernel whose ``__name__`` is not its def's name (renamed, as wrappers do) runs alike."""
    _stores_seven.__name__ = "renamed"
    try:
        kernel = tritium.jit(_stores_seven)
    finally:
        _stores_seven.__name__ = "_stores_seven"
    out = target.driver.to_device(np.zeros(1, np.int32))
    kernel[(1,)](out)
    assert target.driver.to_host(out)[0] == 7


def test_pointer_provenance_through_where(interpreter):
    """Each lane is checked against the argument its pointer came from, not any argument."""
    x, y = np.arange(4, dtype=np.float32), np.arange(10, 12, dtype=np.float32)
    out = np.zeros(4, np.float32)
    with pytest.raises(OutOfBoundsError, match=r"load from 'y_ptr' .* \[2, 3\]"):
        where_pointer[(1,)](x, y, out, BLOCK=4)  # y[2], y[3] may well be mapped memory: still an error
    y4 = np.arange(10, 14, dtype=np.float32)
    where_pointer[(1,)](x, y4, out, BLOCK=4)
    np.testing.assert_array_equal(out, [0, 1, 12, 13])


def test_read_only_arrays_are_refused_where_stored(interpreter):
    x, y = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    x.flags.writeable = False
    copy_kernel[(1,)](x, y, 4, BLOCK=4, MASKED=True)  # only loaded: fine
    np.testing.assert_array_equal(y, x)
    y.flags.writeable = False
    with pytest.raises(tritium.ArgumentError, match="stores through 'y_ptr', but that array is read-only"):
        copy_kernel[(1,)](x, y, 4, BLOCK=4, MASKED=True)


def test_pointer_where_in_a_loop_keeps_one_entry_per_argument():
    """``p = tl.where(c, p + 1, q)`` carried through a loop must not grow the pointers' origin list
    (it once did, by one entry per iteration, until an int16 index overflowed)."""
    from tritium.interpreter.memory import Pointers, Region, select

    a, b = Region("a", 0, 0, 64), Region("b", 64, 64, 128)
    p, q = Pointers.of(np.zeros(4, np.uint64), a), Pointers.of(np.full(4, 64, np.uint64), b)
    c = np.array([True, False, True, False])
    for _ in range(100):
        p = select(c, p, q)
        p = select(~c, q, p)
    assert p.regions == (b, a) or p.regions == (a, b)
    assert [p.regions[i].name for i in p.which] == ["a", "b", "a", "b"]
    unknown = select(c, p, Pointers.of(np.zeros(4, np.uint64), None))
    assert unknown.which.tolist()[1::2] == [-1, -1]


class _Bf16Tensor:
    """Stands in for a CPU torch tensor of bf16, which numpy cannot view (its DLPack export is
    refused): its memory is known from ``data_ptr``, the strides and the element size."""

    def __init__(self, array: np.ndarray, device: str = "cpu"):
        self.array, self.shape, self.dtype = array, array.shape, "bfloat16"
        self.device = types.SimpleNamespace(type=device)

    def data_ptr(self) -> int:
        return self.array.ctypes.data

    def element_size(self) -> int:
        return 2

    def stride(self) -> tuple[int, ...]:
        return tuple(s // 2 for s in self.array.strides)

    def __dlpack__(self, **kwargs):
        raise BufferError("DLPack has no bf16 numpy reads")

    def __dlpack_device__(self):
        return (1, 0)


def test_host_span_of_tensors_numpy_cannot_view():
    base = np.zeros((4, 6), np.uint16)
    start = base.ctypes.data
    assert host_span(_Bf16Tensor(base)) == (start, start + 48)
    assert host_span(_Bf16Tensor(base[1:3, ::2])) == (start + 12, start + 12 + 2 * (6 + 4 + 1))
    assert host_span(_Bf16Tensor(base.T)) == (start, start + 48)
    assert host_span(_Bf16Tensor(base[:0])) == (start, start)
    assert host_span(_Bf16Tensor(base, device="cuda")) is None  # no host memory to check


def test_torch_bf16_tensors_in_the_interpreter(interpreter):
    """torch's bf16 tensors are read whole (numpy cannot view them: they were taken as 0 bytes, so
    every access was a false out-of-bounds error)."""
    torch = pytest.importorskip("torch")
    x = torch.randn(16, dtype=torch.bfloat16)
    y = torch.zeros(16, dtype=torch.bfloat16)
    copy_kernel[(2,)](x, y, 16, BLOCK=8, MASKED=False)
    assert torch.equal(y, x)


@tritium.jit
def load_through_address(table_ptr, out_ptr, passed_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(tl.load(table_ptr).to(tl.pointer_type(tl.float32)) + offs))


def test_addresses_made_from_integers_are_checked_against_every_argument(interpreter):
    """An int64 turned into a pointer (Triton's grouped GEMM) reads an array the launch passes;
    one into memory no argument holds is refused, saying why, where a compiled target would read it."""
    x, out, hidden = np.arange(4, dtype=np.float32), np.zeros(4, np.float32), np.ones(4, np.float32)
    load_through_address[(1,)](np.array([x.ctypes.data], np.int64), out, x, N=4)  # x passed: known memory
    np.testing.assert_array_equal(out, x)
    with pytest.raises(OutOfBoundsError, match="an address in no argument's memory: .* an address made from an "
                                               "integer must point into one of them"):
        load_through_address[(1,)](np.array([hidden.ctypes.data], np.int64), out, x, N=4)
