"""``tl.dot`` through the whole nvptx pipeline without a GPU: the tutorial's matmul at its block
sizes becomes FMA loops over operands in shared memory, assembled by ptxas without spills."""

from __future__ import annotations

import re

import pytest
import tritium
import tritium.language as tl
from tritium.runtime.compiler import compile_specialized
from tritium_conformance.cases_dot import matmul_kernel  # the conformance suite's tutorial-03 kernel
from tritium_nvptx import toolchain

SCALARS = ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")
BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
#: the matrix instruction's operand kind of each fp8 dtype
FP8_KINDS = {"fp8e4nv": "e4m3", "fp8e5": "e5m2"}


def compile_matmul(target, dtype: str, bm: int, bn: int, bk: int, num_warps: int, num_stages: int = 3,
                   b_k_major: bool = False):
    """Tutorial 03 at one config; B's K contiguous where ``b_k_major`` (the fp8 path's b.T), else its N."""
    out = "fp16" if dtype.startswith("fp8") else dtype
    types = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{out}", **{s: "i32" for s in SCALARS}}
    specs = {name: "D" for name in types} | {"stride_ak": "1", "stride_bk" if b_k_major else "stride_bn": "1",
                                             "stride_cn": "1"}
    constants = {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8}
    return compile_specialized(matmul_kernel, target, types, constants, specs,
                               {"num_warps": num_warps, "num_stages": num_stages})


TF32_CONFIGS = [("fp32", 64, 64, 32, 4), ("fp32", 128, 128, 32, 8), ("fp32", 64, 64, 32, 8)]


@pytest.mark.parametrize("dtype,bm,bn,bk,num_warps", TF32_CONFIGS, ids=["-".join(map(str, c)) for c in TF32_CONFIGS])
def test_fp32_tutorial_matmul_runs_on_tf32_tensor_cores(target, dtype, bm, bn, bk, num_warps):
    """Triton's default ``input_precision`` ("tf32"): operands rounded to tf32, ``m16n8k8`` tiles."""
    k = compile_matmul(target, dtype, bm, bn, bk, num_warps)
    ptx = k.asm["ptx"]
    tiles_per_warp = bm // 16 * (bn // 8) // num_warps
    found = len(re.findall(r"mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.tf32\.tf32\.f32", ptx))
    assert found in (tiles_per_warp, tiles_per_warp * bk // 8)
    assert "cvt.rna.tf32.f32" in ptx and "fma.rn.f32" not in ptx
    if toolchain.ptxas_path():
        assert k.metadata["registers"] > 0 and k.metadata["spills"] == 0


@tritium.jit
def ieee_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, input_precision="ieee"))


@pytest.mark.parametrize("m,n,k,num_warps", [(64, 64, 32, 4), (128, 128, 32, 8)])
def test_fp32_at_ieee_precision_stays_exact_fma_loops(target, m, n, k, num_warps):
    types = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32"}
    compiled = compile_specialized(ieee_kernel, target, types, {"M": m, "N": n, "K": k}, {t: "D" for t in types},
                                   {"num_warps": num_warps})
    ptx = compiled.asm["ptx"]
    assert len(re.findall(r"\bfma\.rn\.f32", ptx)) == m * n // (32 * num_warps)  # one per accumulator
    assert "mma.sync" not in ptx and "ld.shared" in ptx
    assert compiled.metadata["shared"] == (m + n) * k * 4
    if toolchain.ptxas_path():
        assert compiled.metadata["spills"] == 0


MMA_CONFIGS = [("fp16", 64, 64, 32, 4), ("fp16", 128, 64, 64, 4), ("fp16", 128, 128, 32, 8), ("bf16", 64, 128, 32, 4)]


@pytest.mark.parametrize("dtype,bm,bn,bk,num_warps", MMA_CONFIGS, ids=["-".join(map(str, c)) for c in MMA_CONFIGS])
def test_16_bit_tutorial_matmul_runs_on_tensor_cores(target, dtype, bm, bn, bk, num_warps):
    """One m16n8k16 ``mma`` per 16 x 8 tile of the warp's block in each step of the K loop (fp32
    accumulators); LLVM may unroll the loop's ``bk / 16`` steps."""
    k = compile_matmul(target, dtype, bm, bn, bk, num_warps)
    ptx = k.asm["ptx"]
    kind = {"fp16": "f16", "bf16": "bf16"}[dtype]
    tiles_per_warp = bm // 16 * (bn // 8) // num_warps
    found = len(re.findall(rf"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.{kind}\.{kind}\.f32", ptx))
    assert found in (tiles_per_warp, tiles_per_warp * bk // 16)
    assert "fma.rn.f32" not in ptx
    assert k.metadata["shared"] >= (bm + bn) * bk * 2  # the operands (and the epilogue's layout conversion)
    if toolchain.ptxas_path():
        assert k.metadata["registers"] > 0


@tritium.jit
def int8_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


@pytest.mark.parametrize("operand,result,instruction",
                         [("i8", "i32", r"mma\.sync\.aligned\.m16n8k32\.row\.col\.s32\.s8"),
                          ("fp64", "fp64", r"fma\.rn\.f64")])
def test_int8_and_fp64_products(target, operand, result, instruction):
    """int8 into int32 runs on the tensor cores (``m16n8k32.s32.s8.s8``), fp64 as FMA loops."""
    types = {"a_ptr": f"*{operand}", "b_ptr": f"*{operand}", "c_ptr": f"*{result}"}
    k = compile_specialized(int8_kernel, target, types, {"M": 32, "N": 32, "K": 32}, {n: "D" for n in types},
                            {"num_warps": 4})
    assert re.search(instruction, k.asm["ptx"])
    if toolchain.ptxas_path():
        assert k.metadata["spills"] == 0


@tritium.jit
def fp16_out_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, out_dtype=tl.float16))


def test_fp16_into_fp16_runs_on_the_tensor_cores(target):
    """``out_dtype=tl.float16`` of fp16 operands: ``m16n8k16.f16.f16.f16.f16``, no FMA loop."""
    types = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16"}
    k = compile_specialized(fp16_out_kernel, target, types, {"M": 64, "N": 64, "K": 64}, {n: "D" for n in types},
                            {"num_warps": 4})
    ptx = k.asm["ptx"]
    assert ptx.count("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16") > 0 and "fma.rn.f32" not in ptx
    if toolchain.ptxas_path():
        assert k.metadata["spills"] == 0


@tritium.jit
def batched_kernel(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rb = tl.arange(0, B)[:, None, None]
    a = tl.load(a_ptr + rb * M * K + tl.arange(0, M)[None, :, None] * K + tl.arange(0, K)[None, None, :])
    b = tl.load(b_ptr + rb * K * N + tl.arange(0, K)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    tl.store(c_ptr + rb * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :], tl.dot(a, b))


def test_batched_product_keeps_fma(target):
    types = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"}
    k = compile_specialized(batched_kernel, target, types, {"B": 4, "M": 32, "N": 32, "K": 32},
                            {n: "D" for n in types}, {"num_warps": 4})
    assert len(re.findall(r"\bfma\.rn\.f32", k.asm["ptx"])) == 4 * 32 * 32 // 128
    assert k.metadata["shared"] == 4 * (32 + 32) * 32 * 2
    if toolchain.ptxas_path():
        assert k.metadata["spills"] == 0


def test_warps_split_the_tiles_to_read_the_fewest_fragments():
    from tritium.layout.matrix import warp_grid
    from tritium_nvptx.hooks import NvptxHooks

    mma = NvptxHooks().warp_matrix_op("fp16", "fp32")
    assert warp_grid(8, 16, 4, mma) == (2, 2)  # 4 x 8 tiles a warp: 16 + 16 fragment reads a step
    assert warp_grid(2, 8, 4, mma) in ((1, 4), (2, 2))
    assert warp_grid(1, 2, 4, mma) is None  # 16 x 16: too few tiles for 4 warps
    assert NvptxHooks().warp_matrix_op("fp32", "fp32") is None


def test_a_product_too_small_for_the_warps_keeps_fma(target):
    types = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"}
    k = compile_specialized(int8_kernel, target, types, {"M": 16, "N": 16, "K": 16}, {n: "D" for n in types},
                            {"num_warps": 4})
    assert "mma.sync" not in k.asm["ptx"] and re.search(r"\bfma\.rn\.f32", k.asm["ptx"])


class _IsaFragment:
    """``mma.m16n8k16``'s fragments of 16-bit operands and fp32 accumulators as the PTX ISA's tables
    state them (lane = 4 * groupID + threadID_in_group): ``coordinates(lane, register)`` of the first
    element a 32-bit register (A, B) or an accumulator register holds; ``m16n8k8.tf32``'s and
    ``m16n8k32``'s (fp8, int8) where asked."""

    def __init__(self, which: str, tf32: bool = False, fp8: bool = False):
        self.which, self.tf32, self.fp8 = which, tf32, fp8

    def coordinates(self, lane: int, register: int) -> tuple[int, int]:
        group, thread = lane >> 2, lane % 4
        if self.fp8 and self.which == "a":  # a0..a3 of 4: rows groupID (+8: a1, a3), K 4t (+16: a2, a3)
            return group + 8 * (register % 2), 4 * thread + 16 * (register // 2)
        if self.fp8 and self.which == "b":  # b0, b1 of 4: K 4t (+16 for b1), column groupID
            return 4 * thread + 16 * register, group
        if self.tf32 and self.which == "a":  # m16n8k8.tf32: a0..a3: rows groupID (+8: a1, a3), K t (+4: a2, a3)
            return group + 8 * (register % 2), thread + 4 * (register // 2)
        if self.tf32 and self.which == "b":  # b0, b1: K t (+4 for b1), column groupID
            return thread + 4 * register, group
        if self.which == "a":  # a0..a7 in pairs: rows groupID (+8 for a2, a3, a6, a7), K 2t (+8 from a4)
            return group + 8 * (register % 2), 2 * thread + 8 * (register // 2)
        if self.which == "b":  # b0..b3 in pairs: K 2t (+8 for b2, b3), column groupID
            return 2 * thread + 8 * register, group
        return group + 8 * (register // 2), 2 * thread + register % 2  # c0..c3


@pytest.mark.parametrize("dtype,shape,num_warps", [("fp16", (32, 32, 32), 2), ("bf16", (32, 32, 32), 2),
                                                   ("fp16", (64, 32, 64), 4), ("fp16", (16, 64, 16), 2),
                                                   ("fp16", (16, 256, 32), 2), ("bf16", (32, 16, 128), 2),
                                                   ("fp8e4nv", (32, 32, 64), 2), ("fp8e5", (64, 32, 64), 4),
                                                   ("i8", (32, 32, 64), 2), ("i8", (64, 64, 128), 4),
                                                   ("fp32", (32, 32, 32), 2), ("fp32", (64, 32, 16), 4)])
def test_the_tensor_core_fragments_compute_the_product(target, core_kernels, threads_emulator, dtype, shape,
                                                       num_warps):
    """The tile-layout stage's module, laid out with the ``mma`` fragments this target declares, run on
    the host with 32-lane warps by an instruction emulated from the PTX ISA's own fragment tables:
    the declared fragments must be the ISA's (checked against float64 numpy), read with ``ldmatrix``
    from shared memory whose rows are swizzled so that no read has bank conflicts."""
    import numpy as np
    from tritium.ir import tile
    from tritium.ir.mlir import ir
    from tritium_nvptx.hooks import NvptxHooks

    m, n, k = shape
    acc = "i32" if dtype == "i8" else "fp32"
    types = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{acc}", "out_ptr": f"*{acc}"}
    consts = {"M": m, "N": n, "K": k, "IN": None, "ACC": True, "PREC": "tf32" if dtype == "fp32" else "ieee",
              "OUT": tl.int32 if dtype == "i8" else tl.float32, "LOOPS": 2}
    compiled = compile_specialized(core_kernels("dots").dot_kernel, target, types, consts, {},
                                   {"num_warps": num_warps})
    assert "#tile.mma" in compiled.asm["tile-layout"]
    if dtype in FP8_KINDS:  # the product takes its fp8 operands, not their fp16 widening
        assert re.search(r'"tile.dot".*: \(tensor<\d+x\d+xf8E', compiled.asm["tile-layout"])
    rng = np.random.default_rng(60)
    a64, b64 = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    if dtype == "fp16":
        a, b = a64.astype(np.float16), b64.astype(np.float16)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
    elif dtype == "fp32":  # the products of tf32 operands: rounded to 10 bits of mantissa, ties away
        a, b = a64.astype(np.float32), b64.astype(np.float32)
        a64, b64 = (((x.view(np.uint32) + 0x1000) & 0xFFFFE000).view(np.float32).astype(np.float64) for x in (a, b))
    elif dtype in FP8_KINDS:  # fp8 bit patterns of values below 16 (the product narrowed back to fp8)
        values = threads_emulator.fp8_values(np.arange(256, dtype=np.uint8), FP8_KINDS[dtype])
        finite = np.flatnonzero(np.abs(np.nan_to_num(values, nan=99.0)) < 16).astype(np.uint8)
        a, b = rng.choice(finite, (m, k)), rng.choice(finite, (k, n))
        a64, b64 = values[a], values[b]
    elif dtype == "i8":  # into int32: exact
        a, b = (rng.integers(-128, 128, s).astype(np.int8) for s in ((m, k), (k, n)))
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
    else:  # bf16 bits, truncated
        a, b = ((x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16) for x in (a64, b64))
        a64, b64 = ((x.astype(np.uint32) << 16).view(np.float32).astype(np.float64) for x in (a, b))
    c = rng.standard_normal((m, n)).astype(np.float32)
    out = np.full((m, n), np.nan, np.float32)
    if dtype == "i8":
        c, out = rng.integers(-10000, 10000, (m, n)).astype(np.int32), np.full((m, n), -1, np.int32)
    kind = {"fp32": "tf32", "i8": "s8", **FP8_KINDS}.get(dtype, dtype)
    mma = NvptxHooks().warp_matrix_op(kind, "int32" if dtype == "i8" else "fp32")
    isa = tuple(_IsaFragment(x, tf32=dtype == "fp32", fp8=dtype in (*FP8_KINDS, "i8")) for x in "abc")
    threads_emulator.conflicting_loads.clear()
    with tile.context():
        module = ir.Module.parse(compiled.asm["tile-layout"])
        llvm_ir = threads_emulator.run(module, (1,), [a, b, c, out], num_warps=num_warps, warp_size=32, matrix=mma,
                                       truth=isa)
    assert "emulator_load" in llvm_ir  # the fragments were read with the emulated ldmatrix
    assert not threads_emulator.conflicting_loads  # from swizzled shared memory, without bank conflicts
    want, bound = 2 * (a64 @ b64) + c, 2 * (np.abs(a64) @ np.abs(b64)) + np.abs(c)
    assert np.all(np.abs(out - want) <= 2 * (k + 1) * 2.0**-24 * bound + 1e-30)


def test_two_products_through_one_scratch_each_load_their_own_operands(target, core_kernels):
    """Both products of an attention block use the same scratch bytes: the second's fragment loads
    must not be merged with the first's (or moved across the barrier between them), as LLVM does
    with loads it cannot see read memory."""
    types = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "out_ptr": "*fp32"}
    k = compile_specialized(core_kernels("dots").attention_block_kernel, target, types, {"M": 64, "N": 32, "D": 32},
                            {n: "D" for n in types}, {"num_warps": 4})
    ptx = k.asm["ptx"]
    # chained products: the warps split M only, 1 x 4 tiles a warp, 2 K steps. Per step the first
    # reads an x4 load of A and two of B; the second takes A from the first's registers, B as two
    assert len(re.findall(r"\bmma\.sync\.aligned", ptx)) == 2 * 8
    assert len(re.findall(r"\bldmatrix\.sync\.aligned", ptx)) == 2 * 3 + 2 * 2


def test_a_transposed_operand_is_stored_transposed_and_read_by_block_loads(target, core_kernels, threads_emulator):
    """Attention's ``q @ k^T``: B arrives with its threads' runs down its columns, so it is stored
    transposed (runs stay 16-byte copies) and read with the non-transposed block load; checked on
    the emulator with the ISA's fragments, as above."""
    import numpy as np
    from tritium.ir import tile
    from tritium.ir.mlir import ir
    from tritium_nvptx.hooks import NvptxHooks

    m, n, d = 64, 32, 32
    types = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "out_ptr": "*fp32"}
    compiled = compile_specialized(core_kernels("dots").attention_block_kernel, target, types,
                                   {"M": m, "N": n, "D": d}, {n_: "D" for n_ in types}, {"num_warps": 4})
    # per product 2 K steps, each two x4 loads of the warp's 4 B tiles: only p @ v's B is transposed
    assert len(re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.trans", compiled.asm["ptx"])) == 4
    rng = np.random.default_rng(61)
    q, k, v = (rng.standard_normal(s).astype(np.float16) for s in ((m, d), (n, d), (n, d)))
    out = np.full((m, d), np.nan, np.float32)
    mma = NvptxHooks().warp_matrix_op("fp16", "fp32")
    isa = (_IsaFragment("a"), _IsaFragment("b"), _IsaFragment("c"))
    threads_emulator.conflicting_loads.clear()
    with tile.context():
        threads_emulator.run(ir.Module.parse(compiled.asm["tile-layout"]), (1,), [q, k, v, out], num_warps=4,
                             warp_size=32, matrix=mma, truth=isa)
    assert not threads_emulator.conflicting_loads
    s = q.astype(np.float64) @ k.astype(np.float64).T
    p = np.exp(s - s.max(1, keepdims=True))
    want = p.astype(np.float16).astype(np.float64) @ v.astype(np.float64) / p.sum(1, keepdims=True)
    np.testing.assert_allclose(out, want, rtol=2e-3, atol=2e-3)


@tritium.jit
def scaled_kernel(a_ptr, s_ptr, b_ptr, c_ptr, A_FMT: tl.constexpr, B_FMT: tl.constexpr):
    rm, rn, rk = tl.arange(0, 64), tl.arange(0, 64), tl.arange(0, 64)
    a = tl.load(a_ptr + rm[:, None] * 64 + rk[None, :])
    s = tl.load(s_ptr + rm[:, None] * 2 + tl.arange(0, 2)[None, :])
    b = tl.load(b_ptr + rk[:, None] * 64 + rn[None, :])
    tl.store(c_ptr + rm[:, None] * 64 + rn[None, :], tl.dot_scaled(a, s, A_FMT, b, None, B_FMT))


@pytest.mark.parametrize("b_fmt, b_type, instruction", [
    ("bf16", "*bf16", r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32|wgmma\.mma_async\.sync\.aligned\.m64n\d+k16\.f32\.bf16\.bf16"),
    ("fp16", "*fp16", r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32|wgmma\.mma_async\.sync\.aligned\.m64n\d+k16\.f32\.f16\.f16"),
])
def test_scaled_products_run_on_the_tensor_cores(target, b_fmt, b_type, instruction):
    """``tl.dot_scaled`` decodes its operands to fp32; the product of values bf16 holds exactly takes
    them as bf16 on the tensor cores (``narrow_exact_operands``), as Triton's Hopper upcasts."""
    types = {"a_ptr": "*u8", "s_ptr": "*u8", "b_ptr": b_type, "c_ptr": "*fp32"}
    k = compile_specialized(scaled_kernel, target, types, {"A_FMT": "e4m3", "B_FMT": b_fmt}, {n: "D" for n in types},
                            {"num_warps": 4})
    assert re.search(instruction, k.asm["ptx"]) and "fma.rn.f32" not in k.asm["ptx"]
