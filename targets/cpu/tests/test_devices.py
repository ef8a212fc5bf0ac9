"""The host as Triton's host code sees it on the cpu target: ``driver.active``'s target and device
properties, and launches with the AMD tuning knobs of configs written for non-CUDA backends."""

from __future__ import annotations

import os

import numpy as np
import pytest
from tritium.runtime.driver import ActiveDriver
from tritium_cpu.driver import WORKER_STACK_BYTES
from tritium_cpu.target import CpuTarget

from tritium_conformance.kernels import add_kernel


@pytest.fixture
def target() -> CpuTarget:
    return CpuTarget()


def test_the_host_is_one_device_with_a_multiprocessor_per_core(target):
    drv = ActiveDriver(target)
    props = drv.utils.get_device_properties(None)
    assert props["multiprocessor_count"] == (os.cpu_count() or 1) and props["warpSize"] == 1
    assert props["max_shared_mem"] == WORKER_STACK_BYTES and props["max_num_regs"] > 0
    current = drv.get_current_target()
    assert current.backend == "cpu" and current.warp_size == 1 and isinstance(current.arch, str) and current.arch
    assert drv.get_device_count() == 1 and drv.get_current_device() == 0
    with pytest.raises(Exception, match="has 1 device"):
        drv.set_current_device(1)


@pytest.mark.parametrize("num_warps", [1, 4, 32])
def test_a_warmed_up_kernel_holds_one_core(target, num_warps, monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    from tritium.runtime.launch import compile_for_arguments

    x = np.zeros(16, np.float32)
    kernel = compile_for_arguments(target, add_kernel, (x, x, x, 16), {"BLOCK": 16, "num_warps": num_warps})
    props = target.device_properties(0)
    kernel._init_handles()
    assert kernel.n_regs * props["warpSize"] * num_warps == props["max_num_regs"]  # occupancy 1 by registers
    assert kernel.metadata.shared == props["max_shared_mem"] and kernel.n_spills == 0


def test_amd_tuning_knobs_are_accepted_and_change_nothing(target):
    assert target.parse_options({"waves_per_eu": 2, "matrix_instr_nonkdim": 16, "kpack": 2}) == \
        target.parse_options({})
    with pytest.raises(Exception, match="unknown launch option"):
        target.parse_options({"waves_per_eu_typo": 2})


def test_a_launch_with_an_amd_config_runs(monkeypatch):
    monkeypatch.setenv("TRITIUM_TARGET", "cpu")
    x = np.arange(10, dtype=np.float32)
    out = np.zeros_like(x)
    add_kernel[(1,)](x, x, out, 10, BLOCK=16, waves_per_eu=2, num_warps=4, num_stages=2)
    np.testing.assert_array_equal(out, 2 * x)
