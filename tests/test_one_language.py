"""The compiler accepts the control flow Triton accepts, with the interpreter's results, and refuses
the rest with a located message: early returns, names typed by two branches, loop-carried types."""

import numpy as np
import pytest

import tritium

from .kernels import control


def early_return_reference(x, n, block, skip):
    y, z = np.full_like(x, 7.0), np.full_like(x, 7.0)
    if skip:
        return y, z
    for pid in range(min(n, len(x) // block)):
        s = slice(pid * block, (pid + 1) * block)
        v = x[s].astype(np.float64)
        if pid == 0:
            if n > 2:
                y[s] = v * 10.0
                continue
            v = v - 100.0
        lim = n - 3
        y[s] = v * 0.0 if lim < 0 else (v * 0.0 - 1.0 if lim > 10 else v + 1.0)
        z[s] = (v + v * 2.0) if pid - 1 < 0 else (v * 3.0 + v * 4.0)
    return y, z


@pytest.mark.parametrize("n,skip", [(1, False), (2, False), (3, False), (4, False), (20, False), (4, True)])
def test_early_return(target, n, skip):
    dev = target.driver
    x = np.random.default_rng(n).standard_normal(16).astype(np.float32)
    y, z = dev.to_device(np.full_like(x, 7.0)), dev.to_device(np.full_like(x, 7.0))
    control.early_return_kernel[(4,)](dev.to_device(x), y, z, n, BLOCK=4, SKIP=skip)
    want_y, want_z = early_return_reference(x, n, 4, skip)
    np.testing.assert_allclose(dev.to_host(y), want_y, rtol=1e-6)
    np.testing.assert_allclose(dev.to_host(z), want_z, rtol=1e-6)


@pytest.mark.parametrize("n", [0, 1])
def test_python_scalar_and_tensor_of_one_type(target, n):
    """Triton makes a Python scalar a tensor when it is assigned: 0.5 is fp32 like the load."""
    dev = target.driver
    x, out = dev.to_device(np.array([3.0], np.float32)), dev.to_device(np.zeros(1, np.float32))
    control.scalar_or_tensor_same_type[(1,)](x, out, n)
    assert dev.to_host(out)[0] == (0.5 if n > 0 else 6.0)


def refusal(target, fn, *args, **kwargs) -> str:
    """The message ``fn`` is refused with on ``target`` (numpy arguments go to its memory)."""
    args = [target.driver.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(tritium.CompilationError) as info:
        fn[(1,)](*args, **kwargs)
    msg = str(info.value)
    assert f"kernel '{fn.__name__}'" in msg and "control.py:" in msg
    return msg


def test_scalar_in_one_branch_block_in_the_other(target):
    # n is a run-time value (2: an argument equal to 1 would be a constexpr, deciding the if)
    msg = refusal(target, control.scalar_or_block, np.zeros(8, np.float32), np.zeros(8, np.float32), 2,
                  BLOCK=8)
    assert "'v' is tl.float32 (scalar) in one branch and tl.float32 of shape [8] in the other" in msg
    assert "if n > 0:" in msg


def test_int_in_one_branch_float_in_the_other(target):
    msg = refusal(target, control.int_or_float, np.zeros(1, np.float32), np.zeros(1, np.float32), 2)
    assert "'v' is tl.int32 (scalar) in one branch and tl.float32 (scalar) in the other" in msg
    assert "Mismatched type for v" in msg  # Triton's test_const looks for its words


@pytest.mark.parametrize("fn,line", [(control.return_in_for, "return"), (control.return_in_while, "if i == 2:")])
def test_return_inside_a_loop(target, fn, line):
    msg = refusal(target, fn, np.zeros(4, np.float32), 4)
    assert "'return' inside a loop is not supported" in msg and msg.splitlines()[-2].strip() == line


def test_paths_returning_different_types(target):
    msg = refusal(target, control.mismatched_returns, np.zeros(1, np.float32), 2)
    assert "in @jit function 'int_or_none'" in msg
    assert "Return type mismatch: the function returns tl.float32 (scalar) on one path and tl.int32 (scalar) on " \
           "another" in msg  # Triton's words first, as its test_const looks for them


def test_loop_carried_type_change(target):
    msg = refusal(target, control.loop_changes_type, np.zeros(1, np.float32), 3)
    assert "loop-carried variable 'acc' starts as tl.int32 (scalar) but becomes tl.float32 (scalar)" in msg
    assert "for i in range(n):" in msg


def test_loop_carried_literal_of_another_type(target):
    """As in Triton, a literal assigned in the loop is typed on its own (1 is int32), not after the
    variable it replaces."""
    msg = refusal(target, control.loop_assigns_int_literal, np.zeros(1, np.float32), 3)
    assert "loop-carried variable 'acc' starts as tl.float32 (scalar) but becomes tl.int32 (scalar)" in msg
