"""Checked calls into the CUDA driver API (``libcuda``: ctypes on the driver's library) and the
devices' primary contexts, the ones torch and CuPy use too."""

from __future__ import annotations

import ctypes
import functools
import threading
from typing import Any

from tritium.errors import DeviceAssertionError, TritiumError

from . import libcuda


class CudaError(TritiumError):
    """A CUDA driver call failed; the message names the call and the error."""


class GpuAssertionError(CudaError, DeviceAssertionError):
    """CUDA_ERROR_ASSERT: a ``tl.device_assert`` failed in a kernel on the GPU. Launches run
    asynchronously, so it surfaces at the next synchronisation or launch, in no particular kernel;
    the device printed the message, the kernel and the location itself. The error is sticky: the
    context (shared with torch and CuPy) is unusable for the rest of the process."""

    def __init__(self, call: str):
        text = (f"{call}: a device-side assertion (tl.device_assert) failed in a kernel launched earlier; "
                "the GPU printed its message, kernel and location (CUDA_ERROR_ASSERT). "
                "The GPU's context cannot be used again in this process: restart the process")
        TritiumError.__init__(self, text)
        self.kernel, self.message, self.filename, self.lineno = "", text, "", None


def failure(call: str, err: Any) -> CudaError:
    """The error of driver call ``call`` that returned ``err``."""
    if int(err) == libcuda.CUDA_ERROR_ASSERT:
        return GpuAssertionError(call)
    return CudaError(f"{call} failed: {error_name(err)}")


@functools.cache
def api() -> Any:
    """The driver's functions (``libcuda.Driver``); ``OSError`` where there is no NVIDIA driver."""
    return libcuda.Driver()


def launch_entry() -> int:
    """The address of the driver's ``cuLaunchKernel``, which ``tritium.runtime.native_launch.launch`` calls."""
    return ctypes.cast(api().cuLaunchKernel, ctypes.c_void_p).value


def check(call: str, result: tuple) -> Any:
    """The values of a driver call's result tuple, or a CudaError naming ``call`` and the error."""
    err, *values = result
    if err:
        raise failure(call, err)
    return values[0] if len(values) == 1 else tuple(values)


def error_name(err: Any) -> str:
    """The driver's name of CUresult ``err`` (``CUDA_ERROR_INVALID_VALUE``)."""
    try:
        failed, text = api().cuGetErrorName(int(err))
        name = text.decode() if not failed and text else None
    except Exception:  # no driver to ask
        name = None
    return name or f"CUresult {int(err)}"


_INIT = threading.Lock()
_init_error: list[str] = []
_contexts: dict[int, Any] = {}


class _LocalState(threading.local):
    device: int | None = None  # the device whose primary context this thread made current


_local = _LocalState()


def local_state() -> _LocalState:
    """This thread's CUDA state (``device``: whose primary context it made current, None before)."""
    return _local


def init() -> None:
    """``cuInit`` once per process; a CudaError with the reason when there is no usable driver."""
    with _INIT:
        if _init_error:
            if _init_error[0]:
                raise CudaError(_init_error[0])
            return
        try:
            check("cuInit", api().cuInit(0))
            if check("cuDeviceGetCount", api().cuDeviceGetCount()) == 0:
                raise CudaError("the NVIDIA driver sees no GPU")
        except (CudaError, RuntimeError, ImportError, OSError) as exc:
            _init_error.append(str(exc) or type(exc).__name__)
            raise CudaError(_init_error[0]) from None
        _init_error.append("")


def driver_version() -> int | None:
    """The CUDA version the installed driver supports (12040 for 12.4), or None without a driver."""
    try:
        return int(check("cuDriverGetVersion", api().cuDriverGetVersion()))
    except (CudaError, RuntimeError, ImportError, OSError):
        return None


def device_count() -> int:
    init()
    return int(check("cuDeviceGetCount", api().cuDeviceGetCount()))


def attribute(device: int, name: str) -> int:
    d = api()
    return int(check("cuDeviceGetAttribute", d.cuDeviceGetAttribute(getattr(d.CUdevice_attribute, name), device)))


def function_attribute(function: Any, name: str) -> int:
    """``cuFuncGetAttribute`` of a loaded kernel (``name`` as in ``CUfunction_attribute``)."""
    d = api()
    return int(check("cuFuncGetAttribute", d.cuFuncGetAttribute(getattr(d.CUfunction_attribute, name), function)))


def device_name(device: int) -> str:
    init()
    d = api()
    handle = check("cuDeviceGet", d.cuDeviceGet(device))
    return check("cuDeviceGetName", d.cuDeviceGetName(64, handle)).split(b"\0", 1)[0].decode()


def capability(device: int) -> tuple[int, int]:
    return (attribute(device, "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR"),
            attribute(device, "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR"))


def primary_context(device: int) -> Any:
    """The primary context of ``device`` (retained once per process), made current in this thread."""
    ctx = _contexts.get(device)
    if ctx is None:
        init()
        d = api()
        with _INIT:
            ctx = _contexts.get(device)
            if ctx is None:
                handle = check("cuDeviceGet", d.cuDeviceGet(device))
                ctx = _contexts[device] = check("cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain(handle))
    check("cuCtxSetCurrent", api().cuCtxSetCurrent(ctx))
    _local.device = device
    return ctx


def set_device(device: int) -> None:
    """Make ``device`` this thread's device: allocations and launches without arrays go there."""
    count = device_count()
    if not 0 <= device < count:
        raise CudaError(f"there is no GPU {device}: the NVIDIA driver sees {count} GPU(s)")
    make_current(device)


def make_current(device: int) -> None:
    """Make ``device``'s primary context current unless this thread already did. (A context that
    other code makes current in between is not noticed: torch and CuPy use the same primary
    contexts, so only switching devices matters, and launches switch through here.)"""
    if _local.device != device:
        primary_context(device)


def current_device() -> int:
    """The device of this thread's last launch or allocation (0 before any)."""
    return _local.device or 0
