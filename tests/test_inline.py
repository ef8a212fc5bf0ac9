"""Core's inliner on textual ``tile`` IR: calls vanish, callees are copied per call site (nested
calls, regions and tuple results included) and the private functions are removed."""

import re

from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.passes.inline import inline_calls

T = "tensor<8xf32>"
P = "!tile.ptr<f32, 1 : i32>"
MODULE = f"""
module {{
  func.func public @kernel(%p: {P}, %n: i32) {{
    %r = "tile.make_range"() {{start = 0 : i32, end = 8 : i32}} : () -> tensor<8xi32>
    %v:2 = func.call @load_twice(%p, %r) : ({P}, tensor<8xi32>) -> ({T}, {T})
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %v#0) -> ({T}) : i32 {{
      %s = func.call @add(%a, %v#1) : ({T}, {T}) -> {T}
      scf.yield %s : {T}
    }}
    %ps = "tile.splat"(%p) : ({P}) -> tensor<8x{P}>
    %pp = "tile.addptr"(%ps, %r) : (tensor<8x{P}>, tensor<8xi32>) -> tensor<8x{P}>
    "tile.store"(%pp, %acc) {{operandSegmentSizes = array<i32: 1, 1, 0>}} : (tensor<8x{P}>, {T}) -> ()
    return
  }}
  func.func private @load_twice(%p: {P}, %r: tensor<8xi32>) -> ({T}, {T}) {{
    %ps = "tile.splat"(%p) : ({P}) -> tensor<8x{P}>
    %pp = "tile.addptr"(%ps, %r) : (tensor<8x{P}>, tensor<8xi32>) -> tensor<8x{P}>
    %x = "tile.load"(%pp) {{operandSegmentSizes = array<i32: 1, 0, 0>}} : (tensor<8x{P}>) -> {T}
    %y = func.call @add(%x, %x) : ({T}, {T}) -> {T}
    return %x, %y : {T}, {T}
  }}
  func.func private @add(%a: {T}, %b: {T}) -> {T} {{
    %s = arith.addf %a, %b : {T}
    return %s : {T}
  }}
}}
"""


def test_calls_become_the_callee_ops():
    with tile.context():
        module = ir.Module.parse(MODULE)
        inline_calls(module)
        module.operation.verify()
        text = str(module)
    assert "call" not in text and "@add" not in text and "@load_twice" not in text
    assert text.count("func.func") == 1
    assert text.count('"tile.load"') == 1 and text.count('"tile.store"') == 1
    # one addf per call site: in load_twice (nested) and inside the loop
    assert text.count("arith.addf") == 2
    loop = text[text.index("scf.for"):]
    assert "arith.addf" in loop[:loop.index("scf.yield")]
    # the tuple's first result (the load) starts the loop; its second (load + load) is added in it
    assert re.search(r"(%\d+) = \"tile.load\".*\n\s*(%\d+) = arith.addf \1, \1 :", text)
    load, doubled = re.search(r"(%\d+) = \"tile.load\".*\n\s*(%\d+) = arith.addf", text).groups()
    assert re.search(rf"iter_args\((%\w+) = {load}\).*\n\s*%\d+ = arith.addf \1, {doubled} :", text)
