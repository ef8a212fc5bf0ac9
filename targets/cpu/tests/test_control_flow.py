"""scf.if / scf.for / scf.while with scalar and tensor values, booleans and half precision."""

import numpy as np
import pytest

rng = np.random.default_rng(2)
T64 = "tensor<64xi32>"
PI32 = "!tile.ptr<i32, 1 : i32>"

MISC = f"""
module {{
  func.func public @misc(%x: {PI32}, %out: {PI32}, %n: i32, %flag: i1) {{
    %r = "tile.make_range"() {{start = 0 : i32, end = 64 : i32}} : () -> {T64}
    %ns = "tile.splat"(%n) : (i32) -> {T64}
    %m = arith.cmpi slt, %r, %ns : {T64}
    %xs = "tile.splat"(%x) : ({PI32}) -> tensor<64x{PI32}>
    %xp = "tile.addptr"(%xs, %r) : (tensor<64x{PI32}>, {T64}) -> tensor<64x{PI32}>
    %lowest = arith.constant dense<-2147483648> : {T64}
    %v = "tile.load"(%xp, %m, %lowest) {{operandSegmentSizes = array<i32: 1, 1, 1>}} : (tensor<64x{PI32}>, tensor<64xi1>, {T64}) -> {T64}
    %mx = "tile.reduce"(%v) ({{
    ^bb0(%a: i32, %b: i32):
      %c = arith.maxsi %a, %b : i32
      "tile.reduce_return"(%c) {{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>}} : (i32) -> ()
    }}) {{axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>}} : ({T64}) -> i32
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %res = scf.if %flag -> (i32) {{
      scf.yield %mx : i32
    }} else {{
      %neg = arith.subi %c0, %mx : i32
      scf.yield %neg : i32
    }}
    %root = scf.while (%i = %c0) : (i32) -> i32 {{
      %sq = arith.muli %i, %i : i32
      %more = arith.cmpi slt, %sq, %res : i32
      scf.condition(%more) %i : i32
    }} do {{
    ^bb0(%j: i32):
      %k = arith.addi %j, %c1 : i32
      scf.yield %k : i32
    }}
    "tile.store"(%out, %res) {{operandSegmentSizes = array<i32: 1, 1, 0>}} : ({PI32}, i32) -> ()
    %o1 = "tile.addptr"(%out, %c1) : ({PI32}, i32) -> {PI32}
    "tile.store"(%o1, %root) {{operandSegmentSizes = array<i32: 1, 1, 0>}} : ({PI32}, i32) -> ()
    return
  }}
}}
"""


@pytest.mark.parametrize("n,flag", [(64, True), (10, True), (33, False), (1, True)])
def test_scalar_reduce_if_while(compile_ir, n, flag):
    k = compile_ir(MISC, ("x", "out", "n", "flag"), ("*i32", "*i32", "i32", "i1"))
    x = rng.integers(0, 1000, 64).astype(np.int32)
    out = np.zeros(2, np.int32)
    k((1, 1, 1), x, out, n, flag)
    res = int(x[:n].max()) if flag else -int(x[:n].max())
    root = 0
    while root * root < res:
        root += 1
    assert out.tolist() == [res, root]


F16 = "tensor<32xf16>"
PF16 = "!tile.ptr<f16, 1 : i32>"
PI1 = "!tile.ptr<i1, 1 : i32>"
SWAP = f"""
module {{
  func.func public @swap(%x: {PF16}, %flags: {PI1}, %out: {PF16}, %nflags: {PI1}, %steps: i32) {{
    %r = "tile.make_range"() {{start = 0 : i32, end = 32 : i32}} : () -> tensor<32xi32>
    %xs = "tile.splat"(%x) : ({PF16}) -> tensor<32x{PF16}>
    %xp = "tile.addptr"(%xs, %r) : (tensor<32x{PF16}>, tensor<32xi32>) -> tensor<32x{PF16}>
    %h = "tile.load"(%xp) {{operandSegmentSizes = array<i32: 1, 0, 0>}} : (tensor<32x{PF16}>) -> {F16}
    %a0 = arith.extf %h : {F16} to tensor<32xf32>
    %b0 = arith.constant dense<0.0> : tensor<32xf32>
    %one = arith.constant dense<1.0> : tensor<32xf32>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %a, %b = scf.for %i = %c0 to %steps step %c1 iter_args(%p = %a0, %q = %b0) -> (tensor<32xf32>, tensor<32xf32>) : i32 {{
      %q1 = arith.addf %q, %one : tensor<32xf32>
      scf.yield %q1, %p : tensor<32xf32>, tensor<32xf32>
    }}
    %fs = "tile.splat"(%flags) : ({PI1}) -> tensor<32x{PI1}>
    %fp = "tile.addptr"(%fs, %r) : (tensor<32x{PI1}>, tensor<32xi32>) -> tensor<32x{PI1}>
    %f = "tile.load"(%fp) {{operandSegmentSizes = array<i32: 1, 0, 0>}} : (tensor<32x{PI1}>) -> tensor<32xi1>
    %sel = arith.select %f, %a, %b : tensor<32xi1>, tensor<32xf32>
    %e = math.exp %sel : tensor<32xf32>
    %eh = arith.truncf %e : tensor<32xf32> to {F16}
    %os = "tile.splat"(%out) : ({PF16}) -> tensor<32x{PF16}>
    %op = "tile.addptr"(%os, %r) : (tensor<32x{PF16}>, tensor<32xi32>) -> tensor<32x{PF16}>
    "tile.store"(%op, %eh) {{operandSegmentSizes = array<i32: 1, 1, 0>}} : (tensor<32x{PF16}>, {F16}) -> ()
    %true = arith.constant dense<true> : tensor<32xi1>
    %nf = arith.xori %f, %true : tensor<32xi1>
    %ns = "tile.splat"(%nflags) : ({PI1}) -> tensor<32x{PI1}>
    %np = "tile.addptr"(%ns, %r) : (tensor<32x{PI1}>, tensor<32xi32>) -> tensor<32x{PI1}>
    "tile.store"(%np, %nf) {{operandSegmentSizes = array<i32: 1, 1, 0>}} : (tensor<32x{PI1}>, tensor<32xi1>) -> ()
    return
  }}
}}
"""


@pytest.mark.parametrize("steps", [0, 1, 2, 5])
def test_swapping_loop_carried_tensors_bool_and_f16(compile_ir, steps):
    k = compile_ir(SWAP, ("x", "flags", "out", "nflags", "steps"), ("*fp16", "*i1", "*fp16", "*i1", "i32"))
    x = rng.standard_normal(32).astype(np.float16)
    flags = rng.random(32) < 0.5
    out = np.zeros(32, np.float16)
    nflags = np.zeros(32, bool)
    k((1, 1, 1), x, flags, out, nflags, steps)
    a, b = x.astype(np.float32), np.zeros(32, np.float32)
    for _ in range(steps):
        a, b = b + 1, a
    np.testing.assert_allclose(out, np.exp(np.where(flags, a, b)).astype(np.float16), rtol=1e-3)
    np.testing.assert_array_equal(nflags, ~flags)
