"""Checked calls into the HIP runtime (``libhip``) and this thread's current AMD GPU.

Each failing call raises ``HipError`` naming the call and HIP's name of the error. HIP keeps a
current device per thread, as tritium's other GPU target does: launches and allocations go to the
device of their arrays, else to the current one."""

from __future__ import annotations

import ctypes
import functools
import threading
from typing import Any

from tritium.errors import DeviceAssertionError, TritiumError

from . import libhip


class HipError(TritiumError):
    """A HIP runtime call failed; the message names the call and the error."""


class HipAssertionError(HipError, DeviceAssertionError):
    """A ``tl.device_assert`` failed in a kernel on an AMD GPU: the kernel printed its message and
    trapped, and HIP reports the failed launch at the next synchronisation or launch. The device's
    queue cannot be used again in this process."""

    def __init__(self, call: str, error: str):
        text = (f"{call}: a kernel launched earlier stopped ({error}); if it printed 'Device-side assertion', a "
                "tl.device_assert failed. The GPU cannot be used again in this process: restart the process")
        TritiumError.__init__(self, text)
        self.kernel, self.message, self.filename, self.lineno = "", text, "", None


#: what a trapped kernel (a failed ``tl.device_assert``) is reported as
_STOPPED = {libhip.HIP_ERROR_ASSERT, 719}  # hipErrorAssert, hipErrorLaunchFailure
#: ``hipDeviceProp_t`` (ROCm 6 and later: ``hipGetDevicePropertiesR0600``): its size, and where
#: ``gcnArchName`` (``gfx942:sramecc+:xnack-``) starts
_PROPERTIES_SIZE, _ARCH_NAME_AT = 1472, 1160


@functools.cache
def api() -> Any:
    """The runtime's functions (``libhip.Runtime``); ``OSError`` where there is no HIP runtime."""
    return libhip.Runtime()


def error_name(err: Any) -> str:
    try:
        name = api().hipGetErrorName(int(err))[1]
    except Exception:  # no runtime to ask
        name = None
    return name.decode() if name else f"hipError_t {int(err)}"


def failure(call: str, err: Any) -> HipError:
    if int(err) in _STOPPED:
        return HipAssertionError(call, error_name(err))
    return HipError(f"{call} failed: {error_name(err)}")


def check(call: str, result: tuple) -> Any:
    """The values of a runtime call's result tuple, or a HipError naming ``call`` and the error."""
    err, *values = result
    if err:
        raise failure(call, err)
    return values[0] if len(values) == 1 else tuple(values)


def launch_entry() -> int:
    """The address of the runtime's ``hipModuleLaunchKernel``, which core's native launch calls."""
    return ctypes.cast(api().hipModuleLaunchKernel, ctypes.c_void_p).value


_INIT = threading.Lock()
_init_error: list[str] = []


class _LocalState(threading.local):
    device: int | None = None  # the device this thread made current


_local = _LocalState()


def init() -> None:
    """``hipInit`` once per process; a HipError with the reason when there is no usable runtime or GPU."""
    with _INIT:
        if _init_error:
            if _init_error[0]:
                raise HipError(_init_error[0])
            return
        try:
            check("hipInit", api().hipInit(0))
            if check("hipGetDeviceCount", api().hipGetDeviceCount()) == 0:
                raise HipError("the HIP runtime sees no AMD GPU")
        except (HipError, OSError) as exc:
            _init_error.append(str(exc) or type(exc).__name__)
            raise HipError(_init_error[0]) from None
        _init_error.append("")


def device_count() -> int:
    init()
    return int(check("hipGetDeviceCount", api().hipGetDeviceCount()))


def make_current(device: int) -> None:
    """Make ``device`` this thread's HIP device unless it already is."""
    if _local.device != device:
        check("hipSetDevice", api().hipSetDevice(device))
        _local.device = device


def set_device(device: int) -> None:
    count = device_count()
    if not 0 <= device < count:
        raise HipError(f"there is no GPU {device}: the HIP runtime sees {count} GPU(s)")
    make_current(device)


def current_device() -> int:
    """The device of this thread's last launch or allocation (0 before any)."""
    return _local.device or 0


def attribute(device: int, name: str) -> int:
    r = api()
    return int(check("hipDeviceGetAttribute", r.hipDeviceGetAttribute(getattr(r.hipDeviceAttribute_t, name), device)))


def function_attribute(function: Any, name: str) -> int:
    r = api()
    return int(check("hipFuncGetAttribute", r.hipFuncGetAttribute(getattr(r.hipFunction_attribute, name), function)))


@functools.cache
def properties(device: int) -> tuple[str, str]:
    """The GPU's name and its arch (``gfx942``), from ``hipDeviceProp_t``."""
    init()
    lib = ctypes.CDLL(libhip.LIBRARY)
    buffer = ctypes.create_string_buffer(_PROPERTIES_SIZE + 1024)  # room for a newer runtime's additions
    check("hipGetDeviceProperties", (lib.hipGetDevicePropertiesR0600(buffer, device),))
    name = buffer.raw[:256].split(b"\0", 1)[0].decode(errors="replace")
    arch = buffer.raw[_ARCH_NAME_AT:_ARCH_NAME_AT + 256].split(b"\0", 1)[0].decode().split(":", 1)[0]
    return name, arch
