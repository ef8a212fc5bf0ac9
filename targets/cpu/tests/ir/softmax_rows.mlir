module {
  func.func public @softmax_kernel(%out: !tile.ptr<f32, 1 : i32>, %inp: !tile.ptr<f32, 1 : i32>, %stride: i32, %n_rows: i32, %n_cols: i32) {
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %np = "tile.num_programs"() {axis = 0 : i32} : () -> i32
    %ninf = arith.constant dense<0xFF800000> : tensor<4x256xf32>
    %r0 = "tile.make_range"() {start = 0 : i32, end = 4 : i32} : () -> tensor<4xi32>
    %r1 = "tile.make_range"() {start = 0 : i32, end = 256 : i32} : () -> tensor<256xi32>
    %c4 = arith.constant 4 : i32
    %first = arith.muli %pid, %c4 : i32
    %step = arith.muli %np, %c4 : i32
    scf.for %row0 = %first to %n_rows step %step : i32 {
      %rs = "tile.splat"(%row0) : (i32) -> tensor<4xi32>
      %rows = arith.addi %rs, %r0 : tensor<4xi32>
      %rows2 = "tile.expand_dims"(%rows) {axis = 1 : i32} : (tensor<4xi32>) -> tensor<4x1xi32>
      %strides = "tile.splat"(%stride) : (i32) -> tensor<4x1xi32>
      %roff = arith.muli %rows2, %strides : tensor<4x1xi32>
      %cols2 = "tile.expand_dims"(%r1) {axis = 0 : i32} : (tensor<256xi32>) -> tensor<1x256xi32>
      %rb = "tile.broadcast"(%roff) : (tensor<4x1xi32>) -> tensor<4x256xi32>
      %cb = "tile.broadcast"(%cols2) : (tensor<1x256xi32>) -> tensor<4x256xi32>
      %offs = arith.addi %rb, %cb : tensor<4x256xi32>
      %nr = "tile.splat"(%n_rows) : (i32) -> tensor<4x1xi32>
      %rmask = arith.cmpi slt, %rows2, %nr : tensor<4x1xi32>
      %nc = "tile.splat"(%n_cols) : (i32) -> tensor<1x256xi32>
      %cmask = arith.cmpi slt, %cols2, %nc : tensor<1x256xi32>
      %rmb = "tile.broadcast"(%rmask) : (tensor<4x1xi1>) -> tensor<4x256xi1>
      %cmb = "tile.broadcast"(%cmask) : (tensor<1x256xi1>) -> tensor<4x256xi1>
      %mask = arith.andi %rmb, %cmb : tensor<4x256xi1>
      %ip = "tile.splat"(%inp) : (!tile.ptr<f32, 1 : i32>) -> tensor<4x256x!tile.ptr<f32, 1 : i32>>
      %ipp = "tile.addptr"(%ip, %offs) : (tensor<4x256x!tile.ptr<f32, 1 : i32>>, tensor<4x256xi32>) -> tensor<4x256x!tile.ptr<f32, 1 : i32>>
      %x = "tile.load"(%ipp, %mask, %ninf) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<4x256x!tile.ptr<f32, 1 : i32>>, tensor<4x256xi1>, tensor<4x256xf32>) -> tensor<4x256xf32>
      %mx = "tile.reduce"(%x) ({
      ^bb0(%a: f32, %b: f32):
        %m = arith.maxnumf %a, %b : f32
        "tile.reduce_return"(%m) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (f32) -> ()
      }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x256xf32>) -> tensor<4xf32>
      %mx2 = "tile.expand_dims"(%mx) {axis = 1 : i32} : (tensor<4xf32>) -> tensor<4x1xf32>
      %mxb = "tile.broadcast"(%mx2) : (tensor<4x1xf32>) -> tensor<4x256xf32>
      %z = arith.subf %x, %mxb : tensor<4x256xf32>
      %e = math.exp %z : tensor<4x256xf32>
      %den = "tile.reduce"(%e) ({
      ^bb0(%a: f32, %b: f32):
        %s = arith.addf %a, %b : f32
        "tile.reduce_return"(%s) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (f32) -> ()
      }) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x256xf32>) -> tensor<4xf32>
      %den2 = "tile.expand_dims"(%den) {axis = 1 : i32} : (tensor<4xf32>) -> tensor<4x1xf32>
      %denb = "tile.broadcast"(%den2) : (tensor<4x1xf32>) -> tensor<4x256xf32>
      %y = arith.divf %e, %denb : tensor<4x256xf32>
      %op = "tile.splat"(%out) : (!tile.ptr<f32, 1 : i32>) -> tensor<4x256x!tile.ptr<f32, 1 : i32>>
      %opp = "tile.addptr"(%op, %offs) : (tensor<4x256x!tile.ptr<f32, 1 : i32>>, tensor<4x256xi32>) -> tensor<4x256x!tile.ptr<f32, 1 : i32>>
      "tile.store"(%opp, %y, %mask) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<4x256x!tile.ptr<f32, 1 : i32>>, tensor<4x256xf32>, tensor<4x256xi1>) -> ()
    }
    return
  }
}
