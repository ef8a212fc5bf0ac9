"""Entry point of the wasm target (group ``tritium``): the target and its declared gaps."""

from tritium.language.elementwise_fns import FOREIGN_ASSEMBLY_GAPS
from tritium.plugins import hookimpl

from .target import WasmTarget


@hookimpl
def tritium_targets():
    return [WasmTarget()]


@hookimpl
def tritium_conformance_expectations(target):
    """wasm has no assembly language of a native ISA: the PTX inline-assembly cases are gaps."""
    return FOREIGN_ASSEMBLY_GAPS if isinstance(target, WasmTarget) else {}
