"""Triton's specialisation of integer and pointer arguments (== 1, divisible by 16) and warmup, on
every compiling target whose kernels read host memory (the tests pass numpy views)."""

import numpy as np

from .kernels.basic import add_kernel, binop_kernel


def test_integers_specialise_on_one_and_multiples_of_16(compiling_target, host_target):
    add_kernel.kernels.clear()
    x = np.ones(64, np.float32)
    out = np.zeros(64, np.float32)
    kernels = {}
    for n in (1, 17, 19, 32, 48):
        kernels[n] = add_kernel[(1,)](x, x, out, n, BLOCK=64)
        np.testing.assert_array_equal(out[:n], 2)
    assert kernels[17] is kernels[19] and kernels[32] is kernels[48]
    assert len({id(k) for k in kernels.values()}) == 3
    # n == 1 is folded into the code: nothing reads the argument any more
    assert '"tile.splat"(%arg3)' in kernels[17].asm["tile-opt"]
    assert "%arg3" not in kernels[1].asm["tile-opt"].split("\n", 2)[2]
    assert "%arg3: i32 {tile.divisibility = 16 : i32}" in kernels[32].asm["tile"]
    assert "%arg3: i32)" in kernels[17].asm["tile"]


def test_misaligned_pointers_are_not_marked_divisible(compiling_target, host_target):
    buf = np.zeros(65, np.float32)
    x = buf[1:]  # 4 bytes past a 16-byte boundary
    assert x.__array_interface__["data"][0] % 16 == 4
    k = add_kernel[(1,)](x, x, x, 64, BLOCK=64)
    header = k.asm["tile"].split("\n", 2)[1]
    assert "%arg0: !tile.ptr<f32, 1 : i32>, %arg1" in header  # no divisibility attribute
    aligned = add_kernel[(1,)](buf[:64], buf[:64], buf[:64], 64, BLOCK=64)
    assert "%arg0: !tile.ptr<f32, 1 : i32> {tile.divisibility = 16 : i32}" in aligned.asm["tile"]


def test_warmup_compiles_without_running(compiling_target, host_target):
    a = np.arange(8, dtype=np.int32)
    out = np.full(8, -5, np.int32)
    k = binop_kernel.warmup(a, a, out, 8, OP="add", BLOCK=8, grid=(1,))
    assert "tile.make_range" in k.asm["tile"] and k.asm[compiling_target.binary_stage]
    assert (out == -5).all()
    binop_kernel[(1,)](a, a, out, 8, OP="add", BLOCK=8)
    np.testing.assert_array_equal(out, 2 * a)


def test_compile_for_arguments_needs_no_driver(compiling_target, host_target):
    """The compile-only path: host arrays stand in for device memory; neither the driver nor the
    target's pointer binding is asked, and the specialisation follows the arrays' addresses."""
    from tritium.runtime.launch import compile_for_arguments

    class NoDevice(type(compiling_target)):
        name = f"{compiling_target.name}-without-device"

        @property
        def driver(self):
            raise AssertionError("compile-only must not touch the driver")

        def bind_arg(self, value, arg_type, arg_name):
            if arg_type.startswith("*"):
                raise AssertionError("compile-only must not bind pointers through the target")
            return super().bind_arg(value, arg_type, arg_name)

    buf = np.zeros(65, np.float32)
    k = compile_for_arguments(NoDevice(), add_kernel, (buf[:64], buf[:64], buf[:64], 32), {"BLOCK": 64})
    assert k.asm[compiling_target.binary_stage]
    assert "%arg0: !tile.ptr<f32, 1 : i32> {tile.divisibility = 16 : i32}" in k.asm["tile"]
    assert "%arg3: i32 {tile.divisibility = 16 : i32}" in k.asm["tile"]
    misaligned = compile_for_arguments(NoDevice(), add_kernel, (buf[1:], buf[1:], buf[1:], 17), {"BLOCK": 64})
    assert "%arg0: !tile.ptr<f32, 1 : i32>, %arg1" in misaligned.asm["tile"].split("\n", 2)[1]
    assert "%arg3: i32)" in misaligned.asm["tile"]


def test_compile_for_arguments_is_the_kernel_a_launch_uses(compiling_target, host_target):
    from tritium.runtime.launch import compile_for_arguments

    a, b = np.arange(8, dtype=np.int32), np.arange(8, dtype=np.int32)[::-1].copy()
    out = np.full(8, -5, np.int32)
    k = compile_for_arguments(compiling_target, binop_kernel, (a, b, out, 8), {"OP": "max", "BLOCK": 8})
    assert (out == -5).all()  # nothing ran
    assert binop_kernel[(1,)](a, b, out, 8, OP="max", BLOCK=8) is k
    np.testing.assert_array_equal(out, np.maximum(a, b))


def test_compile_for_arguments_refuses_device_memory_clearly(compiling_target, host_target):
    import pytest
    from tritium.errors import ArgumentError
    from tritium.runtime.launch import compile_for_arguments

    class DeviceArray:
        dtype = np.dtype(np.float32)
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (256, False), "version": 3}

    x = np.zeros(4, np.float32)
    with pytest.raises(ArgumentError, match="kernel 'add_kernel': compiling without launching takes host arrays "
                       r"\(e.g. numpy\) standing in for device memory; argument 'y_ptr' \(DeviceArray\) is not one"):
        compile_for_arguments(compiling_target, add_kernel, (x, DeviceArray(), x, 4), {"BLOCK": 4})


def _named(specialization) -> str:  # Triton's test_value_specialization names its kernels so
    ones = "_".join(k for k, v in specialization.constants.items() if v == 1)
    return f"scale_{specialization.signature['value']}_{ones}"


def test_repr_names_each_specialisation(compiling_target, host_target):
    import tritium
    import tritium.language as tl

    @tritium.jit(repr=_named)
    def scale(value, is_one, out):
        tl.store(out, value.to(tl.float32) * is_one)

    out = np.zeros(1, np.float32)
    assert scale[(1,)](2**40, 1, out).name == "scale_i64_is_one" and out[0] == 2.0**40
    assert scale[(1,)](-7, 3, out).name == "scale_i32_" and out[0] == -21  # the ones: none
    assert "scale_i64_is_one" in scale[(1,)](2**41, 1, out).asm["llir"]


def test_a_constexpr_listed_in_do_not_specialize_is_a_compile_error(compiling_target):
    import pytest

    import tritium
    import tritium.language as tl

    @tritium.jit(do_not_specialize=["N"])
    def kernel(N: tl.constexpr):
        pass

    with pytest.raises(tritium.CompilationError, match="N marked as constexpr and listed in do_not_specialize"):
        kernel[(1,)](5)
