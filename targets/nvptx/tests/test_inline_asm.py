"""``tl.inline_asm_elementwise`` through the whole nvptx pipeline without a GPU: the user's PTX is in
the kernel once per call as Triton packs the registers, and ptxas assembles it."""

from __future__ import annotations

import re

import pytest
import tritium
import tritium.language as tl
from tritium.errors import CompilationError
from tritium.runtime.compiler import compile_specialized
from tritium_nvptx import toolchain

pytest.importorskip("tritium.codegen.threads", reason="core's per-thread code generator is not in this tritium")


@tritium.jit
def shl_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y)


@tritium.jit
def bytes_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    # Triton's test shape: four uint8 per 32-bit register, one asm call per 4 elements
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("and.b32 $0, $1, 0x1F1F1F1F;", "=r,r", [x], dtype=tl.uint8, is_pure=True,
                                  pack=4)
    tl.store(y_ptr + offs, y)


@tritium.jit
def two_results_kernel(a_ptr, b_ptr, c_ptr, d_ptr, BLOCK: tl.constexpr):
    # Triton's docstring example: uint8 a and float b in, int32 c and float32 d out, 4 at a time
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    (c, d) = tl.inline_asm_elementwise(
        asm="""
        {
            .reg .b8 tmp<4>;
            mov.b32 {tmp0, tmp1, tmp2, tmp3}, $8;
            cvt.u32.u8 $0, tmp0;
            cvt.u32.u8 $1, tmp1;
            cvt.u32.u8 $2, tmp2;
            cvt.u32.u8 $3, tmp3;
        }
        cvt.rn.f32.s32 $4, $0;
        cvt.rn.f32.s32 $5, $1;
        cvt.rn.f32.s32 $6, $2;
        cvt.rn.f32.s32 $7, $3;
        max.f32 $4, $4, $9;
        max.f32 $5, $5, $10;
        max.f32 $6, $6, $11;
        max.f32 $7, $7, $12;
        """,
        constraints="=r,=r,=r,=r,=r,=r,=r,=r,r,r,r,r,r",
        args=[a, b], dtype=(tl.int32, tl.float32), is_pure=True, pack=4)
    tl.store(c_ptr + offs, c)
    tl.store(d_ptr + offs, d)


@tritium.jit
def bad_pack_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.uint8, is_pure=True, pack=6)
    tl.store(y_ptr + offs, y)


def _compile(target, fn, types: dict, constants: dict, num_warps: int = 4):
    return compile_specialized(fn, target, types, constants, {}, {"num_warps": num_warps})


def _assembled(k) -> None:
    if toolchain.ptxas_path():
        assert k.metadata["binary_format"] == "cubin"


@pytest.mark.parametrize("block,calls", [(128, 1), (1024, 8)])
def test_pack_1_is_one_asm_call_per_register(target, block, calls):
    k = _compile(target, shl_kernel, {"x_ptr": "*i32", "y_ptr": "*i32"}, {"BLOCK": block})
    assert len(re.findall(r"shl\.b32", k.asm["ptx"])) == calls
    _assembled(k)


@pytest.mark.parametrize("block,calls", [(512, 1), (2048, 4), (128, 1)])
def test_pack_4_bytes_share_one_register(target, block, calls):
    # 512 bytes over 128 threads: 4 registers each, one call; 128 bytes: 1 register, padded to 4
    k = _compile(target, bytes_kernel, {"x_ptr": "*u8", "y_ptr": "*u8"}, {"BLOCK": block})
    ptx = k.asm["ptx"]
    assert len(re.findall(r"and\.b32\s+%r\d+, %r\d+, 0x1F1F1F1F", ptx)) == calls
    ir = k.asm["llir"]
    assert "<4 x i8>" in ir and "asm" in ir
    _assembled(k)


def test_two_results_come_back_as_one_struct(target):
    types = {"a_ptr": "*u8", "b_ptr": "*fp32", "c_ptr": "*i32", "d_ptr": "*fp32"}
    k = _compile(target, two_results_kernel, types, {"BLOCK": 512})
    ir, ptx = k.asm["llir"], k.asm["ptx"]
    assert re.search(r"call \{ ?i32, i32, i32, i32, float, float, float, float ?\} asm", ir)
    assert len(re.findall(r"cvt\.u32\.u8", ptx)) == 4 and len(re.findall(r"max\.f32", ptx)) == 4
    _assembled(k)


def test_impure_asm_is_kept_when_unused(target):
    @tritium.jit
    def unused(x_ptr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        tl.inline_asm_elementwise("membar.gl; mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=False,
                                  pack=1)

    k = _compile(target, unused, {"x_ptr": "*i32"}, {"BLOCK": 128})
    assert "membar.gl" in k.asm["ptx"]
    _assembled(k)


def test_a_pack_that_splits_a_register_is_refused_at_its_line(target):
    with pytest.raises(CompilationError, match=r"pack=6 does not fill whole 32-bit registers") as e:
        _compile(target, bad_pack_kernel, {"x_ptr": "*u8", "y_ptr": "*u8"}, {"BLOCK": 512})
    assert e.value.kernel == "bad_pack_kernel" and e.value.lineno is not None
    assert "y = tl.inline_asm_elementwise(" in str(e.value)
