"""``libcuda``: the driver API through ctypes. Its enum values are cuda.h's ABI, checked against
cuda-python's where that is installed; without a driver it fails with a reason people can act on."""

from __future__ import annotations

import pytest
from tritium_nvptx import libcuda


@pytest.mark.parametrize("enum", ["CUdevice_attribute", "CUfunction_attribute", "CUpointer_attribute"])
def test_enum_values_are_cuda_pythons(enum):
    driver = pytest.importorskip("cuda.bindings.driver")
    ours = vars(getattr(libcuda, enum))
    assert ours and {name: int(getattr(getattr(driver, enum), name)) for name in ours} == ours


def test_result_codes_are_cuda_pythons():
    driver = pytest.importorskip("cuda.bindings.driver")
    for name in ("CUDA_SUCCESS", "CUDA_ERROR_INVALID_VALUE", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "CUDA_ERROR_ASSERT"):
        assert getattr(libcuda, name) == int(getattr(driver.CUresult, name))


def test_a_missing_driver_library_is_named():
    with pytest.raises(OSError, match="no NVIDIA driver: its library libcuda-none.so cannot be loaded"):
        libcuda.Driver("libcuda-none.so")
