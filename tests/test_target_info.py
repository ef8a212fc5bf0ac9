"""``tl.target_info`` and ``tritium.constexpr_function``: compile-time questions answered by the active
driver's target, in host code and inside kernels, as in Triton."""

import numpy as np
import pytest
import tritium
import tritium.language as tl
from tritium.errors import TritiumError
from tritium.runtime.driver import driver


@tritium.constexpr_function
def block_for(n):
    return tritium.next_power_of_2(n)


@tritium.jit
def fill_kernel(out_ptr, N: tl.constexpr):
    B = block_for(N)  # a compile-time int: a block size
    offs = tl.arange(0, B)
    if tl.target_info.is_cuda():
        value = 2
    else:
        value = 1
    tl.store(out_ptr + offs, tl.full((B,), value, tl.int32), mask=offs < N)


@tritium.jit
def bad_kernel(out_ptr):
    tl.store(out_ptr, block_for(tl.load(out_ptr)))


def test_kernels_branch_on_the_target_and_size_blocks_with_constexpr_functions(target):
    out = target.driver.to_device(np.zeros(16, np.int32))
    fill_kernel[(1,)](out, N=13)
    want = 2 if tl.target_info.is_cuda() else 1
    np.testing.assert_array_equal(target.driver.to_host(out), [want] * 13 + [0] * 3)


def test_host_code_reads_the_active_target(target):
    try:
        active = driver.active.get_current_target()
    except TritiumError:
        active = None
    assert tl.target_info.current_target() == active
    assert tl.target_info.is_cuda() == (active is not None and "is_cuda" in active.traits)
    assert not tl.target_info.is_hip() and not tl.target_info.is_hip_cdna3() and not tl.target_info.is_hip_cdna4()
    if active is not None and active.capability is not None:
        assert tl.target_info.cuda_capability_geq(active.arch // 10, active.arch % 10)
        assert not tl.target_info.cuda_capability_geq(active.arch // 10 + 1)
    else:
        assert not tl.target_info.cuda_capability_geq(7)
    assert block_for(5) == 8 and block_for(tl.constexpr(9)) == 16


def test_a_constexpr_function_refuses_tensors(target):
    out = target.driver.to_device(np.ones(1, np.int32))
    with pytest.raises(TritiumError, match="block_for is a constexpr_function: its arguments must be compile-time"):
        bad_kernel[(1,)](out)


@pytest.mark.parametrize("traits,capability", [(frozenset({"is_cuda"}), 90), (frozenset({"is_hip", "is_hip_cdna3"}), None),
                                               (frozenset(), None)])
def test_the_target_states_which_predicates_hold(monkeypatch, traits, capability):
    """Core asks the target's GPUTarget; it knows no backend or arch names of its own."""
    from tritium.language import target_info
    from tritium.target import GPUTarget

    stated = GPUTarget("any", "any", 32, traits=traits, capability=capability)
    monkeypatch.setattr(target_info, "current_target", lambda: stated)
    assert target_info.is_cuda() == ("is_cuda" in traits)
    assert target_info.is_hip() == ("is_hip" in traits)
    assert target_info.is_hip_cdna3() == ("is_hip_cdna3" in traits) and not target_info.is_hip_cdna4()
    assert target_info.cuda_capability_geq(9) == (capability == 90) and not target_info.cuda_capability_geq(10)
    assert stated == GPUTarget("any", "any", 32)  # as Triton's GPUTarget compares
