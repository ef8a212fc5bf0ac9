"""The launch fast path (``runtime.binder``): a warm launch skips the general binding, and must
still see everything the general path sees (specialisation, options, environment, errors)."""

import numpy as np
import pytest
import tritium
from tritium import plugins
from tritium.errors import ArgumentError
from tritium.runtime.binder import Binder
from tritium.runtime.host import HostMemory

from .kernels.basic import add_kernel


def _launch(n: int, **options):
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    kernel = add_kernel[(1,)](x, x, out, n, BLOCK=64, **options)
    np.testing.assert_array_equal(out[:n], 2 * x[:n])
    return kernel


def test_a_warm_launch_takes_the_binder_and_finds_the_same_kernel(compiling_target, host_target):
    add_kernel.kernels.clear()
    first = _launch(17)
    assert any(isinstance(k, tuple) and isinstance(k[0], Binder) for k in add_kernel.kernels)
    assert _launch(19) is first  # same specialisation
    assert _launch(32) is not first  # divisible by 16: another one
    assert _launch(17, num_warps=8) is not first  # an option is in the key
    assert _launch(17) is first


def test_the_environment_is_read_on_every_launch(compiling_target, host_target, monkeypatch):
    add_kernel.kernels.clear()
    plain = _launch(17)
    monkeypatch.setenv("TRITIUM_DEBUG", "1")
    debug = _launch(17)
    assert debug is not plain
    monkeypatch.delenv("TRITIUM_DEBUG")
    assert _launch(17) is plain


def test_errors_on_a_warm_kernel_are_worded_by_the_general_path(compiling_target, host_target):
    _launch(17)
    x = np.zeros(64, np.float32)
    with pytest.raises(ArgumentError, match=r"kernel 'add_kernel'.*'y_ptr'"):
        add_kernel[(1,)](x, [1.0, 2.0], x, 17, BLOCK=64)
    read_only = np.zeros(64, np.float32)
    read_only.flags.writeable = False
    with pytest.raises(ArgumentError, match="read-only"):
        add_kernel[(1,)](x, x, read_only, 17, BLOCK=64)
    with pytest.raises(ArgumentError, match="multiple values for argument .BLOCK."):
        add_kernel[(1,)](x, x, x, 17, 64, 5, BLOCK=64)


def test_grid_callables_see_every_parameter(compiling_target, host_target):
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    seen = []

    def grid(meta):
        seen.append(dict(meta))
        return (tritium.cdiv(meta["n"], meta["BLOCK"]),)

    for _ in range(2):  # the first launch binds through the general path, the second through the binder
        add_kernel[grid](x, x, out, 100, BLOCK=32)
        np.testing.assert_array_equal(out, 2 * x)
    assert seen[0] == seen[1] and seen[0]["n"] == 100 and seen[0]["BLOCK"] == 32


def test_changing_the_target_variable_switches_targets_between_launches(monkeypatch):
    names = [n for n, t in plugins.targets().items()
             if t.test_by_default and plugins.availability(t)[0] and isinstance(t.driver, HostMemory)]
    if len(names) < 2:
        pytest.skip("needs two available targets that read host memory")
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    for name in names[:2]:
        monkeypatch.setenv(plugins.TARGET_ENV, name)
        out[:] = 0
        add_kernel[(1,)](x, x, out, 64, BLOCK=64)
        np.testing.assert_array_equal(out, 2 * x)
        assert plugins.get_target() is plugins.targets()[name]


def test_a_warm_launch_leaves_nothing_for_the_garbage_collector(compiling_target, host_target):
    """Objects a launch keeps alive (or leaves in reference cycles) wake Python's collector, which
    then walks every object of the process: on a GPU that was a third of a launch. (CPython's
    count drifts by a few per hundred launches even when nothing survives.)"""
    import gc

    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    for _ in range(3):  # compiled, loaded and every cache warm
        add_kernel[(1,)](x, x, out, 64, BLOCK=64)
    gc.collect()
    gc.disable()
    try:
        before = gc.get_count()[0]
        for _ in range(1000):
            add_kernel[(1,)](x, x, out, 64, BLOCK=64)
        left = gc.get_count()[0] - before
    finally:
        gc.enable()
    assert left < 200, f"{left} objects tracked by the collector outlived 1000 launches"


@tritium.jit
def shadowing(k0, t0, b0, s6, o, g, kernel, n, BLOCK: tritium.language.constexpr):
    """Parameters named like the locals the generated launch function once used (a fuzzed kernel's
    ``s6`` was overwritten by the specialisation of argument 6, and launched as 0)."""
    offs = tritium.language.arange(0, BLOCK)
    mask = offs < n
    x = tritium.language.load(k0 + offs, mask=mask) + tritium.language.load(t0 + offs, mask=mask)
    tritium.language.store(b0 + offs, x * s6 + o * g + kernel, mask=mask)


def test_parameter_names_do_not_collide_with_the_generated_code(compiling_target, host_target):
    x = np.arange(8, dtype=np.float32)
    for _ in range(2):  # the general path, then the generated one
        out = np.zeros(8, np.float32)
        shadowing[(1,)](x, x, out, 12, 2, 3, 5, 8, BLOCK=8)
        np.testing.assert_array_equal(out, 2 * x * 12 + 2 * 3 + 5)


def test_missing_and_extra_arguments_on_a_warm_kernel_are_worded_by_the_general_path(compiling_target,
                                                                                   host_target):
    _launch(17)
    x = np.zeros(64, np.float32)
    with pytest.raises(ArgumentError, match=r"kernel 'add_kernel'.*missing"):
        add_kernel[(1,)](x, x, x, BLOCK=64)
    with pytest.raises(ArgumentError, match=r"kernel 'add_kernel'.*too many positional"):
        add_kernel[(1,)](x, x, x, 17, 64, 5)


def test_other_targets_tuning_hints_are_ignored_and_typos_refused(compiling_target, host_target):
    """Triton's backends ignore options they do not have, and tutorial 03 gives AMD's
    ``waves_per_eu`` to every target that is not CUDA: such hints are accepted, and so is
    ``num_ctas`` > 1 (Triton's thread-block clusters, which change no result); a misspelt option is
    a clear error."""
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    add_kernel[(1,)](x, x, out, 64, BLOCK=64, waves_per_eu=2, num_ctas=1, maxnreg=128)
    np.testing.assert_array_equal(out, 2 * x)
    with pytest.raises(tritium.TritiumError, match="unknown launch option.*num_warp"):
        add_kernel[(1,)](x, x, out, 64, BLOCK=64, num_warp=4)
    out[:] = 0
    add_kernel[(1,)](x, x, out, 64, BLOCK=64, num_ctas=2)
    np.testing.assert_array_equal(out, 2 * x)
    with pytest.raises(tritium.TritiumError, match="num_ctas must be a positive int"):
        add_kernel[(1,)](x, x, out, 64, BLOCK=64, num_ctas=0)


def test_tritium_testing_comes_with_import_tritium():
    """As ``import triton`` gives ``triton.testing`` (Triton's tutorials never import it)."""
    import subprocess
    import sys

    code = "import tritium; print(tritium.testing.do_bench.__name__)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "do_bench"
