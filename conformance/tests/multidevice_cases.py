"""A pretend target with two devices, cases and declared gaps, loaded with ``--cases`` (command line)
or ``--tritium-cases`` (pytest plugin) by test_devices.py and test_pytest_plugin.py: each worker
process registers the target when it loads this file. Not a test module (pytest does not collect it)."""

import numpy as np
from tritium import plugins
from tritium.errors import TargetError
from tritium_cpu.target import CpuTarget

from tritium_conformance.kernels import add_kernel
from tritium_conformance.suite import Device, Output, cases

NAME = "fake-two-devices"


class TwoDeviceTarget(CpuTarget):
    """The cpu target, presenting itself as two devices (kernels run on the host either way)."""

    name = NAME
    priority = -1  # never selected automatically

    def __init__(self) -> None:
        super().__init__()
        self.device = 0

    def device_count(self) -> int:
        return 2

    def current_device(self) -> int:
        return self.device

    def set_current_device(self, device: int) -> None:
        if device not in (0, 1):
            raise TargetError(f"no device {device}")
        self.device = device

    def device_description(self) -> str:
        return f"fake GPU {self.device}"


@plugins.hookimpl
def tritium_targets():
    return [TwoDeviceTarget()]


@plugins.hookimpl
def tritium_conformance_expectations(target):
    if target.name != NAME:
        return {}
    return {"devices-gap-fails": "a known gap", "devices-gap-passes": "a gap that was fixed"}


plugins.register(__import__(__name__), name=NAME)


@cases("devices-add-n{n}", n=[3, 7, 11, 19])
def add(dev: Device, n: int) -> list[Output]:
    x = np.arange(n, dtype=np.float32)
    out = dev.full(n, np.nan, np.float32)
    dev.launch(add_kernel, (1,), dev.to_device(x), dev.to_device(x), out, n, BLOCK=32)
    return [Output("out", dev.to_host(out), 2.0 * x.astype(np.float64))]


@cases("devices-gap-fails")
def gap_fails(dev: Device) -> list[Output]:
    return [Output("out", np.zeros(2, np.int32), np.ones(2, np.int32))]


@cases("devices-gap-passes")
def gap_passes(dev: Device) -> list[Output]:
    return [Output("out", np.ones(2, np.int32), np.ones(2, np.int32))]


@cases("devices-abort")
def abort(dev: Device) -> list[Output]:
    import os

    os.abort()
