"""Entry point of the nvptx target (group ``tritium``): registers ``NvptxTarget``, its declared
conformance gaps and the ``nvidia`` section of ``tritium.knobs``."""

from tritium.plugins import hookimpl

from .target import NvptxTarget


@hookimpl
def tritium_targets():
    return [NvptxTarget()]


@hookimpl
def tritium_conformance_expectations(target):
    from tritium.codegen.device import UNCHECKED_BOUNDS_GAPS

    return dict(UNCHECKED_BOUNDS_GAPS) if isinstance(target, NvptxTarget) else {}


@hookimpl
def tritium_knobs():
    from .knobs import nvidia_knobs

    return {"nvidia": nvidia_knobs()}
