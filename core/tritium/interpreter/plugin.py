"""Registers the built-in ``interpreter`` target with the plugin manager."""

from ..plugins import hookimpl
from .target import InterpreterTarget


@hookimpl
def tritium_targets():
    return [InterpreterTarget()]


@hookimpl
def tritium_conformance_expectations(target):
    from ..language.elementwise_fns import FOREIGN_ASSEMBLY_GAPS

    return FOREIGN_ASSEMBLY_GAPS if isinstance(target, InterpreterTarget) else {}
