"""The axis analysis (passes/axis_info) on textual ``tile`` IR and on kernels from the frontend:
contiguity, divisibility and constancy of the offsets and pointers of the common patterns."""

import re

import pytest

import tritium
import tritium.language as tl
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.passes.axis_info import MAX_DIVISOR, AxisInfo, analyze, axis_info_text, walk
from tritium.runtime.compiler import compile_specialized

from .kernels.basic import loops_kernel, pointer_walk_kernel, reduce2d_kernel
from .kernels.frontend_only import FrontendOnly

P = "!tile.ptr<f32, 1 : i32>"
DIV16 = "{tile.divisibility = 16 : i32}"


ARGS = f"%p: {P} {DIV16}, %n: i32 {DIV16}"


def parse(body: str, args: str = ARGS):
    """A module of one kernel with arguments ``args`` and the ops of ``body``; call in a context."""
    module = ir.Module.parse(f"module {{\n func.func public @k({args}) {{\n{body}\n return\n }}\n}}")
    module.operation.verify()
    return module


def facts(body: str, args: str = ARGS) -> dict[str, AxisInfo]:
    """Axis info of the values in ``body`` that carry a location name (``loc("offs")``)."""
    with tile.context():
        return _named(parse(body, args))


def _named(module) -> dict[str, AxisInfo]:
    infos = analyze(module)
    out = {}
    for value, info in infos.items():
        owner = value.owner
        if isinstance(owner, ir.Block):
            continue
        named = re.fullmatch(r'loc\("([^"]*)"\)', str(owner.location))
        if named:
            out[named.group(1)] = info
    return out


OFFS = """
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %c128 = arith.constant 128 : i32
    %start = arith.muli %pid, %c128 : i32 loc("start")
    %r = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32> loc("range")
    %s = "tile.splat"(%start) : (i32) -> tensor<128xi32> loc("splat")
    %offs = arith.addi %s, %r : tensor<128xi32> loc("offs")
"""


def test_block_offsets_are_contiguous_and_block_aligned():
    f = facts(OFFS)
    assert f["range"] == AxisInfo((128,), (MAX_DIVISOR,), (1,))
    assert f["start"] == AxisInfo((1,), (128,), (1,))
    assert f["splat"] == AxisInfo((1,), (128,), (128,))
    assert f["offs"] == AxisInfo((128,), (128,), (1,))


def test_pointer_divisibility_is_in_bytes_and_needs_the_specialised_argument():
    body = OFFS + f"""
    %ps = "tile.splat"(%p) : ({P}) -> tensor<128x{P}>
    %pp = "tile.addptr"(%ps, %offs) : (tensor<128x{P}>, tensor<128xi32>) -> tensor<128x{P}> loc("ptrs")
    %one = arith.constant dense<1> : tensor<128xi32>
    %off1 = arith.addi %offs, %one : tensor<128xi32>
    %pp1 = "tile.addptr"(%ps, %off1) : (tensor<128x{P}>, tensor<128xi32>) -> tensor<128x{P}> loc("ptrs1")
"""
    f = facts(body)
    assert f["ptrs"] == AxisInfo((128,), (16,), (1,))
    # one element on: runs of 128 start at 4 (fp32) bytes past a 16-byte boundary
    assert f["ptrs1"] == AxisInfo((128,), (4,), (1,))
    plain = facts(body, args=f"%p: {P}, %n: i32")
    assert plain["ptrs"] == AxisInfo((128,), (1,), (1,))


def test_two_d_offsets_with_a_specialised_stride():
    T = "tensor<16x32xi32>"
    body = f"""
    %rm = "tile.make_range"() {{start = 0 : i32, end = 16 : i32}} : () -> tensor<16xi32>
    %rn = "tile.make_range"() {{start = 0 : i32, end = 32 : i32}} : () -> tensor<32xi32>
    %m = "tile.expand_dims"(%rm) {{axis = 1 : i32}} : (tensor<16xi32>) -> tensor<16x1xi32> loc("m")
    %st = "tile.splat"(%n) : (i32) -> tensor<16x1xi32>
    %ms = arith.muli %m, %st : tensor<16x1xi32> loc("ms")
    %msb = "tile.broadcast"(%ms) : (tensor<16x1xi32>) -> {T} loc("msb")
    %nn = "tile.expand_dims"(%rn) {{axis = 0 : i32}} : (tensor<32xi32>) -> tensor<1x32xi32>
    %nb = "tile.broadcast"(%nn) : (tensor<1x32xi32>) -> {T} loc("nb")
    %offs = arith.addi %msb, %nb : {T} loc("offs")
    %ps = "tile.splat"(%p) : ({P}) -> tensor<16x32x{P}>
    %pp = "tile.addptr"(%ps, %offs) : (tensor<16x32x{P}>, {T}) -> tensor<16x32x{P}> loc("ptrs")
"""
    f = facts(body)
    assert f["m"] == AxisInfo((16, 1), (MAX_DIVISOR, 1), (1, 1))
    assert f["ms"] == AxisInfo((1, 1), (16, 16), (1, 1))
    assert f["msb"] == AxisInfo((1, 1), (16, 16), (1, 32))
    assert f["nb"] == AxisInfo((1, 32), (1, MAX_DIVISOR), (16, 1))
    # rows hold 32 consecutive elements, 16-byte aligned; down a column nothing is known
    assert f["offs"] == AxisInfo((1, 32), (1, 16), (1, 1))
    # in bytes: rows start 16-byte aligned, and every element is a whole fp32 from the base
    assert f["ptrs"] == AxisInfo((1, 32), (4, 16), (1, 1))
    # an unspecialised stride leaves the rows contiguous but only fp32-aligned
    assert facts(body, args=f"%p: {P} {DIV16}, %n: i32")["ptrs"] == AxisInfo((1, 32), (4, 4), (1, 1))


def test_division_remainder_and_shifts_by_constants():
    body = OFFS + """
    %c4 = arith.constant dense<4> : tensor<128xi32>
    %c2 = arith.constant dense<2> : tensor<128xi32>
    %c3 = arith.constant dense<3> : tensor<128xi32>
    %q = arith.divsi %offs, %c4 : tensor<128xi32> loc("q")
    %rem = arith.remsi %offs, %c4 : tensor<128xi32> loc("rem")
    %sh = arith.shrsi %offs, %c2 : tensor<128xi32> loc("shr")
    %and = arith.andi %offs, %c3 : tensor<128xi32> loc("and")
    %shl = arith.shli %s, %c2 : tensor<128xi32> loc("shl")
    %q3 = arith.divsi %offs, %c3 : tensor<128xi32> loc("q3")
    %c16 = arith.constant dense<16> : tensor<128xi32>
    %c1024 = arith.constant dense<1024> : tensor<128xi32>
    %q16 = arith.divsi %offs, %c16 : tensor<128xi32>
    %hop = arith.muli %q16, %c1024 : tensor<128xi32> loc("hop")
    %mixed = arith.addi %offs, %hop : tensor<128xi32> loc("mixed")
"""
    f = facts(body)
    assert f["q"] == AxisInfo((1,), (1,), (4,))  # x // 4: runs of 4 equal values
    assert f["shr"] == f["q"]
    assert f["rem"] == AxisInfo((4,), (4,), (1,))  # x % 4: 0, 1, 2, 3, 0, ...
    assert f["and"].contiguity == (4,)
    assert f["shl"] == AxisInfo((1,), (512,), (128,))
    assert f["q3"] == AxisInfo((1,), (1,), (1,))  # not a power of two: nothing is known
    assert f["hop"] == AxisInfo((1,), (1024,), (16,))
    # s + i + (i // 16) * 1024: runs of 16 whose starts (i = 16, 32, ...) are multiples of 16 only
    assert f["mixed"] == AxisInfo((16,), (16,), (1,))


def test_remainder_by_a_specialised_argument_keeps_aligned_runs():
    """Triton's tutorial matmul wraps its offsets with ``% N``: N divisible by 16 splits no aligned
    run of 16, so the loads stay vectors."""
    body = OFFS + """
    %ns = "tile.splat"(%n) : (i32) -> tensor<128xi32>
    %wrapped = arith.remsi %offs, %ns : tensor<128xi32> loc("wrapped")
    %c12 = arith.constant dense<12> : tensor<128xi32>
    %by12 = arith.remsi %offs, %c12 : tensor<128xi32> loc("by12")
"""
    f = facts(body)
    assert f["wrapped"] == AxisInfo((16,), (16,), (1,))
    assert f["by12"] == AxisInfo((4,), (4,), (1,))  # 12 = 4 * 3: runs of 4 from multiples of 4
    assert facts(body, args=f"%p: {P} {DIV16}, %n: i32")["wrapped"].contiguity == (1,)  # n unspecialised


def test_a_mask_against_a_specialised_bound_is_constant_in_runs():
    body = OFFS + """
    %ns = "tile.splat"(%n) : (i32) -> tensor<128xi32>
    %mask = arith.cmpi slt, %offs, %ns : tensor<128xi32> loc("mask")
    %eq = arith.cmpi eq, %offs, %ns : tensor<128xi32> loc("eq")
    %le = arith.cmpi sle, %offs, %ns : tensor<128xi32> loc("le")
    %gt = arith.cmpi sgt, %ns, %offs : tensor<128xi32> loc("gt")
    %ge = arith.cmpi uge, %offs, %ns : tensor<128xi32> loc("ge")
"""
    f = facts(body)
    assert f["mask"] == AxisInfo((1,), (1,), (16,))  # n is a multiple of 16: 16-wide runs agree
    assert f["gt"] == f["ge"] == f["mask"]
    # x <= n flips after x == n, inside a run: [16, 17, ...] <= 16 is [1, 0, ...]
    assert f["eq"].constancy == f["le"].constancy == (1,)
    assert facts(body, args=f"%p: {P}, %n: i32")["mask"].constancy == (1,)


def test_select_and_casts():
    body = OFFS + """
    %ns = "tile.splat"(%n) : (i32) -> tensor<128xi32>
    %mask = arith.cmpi slt, %offs, %ns : tensor<128xi32>
    %z = arith.constant dense<0> : tensor<128xi32>
    %c8 = arith.constant dense<8> : tensor<128xi32>
    %o8 = arith.addi %offs, %c8 : tensor<128xi32>
    %sel = arith.select %mask, %offs, %o8 : tensor<128xi1>, tensor<128xi32> loc("sel")
    %sel0 = arith.select %mask, %offs, %z : tensor<128xi1>, tensor<128xi32> loc("sel0")
    %wide = arith.extsi %offs : tensor<128xi32> to tensor<128xi64> loc("wide")
"""
    f = facts(body)
    assert f["sel"] == AxisInfo((16,), (8,), (1,))  # the mask switches branch only between runs of 16
    assert f["sel0"] == AxisInfo((1,), (1,), (1,))  # offs or 0, element by element
    assert f["wide"] == f["offs"]


LOOP = OFFS + f"""
    %ps = "tile.splat"(%p) : ({P}) -> tensor<128x{P}>
    %p0 = "tile.addptr"(%ps, %offs) : (tensor<128x{P}>, tensor<128xi32>) -> tensor<128x{P}>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %step = arith.constant dense<STEP> : tensor<128xi32>
    %end = scf.for %i = %c0 to %n step %c1 iter_args(%q = %p0) -> (tensor<128x{P}>) : i32 {{
      %q2 = "tile.addptr"(%q, %step) : (tensor<128x{P}>, tensor<128xi32>) -> tensor<128x{P}> loc("next")
      scf.yield %q2 : tensor<128x{P}>
    }} loc("end")
"""


@pytest.mark.parametrize("step, div", [(128, 16), (1, 4)])
def test_loop_carried_pointer_advanced_by_a_constant(step, div):
    f = facts(LOOP.replace("STEP", str(step)))
    assert f["end"] == AxisInfo((128,), (div,), (1,))
    assert f["next"] == AxisInfo((128,), (div,), (1,))


def test_if_results_join_their_branches():
    body = OFFS + """
    %c0 = arith.constant 0 : i32
    %cond = arith.cmpi sgt, %n, %c0 : i32
    %c8 = arith.constant dense<8> : tensor<128xi32>
    %res = scf.if %cond -> (tensor<128xi32>) {
      scf.yield %offs : tensor<128xi32>
    } else {
      %o8 = arith.addi %offs, %c8 : tensor<128xi32>
      scf.yield %o8 : tensor<128xi32>
    } loc("res")
"""
    assert facts(body)["res"] == AxisInfo((128,), (8,), (1,))


def test_a_scalar_condition_selects_whole_tensors():
    """``if s: y = ...`` over a 2-D value becomes ``arith.select`` on a scalar i1 after canonicalize;
    the facts keep the tensor's rank (they once took the scalar's, and a later op indexed past them)."""
    body = OFFS + """
    %c0 = arith.constant 0 : i32
    %cond = arith.cmpi slt, %n, %c0 : i32
    %c8 = arith.constant dense<8> : tensor<128xi32>
    %o8 = arith.addi %offs, %c8 : tensor<128xi32>
    %sel = arith.select %cond, %offs, %o8 : tensor<128xi32> loc("sel")
    %rows = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<128xi32>) -> tensor<128x1xi32>
    %cols = "tile.expand_dims"(%r) {axis = 0 : i32} : (tensor<128xi32>) -> tensor<1x128xi32>
    %rb = "tile.broadcast"(%rows) : (tensor<128x1xi32>) -> tensor<128x128xi32>
    %cb = "tile.broadcast"(%cols) : (tensor<1x128xi32>) -> tensor<128x128xi32>
    %a = arith.addi %rb, %cb : tensor<128x128xi32>
    %z = arith.constant dense<0> : tensor<128x128xi32>
    %sel2 = arith.select %cond, %z, %a : tensor<128x128xi32> loc("sel2")
    %eq = arith.cmpi eq, %sel2, %z : tensor<128x128xi32> loc("eq")
"""
    f = facts(body)
    assert f["sel"] == AxisInfo((128,), (8,), (1,))  # either run of 128, 8-aligned: the runs survive
    assert f["sel2"] == AxisInfo((1, 1), (1, 1), (1, 1))
    assert f["eq"].rank == 2


def test_text_names_values_by_location():
    with tile.context():
        text = axis_info_text(parse(OFFS))
    assert "offs = arith.addi: contiguity=[128] divisibility=[128] constancy=[1]" in text.splitlines()
    assert re.search(r"^%\w+ = arith.constant: .* constant=128$", text, re.M)


# -- through the frontend ------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def no_disk_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))


@tritium.jit
def hinted_kernel(x_ptr, idx_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.multiple_of(tl.program_id(0) * n, 2) + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs * stride, offs.to(tl.float32))
    idx = tl.load(idx_ptr + tl.arange(0, BLOCK))
    idx = tl.max_contiguous(tl.multiple_of(idx, 16), 16)
    tl.store(x_ptr + idx, idx.to(tl.float32))
    group = tl.max_constancy(tl.load(idx_ptr + BLOCK + tl.arange(0, BLOCK)), 8)
    tl.store(x_ptr + group, 1.0)


def _kernel_facts(specs) -> list[AxisInfo]:
    """The axis info of the pointers of hinted_kernel's two stores."""
    types = {"x_ptr": "*fp32", "idx_ptr": "*i32", "n": "i32", "stride": "i32"}
    asm = compile_specialized(hinted_kernel, FrontendOnly(), types, {"BLOCK": 64}, specs, {}).asm
    with tile.context():
        module = ir.Module.parse(asm["tile-opt"])
        infos = analyze(module)
        return [infos[op.operands[0]] for op in walk(module.operation) if op.name == "tile.store"]


def test_hints_and_specialisation_reach_the_analysis():
    # multiple_of(pid * n, 2) + arange: runs of 64 elements starting 2 * 4 bytes past an aligned
    # x_ptr; stride specialised to 1 is the constant 1, so the product keeps the contiguity
    first, second, third = _kernel_facts({"x_ptr": "D", "stride": "1"})
    assert first == AxisInfo((64,), (8,), (1,))
    # loaded indices know nothing but their hints: runs of 16, 16 elements (64 bytes) aligned
    assert second == AxisInfo((16,), (16,), (1,))
    # or runs of 8 equal indices
    assert third == AxisInfo((1,), (4,), (8,))
    # x_ptr not known aligned: the runs stay, the alignment goes
    assert _kernel_facts({"stride": "1"})[0] == AxisInfo((64,), (1,), (1,))
    # an unknown stride: nothing is contiguous
    assert _kernel_facts({"x_ptr": "D"})[0].contiguity == (1,)


def test_a_hint_must_give_one_value_per_dimension():
    @tritium.jit
    def bad(x_ptr):
        offs = tl.multiple_of(tl.arange(0, 8), [8, 8])
        tl.store(x_ptr + offs, offs)

    with pytest.raises(tritium.CompilationError, match="one positive constant integer per dimension"):
        compile_specialized(bad, FrontendOnly(), {"x_ptr": "*i32"}, {}, {}, {})


@tritium.jit
def argument_hint_kernel(x_ptr, n, HINT: tl.constexpr):
    if HINT:
        n = tl.multiple_of(n, 16)
    tl.store(x_ptr + n + tl.arange(0, 8), 1.0)


@pytest.mark.parametrize("hint, div", [(True, 16), (False, 4)])
def test_a_hint_on_a_kernel_argument(hint, div):
    asm = compile_specialized(argument_hint_kernel, FrontendOnly(), {"x_ptr": "*fp32", "n": "i32"},
                              {"HINT": hint}, {"x_ptr": "D"}, {}).asm
    with tile.context():
        module = ir.Module.parse(asm["tile-opt"])
        store = next(op for op in walk(module.operation) if op.name == "tile.store")
        assert analyze(module)[store.operands[0]] == AxisInfo((8,), (div,), (1,))


def test_a_hint_on_a_loop_carried_value_is_refused():
    @tritium.jit
    def carried(x_ptr, n):
        offs = tl.arange(0, 8)
        for i in range(n):
            offs = tl.multiple_of(offs, 8) + 8
        tl.store(x_ptr + offs, 1.0)

    with pytest.raises(tritium.CompilationError, match="loop-carried value is not supported"):
        compile_specialized(carried, FrontendOnly(), {"x_ptr": "*fp32", "n": "i32"}, {}, {}, {})


def _analyzed(kernel, types, constants, specs):
    asm = compile_specialized(kernel, FrontendOnly(), types, constants, specs, {}).asm
    ctx = tile.context()
    with ctx:
        module = ir.Module.parse(asm["tile-opt"])
        return ctx, module, analyze(module)


def test_every_integer_and_pointer_value_of_a_kernel_has_facts_of_its_rank():
    types = {"x_ptr": "*fp32", "out0_ptr": "*fp32", "out1_ptr": "*fp32"}
    ctx, module, infos = _analyzed(reduce2d_kernel, types, {"M": 4, "N": 8, "KIND": "sum"}, {"x_ptr": "D"})
    with ctx:
        values = [r for op in walk(module.operation) for r in op.results]
        tensor = lambda t: isinstance(t, ir.RankedTensorType)  # noqa: E731
        element = lambda t: ir.RankedTensorType(t).element_type if tensor(t) else t  # noqa: E731
        tracked = [v for v in values if isinstance(element(v.type), ir.IntegerType) or tile.is_ptr(element(v.type))]
        assert len(tracked) > 10 and all(v in infos for v in tracked)
        for v in tracked:
            shape = list(ir.RankedTensorType(v.type).shape) if tensor(v.type) else [1]
            info = infos[v]
            assert info.rank == len(shape)
            assert all(1 <= c <= n for c, n in zip(info.contiguity, shape))
            assert all(1 <= k <= n for k, n in zip(info.constancy, shape))
        loads = [op for op in walk(module.operation) if op.name == "tile.load"]
        # rows[:, None] * 8 + cols[None, :]: rows of 8 elements starting 16-byte aligned
        assert infos[loads[0].operands[0]] == AxisInfo((1, 8), (4, 16), (1, 1))


def test_kernels_loop_carried_pointers_and_loop_offsets():
    types = {"src_ptr": "*fp32", "dst_ptr": "*fp32", "other_ptr": "*fp32", "n": "i32", "pick": "i32"}
    specs = {"src_ptr": "D", "dst_ptr": "D", "other_ptr": "D"}
    ctx, module, infos = _analyzed(pointer_walk_kernel, types, {"BLOCK": 32}, specs)
    with ctx:
        stores = [op for op in walk(module.operation) if op.name == "tile.store"]
        assert infos[stores[0].operands[0]] == AxisInfo((32,), (16,), (1,))
        assert infos[stores[1].operands[0]] == AxisInfo((1,), (16,), (1,))  # one of two aligned pointers

    types = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    ctx, module, infos = _analyzed(loops_kernel, types, {"BLOCK": 32}, {"x_ptr": "D", "n": "D"})
    with ctx:
        load = next(op for op in walk(module.operation) if op.name == "tile.load")
        # start steps by 32 from 0: offs runs of 32 from a multiple of 32; n % 16 == 0
        assert infos[load.operands[0]] == AxisInfo((32,), (16,), (1,))
        assert infos[load.operands[1]] == AxisInfo((1,), (1,), (16,))


def test_a_hint_on_a_helper_parameter_is_refused():
    """Inlining replaces the helper's parameters: a hint there would vanish (and once marked every
    parameter of the helper), so it is a located error that says where to put it instead."""
    from .kernels.helpers import helper_hint_kernel

    with pytest.raises(tritium.CompilationError, match="hint on a parameter of a @jit helper is lost"):
        compile_specialized(helper_hint_kernel, FrontendOnly(), {"x_ptr": "*fp32", "n": "i32", "m": "i32"},
                            {}, {}, {})


@tritium.jit
def _hinted_loop_variable(x_ptr, n, start0, B: tl.constexpr):
    for start in range(start0, n, B):
        start = tl.multiple_of(start, B)
        tl.store(x_ptr + start + tl.arange(0, B), 1.0)


def test_a_hint_on_a_loop_variable_reaches_the_axis_analysis():
    """Triton's tutorial 06 hints ``start_n = tl.multiple_of(start_n, BLOCK_N)``; with an unknown
    start the hint is all the analysis has."""
    import re as _re

    from tritium.runtime.compiler import compile_specialized

    from .kernels.frontend_only import FrontendOnly

    asm = compile_specialized(_hinted_loop_variable, FrontendOnly(), {"x_ptr": "*fp32", "n": "i32", "start0": "i32"},
                              {"B": 16}, {}, {}).asm
    assert _re.search(r"tile.iv_divisibility = array<i32: 16>", asm["tile"])
    with tile.context():
        module = ir.Module.parse(asm["tile-opt"])
        infos = analyze(module)
        loop = next(op for op in walk(module.operation) if op.name == "scf.for")
        assert infos[loop.regions[0].blocks[0].arguments[0]].divisibility[0] == 16


def test_a_product_with_zero_is_the_constant_zero():
    """``0 * m[:, None]`` (a kernel spelling a broadcast) is zero everywhere: the offsets it is added
    to then repeat along that dimension, which the cpu's load-before-store ordering relies on."""
    body = OFFS + """
    %c0 = arith.constant dense<0> : tensor<128xi32>
    %z = arith.muli %c0, %offs : tensor<128xi32> loc("zero_left")
    %z2 = arith.muli %offs, %c0 : tensor<128xi32> loc("zero_right")
    %sum = arith.addi %s, %z : tensor<128xi32> loc("sum")
"""
    f = facts(body)
    assert f["zero_left"] == f["zero_right"] == AxisInfo((1,), (MAX_DIVISOR,), (128,), 0)
    assert f["sum"].constancy == (128,)
