"""``tritium.runtime.driver``: Triton's ``triton.runtime.driver``, for host code ported from Triton.

``driver.active`` is the driver of the selected target (``TRITIUM_TARGET``) with the methods Triton's
tutorials call: ``get_active_torch_device()``, ``get_current_target()``, ``get_current_device()``,
``set_current_device()``, ``get_current_stream()`` and ``utils.get_device_properties(device)``. Each
asks the target (``tritium.target.Target``'s device methods): nothing here knows a target. torch is
optional; only ``get_active_torch_device`` needs it.
"""

from __future__ import annotations

from typing import Any

from ..errors import TargetError
from ..target import GPUTarget


def _target(name: str | None = None) -> Any:
    from .. import plugins

    return plugins.get_target(name)


class DeviceUtils:
    """``driver.active.utils``: device queries Triton keeps in its backend's utils module."""

    def __init__(self, target: Any):
        self._target = target

    def get_device_properties(self, device: int | None = None) -> dict[str, int]:
        """The device's properties under Triton's keys (``multiprocessor_count``, ``max_shared_mem``,
        ``max_num_regs``, ``warpSize``, ...); ``None`` means the current device (on cpu,
        ``torch.device("cpu").index`` is None)."""
        return self._target.device_properties(_device_index(self._target, device))


def _device_index(target: Any, device: Any) -> int:
    if device is None:
        return target.current_device()
    index = getattr(device, "index", device)  # a torch.device is accepted too
    if index is None:
        return target.current_device()
    if isinstance(index, bool) or not isinstance(index, int):
        raise TargetError(f"a device index must be an int, got {device!r}")
    count = target.device_count()
    if not 0 <= index < count:
        raise TargetError(f"target '{target.name}' has {count} device(s) (0 to {count - 1}); "
                          f"there is no device {index}")
    return index


class ActiveDriver:
    """The driver of one target, as Triton's ``driver.active`` presents it."""

    def __init__(self, target: Any):
        self.target = target
        self.utils = DeviceUtils(target)

    def is_active(self) -> bool:
        return True

    def get_current_target(self) -> GPUTarget:
        return self.target.current_target()

    def get_current_device(self) -> int:
        return self.target.current_device()

    def set_current_device(self, device: int) -> None:
        self.target.set_current_device(_device_index(self.target, device))

    def get_device_count(self) -> int:
        return self.target.device_count()

    def get_current_stream(self, device: int | None = None) -> int:
        return self.target.current_stream(_device_index(self.target, device))

    def get_active_torch_device(self) -> Any:
        """The torch device kernels of this target read: ``torch.device("cpu")`` on the host,
        ``torch.device("cuda", current)`` on an NVIDIA GPU."""
        try:
            import torch
        except ImportError:
            raise TargetError("get_active_torch_device() needs torch, which is not installed; tritium itself runs "
                              "without it (numpy arrays work as kernel arguments)") from None
        kind, index = self.target.torch_device()
        self.target.prepare_torch(torch)
        return torch.device(kind) if index is None else torch.device(kind, index)

    def __repr__(self) -> str:
        return f"ActiveDriver(target={self.target.name!r})"


class DriverConfig:
    """``triton.runtime.driver``: ``active`` is the selected target's driver unless ``set_active``
    chose another (an ``ActiveDriver``, or a target name)."""

    def __init__(self) -> None:
        self._active: ActiveDriver | None = None
        self._by_target: dict[int, ActiveDriver] = {}

    @property
    def default(self) -> ActiveDriver:
        target = _target()
        drv = self._by_target.get(id(target))
        if drv is None or drv.target is not target:
            drv = self._by_target[id(target)] = ActiveDriver(target)
        return drv

    @property
    def active(self) -> ActiveDriver:
        return self._active or self.default

    def set_active(self, driver: ActiveDriver | str) -> None:
        self._active = ActiveDriver(_target(driver)) if isinstance(driver, str) else driver

    def reset_active(self) -> None:
        self._active = None


driver = DriverConfig()
