"""Entry point of the cpu target (group ``tritium``): registers ``CpuTarget``."""

from tritium.plugins import hookimpl

from .target import CpuTarget


@hookimpl
def tritium_targets():
    return [CpuTarget()]
