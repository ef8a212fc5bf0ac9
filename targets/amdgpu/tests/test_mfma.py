"""``tl.dot`` on AMD's matrix instructions (CDNA's MFMA, RDNA3's and RDNA4's WMMA), executed: the
products' code is generated with the amdgpu target's instruction declarations and run on the SIMT
emulator at the arch's wavefront size, the instruction emulated from an independent statement of
AMD's operand layout (the matrix instruction calculator's formulas, the RDNA ISAs' tables); RDNA3's
exchange of operand halves between lanes runs on the host with the lane exchange modelled; and
compiled: the code objects hold the instructions."""

from __future__ import annotations

import ctypes
import re

import llvmlite.binding as llvm
import numpy as np
import pytest
from llvmlite import ir as ll
import tritium
import tritium.language as tl
from tritium.ir import tile
from tritium.ir.mlir import ir
from tritium.passes.gpu_layout import assign_gpu_layouts
from tritium_amdgpu import matrix, toolchain
from tritium_simt.emulator import HostThreadHooks, run

WAVE = 64


class Mfma:
    """AMD's statement of an MFMA's operands on ``m x m`` blocks with ``k`` K elements (the matrix
    instruction calculator's formulas), for one 32-bit register (``pack`` K elements of A or B) or
    one accumulator an entry: A[i][k] at lane ``i + m (k // kl)``, item ``k % kl``, with
    ``kl = k / (64 / m)``; B[k][j] likewise; D[i][j] at lane ``j + 16 (i // 4)``, item ``i % 4``
    (m = 16), or lane ``j + 32 ((i // 4) % 2)``, item ``4 (i // 8) + i % 4`` (m = 32)."""

    def __init__(self, which: str, m: int, k: int, pack: int):
        self.which, self.m, self.kl, self.pack = which, m, k // (64 // m), pack

    def coordinates(self, lane: int, entry: int) -> tuple[int, int]:
        m, group = self.m, lane // self.m
        if self.which == "a":
            return lane % m, group * self.kl + entry * self.pack
        if self.which == "b":
            return group * self.kl + entry * self.pack, lane % m
        if m == 16:
            return 4 * group + entry, lane % 16
        return 8 * (entry // 4) + 4 * group + entry % 4, lane % 32


class Wmma:
    """The matrix instruction calculator's statement of RDNA4's ``v_wmma_f32_16x16x16_{f16,bf16}`` at
    32 lanes: A[i][k] at lane ``i + 16 ((k // 4) % 2)``, item ``4 (k // 8) + k % 4`` (two items a
    register); B[k][j] likewise; D[i][j] at lane ``j + 16 (i // 8)``, item ``i % 8``."""

    def __init__(self, which: str):
        self.which = which

    def coordinates(self, lane: int, entry: int) -> tuple[int, int]:
        i, half = lane % 16, lane // 16
        item = 2 * entry if self.which in "ab" else entry
        k = 8 * (item // 4) + 4 * half + item % 4
        if self.which == "a":
            return i, k
        if self.which == "b":
            return k, i
        return 8 * half + entry, i


class Rdna3Wmma:
    """RDNA3's ``v_wmma_f32_16x16x16_{f16,bf16}`` at 32 lanes as its ISA states it: every lane holds
    16 K elements of A's row (B's column) ``lane % 16``, the upper half a copy of the lower; D[i][j]
    at lane ``j + 16 (i % 2)``, item ``i // 2``. As the emulator's truth, each lane gives the eight
    of them it owns before the exchange (``k_half``: K ``8 (lane // 16)`` on)."""

    def __init__(self, which: str):
        self.which = which

    def coordinates(self, lane: int, entry: int) -> tuple[int, int]:
        i, half = lane % 16, lane // 16
        if self.which == "c":
            return 2 * entry + half, i
        k = 8 * half + 2 * entry
        return (i, k) if self.which == "a" else (k, i)


def mfma_truth(m: int, k: int, pack: int) -> tuple:
    return tuple(Mfma(w, m, k, pack) for w in "abc")


TRUTH = mfma_truth(16, 16, 2)


@tritium.jit
def chained_kernel(a_ptr, b_ptr, v_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                   LOOPS: tl.constexpr):
    """A K loop carrying its accumulator, a row softmax on it, and a second product (attention's)."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    acc = tl.zeros((M, N), tl.float32)
    for i in range(LOOPS):
        a = tl.load(a_ptr + i * M * K + rm[:, None] * K + rk[None, :])
        b = tl.load(b_ptr + i * K * N + rk[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    p = tl.exp(acc - tl.max(acc, 1)[:, None])
    v = tl.load(v_ptr + rn[:, None] * N + rn[None, :])
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], tl.dot(p.to(tl.float16), v))


SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "v_ptr": "*fp16", "out_ptr": "*fp32"}


@pytest.mark.parametrize("m,n,k,loops,num_warps", [(16, 16, 16, 1, 1), (64, 32, 32, 2, 4), (32, 64, 16, 3, 2)])
def test_products_on_mfma_match_float64_at_64_lanes(m, n, k, loops, num_warps):
    mfma = matrix.mfma("cdna3", "fp16", "fp32")
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((loops, m, k)).astype(np.float16)
    b = rng.standard_normal((loops, k, n)).astype(np.float16)
    v = rng.standard_normal((n, n)).astype(np.float16)
    out = np.full((m, n), np.nan, np.float32)
    compiled = tritium.compile(chained_kernel, signature=SIG, constants={"M": m, "N": n, "K": k, "LOOPS": loops},
                               target="amdgpu", arch="gfx942", num_warps=num_warps)
    with tile.context():
        module = ir.Module.parse(compiled.asm["tile-opt"])
        assign_gpu_layouts(module, num_warps, WAVE, matrix_unit=HostThreadHooks(WAVE, mfma).warp_matrix_op)
        assert "#tile.mma" in str(module)
        run(module, (1,), [a, b, v, out], num_warps=num_warps, warp_size=WAVE, matrix=mfma, truth=TRUTH)
    acc = sum(a[i].astype(np.float64) @ b[i].astype(np.float64) for i in range(loops))
    p = np.exp(acc - acc.max(1, keepdims=True))
    want = p.astype(np.float16).astype(np.float64) @ v.astype(np.float64)
    scale = (np.abs(p) @ np.abs(v.astype(np.float64))).max()
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-3 * scale)  # p rounded to fp16 alike; sums in fp32


@pytest.mark.skipif(toolchain.linker() is None, reason="no ld.lld")
@pytest.mark.parametrize("arch,instruction", [("gfx942", "v_mfma_f32_16x16x16"), ("gfx1100", "v_wmma_f32_16x16x16")])
def test_code_objects_hold_one_instruction_a_tile_and_k_step(arch, instruction):
    """Per wavefront of 4: the first product 4 tiles of one K step, the second 4 of four."""
    c = tritium.compile(chained_kernel, signature=SIG, constants={"M": 64, "N": 64, "K": 16, "LOOPS": 1},
                        target="amdgpu", arch=arch, num_warps=4)
    assert c.asm["amdgcn"].count(instruction) == 4 + 16 and c.metadata["spills"] == 0


@tritium.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :]),
                     tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :]), acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@pytest.mark.skipif(toolchain.linker() is None, reason="no ld.lld")
def test_pipelines_that_would_not_fit_lds_run_shallower():
    """128 x 128 x 64 fp16 blocks: three stages of rings are 96 KiB, more than a CDNA workgroup's
    64 KiB of LDS; the layout stage pipelines less deep instead of failing (and says so)."""
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "K": "i32"}
    c = tritium.compile(matmul_kernel, signature=sig, constants={"BM": 128, "BN": 128, "BK": 64}, target="amdgpu",
                        arch="gfx942", num_warps=4, num_stages=3)
    assert c.metadata["num_stages"] < 3 and c.metadata["lds"] == c.metadata["shared"] <= 65536
    assert "v_mfma_f32_16x16x16" in c.asm["amdgcn"]
    small = tritium.compile(matmul_kernel, signature=sig, constants={"BM": 32, "BN": 32, "BK": 32}, target="amdgpu",
                            arch="gfx942", num_warps=4, num_stages=3)
    assert "num_stages" not in small.metadata  # three stages fit: as asked


@pytest.mark.skipif(toolchain.linker() is None, reason="no ld.lld")
def test_bf16_products_run_on_the_bf16_instruction():
    sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*fp32", "K": "i32"}
    c = tritium.compile(matmul_kernel, signature=sig, constants={"BM": 32, "BN": 32, "BK": 32}, target="amdgpu",
                        arch="gfx90a", num_warps=4)
    assert "v_mfma_f32_16x16x16bf16_1k" in c.asm["amdgcn"]


@tritium.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, LOOPS: tl.constexpr,
               ACC: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    acc = tl.zeros((M, N), ACC)
    for i in range(LOOPS):
        a = tl.load(a_ptr + i * M * K + rm[:, None] * K + rk[None, :])
        b = tl.load(b_ptr + i * K * N + rk[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc, out_dtype=ACC)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def _e4m3(code: int) -> float:
    """OCP fp8 e4m3 (``tl.float8e4nv``): bias 7, three mantissa bits, 0x7f and 0xff NaN."""
    sign, exp, man = -1.0 if code & 0x80 else 1.0, (code >> 3) & 15, code & 7
    if exp == 15 and man == 7:
        return float("nan")
    return sign * (man / 8 * 2.0 ** -6 if exp == 0 else (1 + man / 8) * 2.0 ** (exp - 7))


#: (arch family, operand kind, MFMA size, K of the instruction, K elements a register, element types)
MFMAS = [("cdna3", "fp16", 32, 8, 2, "fp16"), ("cdna3", "bf16", 32, 8, 2, "bf16"),
         ("cdna3", "s8", 16, 32, 4, "i8"), ("cdna3", "s8", 32, 16, 4, "i8"), ("cdna2", "s8", 16, 16, 4, "i8"),
         ("cdna4", "e4m3", 16, 32, 4, "fp8e4nv"), ("cdna4", "e4m3", 32, 16, 4, "fp8e4nv")]


@pytest.mark.parametrize("family,kind,size,k,pack,element", MFMAS)
@pytest.mark.parametrize("m,n,kk,loops,num_warps", [(32, 32, 32, 1, 1), (64, 32, 64, 2, 2)])
def test_every_mfma_form_matches_float64_at_64_lanes(family, kind, size, k, pack, element, m, n, kk, loops,
                                                     num_warps):
    spec = matrix.mfma(family, kind, "int32" if kind == "s8" else "fp32", size)
    assert (spec.m, spec.k, spec.k_pack) == (size, k, pack)
    _run_against_truth(spec, mfma_truth(size, k, pack), WAVE, element, m, n, kk, loops, num_warps,
                       {"cdna2": "gfx90a", "cdna3": "gfx942", "cdna4": "gfx950"}[family], size)


@pytest.mark.parametrize("element", ["fp16", "bf16"])
def test_rdna4_wmma_matches_float64_at_32_lanes(element):
    spec = matrix.wmma(element, "fp32")
    _run_against_truth(spec, tuple(Wmma(w) for w in "abc"), 32, element, 32, 32, 32, 2, 2, "gfx1201", 16)


@pytest.mark.parametrize("element", ["fp16", "bf16"])
def test_rdna3_wmma_matches_float64_at_32_lanes(element):
    spec = matrix.wmma(element, "fp32", "rdna3")
    _run_against_truth(spec, tuple(Rdna3Wmma(w) for w in "abc"), 32, element, 32, 32, 32, 2, 2, "gfx1100", 16)


def test_rdna3_lanes_join_both_halves_of_k_in_order():
    """RDNA3's operand exchange (``matrix._both_halves``), run on the host for all 32 lanes with
    ``v_permlanex16`` modelled as reading the same register of lane ``l ^ 16`` (which its identity
    selection, checked in the text, does): every lane ends with its row's 16 K elements in order."""
    module = ll.Module()
    fn = ll.Function(module, ll.FunctionType(ll.VoidType(), [ll.PointerType()] * 2), "join")
    b = ll.IRBuilder(fn.append_basic_block())
    words = [b.load(b.gep(fn.args[0], [ll.IntType(32)(r)], source_etype=ll.IntType(32)), typ=ll.IntType(32))
             for r in range(4)]
    for r, w in enumerate(matrix._both_halves(b, words)):
        b.store(w, b.gep(fn.args[1], [ll.IntType(32)(r)], source_etype=ll.IntType(32)))
    b.ret_void()
    text = str(module)
    assert text.count("i32 1985229328, i32 4275878552, i1 0, i1 0)") == 4  # selections 0x76543210, 0xfedcba98
    host = re.sub(r'declare i32 @"llvm[^\n]*\n', "", text)
    host = host.replace('@"llvm.amdgcn.permlanex16.i32"', "@cross").replace('@"llvm.amdgcn.workitem.id.x"', "@workitem")
    host += ("@lane = global i32 0\ndefine i32 @workitem() {\n %l = load i32, ptr @lane\n ret i32 %l\n}\n"
             "define i32 @cross(i32 %old, i32 %w, i32 %lo, i32 %hi, i1 %fi, i1 %bc) {\n"
             " %o = xor i32 %w, 4104\n ret i32 %o\n}\n")  # a word is (lane << 8) | K: lane ^ 16's (K ^ 8)
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(host),
                                        llvm.Target.from_default_triple().create_target_machine())
    engine.finalize_object()
    join = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)(engine.get_function_address("join"))
    cell = ctypes.c_int32.from_address(engine.get_global_value_address("lane"))
    for lane in range(32):
        cell.value = lane
        own = np.array([(lane << 8) | (8 * (lane // 16) + 2 * r) for r in range(4)], np.int32)
        out = np.zeros(8, np.int32)
        join(own.ctypes.data, out.ctypes.data)
        assert list(out >> 8) == [lane if (r < 4) == (lane < 16) else lane ^ 16 for r in range(8)]
        assert list(out & 255) == [2 * r for r in range(8)]


def _run_against_truth(spec, truth, wave, element, m, n, k, loops, num_warps, arch, size):
    rng = np.random.default_rng(m + n + k + wave)
    if element == "i8":
        a, b = (rng.integers(-128, 128, shape).astype(np.int8) for shape in ((loops, m, k), (loops, k, n)))
        want, acc, out = None, tl.int32, np.zeros((m, n), np.int32)
        values = lambda x: x.astype(np.int64)  # noqa: E731
    elif element == "fp8e4nv":
        a, b = (rng.integers(0, 256, shape).astype(np.uint8) for shape in ((loops, m, k), (loops, k, n)))
        a[(a & 0x7F) == 0x7F] = 0x38  # no NaN codes: 1.0 instead
        b[(b & 0x7F) == 0x7F] = 0x38
        table = np.array([_e4m3(c) for c in range(256)])
        acc, out = tl.float32, np.full((m, n), np.nan, np.float32)
        values = lambda x: table[x]  # noqa: E731
    else:
        a, b = (rng.standard_normal(shape).astype(np.float32) for shape in ((loops, m, k), (loops, k, n)))
        if element == "bf16":  # bf16's bits: the high halves of fp32 values with the low ones zero
            a, b = ((x.view(np.uint32) >> 16).astype(np.uint16) for x in (a, b))
            values = lambda x: (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)  # noqa: E731
        else:
            a, b = a.astype(np.float16), b.astype(np.float16)
            values = lambda x: x.astype(np.float64)  # noqa: E731
        acc, out = tl.float32, np.full((m, n), np.nan, np.float32)
    sig = {"a_ptr": f"*{element}", "b_ptr": f"*{element}", "c_ptr": "*i32" if element == "i8" else "*fp32"}
    compiled = tritium.compile(dot_kernel, signature=sig,
                               constants={"M": m, "N": n, "K": k, "LOOPS": loops, "ACC": acc},
                               target="amdgpu", arch=arch, num_warps=num_warps, matrix_instr_nonkdim=size)
    with tile.context():
        module = ir.Module.parse(compiled.asm["tile-opt"])
        assign_gpu_layouts(module, num_warps, wave, matrix_unit=HostThreadHooks(wave, spec).warp_matrix_op)
        assert "#tile.mma" in str(module)
        run(module, (1,), [a, b, out], num_warps=num_warps, warp_size=wave, matrix=spec, truth=truth)
    want = sum(values(a[i]) @ values(b[i]) for i in range(loops))
    if element == "i8":
        np.testing.assert_array_equal(out, want)
    else:
        scale = sum(np.abs(values(a[i])) @ np.abs(values(b[i])) for i in range(loops)).max()
        np.testing.assert_allclose(out, want, rtol=0, atol=1e-5 * scale)


@pytest.mark.skipif(toolchain.linker() is None, reason="no ld.lld")
@pytest.mark.parametrize("arch,element,size,instruction", [
    ("gfx942", "fp16", 32, "v_mfma_f32_32x32x8_f16"), ("gfx942", "i8", 16, "v_mfma_i32_16x16x32_i8"),
    ("gfx90a", "i8", 32, "v_mfma_i32_32x32x8i8"), ("gfx950", "fp8e4nv", 16, "v_mfma_f32_16x16x32_fp8_fp8"),
    ("gfx950", "fp8e5", 32, "v_mfma_f32_32x32x16_bf8_bf8"), ("gfx1201", "fp16", 16, "v_wmma_f32_16x16x16_f16"),
    ("gfx1201", "bf16", 16, "v_wmma_f32_16x16x16_bf16"), ("gfx942", "fp8e4nv", 16, "v_mfma_f32_16x16x16_f16"),
    ("gfx1100", "fp16", 16, "v_wmma_f32_16x16x16_f16"), ("gfx1100", "bf16", 16, "v_permlanex16_b32"),
    ("gfx1100", "i8", 16, None)])
def test_code_objects_hold_the_arch_s_matrix_instruction(arch, element, size, instruction):
    """gfx942's fp8 MFMA reads AMD's FNUZ formats, not Triton's: its fp8 products widen to fp16 and
    run on the fp16 MFMA. RDNA3 exchanges operand halves across its lanes; its int8 products
    multiply with FMAs (tritium declares no integer WMMA)."""
    sig = {"a_ptr": f"*{element}", "b_ptr": f"*{element}", "c_ptr": "*i32" if element == "i8" else "*fp32"}
    acc = tl.int32 if element == "i8" else tl.float32
    c = tritium.compile(dot_kernel, signature=sig, constants={"M": 64, "N": 64, "K": 64, "LOOPS": 2, "ACC": acc},
                        target="amdgpu", arch=arch, num_warps=4, matrix_instr_nonkdim=size)
    asm = c.asm["amdgcn"]
    if instruction is None:
        assert "v_mfma" not in asm and "v_wmma" not in asm
    else:
        assert instruction in asm
    assert c.metadata["spills"] == 0


def test_matrix_instr_nonkdim_is_16_or_32():
    with pytest.raises(tritium.errors.TritiumError, match="matrix_instr_nonkdim must be 16 or 32"):
        tritium.compile(dot_kernel, signature={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"},
                        constants={"M": 32, "N": 32, "K": 32, "LOOPS": 1, "ACC": tl.float32}, target="amdgpu",
                        arch="gfx942", matrix_instr_nonkdim=8)
