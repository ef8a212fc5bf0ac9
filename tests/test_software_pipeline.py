"""``passes.software_pipeline`` on textual IR: which loads of a K loop become copies into a ring of
shared-memory slots, how many stages ahead, and what stays as it was. The numbers these loops
compute are checked by ``test_threads_matrix`` (the SIMT emulator) and the conformance suite
(``dot-loop-stages-*``, ``dot-attention-*``)."""

from __future__ import annotations

import re

import pytest

import tritium
import tritium.language as tl
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.passes.axis_info import walk
from tritium.passes.gpu_layout import assign_gpu_layouts

from .test_threads_codegen import tile_opt
from .test_threads_matrix import TOY, WARP
from tritium_simt.emulator import HostThreadHooks


@tritium.jit
def k_loop(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, STAGES: tl.constexpr,
           OTHER: tl.constexpr, REUSE_A: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    total = tl.zeros((BM,), tl.float32)
    for k0 in tl.range(0, K, BK, num_stages=STAGES):
        a = tl.load(a_ptrs, mask=(k0 + rk)[None, :] < K, other=OTHER)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * BN + rn[None, :], mask=(k0 + rk)[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
        if REUSE_A:
            total += tl.sum(a.to(tl.float32), 1)
        a_ptrs += BK
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc + total[:, None])


SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "K": "i32"}


def pipelined(num_stages: int, stages=None, other=0.0, reuse_a=False) -> str:
    text = tile_opt(k_loop, SIGNATURE, {"BM": 16, "BN": 16, "BK": 16, "STAGES": stages, "OTHER": other,
                                        "REUSE_A": reuse_a})
    with tile.context():
        module = ir.Module.parse(text)
        assign_gpu_layouts(module, 2, WARP, matrix_unit=HostThreadHooks(WARP, TOY).warp_matrix_op,
                           num_stages=num_stages)
        names = [op.name for op in walk(module.operation)]
        assert names.count("scf.for") == 1
        return str(module)


def loop_text(text: str) -> tuple[str, str, str]:
    """The text before the loop, inside it, and after it."""
    start = text.index("scf.for")
    end = text.index("scf.yield", start)
    return text[:start], text[start:end], text[end:]


@pytest.mark.parametrize("stages", [2, 3, 4])
def test_both_operands_are_copied_stages_minus_one_iterations_ahead(stages):
    before, inside, after = loop_text(pipelined(stages))
    assert before.count("tile.async_copy") == 2 * (stages - 1)  # the prologue: A and B of each early iteration
    assert before.count("tile.async_commit") == stages - 1
    assert inside.count("tile.async_copy") == 2 and inside.count("tile.async_commit") == 1
    assert re.search(rf'"tile.async_wait"\(\) {{pending = {stages - 2} : i32}}', inside)
    assert inside.count("tile.local_load") == 2 and "tile.load" not in inside
    assert inside.index("tile.async_wait") < inside.index("tile.local_load") < inside.index("tile.dot") \
        < inside.index("tile.async_copy")
    assert re.search(r'"tile.async_wait"\(\) {pending = 0 : i32}', after)  # drained before the ring is reused
    rings = set(re.findall(r"tile.ring = (\d+)", before + inside))
    assert rings == {"0", "1"}
    sizes = set(re.findall(r"tile.ring_bytes = (\d+)", before + inside))
    assert sizes == {str(stages * 16 * 16 * 2)}  # one 16 x 16 fp16 tile a slot


def test_a_loop_s_own_num_stages_wins_and_one_stage_pipelines_nothing():
    assert "tile.async_copy" not in pipelined(3, stages=1)
    assert pipelined(1, stages=3).count("tile.async_copy") == 2 * 2 + 2
    assert "tile.async_copy" not in pipelined(1)


def test_a_load_with_a_nonzero_other_stays_a_load():
    """A copy fills masked elements with zeros: a load whose ``other`` is not 0 keeps its own."""
    _, inside, _ = loop_text(pipelined(3, other=1.0))
    assert inside.count("tile.local_load") == 1 and inside.count("tile.load") == 1


def test_a_load_something_else_reads_too_stays_a_load():
    _, inside, _ = loop_text(pipelined(3, reuse_a=True))
    assert inside.count("tile.local_load") == 1 and inside.count("tile.load") == 1


def test_the_ring_lives_through_the_loop_apart_from_other_scratch():
    text = pipelined(3, reuse_a=True)
    offsets = {}
    for ring, offset in re.findall(r"tile.ring = (\d+) : i32, tile.ring_bytes = \d+ : i32, tile.shared_offset = "
                                   r"(\d+)", text):
        offsets.setdefault(ring, set()).add(int(offset))
    assert all(len(v) == 1 for v in offsets.values())  # every op of a ring uses the same bytes
    ring_bytes, a_bytes = 3 * 16 * 16 * 2, 16 * 16 * 2
    # the product writes A (a load it shares) to its own scratch, inside the loop, beside B's ring
    dot = [int(x) for x in re.findall(r'"tile.dot".*?tile.shared_offset = (\d+)', text)]
    ring_ranges = [(o, o + ring_bytes) for (o,) in offsets.values()]
    assert len(dot) == 1 and len(ring_ranges) == 1
    assert all(dot[0] + a_bytes <= lo or hi <= dot[0] for lo, hi in ring_ranges)


@pytest.mark.parametrize("stages,other,reuse_a", [(3, 0.0, False), (2, 1.0, True), (4, 0.0, True)])
def test_pipelined_loops_compute_what_they_did(stages, other, reuse_a):
    """On the SIMT emulator: a ragged K (the last tile masked, copies past the trip count masked
    off), with loads partly left as they were."""
    import numpy as np

    from .test_dot import EPS, check
    from tritium_simt.emulator import run

    K = 40
    rng = np.random.default_rng(70)
    a, b = rng.standard_normal((16, K)).astype(np.float16), rng.standard_normal((K, 16)).astype(np.float16)
    out = np.full((16, 16), np.nan, np.float32)
    text = tile_opt(k_loop, SIGNATURE, {"BM": 16, "BN": 16, "BK": 16, "STAGES": stages, "OTHER": other,
                                        "REUSE_A": reuse_a})
    with tile.context():
        module = ir.Module.parse(text)
        assign_gpu_layouts(module, 2, WARP, matrix_unit=HostThreadHooks(WARP, TOY).warp_matrix_op)
        run(module, (1,), [a, b, out, K], num_warps=2, warp_size=WARP, matrix=TOY)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    padded = np.concatenate([a64, np.full((16, 48 - K), other)], 1)  # A's masked tail reads `other`
    want = padded[:, :K] @ b64 + (padded.sum(1, keepdims=True) if reuse_a else 0)
    check(out, want, np.abs(a64) @ np.abs(b64) + np.abs(padded).sum(1, keepdims=True), (K + 1) * EPS["fp32"] * 4)


def test_an_operand_loaded_before_the_loop_is_copied_once_into_a_one_slot_ring():
    from tritium_conformance.cases_attention import attention_forward_kernel

    types = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp32", "sm_scale": "fp32", "N_CTX": "i32"}
    text = tile_opt(attention_forward_kernel, types, {"HEAD": 16, "BM": 16, "BN": 16, "CAUSAL": False})
    with tile.context():
        module = ir.Module.parse(text)
        assign_gpu_layouts(module, 2, WARP, matrix_unit=HostThreadHooks(WARP, TOY).warp_matrix_op, num_stages=1)
        text = str(module)
    before, inside, after = loop_text(text)
    q_ring = re.search(r'"tile.async_copy".*?tile.ring = (\d+) : i32, tile.ring_bytes = (\d+)', before)
    assert q_ring and q_ring.group(2) == str(16 * 16 * 2)  # one slot: q's 16 x 16 fp16 tile
    assert before.count("tile.async_copy") == 1 and inside.count('"tile.load"') == 2  # k, v: 1 stage, not pipelined
    assert re.search(r'"tile.async_wait"\(\) {pending = 0 : i32}', before)
    assert inside.count("tile.local_load") == 1 and f"tile.ring = {q_ring.group(1)}" in inside
    first_dot = next(line for line in inside.splitlines() if '"tile.dot"' in line)
    assert "tile.shared_offset" in first_dot  # k is still staged by the product itself


@tritium.jit
def two_loops_one_q(q_ptr, k_ptr, out_ptr, N, D: tl.constexpr, B: tl.constexpr):
    """Attention's causal shape: ``q`` loaded once, then read by the products of two loops."""
    rd, rb = tl.arange(0, D), tl.arange(0, B)
    q = tl.load(q_ptr + rb[:, None] * D + rd[None, :])
    acc = tl.zeros((B, B), tl.float32)
    for n in range(0, N, B):
        acc = tl.dot(q, tl.load(k_ptr + rd[:, None] * N + (n + rb)[None, :]), acc)
    for n in range(N, 2 * N, B):
        acc = tl.dot(q, tl.load(k_ptr + rd[:, None] * N + (n + rb)[None, :]), acc)
    tl.store(out_ptr + rb[:, None] * B + rb[None, :], acc)


def test_an_operand_two_loops_read_is_copied_once_into_a_ring_both_read():
    text = tile_opt(two_loops_one_q, {"q_ptr": "*fp16", "k_ptr": "*fp16", "out_ptr": "*fp32", "N": "i32"},
                    {"D": 16, "B": 16})
    with tile.context():
        module = ir.Module.parse(text)
        assign_gpu_layouts(module, 2, WARP, matrix_unit=HostThreadHooks(WARP, TOY).warp_matrix_op, num_stages=1)
        text = str(module)
    first, second = text.index("scf.for"), text.rindex("scf.for")
    q_ring = re.search(r'"tile.async_copy".*?tile.ring = (\d+) : i32', text[:first])
    assert q_ring and text[:first].count("tile.async_copy") == 1
    for inside in (text[first:second], text[second:]):
        assert re.search(rf'"tile.local_load".*tile.ring = {q_ring.group(1)} : i32', inside)


@tritium.jit
def chained_loop(q_ptr, k_ptr, v_ptr, out_ptr, N, B: tl.constexpr):
    """Attention's loop shape: two products a loop, the second's A from the first's registers."""
    rb = tl.arange(0, B)
    q = tl.load(q_ptr + rb[:, None] * B + rb[None, :])
    acc = tl.zeros((B, B), tl.float32)
    for n in tl.range(0, N, B, num_stages=3):
        s = tl.dot(q, tl.load(k_ptr + rb[:, None] * N + (n + rb)[None, :]))
        acc = tl.dot(s.to(tl.float16), tl.load(v_ptr + (n + rb)[:, None] * B + rb[None, :]), acc)
    tl.store(out_ptr + rb[:, None] * B + rb[None, :], acc)


def test_copies_go_at_the_start_where_no_product_keeps_reading_the_previous_slot():
    """A matmul's K loop carries its product's accumulator from ring operands: a warpgroup
    instruction may still read the previous slot until the body's product, so the next copies go
    at the end (``test_both_operands_...``); attention's second product takes A from registers, so
    they go right after the wait, a whole body earlier."""
    text = tile_opt(chained_loop, {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "out_ptr": "*fp32", "N": "i32"},
                    {"B": 16})
    with tile.context():
        module = ir.Module.parse(text)
        assign_gpu_layouts(module, 2, WARP, matrix_unit=HostThreadHooks(WARP, TOY).warp_matrix_op)
        _, inside, _ = loop_text(str(module))
    assert inside.count("tile.async_copy") == 2
    assert inside.index("tile.local_load") < inside.index("tile.async_copy") < inside.index("tile.dot")


@tritium.jit
def wt_loop(a_ptr, w_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """``a @ w.T``: w ``[BN, K]`` loaded as stored, transposed for the product."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=(k0 + rk)[None, :] < K, other=0.0)
        w = tl.load(w_ptr + rn[:, None] * K + (k0 + rk)[None, :], mask=(k0 + rk)[None, :] < K, other=0.0)
        acc = tl.dot(a, tl.trans(w), acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


def test_an_operand_transposed_for_the_product_is_copied_as_loaded_and_read_transposed():
    """``tl.dot(a, tl.trans(w))``: w's block goes into its ring as loaded, with a layout of its own
    shape (not the rank's, which would have threads copy it several times), and the product reads
    the slot through the transpose; on the SIMT emulator the loop computes ``a @ w.T``."""
    import numpy as np

    from .test_dot import EPS, check
    from tritium_simt.emulator import run

    text = tile_opt(wt_loop, {"a_ptr": "*fp16", "w_ptr": "*fp16", "c_ptr": "*fp32", "K": "i32"},
                    {"BM": 16, "BN": 32, "BK": 16})
    K = 40
    rng = np.random.default_rng(71)
    a, w = rng.standard_normal((16, K)).astype(np.float16), rng.standard_normal((32, K)).astype(np.float16)
    out = np.full((16, 32), np.nan, np.float32)
    with tile.context():
        module = ir.Module.parse(text)
        assign_gpu_layouts(module, 2, WARP, matrix_unit=HostThreadHooks(WARP, TOY).warp_matrix_op, num_stages=3)
        _, inside, _ = loop_text(str(module))
        assert inside.count("tile.local_load") == 2 and "tile.load" not in inside
        assert re.search(r'"tile.trans"\(%\d+\)', inside)
        copies = re.findall(r'"tile.async_copy".*?: \(tensor<(\d+)x(\d+)x!tile.ptr<f16, 1 : i32>, #tile.blocked<'
                            r'\[(\d+) : i32, (\d+) : i32\], \[(\d+) : i32, (\d+) : i32\], \[(\d+) : i32, (\d+) : i32\]',
                            inside)
        for rows, cols, *spread in copies:  # each copy's threads cover its block without holding copies
            per_thread, lanes, warps = spread[0:2], spread[2:4], spread[4:6]
            covered = [int(p) * int(t) * int(q) for p, t, q in zip(per_thread, lanes, warps)]
            assert covered[1] <= int(cols) and covered[0] <= int(rows), (rows, cols, spread)
        run(module, (1,), [a, w, out, K], num_warps=2, warp_size=WARP, matrix=TOY)
    a64, w64 = a.astype(np.float64), w.astype(np.float64)
    check(out, a64 @ w64.T, np.abs(a64) @ np.abs(w64.T), (K + 1) * EPS["fp32"] * 4)
