"""The interpreter runs kernels as Python: print shows values, and results match numpy."""

import numpy as np

from .kernels.basic import add_kernel
from .kernels.debug import print_kernel


def test_print_inside_a_kernel(monkeypatch, capsys):
    monkeypatch.setenv("TRITIUM_TARGET", "interpreter")
    x = np.array([1.5, 2.5, 3.5, 4.5], np.float32)
    print_kernel[(2,)](x, BLOCK=2)
    out = capsys.readouterr().out.splitlines()
    assert out == [  # Triton's print is tl.device_print: one line per element
        "pid (0, 0, 0) idx () pid: (operand 0) 0", "pid (0, 0, 0) idx (0) pid: (operand 1) 1.500000",
        "pid (0, 0, 0) idx (1) pid: (operand 1) 2.500000", "pid (1, 0, 0) idx () pid: (operand 0) 1",
        "pid (1, 0, 0) idx (0) pid: (operand 1) 3.500000", "pid (1, 0, 0) idx (1) pid: (operand 1) 4.500000"]


def test_kernels_are_plain_python_frames(monkeypatch):
    """A debugger sees the kernel's own frames: trace them the way pdb does."""
    import sys

    monkeypatch.setenv("TRITIUM_TARGET", "interpreter")
    seen = []

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "add_kernel":
            seen.append(frame.f_locals["n"])
        return None

    x = np.ones(4, np.float32)
    sys.settrace(tracer)
    try:
        add_kernel[(1,)](x, x, np.zeros(4, np.float32), 4, BLOCK=4)
    finally:
        sys.settrace(None)
    assert len(seen) == 1 and int(seen[0].handle) == 4
