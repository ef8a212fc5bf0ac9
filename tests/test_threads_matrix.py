"""``tl.dot`` on a warp-level matrix instruction (``layout.matrix``, ``codegen.threads.warp_matrix``)
through the real GPU layout stage, run on the host by the SIMT emulator (``tritium_simt.emulator``) with an emulated
instruction: a small one for 8-lane warps, described the way a target describes its own. The
accumulator must stay in the instruction's layout (``#tile.mma``) through loops, and what runs on it
(elementwise ops, row reductions, a second product, the epilogue's conversion) must give numpy's
float64 answer."""

from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.codegen.device import WarpMatrixOp
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.layout.distributed import Fragment, Mma, distribute, layout_of_type
from tritium.passes.axis_info import walk
from tritium.passes.gpu_layout import assign_gpu_layouts

from .kernels.dots import attention_block_kernel, carried_kernel, dot_kernel
from .test_dot import EPS, bf16_round, check, operands
from .test_threads_dot import tutorial_matmul
from .test_threads_codegen import tile_opt
from tritium_simt.emulator import HostThreadHooks, run

#: a 4 x 4 x 4 instruction for 8-lane warps: lane bits 0-2 step A's K by 2 and its rows by 1 and 2
TOY = WarpMatrixOp(m=4, n=4, k=4, k_pack=2, emit=None,
                  a=Fragment(((0, 0),), ((0, 2), (1, 0), (2, 0))),
                  b=Fragment(((0, 0),), ((2, 0), (0, 1), (0, 2))),
                  c=Fragment(((0, 0), (0, 1)), ((0, 2), (1, 0), (2, 0))))
#: the same for 32-bit operands (tf32), one K element a register
TOY_TF32 = WarpMatrixOp(m=4, n=4, k=2, k_pack=1, emit=None, a=Fragment(((0, 0),), ((0, 1), (1, 0), (2, 0))),
                        b=Fragment(((0, 0),), ((1, 0), (0, 1), (0, 2))), c=TOY.c)
WARP = 8


def laid_out(text: str, num_warps: int, num_stages: int = 1, matrix: WarpMatrixOp = TOY) -> ir.Module:
    module = ir.Module.parse(text)
    assign_gpu_layouts(module, num_warps, WARP, matrix_unit=HostThreadHooks(WARP, matrix).warp_matrix_op,
                       num_stages=num_stages)
    return module


def layouts_of(module: ir.Module, name: str) -> list:
    return [layout_of_type(ir.RankedTensorType(op.results[0].type)) for op in walk(module.operation) if op.name == name]


def test_the_accumulator_layout_places_each_lane_fragment_of_each_warp_tile():
    layout = Mma((4, 4), (2, 1), TOY.c)
    dist = distribute(layout, (16, 8))
    # warp 1 holds the tiles of rows 4-7 and 12-15; its lane 5 (bits 0 and 2) holds row +2, cols 2, 3
    assert dist.coordinates(5, 1) == [(6, 2), (6, 3), (6, 6), (6, 7), (14, 2), (14, 3), (14, 6), (14, 7)]
    every = {c for lane in range(WARP) for warp in range(2) for c in dist.coordinates(lane, warp)}
    assert every == {(r, c) for r in range(16) for c in range(8)}


@pytest.mark.parametrize("m,n,k,num_warps,loops", [(16, 16, 16, 2, 1), (32, 16, 32, 4, 2), (16, 64, 16, 4, 1),
                                                   (64, 32, 16, 2, 2)])
def test_products_on_the_instruction_match_float64(m, n, k, num_warps, loops):
    a, b, a64, b64 = operands(m, n, k, "fp16", seed=50)
    c = np.random.default_rng(51).standard_normal((m, n)).astype(np.float32)
    out = np.full((m, n), np.nan, np.float32)
    types = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "out_ptr": "*fp32"}
    text = tile_opt(dot_kernel, types, {"M": m, "N": n, "K": k, "IN": None, "ACC": True, "PREC": "ieee",
                                        "OUT": tl.float32, "LOOPS": loops})
    with tile.context():
        module = laid_out(text, num_warps)
        assert all(isinstance(x, Mma) for x in layouts_of(module, "tile.dot"))
        run(module, (1,), [a, b, c, out], num_warps=num_warps, warp_size=WARP, matrix=TOY)
    check(out, loops * (a64 @ b64) + c, loops * (np.abs(a64) @ np.abs(b64)) + np.abs(c), loops * (k + 1) * EPS["fp32"])


def test_bf16_operands_on_the_instruction():
    m, n, k = 16, 32, 32
    a, b, a64, b64 = operands(m, n, k, "bf16", seed=52)
    a, b = ((x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16) for x in (a64, b64))
    out = np.full((m, n), np.nan, np.float32)
    types = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*fp32", "out_ptr": "*fp32"}
    text = tile_opt(dot_kernel, types, {"M": m, "N": n, "K": k, "IN": None, "ACC": False, "PREC": "ieee",
                                        "OUT": tl.float32, "LOOPS": 1})
    with tile.context():
        run(laid_out(text, 2), (1,), [a, b, np.zeros((m, n), np.float32), out], num_warps=2, warp_size=WARP,
            matrix=TOY)
    check(out, a64 @ b64, np.abs(a64) @ np.abs(b64), (k + 1) * EPS["fp32"])


def tf32_round(x: np.ndarray) -> np.ndarray:
    """``x`` (fp32) rounded to tf32, to nearest, ties away."""
    return ((x.view(np.uint32) + 0x1000) & 0xFFFFE000).view(np.float32)


def split_product(prec: str, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, list]:
    """``a @ b + c`` of fp32 blocks at ``prec`` on the toy instruction, and the products' operand types."""
    (m, k), n = a.shape, b.shape[1]
    out = np.full((m, n), np.nan, np.float32)
    types = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "out_ptr": "*fp32"}
    text = tile_opt(dot_kernel, types, {"M": m, "N": n, "K": k, "IN": None, "ACC": True, "PREC": prec,
                                        "OUT": tl.float32, "LOOPS": 1})
    matrix = TOY_TF32 if prec.startswith("tf32") else TOY
    with tile.context():
        module = laid_out(text, 2, matrix=matrix)
        dots = [op for op in walk(module.operation) if op.name == "tile.dot"]
        assert all(isinstance(x, Mma) for x in layouts_of(module, "tile.dot"))
        kinds = [str(ir.RankedTensorType(op.operands[0].type).element_type) for op in dots]
        run(module, (1,), [a, b, c, out], num_warps=2, warp_size=WARP, matrix=matrix)
    return out, kinds


#: the products a split precision runs, and how close its result comes to float64 (in fp32 ulps of
#: the sum of magnitudes, per K element); "tf32" alone is off by about 2**-11
SPLIT_PRECISIONS = [("tf32x3", ["f32"] * 3, 4), ("bf16x3", ["bf16"] * 3, 2**8), ("bf16x6", ["bf16"] * 6, 4)]


@pytest.mark.parametrize("prec,kinds,ulps", SPLIT_PRECISIONS)
def test_split_precisions_run_as_sums_of_narrow_products(prec, kinds, ulps):
    """fp32 operands split into tf32 or bf16 parts (``layout.split_products``): several narrow
    products on the instruction, nearly as exact as fp32 where one tf32 product is not."""
    m, n, k = 16, 16, 32
    a, b, a64, b64 = operands(m, n, k, "fp32", seed=54)
    c = np.random.default_rng(55).standard_normal((m, n)).astype(np.float32)
    want, bound = a64 @ b64 + c, np.abs(a64) @ np.abs(b64) + np.abs(c)
    out, got_kinds = split_product(prec, a, b, c)
    assert got_kinds == kinds
    check(out, want, bound, ulps * (k + 1) * EPS["fp32"])
    narrow = tf32_round if prec.startswith("tf32") else bf16_round  # one narrow product is far off
    rough = narrow(a).astype(np.float64) @ narrow(b).astype(np.float64) + c
    assert np.abs(rough - want).max() > 100 * np.abs(out - want).max()


def test_a_split_product_of_an_infinity_is_infinite_not_nan():
    """The small parts of an infinity are ``inf - inf``: their products count as zero, and ``hi·hi``
    carries the infinity (Triton's NaN mask)."""
    m, n, k = 16, 16, 16
    a, b = np.ones((m, k), np.float32), np.ones((k, n), np.float32)
    a[3, 5] = np.inf
    out, _ = split_product("tf32x3", a, b, np.zeros((m, n), np.float32))
    want = np.full((m, n), float(k), np.float32)
    want[3] = np.inf
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("stages", [1, 2, 3, 5])
def test_a_loop_carries_the_accumulator_in_the_instruction_layout(stages):
    """Tutorial 03 on ragged sizes over several programs: no conversion inside the K loop, one in
    the epilogue; its loads pipelined ``stages`` deep (more stages than iterations too)."""
    (M, N, K), (BM, BN, BK) = (40, 72, 48), (16, 32, 16)
    a, b, a64, b64 = operands(M, N, K, "fp16", seed=53)
    c = np.full((M, N), np.nan, np.float16)
    text = tutorial_matmul("fp16", BM, BN, BK)
    with tile.context():
        module = laid_out(text, 4, stages)
        loop = next(op for op in walk(module.operation) if op.name == "scf.for")
        assert "tile.convert_layout" not in [op.name for op in walk(loop)]
        inside = [op.name for op in walk(loop)]
        assert inside.count("tile.local_load") == (2 if stages > 1 else 0)
        assert any(isinstance(layout_of_type(ir.RankedTensorType(r.type)), Mma) for r in loop.results)
        run(module, (-(-M // BM) * -(-N // BN),), [a, b, c, M, N, K, K, 1, N, 1, N, 1], num_warps=4,
            warp_size=WARP, matrix=TOY)
    check(c, a64 @ b64, np.abs(a64) @ np.abs(b64), (K + 1) * EPS["fp32"] + EPS["fp16"])


def test_attention_block_runs_its_softmax_on_the_instruction_layout():
    m, n, d = 16, 32, 16
    rng = np.random.default_rng(54)
    q, k, v = (rng.standard_normal(s).astype(np.float16) for s in ((m, d), (n, d), (n, d)))
    out = np.full((m, d), np.nan, np.float32)
    types = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "out_ptr": "*fp32"}
    text = tile_opt(attention_block_kernel, types, {"M": m, "N": n, "D": d})
    with tile.context():
        module = laid_out(text, 2)
        # chained products split the warps along M only, so p @ v takes p from p's registers
        assert [x.warps_per_cta for x in layouts_of(module, "tile.dot")] == [(2, 1), (2, 1)]
        assert all(isinstance(x.parent, Mma) for x in layouts_of(module, "tile.reduce"))
        run(module, (1,), [q, k, v, out], num_warps=2, warp_size=WARP, matrix=TOY)
    s = q.astype(np.float64) @ k.astype(np.float64).T
    p = np.exp(s - s.max(1, keepdims=True))
    want = p.astype(np.float16).astype(np.float64) @ v.astype(np.float64) / p.sum(1, keepdims=True)
    np.testing.assert_allclose(out, want, rtol=2e-3, atol=2e-3)


def test_a_product_reading_its_old_accumulator():
    """``carried_kernel``: the old accumulator is also reduced, and a second loop starts from ones."""
    m, k = 16, 16
    a, b, a64, b64 = operands(m, k, k, "fp16", seed=55)
    out, sums = np.full((m, k), np.nan, np.float32), np.full(m, np.nan, np.float32)
    types = {"a_ptr": "*fp16", "b_ptr": "*fp16", "out_ptr": "*fp32", "sums_ptr": "*fp32", "n": "i32"}
    text = tile_opt(carried_kernel, types, {"M": m, "K": k})
    with tile.context():
        module = laid_out(text, 2)
        run(module, (1,), [a, b, out, sums, 3], num_warps=2, warp_size=WARP, matrix=TOY)
    ab = a64 @ b64
    check(out, 3 * ab + 3 * ab + 1, 6 * (np.abs(a64) @ np.abs(b64)) + 1, 7 * (k + 1) * EPS["fp32"])
    check(sums, (0 + 1 + 2) * ab.sum(1), 3 * (np.abs(a64) @ np.abs(b64)).sum(1), 7 * (k + 1) * EPS["fp32"])


@tritium.jit
def reshaped_batch_kernel(a_ptr, b_ptr, out_ptr, B: tl.constexpr, M: tl.constexpr):
    """``B`` products of ``M x M`` blocks read as rows and reshaped: no block of rank 2 anywhere."""
    a = tl.load(a_ptr + tl.arange(0, B * M * M)).reshape(B, M, M)
    b = tl.load(b_ptr + tl.arange(0, B * M * M)).reshape(B, M, M)
    tl.store(out_ptr + tl.arange(0, B * M * M), tl.dot(a, b).reshape(B * M * M))


def test_a_batched_product_in_a_kernel_without_2d_blocks():
    """Triton's test_dot_multidim on nvptx: a 3-D ``tl.dot`` where no block has rank 2 (the layout
    stage once asked for the rank-2 default to count warps, and crashed)."""
    bs, m = 2, 16
    pairs = [operands(m, m, m, "fp16", seed=60 + i) for i in range(bs)]
    a, b = np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])
    a64, b64 = np.stack([p[2] for p in pairs]), np.stack([p[3] for p in pairs])
    out = np.full((bs, m, m), np.nan, np.float32)
    types = {"a_ptr": "*fp16", "b_ptr": "*fp16", "out_ptr": "*fp32"}
    text = tile_opt(reshaped_batch_kernel, types, {"B": bs, "M": m})
    with tile.context():
        module = laid_out(text, 2)
        run(module, (1,), [a, b, out], num_warps=2, warp_size=WARP, matrix=TOY)
    check(out, a64 @ b64, np.abs(a64) @ np.abs(b64), (m + 1) * EPS["fp32"])


@pytest.mark.parametrize("causal", [False, True])
def test_attention_forward_loop_with_its_query_read_from_a_ring(causal):
    """The conformance suite's FlashAttention-style forward: ``q``, loaded before the loop for the
    product alone, is copied once into a ring of one slot; ``k`` and ``v`` are pipelined."""
    from tritium_conformance.cases_attention import attention_forward_kernel

    head, bm, bn, seq = 16, 16, 16, 48
    rng = np.random.default_rng(56)
    q, k, v = (rng.standard_normal((1, seq, head)).astype(np.float16) for _ in range(3))
    out = np.full((1, seq, head), np.nan, np.float32)
    types = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp32", "sm_scale": "fp32", "N_CTX": "i32"}
    text = tile_opt(attention_forward_kernel, types, {"HEAD": head, "BM": bm, "BN": bn, "CAUSAL": causal})
    with tile.context():
        module = laid_out(text, 2, num_stages=3)
        rings = {}
        for op in walk(module.operation):
            if "tile.ring" in op.attributes:
                rings.setdefault(ir.IntegerAttr(op.attributes["tile.ring"]).value, set()).add(op.name)
        assert len(rings) == 3  # q's, k's and v's
        run(module, (seq // bm, 1), [q, k, v, out, np.float32(head ** -0.5), seq], num_warps=2, warp_size=WARP,
            matrix=TOY)
    s = q[0].astype(np.float64) @ k[0].astype(np.float64).T * head ** -0.5
    if causal:
        s = np.where(np.tril(np.ones((seq, seq), bool)), s, -np.inf)
    p = np.exp(s - s.max(1, keepdims=True))
    want = p @ v[0].astype(np.float64) / p.sum(1, keepdims=True)
    np.testing.assert_allclose(out[0], want, rtol=0, atol=4 * 2.0**-11 * np.abs(v).max())
