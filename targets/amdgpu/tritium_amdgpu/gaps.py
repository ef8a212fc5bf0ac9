"""The conformance cases amdgpu is known to fail, with the reason (``tritium_conformance_expectations``)."""

from __future__ import annotations

from . import device_libs

#: math the AMDGPU back end does not compute, from ROCm's OCML, where it was not found (``hooks``)
_MATH = "needs ROCm's device library (OCML), which was not found ({how}): {what}"
MATH_GAPS = {
    "math-fp64-*": "fp64 exp, log, sin, cos, rsqrt",
    "mathfn-sigmoid-fp64-*": "fp64 exp",
    "softmax-fn-fp64-*": "fp64 exp",
    "map_elementwise-selu-fp64-*": "fp64 exp",
    "libdevice-log10-fp64": "fp64 log10",
    "mathfn-erf-*": "erf",
    "libdevice-erf-*": "erf",
    "libdevice-tanh-*": "tanh",
    "libdevice-tan-*": "tan",
    **{f"libdevice-{fn}-*": fn for fn in ("acos", "acosh", "asin", "asinh", "atan", "atanh", "sinh", "cosh", "cbrt",
                                          "erfc", "expm1", "log1p", "atan2", "pow")},
    "libdevice-special-*": "fp64 exp, log, sin, cos, erfc, pow, cbrt (the special functions)",
    "libdevice-norms-bessel-n-*": "fp64 exp, log, sin, cos, cbrt (Bessel functions of order n, norms)",
}


#: the cases that print, through ROCm's OCKL, where it was not found
PRINT_GAPS = ("device_print-*", "print-builtin", "device_assert-*-debug")


def conformance_gaps() -> dict[str, str]:
    """The cases' PTX assembly and debug mode's bounds checks, everywhere; the math OCML computes and the printing OCKL does,
    where they were not found."""
    from tritium.codegen.device import UNCHECKED_BOUNDS_GAPS
    from tritium.language.elementwise_fns import FOREIGN_ASSEMBLY_GAPS

    if device_libs.folder() is not None:
        return {**FOREIGN_ASSEMBLY_GAPS, **UNCHECKED_BOUNDS_GAPS}
    printing = (f"prints through ROCm's device library (OCKL), which was not found ({device_libs.HOW_TO_GET})")
    return {**FOREIGN_ASSEMBLY_GAPS, **UNCHECKED_BOUNDS_GAPS,
            **{case: _MATH.format(how=device_libs.HOW_TO_GET, what=what) for case, what in MATH_GAPS.items()},
            **{case: printing for case in PRINT_GAPS}}
