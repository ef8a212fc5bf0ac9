"""The simt target: kernels compiled as for a GPU run on the host at AMD's wave sizes (64, 32) and
NVIDIA's (32), checked against numpy; a sample of the conformance suite at wave64 and wave32 (the
whole suite: ``TRITIUM_SIMT_WARP_SIZE=64 python -m tritium_conformance --target simt``)."""

from __future__ import annotations

import numpy as np
import pytest
import tritium
import tritium.language as tl
from tritium import plugins
from tritium.errors import TritiumError
from tritium_simt.target import WARP_ENV

from tritium_conformance import CASES, Device, declared_gap, run_case


@tritium.jit
def row_stats_kernel(x_ptr, out_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    tl.store(out_ptr + 3 * row, tl.sum(x, 0))
    tl.store(out_ptr + 3 * row + 1, tl.max(x, 0))
    tl.store(out_ptr + 3 * row + 2, tl.sum(tl.cumsum(x, 0) * 0 + 1, 0).to(tl.float32) + tl.num_programs(0))


@pytest.mark.parametrize("wave", [64, 32, 16])
def test_a_reduction_and_a_scan_across_warps_at_each_wave_size(monkeypatch, wave):
    monkeypatch.setenv(WARP_ENV, str(wave))
    monkeypatch.setenv(plugins.TARGET_ENV, "simt")
    rng = np.random.default_rng(wave)
    x = rng.standard_normal((3, 512)).astype(np.float32)
    out = np.full((3, 3), np.nan, np.float32)
    k = row_stats_kernel[(3,)](x, out, N=512, num_warps=4)
    assert k.metadata["warp_size"] == wave
    np.testing.assert_allclose(out[:, 0], x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(out[:, 1], x.max(1))
    np.testing.assert_array_equal(out[:, 2], 512 + 3)


def test_a_wave_size_that_is_not_a_power_of_two_is_refused(monkeypatch):
    monkeypatch.setenv(WARP_ENV, "48")
    with pytest.raises(TritiumError, match=r"TRITIUM_SIMT_WARP_SIZE must be a power of two up to 64 \(the threads of a warp\), got '48'"):
        plugins.targets()["simt"].parse_options({})


@pytest.mark.parametrize("case_id", list(CASES)[::40])
@pytest.mark.parametrize("wave", [64, 32])
def test_conformance_at_amd_wave_sizes(monkeypatch, wave, case_id, request):
    monkeypatch.setenv(WARP_ENV, str(wave))
    target = plugins.targets()["simt"]
    gap = declared_gap(case_id, plugins.conformance_expectations(target))
    if gap is not None:
        request.applymarker(pytest.mark.xfail(reason=gap, strict=True))
    result = run_case(CASES[case_id], Device(target))
    assert result.status == "pass", f"{case_id} at wave {wave}: max error {result.max_error}: {result.message}"


@tritium.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    acc = tl.dot(tl.load(a_ptr + rm[:, None] * K + rk[None, :]), tl.load(b_ptr + rk[:, None] * N + rn[None, :]))
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def test_a_target_s_matrix_instruction_runs_from_its_declaration(monkeypatch):
    """``TRITIUM_SIMT_MATRIX`` names a target's ``warp_matrix_op``: products run on that instruction,
    emulated from the fragments it declares (here AMD's MFMA at 64 lanes)."""
    pytest.importorskip("tritium_amdgpu")
    monkeypatch.setenv(WARP_ENV, "64")
    monkeypatch.setenv("TRITIUM_SIMT_MATRIX", "tritium_amdgpu.matrix:cdna3_matrix_op")
    monkeypatch.setenv(plugins.TARGET_ENV, "simt")
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((32, 32)).astype(np.float16) for _ in range(2))
    c = np.full((32, 32), np.nan, np.float32)
    k = dot_kernel[(1,)](a, b, c, M=32, N=32, K=32, num_warps=2)
    assert "#tile.mma" in k.asm["tile-layout"] and "emulator_mma" in k.asm["llir"]
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(c, a64 @ b64, rtol=0, atol=1e-5 * (np.abs(a64) @ np.abs(b64)).max())


def test_a_matrix_variable_that_names_nothing_is_refused(monkeypatch):
    monkeypatch.setenv("TRITIUM_SIMT_MATRIX", "no_such_module:op")
    monkeypatch.setenv(plugins.TARGET_ENV, "simt")
    x = np.zeros((16, 16), np.float16)
    with pytest.raises(TritiumError, match="TRITIUM_SIMT_MATRIX='no_such_module:op' names no function"):
        dot_kernel[(1,)](x, x, np.zeros((16, 16), np.float32), M=16, N=16, K=16)


@tritium.jit
def checked_kernel(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_assert(x < 3, "x stays below 3")


def test_a_failed_device_assertion_raises_with_its_message_and_line(monkeypatch):
    """Regression: the emulator recorded failed assertions, but a launch on the simt target did not
    report them (a GPU reports one at the next synchronisation)."""
    from tritium.runtime.launch import run_kernel

    target = plugins.targets()["simt"]
    x = target.driver.to_device(np.arange(8, dtype=np.int32))
    run_kernel(target, checked_kernel, (1,), (x,), {"BLOCK": 8})  # not in debug mode: not checked
    with pytest.raises(tritium.errors.DeviceAssertionError, match=r"checked_kernel.*test_simt.py:\d+: device "
                       r"assertion failed: x stays below 3 \(in \d+ thread\(s\), first thread \d+\)") as e:
        run_kernel(target, checked_kernel, (1,), (x,), {"BLOCK": 8, "debug": True})
    assert "tl.device_assert(x < 3" in str(e.value)
