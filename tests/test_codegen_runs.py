"""The access rules every code generator applies to the axis info (``tritium.codegen.runs``)."""

import pytest

from tritium.codegen.runs import constant_run, contiguous_run, run_alignment, widest_run
from tritium.passes.axis_info import AxisInfo


def info(contiguity: int, divisibility: int, constancy: int = 1) -> AxisInfo:
    return AxisInfo((contiguity,), (divisibility,), (constancy,))


@pytest.mark.parametrize("contiguity,n,want", [(8, 8, True), (16, 8, True), (4, 8, False), (6, 4, False),
                                               (6, 2, True), (1, 1, True)])
def test_a_run_is_contiguous_when_it_lies_inside_one_of_the_analysis_runs(contiguity, n, want):
    assert contiguous_run(info(contiguity, 16), 0, n) is want


def test_a_run_is_constant_when_it_lies_inside_one_constant_run():
    assert constant_run(info(1, 1, constancy=16), 0, 8)
    assert not constant_run(info(1, 1, constancy=4), 0, 8)


@pytest.mark.parametrize("divisibility,n,elem,want", [
    (16, 8, 4, 16),   # runs of 8 floats start 32 bytes apart, but the first is only 16-aligned
    (64, 8, 4, 32),   # a run starts 32 bytes after another: 32-aligned at best
    (1, 8, 4, 4),     # nothing known: the element's own alignment
    (48, 4, 4, 16),   # a divisibility of 48 bytes means 16-aligned
])
def test_run_alignment(divisibility, n, elem, want):
    assert run_alignment(info(64, divisibility), 0, n, elem) == want


@pytest.mark.parametrize("contiguity,divisibility,elem,want", [
    (64, 16, 4, 4),   # 16 bytes of floats
    (64, 8, 4, 2),    # only 8-byte aligned
    (2, 16, 4, 2),    # runs of two
    (6, 16, 4, 2),    # runs of six hold aligned pairs, not aligned fours
    (64, 16, 8, 2),
    (64, 16, 16, 1),
])
def test_widest_run(contiguity, divisibility, elem, want):
    assert widest_run(info(contiguity, divisibility), 0, elem, 16) == want
