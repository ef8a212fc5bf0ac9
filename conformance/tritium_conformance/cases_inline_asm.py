"""Conformance cases of ``tl.inline_asm_elementwise`` with Triton's own PTX examples, and their kernels.

The assembly is PTX, so only a target that runs PTX (``Target.inline_asm == "ptx"``) can pass them;
the others declare them as gaps ("foreign assembly") through ``tritium_conformance_expectations``.
References are exact integers and float maxima.
"""

from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl

from .suite import Device, Output, cases, rng_for

POISON = 77  # what unwritten outputs hold


@triton.jit
def shl_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def bytes_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """Four uint8 per 32-bit register, one call per four elements."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.inline_asm_elementwise("and.b32 $0, $1, 0x1F1F1F1F;", "=r,r", [x], dtype=tl.uint8, is_pure=True,
                                  pack=4)
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def two_results_kernel(a_ptr, b_ptr, c_ptr, d_ptr, BLOCK: tl.constexpr):
    """Triton's docstring example: c = int32(a), d = max(float(a), b), four at a time."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    c, d = tl.inline_asm_elementwise(
        "{ .reg .b8 t<4>; mov.b32 {t0, t1, t2, t3}, $8; cvt.u32.u8 $0, t0; cvt.u32.u8 $1, t1; "
        "cvt.u32.u8 $2, t2; cvt.u32.u8 $3, t3; } cvt.rn.f32.s32 $4, $0; cvt.rn.f32.s32 $5, $1; "
        "cvt.rn.f32.s32 $6, $2; cvt.rn.f32.s32 $7, $3; max.f32 $4, $4, $9; max.f32 $5, $5, $10; "
        "max.f32 $6, $6, $11; max.f32 $7, $7, $12;",
        "=r,=r,=r,=r,=r,=r,=r,=r,r,r,r,r,r", [a, b], dtype=(tl.int32, tl.float32), is_pure=True, pack=4)
    tl.store(c_ptr + offs, c)
    tl.store(d_ptr + offs, d)


@triton.jit
def broadcast_kernel(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
    """A column and a row broadcast to a 2-D block: y = x[r] + 10 * c."""
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + r)
    y = tl.inline_asm_elementwise("mad.lo.s32 $0, $2, 10, $1;", "=r,r,r", [x, c], dtype=tl.int32, is_pure=True,
                                  pack=1)
    tl.store(y_ptr + r * C + c, y)


@cases("inline_asm-ptx-shl-n{n}", n=[1, 100, 1000, 4096])
def shl(dev: Device, n: int) -> list[Output]:
    x = rng_for(f"inline_asm-shl-{n}").integers(-2**20, 2**20, n, dtype=np.int32)
    y = dev.full(n, POISON, np.int32)
    dev.launch(shl_kernel, (triton.cdiv(n, 256),), dev.to_device(x), y, n, BLOCK=256)
    return [Output("y", dev.to_host(y), x << 3)]


@cases("inline_asm-ptx-uint8-pack4-n{n}", n=[1, 300, 2048])
def packed_bytes(dev: Device, n: int) -> list[Output]:
    x = rng_for(f"inline_asm-bytes-{n}").integers(0, 256, n, dtype=np.uint8)
    y = dev.full(n, POISON, np.uint8)
    dev.launch(bytes_kernel, (triton.cdiv(n, 512),), dev.to_device(x), y, n, BLOCK=512)
    return [Output("y", dev.to_host(y), x & 0x1F)]


@cases("inline_asm-ptx-two_results-block{block}", block=[128, 512])
def two_results(dev: Device, block: int) -> list[Output]:
    rng = rng_for(f"inline_asm-two-{block}")
    n = 2 * block
    a = rng.integers(0, 256, n, dtype=np.uint8)
    b = rng.uniform(-50, 300, n).astype(np.float32)
    c, d = dev.full(n, POISON, np.int32), dev.full(n, POISON, np.float32)
    dev.launch(two_results_kernel, (2,), dev.to_device(a), dev.to_device(b), c, d, BLOCK=block)
    return [Output("c", dev.to_host(c), a.astype(np.int32)),
            Output("d", dev.to_host(d), np.maximum(a.astype(np.float32), b))]


@cases("inline_asm-ptx-broadcast-2d")
def broadcast(dev: Device) -> list[Output]:
    R, C = 16, 32
    x = rng_for("inline_asm-broadcast").integers(-1000, 1000, R, dtype=np.int32)
    y = dev.full((R, C), POISON, np.int32)
    dev.launch(broadcast_kernel, (1,), dev.to_device(x), y, R=R, C=C)
    return [Output("y", dev.to_host(y), x[:, None] + 10 * np.arange(C, dtype=np.int32)[None, :])]
