"""Entry point of the amdgpu target (group ``tritium``): registers ``AmdgpuTarget``."""

from tritium.plugins import hookimpl

from .target import AmdgpuTarget


@hookimpl
def tritium_targets():
    return [AmdgpuTarget()]


@hookimpl
def tritium_conformance_expectations(target):
    from .gaps import conformance_gaps

    return conformance_gaps() if isinstance(target, AmdgpuTarget) else {}
