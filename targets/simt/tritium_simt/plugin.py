"""Entry point of the simt target (group ``tritium``): registers ``SimtTarget``."""

from tritium.plugins import hookimpl

from .target import SimtTarget


@hookimpl
def tritium_targets():
    return [SimtTarget()]


@hookimpl
def tritium_conformance_expectations(target):
    from tritium.codegen.device import UNCHECKED_BOUNDS_GAPS
    from tritium.language.elementwise_fns import FOREIGN_ASSEMBLY_GAPS

    return {**FOREIGN_ASSEMBLY_GAPS, **UNCHECKED_BOUNDS_GAPS} if isinstance(target, SimtTarget) else {}
