module {
  func.func public @add_kernel(%x: !tile.ptr<f32, 1 : i32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32, 1 : i32> {tile.divisibility = 16 : i32}, %out: !tile.ptr<f32, 1 : i32> {tile.divisibility = 16 : i32}, %n: i32) {
    %c1024 = arith.constant 1024 : i32
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %start = arith.muli %pid, %c1024 : i32
    %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
    %s = "tile.splat"(%start) : (i32) -> tensor<1024xi32>
    %offs = arith.addi %s, %r : tensor<1024xi32>
    %ns = "tile.splat"(%n) : (i32) -> tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi32>
    %xs = "tile.splat"(%x) : (!tile.ptr<f32, 1 : i32>) -> tensor<1024x!tile.ptr<f32, 1 : i32>>
    %xp = "tile.addptr"(%xs, %offs) : (tensor<1024x!tile.ptr<f32, 1 : i32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32, 1 : i32>>
    %xv = "tile.load"(%xp, %mask) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32, 1 : i32>>, tensor<1024xi1>) -> tensor<1024xf32>
    %ys = "tile.splat"(%y) : (!tile.ptr<f32, 1 : i32>) -> tensor<1024x!tile.ptr<f32, 1 : i32>>
    %yp = "tile.addptr"(%ys, %offs) : (tensor<1024x!tile.ptr<f32, 1 : i32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32, 1 : i32>>
    %yv = "tile.load"(%yp, %mask) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32, 1 : i32>>, tensor<1024xi1>) -> tensor<1024xf32>
    %sum = arith.addf %xv, %yv : tensor<1024xf32>
    %os = "tile.splat"(%out) : (!tile.ptr<f32, 1 : i32>) -> tensor<1024x!tile.ptr<f32, 1 : i32>>
    %op = "tile.addptr"(%os, %offs) : (tensor<1024x!tile.ptr<f32, 1 : i32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32, 1 : i32>>
    "tile.store"(%op, %sum, %mask) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32, 1 : i32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
    return
  }
}
