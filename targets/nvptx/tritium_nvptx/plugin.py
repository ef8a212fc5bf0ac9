"""Entry point of the nvptx target (group ``tritium``): registers ``NvptxTarget``."""

from tritium.plugins import hookimpl

from .target import NvptxTarget


@hookimpl
def tritium_targets():
    return [NvptxTarget()]
