"""The conformance cases amdgpu is known to fail, with the reason (``tritium_conformance_expectations``)."""

from __future__ import annotations

#: math the AMDGPU back end does not compute and that needs ROCm's OCML, not linked yet (``hooks``)
_MATH = "needs ROCm's device library (OCML), which tritium-amdgpu does not link yet: {what}"
MATH_GAPS = {
    "math-fp64-*": _MATH.format(what="fp64 exp, log, sin, cos, rsqrt"),
    "mathfn-sigmoid-fp64-*": _MATH.format(what="fp64 exp"),
    "softmax-fn-fp64-*": _MATH.format(what="fp64 exp"),
    "map_elementwise-selu-fp64-*": _MATH.format(what="fp64 exp"),
    "libdevice-log10-fp64": _MATH.format(what="fp64 log10"),
    "mathfn-erf-*": _MATH.format(what="erf"),
    "libdevice-erf-*": _MATH.format(what="erf"),
    "libdevice-tanh-*": _MATH.format(what="tanh"),
    "libdevice-tan-*": _MATH.format(what="tan"),
}


def conformance_gaps() -> dict[str, str]:
    from tritium.language.elementwise_fns import FOREIGN_ASSEMBLY_GAPS

    return {**FOREIGN_ASSEMBLY_GAPS, **MATH_GAPS}
