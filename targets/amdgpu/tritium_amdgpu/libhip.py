"""The HIP runtime calls tritium makes, through ctypes on ROCm's ``libamdhip64`` (core's
``driver_calls``): each call returns a tuple, the ``hipError_t`` (0 for success) first, then its
outputs (handles and addresses as ints).

Why not hip-python: as with CUDA's bindings on nvptx, importing them costs more than a warm launch
path may take, and every wrapped call costs more than the launch itself. The enum values below are
those of ``hip_runtime_api.h`` in ROCm 6 and later (the device attributes were renumbered in ROCm
6.0); a test compares them with hip-python's where it is installed.
"""

from __future__ import annotations

import ctypes
from types import SimpleNamespace

from tritium.runtime.driver_calls import bind_calls

LIBRARY = "libamdhip64.so"

#: the hipError_t codes tritium acts on (the runtime names every code: ``hipGetErrorName``)
HIP_SUCCESS, HIP_ERROR_INVALID_VALUE, HIP_ERROR_NO_DEVICE, HIP_ERROR_LAUNCH_OUT_OF_RESOURCES, HIP_ERROR_ASSERT = \
    0, 1, 100, 701, 710

hipDeviceAttribute_t = SimpleNamespace(
    hipDeviceAttributeClockRate=5, hipDeviceAttributeMemoryBusWidth=59, hipDeviceAttributeMemoryClockRate=60,
    hipDeviceAttributeMultiprocessorCount=63, hipDeviceAttributeMaxRegistersPerBlock=71,
    hipDeviceAttributeMaxSharedMemoryPerBlock=74, hipDeviceAttributeWarpSize=87)
hipFunction_attribute = SimpleNamespace(
    HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK=0, HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES=3,
    HIP_FUNC_ATTRIBUTE_NUM_REGS=4)
hipPointer_attribute = SimpleNamespace(HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL=9)

_int, _uint, _ptr, _size = ctypes.c_int, ctypes.c_uint, ctypes.c_void_p, ctypes.c_size_t
_SIGNATURES = {  # the exported symbol and its parameters
    "hipInit": ("hipInit", _uint),
    "hipRuntimeGetVersion": ("hipRuntimeGetVersion", ctypes.POINTER(_int)),
    "hipGetDeviceCount": ("hipGetDeviceCount", ctypes.POINTER(_int)),
    "hipSetDevice": ("hipSetDevice", _int),
    "hipDeviceGetAttribute": ("hipDeviceGetAttribute", ctypes.POINTER(_int), _int, _int),
    "hipDeviceSynchronize": ("hipDeviceSynchronize",),
    "hipModuleLoadData": ("hipModuleLoadData", ctypes.POINTER(_ptr), ctypes.c_char_p),
    "hipModuleGetFunction": ("hipModuleGetFunction", ctypes.POINTER(_ptr), _ptr, ctypes.c_char_p),
    "hipFuncGetAttribute": ("hipFuncGetAttribute", ctypes.POINTER(_int), _int, _ptr),
    "hipPointerGetAttribute": ("hipPointerGetAttribute", ctypes.POINTER(_int), _int, _ptr),
    "hipMalloc": ("hipMalloc", ctypes.POINTER(_ptr), _size),
    "hipFree": ("hipFree", _ptr),
    "hipMemcpyHtoD": ("hipMemcpyHtoD", _ptr, _ptr, _size),
    "hipMemcpyDtoH": ("hipMemcpyDtoH", _ptr, _ptr, _size),
}
#: the calls whose first parameter is an output (returned after the hipError_t)
_OUTPUT_FIRST = {"hipRuntimeGetVersion", "hipGetDeviceCount", "hipDeviceGetAttribute", "hipModuleLoadData",
                 "hipModuleGetFunction", "hipFuncGetAttribute", "hipPointerGetAttribute", "hipMalloc"}


class Runtime:
    """The HIP runtime library's functions as methods (``OSError`` when there is no HIP runtime).

    ``hipModuleLaunchKernel`` is the bare ctypes function: core's native launch calls it by
    address, as nvptx's calls ``cuLaunchKernel``, whose parameters it shares."""

    hipDeviceAttribute_t, hipFunction_attribute, hipPointer_attribute = \
        hipDeviceAttribute_t, hipFunction_attribute, hipPointer_attribute

    def __init__(self, library: str = LIBRARY):
        try:
            lib = ctypes.CDLL(library)
        except OSError as e:
            raise OSError(f"no HIP runtime: its library {library} cannot be loaded ({e}); install ROCm") from None
        self.hipModuleLaunchKernel = lib.hipModuleLaunchKernel
        for name, call in bind_calls(lib, _SIGNATURES, _OUTPUT_FIRST).items():
            setattr(self, name, call)
        self._hipGetErrorName = lib.hipGetErrorName
        self._hipGetErrorName.argtypes, self._hipGetErrorName.restype = [_int], ctypes.c_char_p

    def hipGetErrorName(self, error: int) -> tuple[int, bytes | None]:
        return HIP_SUCCESS, self._hipGetErrorName(error)
