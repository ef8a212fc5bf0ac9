"""The CpuTarget interface: options, stages, versions, argument binding, plugin registration, errors."""

import numpy as np
import pytest
import tritium
import tritium.language as tl
from tritium.errors import ArgumentError, TritiumError
from tritium.passes.pipeline import Pipeline
from tritium_cpu import plugin
from tritium_cpu.target import CpuOptions, CpuTarget

UNSUPPORTED = """
module {
  func.func public @bad(%x: !tile.ptr<f32, 1 : i32>, %n: i32) {
    %c = arith.ceildivsi %n, %n : i32
    return
  }
}
"""


def test_identity_and_stages(target):
    assert (target.name, target.priority, target.binary_stage) == ("cpu", 0, "obj")
    assert target.availability() == (True, "")
    stages = Pipeline()
    target.add_stages(stages, target.parse_options({}))
    assert list(stages) == ["tile-layout", "llir", "asm", "obj"]
    assert all((fn.__doc__ or "").strip() for fn in stages.values())
    version = target.version()
    assert "tritium-cpu-" in version and "llvmlite-0.50" in version and "cpu-" in version


def test_options(target):
    options = target.parse_options({"num_warps": 8, "num_stages": 2})
    assert options == CpuOptions(num_warps=8, num_stages=2)
    hash(options)
    with pytest.raises(TritiumError, match=r"option\(s\) or parameter\(s\) arch.*known options: debug, enable_fp_fusion, num_stages, num_warps"):
        target.parse_options({"arch": "sm_90"})
    with pytest.raises(TritiumError, match="num_warps must be an int"):
        target.parse_options({"num_warps": "a"})
    with pytest.raises(TritiumError, match="debug must be True or False"):
        target.parse_options({"debug": 1})


@tritium.jit
def fused_kernel(a_ptr, b_ptr, c_ptr, out_ptr):
    tl.store(out_ptr, tl.load(a_ptr) * tl.load(b_ptr) + tl.load(c_ptr))


def test_fp_fusion_when_asked(target, monkeypatch):
    """``enable_fp_fusion=True`` (or ``knobs.language.default_fp_fusion``) lets ``a * b + c`` become
    one FMA, rounded once, as on Triton's GPUs; by default each operation rounds, as numpy's."""
    from llvmlite import binding as llvm

    if "+fma" not in llvm.get_host_cpu_features().flatten():
        pytest.skip("the host has no FMA instruction")
    monkeypatch.delenv("TRITIUM_DEFAULT_FP_FUSION", raising=False)
    a = np.array([1 + 2.0 ** -12], np.float32)  # a * a = 1 + 2**-11 + 2**-24: a tie fp32 rounds away
    c = np.array([-(1 + 2.0 ** -11)], np.float32)
    out = np.zeros(1, np.float32)
    fused_kernel[(1,)](a, a, c, out)
    assert out[0] == 0.0
    fused_kernel[(1,)](a, a, c, out, enable_fp_fusion=True)
    assert out[0] == 2.0 ** -24
    fused_kernel[(1,)](a, a, c, out, enable_fp_fusion=False)
    assert out[0] == 0.0
    monkeypatch.setenv("TRITIUM_DEFAULT_FP_FUSION", "1")  # knobs.language.default_fp_fusion = True
    fused_kernel[(1,)](a, a, c, out)
    assert out[0] == 2.0 ** -24


def test_debug_option_from_environment(target, monkeypatch):
    monkeypatch.delenv("TRITIUM_DEBUG", raising=False)
    assert target.parse_options({}).debug is False
    monkeypatch.setenv("TRITIUM_DEBUG", "1")
    assert target.parse_options({}).debug is True
    assert target.parse_options({"debug": False}).debug is False


def test_plugin_registers_the_target():
    (t,) = plugin.tritium_targets()
    assert isinstance(t, CpuTarget)


def test_bind_pointers(target):
    a = np.arange(10, dtype=np.float32)
    assert target.bind_arg(a, "*fp32", "x") == a.ctypes.data
    view = a[::2]  # non-contiguous views are plain pointers
    assert target.bind_arg(view, "*fp32", "x") == a.ctypes.data
    ro = np.arange(4.0)
    ro.setflags(write=False)
    assert target.bind_arg(ro, "*fp64", "x") == ro.ctypes.data
    assert target.bind_arg(memoryview(bytearray(8)), "*i8", "x") > 0


@pytest.mark.parametrize("value", [[1.0, 2.0], (1, 2), 3, 2.5])
def test_bind_refuses_non_arrays_for_pointers(target, value):
    with pytest.raises(ArgumentError, match="'x'.*(numpy|array)"):
        target.bind_arg(value, "*fp32", "x")


def test_bind_refuses_gpu_memory(target):
    class CudaArray:
        __cuda_array_interface__ = {"data": (1234, False), "shape": (4,), "typestr": "<f4", "version": 3}

    with pytest.raises(ArgumentError, match="'x'.*GPU.*TRITIUM_TARGET"):
        target.bind_arg(CudaArray(), "*fp32", "x")

    class DLPackOnGpu:
        def __dlpack_device__(self):
            return (2, 0)  # kDLCUDA

        def __dlpack__(self, stream=None):
            raise AssertionError("must not be exported")

    with pytest.raises(ArgumentError, match="'x'.*host memory"):
        target.bind_arg(DLPackOnGpu(), "*fp32", "x")


def test_bind_scalars(target):
    assert target.bind_arg(7, "i32", "n") == 7
    assert target.bind_arg(np.int64(2**40), "i64", "n") == 2**40
    assert target.bind_arg(True, "i1", "flag") == 1
    assert target.bind_arg(1, "fp32", "alpha") == 1.0 and isinstance(target.bind_arg(1, "fp32", "alpha"), float)
    with pytest.raises(ArgumentError, match="'n' = 2147483648 is out of range for i32"):
        target.bind_arg(2**31, "i32", "n")
    with pytest.raises(ArgumentError, match="'n' must be an integer"):
        target.bind_arg(1.5, "i32", "n")
    with pytest.raises(ArgumentError, match="'alpha' must be a number"):
        target.bind_arg("1", "fp32", "alpha")


def test_unsupported_op_is_a_clear_error(compile_ir):
    with pytest.raises(TritiumError, match="the cpu target does not support op arith.ceildivsi yet"):
        compile_ir(UNSUPPORTED, ("x", "n"), ("*fp32", "i32"))


def test_memory_api(target):
    d = target.driver
    a = np.arange(6.0).reshape(2, 3)[:, ::2]
    dev = d.to_device(a)
    assert dev.flags.c_contiguous and np.array_equal(dev, a) and not np.shares_memory(dev, a)
    assert d.empty((3, 4), np.int16).shape == (3, 4)
    host = d.to_host(dev)
    assert np.array_equal(host, a) and not np.shares_memory(host, dev)
    d.synchronize()
