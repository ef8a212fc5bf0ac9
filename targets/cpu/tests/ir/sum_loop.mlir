module {
  func.func public @col_sum(%x: !tile.ptr<f64, 1 : i32>, %out: !tile.ptr<f64, 1 : i32>, %n: i32) {
    %zero = arith.constant dense<0.0> : tensor<8x128xf64>
    %c0 = arith.constant 0 : i32
    %c8 = arith.constant 8 : i32
    %c128 = arith.constant 128 : i32
    %r0 = "tile.make_range"() {start = 0 : i32, end = 8 : i32} : () -> tensor<8xi32>
    %r1 = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32>
    %rr = "tile.expand_dims"(%r0) {axis = 1 : i32} : (tensor<8xi32>) -> tensor<8x1xi32>
    %cc = "tile.expand_dims"(%r1) {axis = 0 : i32} : (tensor<128xi32>) -> tensor<1x128xi32>
    %acc = scf.for %i = %c0 to %n step %c8 iter_args(%a = %zero) -> (tensor<8x128xf64>) : i32 {
      %is = "tile.splat"(%i) : (i32) -> tensor<8x1xi32>
      %rows = arith.addi %is, %rr : tensor<8x1xi32>
      %c128s = "tile.splat"(%c128) : (i32) -> tensor<8x1xi32>
      %ro = arith.muli %rows, %c128s : tensor<8x1xi32>
      %rob = "tile.broadcast"(%ro) : (tensor<8x1xi32>) -> tensor<8x128xi32>
      %ccb = "tile.broadcast"(%cc) : (tensor<1x128xi32>) -> tensor<8x128xi32>
      %offs = arith.addi %rob, %ccb : tensor<8x128xi32>
      %ns = "tile.splat"(%n) : (i32) -> tensor<8x1xi32>
      %m = arith.cmpi slt, %rows, %ns : tensor<8x1xi32>
      %mb = "tile.broadcast"(%m) : (tensor<8x1xi1>) -> tensor<8x128xi1>
      %xs = "tile.splat"(%x) : (!tile.ptr<f64, 1 : i32>) -> tensor<8x128x!tile.ptr<f64, 1 : i32>>
      %xp = "tile.addptr"(%xs, %offs) : (tensor<8x128x!tile.ptr<f64, 1 : i32>>, tensor<8x128xi32>) -> tensor<8x128x!tile.ptr<f64, 1 : i32>>
      %v = "tile.load"(%xp, %mb, %zero) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<8x128x!tile.ptr<f64, 1 : i32>>, tensor<8x128xi1>, tensor<8x128xf64>) -> tensor<8x128xf64>
      %na = arith.addf %a, %v : tensor<8x128xf64>
      scf.yield %na : tensor<8x128xf64>
    }
    %s = "tile.reduce"(%acc) ({
    ^bb0(%p: f64, %q: f64):
      %t = arith.addf %p, %q : f64
      "tile.reduce_return"(%t) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (f64) -> ()
    }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<8x128xf64>) -> tensor<128xf64>
    %os = "tile.splat"(%out) : (!tile.ptr<f64, 1 : i32>) -> tensor<128x!tile.ptr<f64, 1 : i32>>
    %op = "tile.addptr"(%os, %r1) : (tensor<128x!tile.ptr<f64, 1 : i32>>, tensor<128xi32>) -> tensor<128x!tile.ptr<f64, 1 : i32>>
    "tile.store"(%op, %s) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<128x!tile.ptr<f64, 1 : i32>>, tensor<128xf64>) -> ()
    return
  }
}
