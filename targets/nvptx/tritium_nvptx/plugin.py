"""Entry point of the nvptx target (group ``tritium``): registers ``NvptxTarget`` and the ``nvidia``
section of ``tritium.knobs``."""

from tritium.plugins import hookimpl

from .target import NvptxTarget


@hookimpl
def tritium_targets():
    return [NvptxTarget()]


@hookimpl
def tritium_knobs():
    from .knobs import nvidia_knobs

    return {"nvidia": nvidia_knobs()}
