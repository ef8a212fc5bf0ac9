"""The tile-layout stage: every tensor type gets the CPU's SIMD-chunk encoding."""

import re
from pathlib import Path

from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.codegen.block.layout import assign_layouts

IR_DIR = Path(__file__).parent / "ir"


def blocked(spt, rank):
    ones = ", ".join(["1 : i32"] * rank)
    order = ", ".join(f"{d} : i32" for d in range(rank - 1, -1, -1))
    return f"#tile.blocked<[{', '.join(f'{s} : i32' for s in spt)}], [{ones}], [{ones}], [{order}]>"


def annotate(name, bits):
    with tile.context():
        module = ir.Module.parse((IR_DIR / name).read_text())
        return str(assign_layouts(module, bits))


def test_softmax_layouts_avx512():
    text = annotate("softmax_rows.mlir", 512)
    assert f"tensor<4x256xf32, {blocked([1, 16], 2)}>" in text
    assert f"tensor<4x256xi1, {blocked([1, 16], 2)}>" in text
    assert f"tensor<4x256x!tile.ptr<f32, 1 : i32>, {blocked([1, 16], 2)}>" in text
    assert f"tensor<4x1xf32, {blocked([1, 1], 2)}>" in text   # last dim 1: one element per chunk
    assert f"tensor<4xf32, {blocked([4], 1)}>" in text        # shorter than a register
    assert f"tensor<1x256xi32, {blocked([1, 16], 2)}>" in text
    # every tensor type has an encoding, constants included
    assert not re.search(r"tensor<[0-9x]+(xf32|xi32|xi1)>", text)
    assert "dense<0xFF800000> : tensor<4x256xf32, #tile.blocked" in text


def test_layout_follows_vector_width():
    text = annotate("vector_add.mlir", 256)
    assert f"tensor<1024xi32, {blocked([8], 1)}>" in text
    assert f"tensor<1024x!tile.ptr<f32, 1 : i32>, {blocked([8], 1)}>" in text
    text = annotate("vector_add.mlir", 128)
    assert f"tensor<1024xf32, {blocked([4], 1)}>" in text


def test_loop_carried_types_and_block_arguments():
    text = annotate("sum_loop.mlir", 512)
    enc = blocked([1, 16], 2)
    # the scf.for result, its iter_arg and the yield all carry the encoding (the IR verifies)
    assert re.search(r"iter_args\(%\w+ = %\w+\) -> \(tensor<8x128xf64, " + re.escape(enc) + r">\)", text)
    assert re.search(r"scf.yield %\w+ : tensor<8x128xf64, " + re.escape(enc) + ">", text)
    assert f"-> tensor<128xf64, {blocked([16], 1)}>" in text
    assert "convert_layout" not in text  # one layout per shape: nothing to convert
