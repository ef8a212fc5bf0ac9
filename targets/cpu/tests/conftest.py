"""Shared helpers: compile tile IR text through the cpu target's stages and load the result."""

from __future__ import annotations

from pathlib import Path

import pytest
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.passes.pipeline import CompileContext, Pipeline
from tritium.target import KernelSignature
from tritium_cpu.target import CpuTarget

IR_DIR = Path(__file__).parent / "ir"


class Compiled:
    def __init__(self, outputs: dict, metadata: dict, launcher, target: CpuTarget, signature: KernelSignature):
        self.outputs, self.metadata, self.launcher = outputs, metadata, launcher
        self.target, self.signature = target, signature

    def __call__(self, grid, *args) -> None:
        bound = [self.target.bind_arg(a, t, n)
                 for a, t, n in zip(args, self.signature.arg_types, self.signature.arg_names)]
        self.launcher(grid, bound)


@pytest.fixture(scope="session")
def target() -> CpuTarget:
    return CpuTarget()


@pytest.fixture(scope="session")
def compile_ir(target):
    """``compile_ir(text_or_sample_name, arg_names, arg_types)`` -> ``Compiled``."""

    def compile_(source: str, arg_names: tuple, arg_types: tuple) -> Compiled:
        text = (IR_DIR / source).read_text() if source.endswith(".mlir") else source
        with tile.context():
            module = ir.Module.parse(text)
            name = ir.StringAttr(module.body.operations[0].attributes["sym_name"]).value
        signature = KernelSignature(name, tuple(arg_names), tuple(arg_types))
        options = target.parse_options({})
        stages = Pipeline()
        target.add_stages(stages, options)
        ctx = CompileContext(signature, target, options)
        outputs = stages.run(module, ctx)
        launcher = target.driver.load(outputs["obj"], signature, ctx.metadata)
        return Compiled(outputs, ctx.metadata, launcher, target, signature)

    return compile_
