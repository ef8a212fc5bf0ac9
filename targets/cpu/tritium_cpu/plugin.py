"""Entry point of the cpu target (group ``tritium``): registers ``CpuTarget``."""

from tritium.plugins import hookimpl

from .target import CpuTarget


@hookimpl
def tritium_targets():
    return [CpuTarget()]


@hookimpl
def tritium_conformance_expectations(target):
    from tritium.language.elementwise_fns import FOREIGN_ASSEMBLY_GAPS

    return FOREIGN_ASSEMBLY_GAPS if isinstance(target, CpuTarget) else {}
