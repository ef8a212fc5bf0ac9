"""``layout.split_products`` on textual ``tile-opt`` IR: an fp32 product at "tf32x3", "bf16x3" or
"bf16x6" becomes narrow products, small parts first, a NaN mask, ``hi·hi`` and the accumulator;
where the target has no matrix instruction for the narrow kind, the product stays as it was."""

from __future__ import annotations

import dataclasses
import re

import pytest

from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.layout.split_products import split_products

from .test_threads_matrix import TOY, TOY_TF32, WARP
from tritium_simt.emulator import HostThreadHooks

PRODUCT = """
func.func @k(%a: tensor<16x32xf32>, %b: tensor<32x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %d = "tile.dot"(%a, %b, %c) {input_precision = "PREC", max_num_imprecise_acc = 0 : i32}
      : (tensor<16x32xf32>, tensor<32x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}
"""


def split(prec: str, matrix) -> str:
    with tile.context():
        module = ir.Module.parse(PRODUCT.replace("PREC", prec))
        with ir.Location.unknown():
            split_products(module, HostThreadHooks(WARP, matrix).warp_matrix_op if matrix else None, 2)
        module.operation.verify()
        return str(module)


def products(text: str) -> list[tuple[str, str, str]]:
    """Each ``tile.dot``'s operand names and input precision, in order."""
    return re.findall(r'"tile\.dot"\((%\w+), (%\w+), %\w+\) \{input_precision = "(\w+)"', text)


@pytest.mark.parametrize("prec,parts,count", [("bf16x3", 2, 3), ("bf16x6", 3, 6)])
def test_bf16_splits(prec, parts, count):
    text = split(prec, TOY)
    assert text.count("arith.truncf") == 2 * parts and text.count("arith.extf") == 2 * (parts - 1)
    found = products(text)
    assert len(found) == count and all(p == "ieee" for *_, p in found)
    assert "bf16" in text and "tensor<16x32xbf16>" in text
    # the mask sits between the small products and hi·hi, the accumulator added last
    body = text[text.index("tile.dot"):]
    assert re.search(r"arith\.cmpf uno.*\n.*arith\.select.*\n.*tile\.dot.*\n.*arith\.addf %\w+, %arg2", body)


def test_tf32x3_rounds_the_bits_and_keeps_fp32_operands():
    text = split("tf32x3", TOY_TF32)
    found = products(text)
    assert len(found) == 3 and all(p == "tf32" for *_, p in found)
    assert text.count("arith.bitcast") == 4 and "4096" in text and "-8192" in text
    assert text.count("arith.subf") == 2 and "arith.cmpf uno" in text


@pytest.mark.parametrize("matrix", [None, dataclasses.replace(TOY_TF32, k=64)], ids=["none", "k64"])
def test_without_an_instruction_for_the_narrow_product_it_stays(matrix):
    """No matrix unit, or one whose K (64) does not divide the product's (32)."""
    text = split("tf32x3", matrix)
    assert products(text) == [("%arg0", "%arg1", "tf32x3")] and "arith.bitcast" not in text
