"""The CUDA driver API calls tritium makes, through ctypes on the driver's own library, with
cuda-python's calling convention (core's ``driver_calls``): each call returns a tuple, the CUresult
(an int, 0 for success) first, then its outputs (handles and addresses as ints).

Why not cuda-python's ``cuda.bindings.driver``: importing it takes 30 to 60 ms, more than the whole
first launch of a cached kernel in a new process may take, and its ``cuLaunchKernel`` wrapper costs
every launch about 1 µs. The enum values below are the ABI of ``cuda.h`` (stable across releases);
a test compares them with cuda-python's where it is installed.
"""

from __future__ import annotations

import ctypes
import sys
from types import SimpleNamespace

from tritium.runtime.driver_calls import bind_calls

LIBRARY = "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"

#: the CUresult codes tritium acts on (the driver names every code: ``cuGetErrorName``)
CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, CUDA_ERROR_ASSERT = 0, 1, 701, 710

CUdevice_attribute = SimpleNamespace(
    CU_DEVICE_ATTRIBUTE_WARP_SIZE=10, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK=12,
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE=13, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT=16,
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE=36, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH=37,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR=75, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR=76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN=97)
CUfunction_attribute = SimpleNamespace(
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK=0, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES=3, CU_FUNC_ATTRIBUTE_NUM_REGS=4,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES=8)
CUpointer_attribute = SimpleNamespace(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL=9)

_int, _uint, _ptr, _size = ctypes.c_int, ctypes.c_uint, ctypes.c_void_p, ctypes.c_size_t
_u64 = ctypes.c_uint64  # CUdeviceptr
_SIGNATURES = {  # the exported symbol (versioned where cuda.h maps the name to one) and its parameters
    "cuInit": ("cuInit", _uint),
    "cuDriverGetVersion": ("cuDriverGetVersion", ctypes.POINTER(_int)),
    "cuDeviceGetCount": ("cuDeviceGetCount", ctypes.POINTER(_int)),
    "cuDeviceGet": ("cuDeviceGet", ctypes.POINTER(_int), _int),
    "cuDeviceGetName": ("cuDeviceGetName", ctypes.c_char_p, _int, _int),
    "cuDeviceGetAttribute": ("cuDeviceGetAttribute", ctypes.POINTER(_int), _int, _int),
    "cuDevicePrimaryCtxRetain": ("cuDevicePrimaryCtxRetain", ctypes.POINTER(_ptr), _int),
    "cuCtxSetCurrent": ("cuCtxSetCurrent", _ptr),
    "cuCtxSynchronize": ("cuCtxSynchronize",),
    "cuModuleLoadData": ("cuModuleLoadData", ctypes.POINTER(_ptr), ctypes.c_char_p),
    "cuModuleGetFunction": ("cuModuleGetFunction", ctypes.POINTER(_ptr), _ptr, ctypes.c_char_p),
    "cuFuncGetAttribute": ("cuFuncGetAttribute", ctypes.POINTER(_int), _int, _ptr),
    "cuFuncSetAttribute": ("cuFuncSetAttribute", _ptr, _int, _int),
    "cuPointerGetAttribute": ("cuPointerGetAttribute", ctypes.POINTER(_int), _int, _u64),
    "cuMemAlloc": ("cuMemAlloc_v2", ctypes.POINTER(_u64), _size),
    "cuMemFree": ("cuMemFree_v2", _u64),
    "cuMemcpyHtoD": ("cuMemcpyHtoD_v2", _u64, _ptr, _size),
    "cuMemcpyDtoH": ("cuMemcpyDtoH_v2", _ptr, _u64, _size),
    "cuGetErrorName": ("cuGetErrorName", _int, ctypes.POINTER(ctypes.c_char_p)),
    "cuEventCreate": ("cuEventCreate", ctypes.POINTER(_ptr), ctypes.c_uint),
    "cuEventRecord": ("cuEventRecord", _ptr, _ptr),
    "cuEventElapsedTime": ("cuEventElapsedTime", ctypes.POINTER(ctypes.c_float), _ptr, _ptr),
    "cuEventDestroy": ("cuEventDestroy_v2", _ptr),
    "cuMemsetD32Async": ("cuMemsetD32Async", _u64, ctypes.c_uint, _size, _ptr),
    "cuTensorMapEncodeTiled": ("cuTensorMapEncodeTiled", _ptr, _int, ctypes.c_uint32, _ptr, ctypes.POINTER(_u64),
                               ctypes.POINTER(_u64), ctypes.POINTER(ctypes.c_uint32),
                               ctypes.POINTER(ctypes.c_uint32), _int, _int, _int, _int),
}
#: the calls whose first parameter is an output (returned after the CUresult)
_OUTPUT_FIRST = {"cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetAttribute",
                 "cuDevicePrimaryCtxRetain", "cuModuleLoadData", "cuModuleGetFunction", "cuFuncGetAttribute",
                 "cuPointerGetAttribute", "cuMemAlloc", "cuEventCreate", "cuEventElapsedTime"}


#: the calls with an output buffer, wrapped by hand below
_BUFFERED = {"cuDeviceGetName", "cuGetErrorName", "cuTensorMapEncodeTiled"}


class Driver:
    """The driver library's functions as methods (``OSError`` when there is no driver).

    ``cuLaunchKernel`` is the bare ctypes function, declared without parameter types: the launch
    path passes ready ctypes handles and ints, and gets the CUresult int back (see
    ``NvptxLauncher``)."""

    CUdevice_attribute, CUfunction_attribute, CUpointer_attribute = \
        CUdevice_attribute, CUfunction_attribute, CUpointer_attribute

    def __init__(self, library: str = LIBRARY):
        try:
            lib = ctypes.CDLL(library)
        except OSError as e:
            raise OSError(f"no NVIDIA driver: its library {library} cannot be loaded ({e})") from None
        self.cuLaunchKernel = lib.cuLaunchKernel
        plain = {name: sig for name, sig in _SIGNATURES.items() if name not in _BUFFERED}
        for name, call in bind_calls(lib, plain, _OUTPUT_FIRST).items():
            setattr(self, name, call)
        for name in _BUFFERED:
            symbol, *params = _SIGNATURES[name]
            fn = getattr(lib, symbol)
            fn.argtypes, fn.restype = params, ctypes.c_int
            setattr(self, "_" + name, fn)

    def cuDeviceGetName(self, length: int, device: int) -> tuple[int, bytes]:
        name = ctypes.create_string_buffer(length)
        return self._cuDeviceGetName(name, length, device), name.raw

    def cuTensorMapEncodeTiled(self, data_type: int, address: int, dims: list[int], strides: list[int],
                               box: list[int], swizzle: int) -> tuple[int, bytes]:
        """A tiled ``CUtensorMap`` (128 bytes) of the tensor at ``address``: ``dims`` and ``box``
        innermost first, ``strides`` in bytes for the dimensions after the first; elements one
        apart in the box, no interleave, 128-byte L2 promotion, zeros outside the tensor."""
        rank = len(dims)
        tensor_map = ctypes.create_string_buffer(128)
        u64s, u32s = ctypes.c_uint64 * rank, ctypes.c_uint32 * rank
        err = self._cuTensorMapEncodeTiled(tensor_map, data_type, rank, address, u64s(*dims),
                                           (ctypes.c_uint64 * max(1, rank - 1))(*strides), u32s(*box),
                                           u32s(*([1] * rank)), 0, swizzle, 2, 0)
        return err, tensor_map.raw

    def cuGetErrorName(self, error: int) -> tuple[int, bytes | None]:
        text = ctypes.c_char_p()
        return self._cuGetErrorName(error, ctypes.byref(text)), text.value

