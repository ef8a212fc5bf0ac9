"""Triton's host-side surface: ``tritium.runtime.driver.active`` (device, target, properties),
``kernel.warmup(...)`` with the compiled kernel's ``_init_handles()``, ``n_regs``, ``n_spills`` and
``metadata``, and the error classes (``OutOfResources``, ``TritonError``)."""

from __future__ import annotations

import pickle
import sys
import types

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.errors import TargetError
from tritium.runtime import driver
from tritium.runtime.driver import ActiveDriver
from tritium.target import GPUTarget, Target


class TwoGpus(Target):
    """A pretend target with two devices of different sizes."""

    name = "two-gpus"

    def __init__(self):
        self.device = 0

    def device_count(self):
        return 2

    def current_device(self):
        return self.device

    def set_current_device(self, device):
        self.device = device

    def prepare_torch(self, torch):
        pass  # a GPU's torch module needs nothing

    def current_target(self):
        return GPUTarget("cuda", 90, 32)

    def device_properties(self, device):
        return {"multiprocessor_count": 132 if device == 0 else 66, "warpSize": 32}

    def torch_device(self):
        return "cuda", self.device


def test_device_properties_of_the_current_or_a_named_device():
    drv = ActiveDriver(TwoGpus())
    assert drv.utils.get_device_properties(None)["multiprocessor_count"] == 132  # None: the current device
    assert drv.utils.get_device_properties(1)["multiprocessor_count"] == 66
    assert drv.utils.get_device_properties(types.SimpleNamespace(index=1))["multiprocessor_count"] == 66  # torch.device
    drv.set_current_device(1)
    assert drv.get_current_device() == 1 and drv.utils.get_device_properties(None)["multiprocessor_count"] == 66
    with pytest.raises(TargetError, match="target 'two-gpus' has 2 device"):
        drv.utils.get_device_properties(2)
    with pytest.raises(TargetError, match="a device index must be an int"):
        drv.utils.get_device_properties("cuda:0")
    assert drv.get_current_target() == GPUTarget("cuda", 90, 32) and drv.get_current_target().warp_size == 32


def test_torch_device_needs_torch_and_says_so(monkeypatch):
    drv = ActiveDriver(TwoGpus())
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch fails
    with pytest.raises(TargetError, match="needs torch, which is not installed"):
        drv.get_active_torch_device()
    fake_torch = types.SimpleNamespace(device=lambda *args: ("torch.device", *args), cpu=types.SimpleNamespace())
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    drv.set_current_device(1)
    assert drv.get_active_torch_device() == ("torch.device", "cuda", 1)
    assert not hasattr(fake_torch.cpu, "set_stream")
    assert ActiveDriver(Target()).get_active_torch_device() == ("torch.device", "cpu")  # host targets: no index
    # tutorial 02 calls getattr(torch, DEVICE.type).set_stream(stream); torch.cpu's streams do nothing
    assert fake_torch.cpu.set_stream("a stream") is None
    own = fake_torch.cpu.set_stream = lambda stream: "torch's own"
    ActiveDriver(Target()).get_active_torch_device()
    assert fake_torch.cpu.set_stream is own  # where torch has one, it stays


def test_a_target_without_devices_says_what_it_does_not_support():
    drv = ActiveDriver(Target())
    with pytest.raises(TargetError, match="device properties are not supported on target"):
        drv.utils.get_device_properties(None)
    assert drv.get_current_device() == 0 and drv.get_device_count() == 1 and drv.get_current_stream() == 0


def test_driver_active_follows_the_selected_target(target):
    assert driver.active.target is target
    other = ActiveDriver(TwoGpus())
    driver.set_active(other)
    try:
        assert driver.active is other
    finally:
        driver.reset_active()
    assert driver.active.target is target


def test_every_target_tells_its_current_target(target):
    """Triton's ``driver.active.get_current_target()``: a GPUTarget(backend, arch, warp_size)."""
    t = driver.active.get_current_target()
    assert isinstance(t, GPUTarget) and t.backend and t.arch and t.warp_size >= 1


def test_the_interpreter_describes_the_host(monkeypatch):
    import platform

    monkeypatch.setenv("TRITIUM_TARGET", "interpreter")
    assert driver.active.get_current_target() == GPUTarget("cpu", platform.machine(), 1)
    props = driver.active.utils.get_device_properties(None)  # Triton's tests size their launches from it
    assert props["multiprocessor_count"] == 1 and props["warpSize"] == 1 and props["max_shared_mem"] >= 2**20


@tritium.jit
def _fill_pid(out_ptr):
    tl.store(out_ptr + tl.program_id(0), 1)


def test_grids_past_the_target_s_limits_are_refused(target, host_target):
    """Every target refuses a grid of 2**40 programs before running any (the interpreter ran them,
    for ever) with one check: ``Target.max_grid`` and ``Target.max_programs``."""
    out = np.zeros(4, np.int32)
    with pytest.raises(tritium.ArgumentError, match=r"kernel '_fill_pid': grid \(1, 1048576, 1048576\) has "
                                                    r"1099511627776 programs; the \w+ target runs at most 2147483647"):
        _fill_pid[(1, 2**20, 2**20)](out)
    assert not out.any()
    _fill_pid[(4, 1, 1)](out)
    np.testing.assert_array_equal(out, 1)


def test_a_target_narrows_the_grid_axes_it_supports():
    from tritium.runtime.launch import check_grid

    class NarrowAxes(Target):
        name, max_grid, max_programs = "narrow", (2**31 - 1, 65535, 65535), None

    check_grid(NarrowAxes(), (2**20, 2**11, 1), "k")  # 2**31 programs: fine without a total limit
    with pytest.raises(tritium.ArgumentError, match=r"kernel 'k': grid \(1, 70000, 1\) exceeds the narrow "
                                                    r"target's limit of \(2147483647, 65535, 65535\)"):
        check_grid(NarrowAxes(), (1, 70000, 1), "k")


def test_error_classes_are_where_triton_has_them():
    import tritium.runtime.errors as runtime_errors

    assert tritium.TritonError is tritium.TritiumError
    assert tritium.OutOfResources is runtime_errors.OutOfResources and tritium.runtime.OutOfResources
    e = tritium.OutOfResources(200000, 232448, "shared memory")
    assert isinstance(e, tritium.TritonError)
    assert str(e) == ("out of resource: shared memory, Required: 200000, Hardware limit: 232448. Reducing block "
                      "sizes or `num_stages` may help.")
    again = pickle.loads(pickle.dumps(tritium.OutOfResources(256, 128, "threads", "k")))
    assert (again.required, again.limit, again.name, str(again)) == (256, 128, "threads", str(again))
    assert str(again).startswith("kernel 'k': out of resource: threads")


@tritium.jit
def softmax_kernel(out_ptr, in_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        offs = tl.arange(0, BLOCK)
        x = tl.load(in_ptr + row * n_cols + offs, mask=offs < n_cols, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * n_cols + offs, e / tl.sum(e, axis=0), mask=offs < n_cols)


def test_tutorial_02s_occupancy_arithmetic_gives_one_program_per_core_on_the_host(target, host_target):
    """What Triton's fused-softmax tutorial does before launching, on a target whose kernels read
    host memory, that compiles them (warmup) and that reports resources (the cpu target)."""
    if not target.compiles:
        pytest.skip(f"target {target.name} does not compile kernels: nothing to warm up")
    try:
        props = driver.active.utils.get_device_properties(None)
    except TargetError:
        pytest.skip(f"target {target.name} reports no device properties")
    x = np.random.default_rng(0).standard_normal((37, 50)).astype(np.float32)
    y = np.full_like(x, np.nan)
    num_warps = 8
    kernel = softmax_kernel.warmup(y, x, 37, 50, BLOCK=64, num_warps=num_warps, grid=(1,))
    kernel._init_handles()
    assert np.isnan(y).all()  # warmup compiles, it does not run
    assert kernel.metadata.num_warps == num_warps and kernel.n_spills >= 0
    occupancy = props["max_num_regs"] // (kernel.n_regs * props["warpSize"] * num_warps)
    occupancy = min(occupancy, props["max_shared_mem"] // kernel.metadata.shared)
    assert occupancy >= 1
    programs = min(props["multiprocessor_count"] * occupancy, 37)
    assert programs == min(props["multiprocessor_count"], 37)  # one program per core
    kernel[(programs, 1, 1)](y, x, 37, 50, 64)  # as the tutorial: every parameter
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_compiled_kernel_metadata_reads_as_attributes(compiling_target):
    a = compiling_target.driver.to_device(np.zeros(64, np.float32))
    kernel = softmax_kernel.warmup(a, a, 1, 64, BLOCK=64, num_warps=2, grid=(1,))
    assert kernel.metadata.num_warps == 2 and kernel.metadata.num_stages == 3
    assert kernel.metadata.name == "softmax_kernel" and kernel.metadata["name"] == "softmax_kernel"
    assert isinstance(kernel.metadata.shared, int)
    assert "llir" in kernel.asm and isinstance(kernel.asm["llir"], str)
    with pytest.raises(AttributeError, match="the compile metadata has no 'tmem_size'"):
        kernel.metadata.tmem_size


def test_compiled_kernel_launches_with_every_parameter_as_tritons_does(compiling_target, host_target):
    """Tutorial 02 launches the warmed-up kernel with all its parameters, constexprs included."""
    x = np.random.default_rng(1).standard_normal((5, 20)).astype(np.float32)
    y = np.full_like(x, np.nan)
    kernel = softmax_kernel.warmup(y, x, 5, 20, BLOCK=32, grid=(1,))
    kernel[(2, 1, 1)](y, x, 5, 20, 32)  # every parameter, BLOCK too
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    y[:] = np.nan
    kernel[(5,)](y, x, 5, 20)  # the runtime arguments only
    assert not np.isnan(y).any()
    with pytest.raises(tritium.ArgumentError, match="was compiled with BLOCK=32, but it was given 64"):
        kernel[(1,)](y, x, 5, 20, 64)


def test_num_ctas_changes_nothing_that_compiles(compiling_target):
    """Triton's thread-block clusters change a program's speed, not its results: every target runs
    a program on one block, so ``num_ctas`` selects the same compiled kernel."""
    assert compiling_target.parse_options({"num_ctas": 2, "num_warps": 2}) == \
        compiling_target.parse_options({"num_warps": 2})
    with pytest.raises(tritium.TritiumError, match="num_ctas must be a positive int"):
        compiling_target.parse_options({"num_ctas": "2"})
