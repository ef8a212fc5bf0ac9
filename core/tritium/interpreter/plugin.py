"""Registers the built-in ``interpreter`` target with the plugin manager."""

from ..plugins import hookimpl
from .target import InterpreterTarget


@hookimpl
def tritium_targets():
    return [InterpreterTarget()]
