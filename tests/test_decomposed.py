"""``passes.decomposed`` on textual ``tile-opt`` IR: a ``tile.sort``'s network, or a
``tile.descriptor_load``'s pointer loads, is inlined in its place (and hoisted out of a loop it
does not vary in), or the op stays, its region emptied, for a target that lowers it itself (which
sorts a GPU layout stage keeps: ``test_threads_sorting``)."""

from __future__ import annotations

import re

from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.passes.decomposed import lower_decomposed

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
        lower_decomposed(module, native)
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



DESCRIPTOR_LOOP = """
func.func @k(%p: !tile.ptr<f32, 1 : i32>, %n: i32) -> tensor<8xf32> {
  %c0 = arith.constant 0 : i32
  %c8 = arith.constant 8 : i32
  %z = arith.constant 0.0 : f32
  %init = "tile.splat"(%z) : (f32) -> tensor<8xf32>
  %r = scf.for %i = %c0 to %n step %c8 iter_args(%acc = %init) -> (tensor<8xf32>) : i32 {
    %d = "tile.descriptor_load"(%p, %i) ({
      %range = "tile.make_range"() {end = 8 : i32, start = 0 : i32} : () -> tensor<8xi32>
      %base = "tile.splat"(%p) : (!tile.ptr<f32, 1 : i32>) -> tensor<8x!tile.ptr<f32, 1 : i32>>
      %at = "tile.splat"(%i) : (i32) -> tensor<8xi32>
      %offs = arith.addi %range, %at : tensor<8xi32>
      %ptrs = "tile.addptr"(%base, %offs) : (tensor<8x!tile.ptr<f32, 1 : i32>>, tensor<8xi32>) -> tensor<8x!tile.ptr<f32, 1 : i32>>
      %v = "tile.load"(%ptrs) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<8x!tile.ptr<f32, 1 : i32>>) -> tensor<8xf32>
      "tile.reduce_return"(%v) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<8xf32>) -> ()
    }) {padding = "zero"} : (!tile.ptr<f32, 1 : i32>, i32) -> tensor<8xf32>
    %s = arith.addf %acc, %d : tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
"""


def test_an_inlined_descriptor_load_has_its_invariant_addresses_hoisted():
    with tile.context():
        module = ir.Module.parse(DESCRIPTOR_LOOP)
        lower_decomposed(module)
        module.operation.verify()
        text = str(module)
    assert "tile.descriptor_load" not in text
    before, loop = text.split("scf.for", 1)
    assert "tile.make_range" in before and '"tile.splat"(%arg0)' in before  # hoisted: they do not vary
    assert "tile.make_range" not in loop and "tile.load" in loop and "arith.addi" in loop
