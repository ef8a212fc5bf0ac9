"""``passes.sorting`` on textual ``tile-opt`` IR: a ``tile.sort``'s network is inlined in its place,
or the op stays, its region emptied, for a target that sorts in place (which sorts a GPU layout
stage keeps: ``test_threads_sorting``)."""

from __future__ import annotations

import re

from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.passes.sorting import lower_sorts

SORT = """
func.func @k(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = "tile.sort"(%x) ({
  ^bb0(%a: tensor<4x8xf32>):
    %n = arith.negf %a : tensor<4x8xf32>
    "tile.reduce_return"(%n) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x8xf32>) -> ()
  }) {descending = 1 : i32, dim = 1 : i32, k = 8 : i32, unsigned = 0 : i32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = arith.addf %s, %s : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
"""


def lowered(native) -> str:
    with tile.context():
        module = ir.Module.parse(SORT)
        lower_sorts(module, native)
        module.operation.verify()
        return str(module)


def test_the_network_is_inlined():
    text = lowered(lambda op: False)
    assert "tile.sort" not in text and "tile.reduce_return" not in text
    assert re.search(r"(%\d+) = arith\.negf %arg0 .*\n.*arith\.addf \1, \1", text)


def test_a_kept_sort_has_no_network():
    text = lowered(lambda op: True)
    assert re.search(r'(%\d+) = "tile\.sort"\(%arg0\) \(\{\n\s*\}\) \{descending = 1 : i32, dim = 1 : i32, '
                     r'k = 8 : i32, unsigned = 0 : i32\}.*\n.*arith\.addf \1, \1', text)
    assert "arith.negf" not in text

