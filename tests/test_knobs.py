"""``tritium.knobs``, Triton's configuration object: each knob reads and writes the environment
variable tritium's runtime reads, so setting one changes what kernels do; scopes, copies and resets
restore it; Triton's knobs that tritium has no setting for are absent, not inert."""

from __future__ import annotations

import os

import numpy as np
import pytest
import tritium
import tritium.language as tl
from tritium import knobs, plugins
from tritium.errors import DeviceAssertionError


@tritium.jit
def checked_kernel(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_assert(x < 3, "x stays below 3")


def test_a_knob_reads_the_environment_and_setting_it_writes_it(monkeypatch):
    monkeypatch.delenv("TRITIUM_DEBUG", raising=False)
    assert knobs.runtime.debug is False
    monkeypatch.setenv("TRITIUM_DEBUG", "1")
    assert knobs.runtime.debug is True
    with knobs.runtime.scope():
        knobs.runtime.debug = False
        assert os.environ["TRITIUM_DEBUG"] == "0" and knobs.runtime.debug is False
    assert os.environ["TRITIUM_DEBUG"] == "1" and knobs.runtime.debug is True  # the scope restored both


def test_runtime_debug_turns_device_assertions_on(monkeypatch):
    monkeypatch.delenv("TRITIUM_DEBUG", raising=False)
    x = np.arange(8, dtype=np.int32)
    checked_kernel[(1,)](x, BLOCK=8)  # not in debug mode: not checked
    with knobs.runtime.scope():
        knobs.runtime.debug = True
        with pytest.raises(DeviceAssertionError, match="x stays below 3"):
            checked_kernel[(1,)](x, BLOCK=8)
    checked_kernel[(1,)](x, BLOCK=8)


def test_runtime_interpret_selects_the_interpreter(monkeypatch):
    monkeypatch.delenv("TRITIUM_TARGET", raising=False)
    with knobs.runtime.scope():
        knobs.runtime.interpret = True
        assert knobs.runtime.interpret and plugins.get_target(None).name == "interpreter"
    assert "TRITIUM_TARGET" not in os.environ and not knobs.runtime.interpret


def test_language_default_fp_fusion_sets_the_option_where_a_launch_does_not(monkeypatch):
    """Triton's ``knobs.language.default_fp_fusion``: the default of ``enable_fp_fusion`` on the
    targets that have the option; a launch's own value wins."""
    monkeypatch.delenv("TRITIUM_DEFAULT_FP_FUSION", raising=False)
    cpu = plugins.targets()["cpu"]
    assert knobs.language.default_fp_fusion is None and cpu.parse_options({}).enable_fp_fusion is False
    with knobs.language.scope():
        knobs.language.default_fp_fusion = True
        assert os.environ["TRITIUM_DEFAULT_FP_FUSION"] == "1"
        assert cpu.parse_options({}).enable_fp_fusion is True
        assert cpu.parse_options({"enable_fp_fusion": False}).enable_fp_fusion is False
    assert "TRITIUM_DEFAULT_FP_FUSION" not in os.environ


def test_cache_dir_is_where_kernels_are_kept(tmp_path, monkeypatch):
    monkeypatch.delenv("TRITIUM_CACHE_DISABLE", raising=False)
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path)
        from tritium.runtime.cache import cache_dir

        assert cache_dir() == str(tmp_path)


def test_copy_reset_and_propagate_env(monkeypatch):
    monkeypatch.setenv("TRITIUM_DEBUG", "1")
    section = knobs.runtime.copy()
    monkeypatch.setattr(knobs, "propagate_env", False)
    section.debug = False
    assert section.debug is False and knobs.runtime.debug is True  # a copy; nothing written
    assert os.environ["TRITIUM_DEBUG"] == "1"
    assert section.reset().debug is True  # the environment again
    assert set(section.knob_descriptors) == {"debug", "interpret"} and section.knobs["debug"] is True


def test_knobs_tritium_does_not_have_are_absent():
    with pytest.raises(AttributeError, match="tritium.knobs has no 'redis': tritium has no such setting"):
        knobs.redis
    assert not hasattr(knobs.runtime, "launch_enter_hook")
