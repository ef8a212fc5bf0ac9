"""Kernels converting to and from 8-bit floats and rounding toward zero (tests/test_fp8.py)."""

import tritium
import tritium.language as tl


@tritium.jit
def to_fp8(x_ptr, e4_ptr, e5_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(e4_ptr + offs, x.to(tl.float8e4nv).to(tl.uint8, bitcast=True), mask=m)
    tl.store(e5_ptr + offs, x.to(tl.float8e5).to(tl.uint8, bitcast=True), mask=m)


@tritium.jit
def from_fp8(bits_ptr, f32_ptr, f16_ptr, f64_ptr, other_ptr, E5: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    bits = tl.load(bits_ptr + offs)
    x = bits.to(tl.float8e5 if E5 else tl.float8e4nv, bitcast=True)
    tl.store(f32_ptr + offs, x.to(tl.float32))
    tl.store(f16_ptr + offs, x.to(tl.float16))
    tl.store(f64_ptr + offs, x.to(tl.float64))
    # fp8 -> the other fp8 format, through fp32
    tl.store(other_ptr + offs, x.to(tl.float8e4nv if E5 else tl.float8e5).to(tl.uint8, bitcast=True))


@tritium.jit
def fp8_pointers(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """fp8 through typed pointers (``tritium.reinterpret``): loads with a constant for masked-off
    elements, arithmetic (in fp32, rounded back), a store."""
    offs = tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=0.0)
    b = tl.load(b_ptr + offs, mask=m, other=0.0)
    tl.static_assert(a.dtype == tl.float8e4nv)
    c = a * b + 1.5
    tl.static_assert(c.dtype == tl.float8e4nv)
    tl.store(out_ptr + offs, c, mask=m)


@tritium.jit
def toward_zero(x_ptr, h_ptr, hz_ptr, f_ptr, fz_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(h_ptr + offs, x.to(tl.float16), mask=m)
    tl.store(hz_ptr + offs, x.to(tl.float16, "rtz"), mask=m)  # Triton's positional order
    tl.store(f_ptr + offs, x.to(tl.float32, fp_downcast_rounding="rtne"), mask=m)
    tl.store(fz_ptr + offs, x.to(tl.float32, fp_downcast_rounding="rtz"), mask=m)


@tritium.jit
def bad_cast(x_ptr, WHAT: tl.constexpr):
    x = tl.load(x_ptr)
    if WHAT == "int":
        tl.store(x_ptr, x.to(tl.float8e5).to(tl.int32).to(tl.float32))
    elif WHAT == "fp64-e4b15":
        tl.store(x_ptr, x.to(tl.float64).to(tl.float8e4b15).to(tl.float32))
    elif WHAT == "e4b8-fp64":
        tl.store(x_ptr, x.to(tl.float8e4b8).to(tl.float64).to(tl.float32))
    elif WHAT == "rtz-e5b16":
        tl.store(x_ptr, x.to(tl.float8e5b16, fp_downcast_rounding="rtz").to(tl.float32))
    elif WHAT == "upcast-rtz":
        tl.store(x_ptr, x.to(tl.float64, "rtz").to(tl.float32))
    else:
        tl.store(x_ptr, x.to(tl.float16, "up"))


@tritium.jit
def to_variant(x_ptr, out_ptr, n, FMT: tl.constexpr, BLOCK: tl.constexpr):
    """x (fp32 or fp16) to the fp8 type ``FMT``, stored as its bits."""
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m).to(FMT).to(tl.uint8, bitcast=True), mask=m)


@tritium.jit
def from_variant(bits_ptr, f32_ptr, f16_ptr, bf16_ptr, FMT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(bits_ptr + offs).to(FMT, bitcast=True)
    tl.store(f32_ptr + offs, x.to(tl.float32))
    tl.store(f16_ptr + offs, x.to(tl.float16))
    tl.store(bf16_ptr + offs, x.to(tl.bfloat16).to(tl.float32))


@tritium.jit
def fp8_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, A: tl.constexpr = tl.float8e5,
            B: tl.constexpr = tl.float8e4nv, OUT: tl.constexpr = tl.float32):
    """fp8 operands of tl.dot (Triton's tutorial 03 multiplies fp8e5 matrices), into ``OUT``."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :]).to(A, bitcast=True)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :]).to(B, bitcast=True)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, out_dtype=OUT))
