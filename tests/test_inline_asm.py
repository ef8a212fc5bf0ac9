"""``tl.inline_asm_elementwise`` on every installed target: a target that runs foreign assembly
(``Target.inline_asm``) computes Triton's examples, the others refuse the kernel at the line that
uses it, naming the target."""

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.errors import LocatedError


@tritium.jit
def shl_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y)


@tritium.jit
def two_results_kernel(a_ptr, b_ptr, c_ptr, d_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
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


def _run(target, kernel, inputs, outputs, block):
    drv = target.driver
    args = [drv.to_device(a) for a in inputs] + [drv.to_device(np.zeros_like(o)) for o in outputs]
    kernel[(1,)](*args, BLOCK=block)
    return [drv.to_host(a) for a in args[len(inputs):]]


def _ptx_only(target) -> None:
    if target.inline_asm is None:
        return
    if target.inline_asm != "ptx":
        pytest.skip(f"these kernels are PTX; the {target.name} target takes {target.inline_asm}")


@pytest.mark.parametrize("block", [128, 1024])
def test_shl_by_three(target, block):
    x = np.arange(block, dtype=np.int32) - 7
    if target.inline_asm is None:
        with pytest.raises(LocatedError, match=f"tl.inline_asm_elementwise is not supported on the {target.name} "
                                               f"target") as e:
            _run(target, shl_kernel, [x], [x], block)
        assert e.value.kernel == "shl_kernel" and e.value.lineno == shl_kernel.fn.__code__.co_firstlineno + 4  # the decorator first
        return
    _ptx_only(target)
    (y,) = _run(target, shl_kernel, [x], [x], block)
    np.testing.assert_array_equal(y, x << 3)


@pytest.mark.parametrize("block", [128, 512])
def test_two_results_packed_four_at_a_time(target, block):
    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, block).astype(np.uint8)
    b = rng.uniform(-50, 300, block).astype(np.float32)
    outs = [np.zeros(block, np.int32), np.zeros(block, np.float32)]
    if target.inline_asm is None:
        with pytest.raises(LocatedError, match="not supported on the"):
            _run(target, two_results_kernel, [a, b], outs, block)
        return
    _ptx_only(target)
    c, d = _run(target, two_results_kernel, [a, b], outs, block)
    np.testing.assert_array_equal(c, a.astype(np.int32))
    np.testing.assert_array_equal(d, np.maximum(a.astype(np.float32), b))


def test_dtype_must_be_an_element_type(target):
    x = np.zeros(128, np.int32)

    @tritium.jit
    def bad(x_ptr, y_ptr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        tl.store(y_ptr + tl.arange(0, BLOCK), tl.inline_asm_elementwise("", "=r,r", [x], dtype=(), is_pure=True,
                                                                        pack=1))

    with pytest.raises(LocatedError, match="needs at least one result dtype"):
        _run(target, bad, [x], [x], 128)
