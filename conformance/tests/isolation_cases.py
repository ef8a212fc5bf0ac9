"""Cases that kill, hang or garble their process, loaded with ``--cases`` by tests/test_isolation.py
(not a test module: pytest does not collect it)."""

import ctypes
import os
import sys
import time

import numpy as np

from tritium_conformance.kernels import add_kernel
from tritium_conformance.suite import Device, Output, cases


@cases("isolation-loses-the-device")
def loses_the_device(dev: Device) -> list[Output]:
    """As a device fault on a GPU: the case fails and the process cannot use the device again."""
    def lost(*args, **kwargs):
        raise RuntimeError("the device is lost")

    dev.to_device = dev.launch = lost
    raise RuntimeError("an illegal address")


@cases("isolation-add-n{n}", n=[1, 5, 9, 13])
def add(dev: Device, n: int) -> list[Output]:
    x = np.arange(n, dtype=np.float32)
    out = dev.full(n, np.nan, np.float32)
    dev.launch(add_kernel, (1,), dev.to_device(x), dev.to_device(x), out, n, BLOCK=16)
    return [Output("out", dev.to_host(out), 2.0 * x.astype(np.float64))]


@cases("isolation-abort")
def abort(dev: Device) -> list[Output]:
    print("LLVM ERROR: a pretended abort", file=sys.stderr, flush=True)
    os.abort()


@cases("isolation-segfault")
def segfault(dev: Device) -> list[Output]:
    ctypes.string_at(0)
    return []


@cases("isolation-exit")
def exit_(dev: Device) -> list[Output]:
    os._exit(3)


@cases("isolation-hang")
def hang(dev: Device) -> list[Output]:
    time.sleep(120)
    return []


@cases("isolation-prints")
def prints(dev: Device) -> list[Output]:
    """What a case prints, at the Python or the file-descriptor level, cannot garble its result."""
    print("a case's own output")
    os.write(1, b"written to file descriptor 1\n")
    return add(dev, 3)


@cases("isolation-breaks-the-process")
def breaks(dev: Device) -> list[Output]:
    os.environ["ISOLATION_BROKEN"] = "1"
    return []


@cases("isolation-dies-in-a-broken-process")
def dies_if_broken(dev: Device) -> list[Output]:
    if os.environ.get("ISOLATION_BROKEN"):
        os.abort()
    return []
