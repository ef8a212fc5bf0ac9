"""``assign_encodings`` on textual IR: every tensor type gets the encoding a target chooses."""

from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.layout import assign_encodings

SOURCE = """
func.func public @k(%p: !tile.ptr<f32, 1 : i32>, %n: i32) {
  %zero = arith.constant dense<0.0> : tensor<4x8xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero) -> (tensor<4x8xf32>) : i32 {
    %b = arith.addf %a, %a : tensor<4x8xf32>
    scf.yield %b : tensor<4x8xf32>
  }
  %r = "tile.make_range"() {start = 0 : i32, end = 8 : i32} : () -> tensor<8xi32>
  return
}
"""


def test_every_tensor_type_is_encoded():
    with tile.context():
        module = ir.Module.parse(SOURCE)
        assign_encodings(module, lambda t: tile.blocked([1] * (t.rank - 1) + [t.shape[-1]], [1] * t.rank,
                                                        [1] * t.rank, list(range(t.rank))[::-1]))
        text = str(module)
    enc2 = "#tile.blocked<[1 : i32, 8 : i32], [1 : i32, 1 : i32], [1 : i32, 1 : i32], [1 : i32, 0 : i32]>"
    enc1 = "#tile.blocked<[8 : i32], [1 : i32], [1 : i32], [0 : i32]>"
    assert f"arith.constant dense<0.000000e+00> : tensor<4x8xf32, {enc2}>" in text
    assert f"iter_args(%arg3 = %cst) -> (tensor<4x8xf32, {enc2}>)" in text
    assert f"arith.addf %arg3, %arg3 : tensor<4x8xf32, {enc2}>" in text
    assert f"-> tensor<8xi32, {enc1}>" in text
    assert "tensor<4x8xf32>" not in text and "tensor<8xi32>" not in text
