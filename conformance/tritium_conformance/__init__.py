"""tritium's conformance suite: real kernels, run on a target through its own memory API and
checked against independent numpy references.

``python -m tritium_conformance --target NAME`` (or the ``tritium-conformance`` command) prints a
report: each case passes, fails (with its largest error), or is an expected failure (``xfail``)
that the target declared through the ``tritium_conformance_expectations`` hook, keyed by case id
(shell-style patterns such as ``"cast-*fp16*"`` are accepted). ``--list`` shows the case ids.
``--compile-only`` compiles every case without running it (a GPU target on a machine without a GPU);
``--report PATH`` writes the results as Markdown (and JSON) with the device, date and versions. Cases
run in worker processes (``-n N``, ``isolated.py``; one per device on a machine with several GPUs),
so a case that kills its process is reported as a crash and the run goes on. The same suite runs
under pytest: ``pytest --pyargs tritium_conformance --tritium-target NAME`` (``pytest_plugin.py``).
"""

from . import cases as _cases  # noqa: F401  (registers the cases)
from . import cases_shape as _cases_shape  # noqa: F401
from . import cases_random as _cases_random  # noqa: F401
from . import cases_random64 as _cases_random64  # noqa: F401
from . import cases_atomics as _cases_atomics  # noqa: F401
from . import cases_scan as _cases_scan  # noqa: F401
from . import cases_dot as _cases_dot  # noqa: F401
from . import cases_attention as _cases_attention  # noqa: F401
from . import cases_dot_scaled as _cases_dot_scaled  # noqa: F401
from . import cases_libdevice as _cases_libdevice  # noqa: F401
from . import cases_inline_asm as _cases_inline_asm  # noqa: F401
from . import cases_map_elementwise as _cases_map_elementwise  # noqa: F401
from . import cases_host_descriptor as _cases_host_descriptor  # noqa: F401
from . import cases_fp8 as _cases_fp8  # noqa: F401
from . import cases_bf16 as _cases_bf16  # noqa: F401
from . import cases_block_ptr as _cases_block_ptr  # noqa: F401
from . import cases_tensordesc as _cases_tensordesc  # noqa: F401
from . import cases_sorting as _cases_sorting  # noqa: F401
from . import cases_debug as _cases_debug  # noqa: F401
from .suite import (CASES, Case, CompileOnlyDevice, Device, Output, Result, compile_case, declared_gap, run_case,
                    run_suite, select)

__all__ = ["CASES", "Case", "CompileOnlyDevice", "Device", "Output", "Result", "compile_case", "declared_gap",
           "run_case", "run_suite", "select"]
