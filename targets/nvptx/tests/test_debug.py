"""``tl.device_print`` and ``tl.device_assert`` on nvptx: CUDA's ``vprintf`` and ``__assertfail``,
called as nvcc's ``printf`` and ``assert`` call them, checked in the LLVM IR and PTX (and cubin,
where ptxas exists); a failed assertion reported by the driver; on a GPU, the printed text is the
interpreter's."""

from __future__ import annotations

import ctypes
import inspect
import os
import re
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest
import tritium
import tritium.language as tl
from llvmlite import ir as ll
from tritium import plugins
from tritium.errors import DeviceAssertionError
from tritium.runtime import debug_output
from tritium.runtime.compiler import compile_specialized
from tritium.target import KernelSignature
from tritium_nvptx import compiler, cuda, libcuda, toolchain
from tritium_nvptx.driver import NvptxDriver, NvptxLauncher
from tritium_nvptx.target import NvptxTarget

I32, I64, F64 = ll.IntType(32), ll.IntType(64), ll.DoubleType()
HEAD = "pid (%d, %d, %d)"


def compile_ptx(target, llir: str) -> str:
    ctx = types.SimpleNamespace(target=target, options=target.parse_options({}), metadata={},
                                signature=KernelSignature("k", ("n",), ("i32",)))
    return compiler.ptx(llir, ctx)


def constant_strings(ptx: str) -> list[str]:
    """Every NUL-terminated byte-array constant of the PTX (format strings and messages), as text;
    PTX leaves out the trailing zeros of an initializer."""
    found = []
    for size, body in re.findall(r"\.global \.align 1 \.b8 \S+\[(\d+)\] = \{([\d, ]+)\};", ptx):
        data = bytes(int(v) for v in body.split(",")).ljust(int(size), b"\0")
        assert data.endswith(b"\0") and b"\0" not in data[:-1]
        found.append(data[:-1].decode())
    return found


def local_stores(ptx: str, call: int = 0) -> list[tuple[int, int]]:
    """``(bytes, offset)`` of each store into the local argument buffer before vprintf call ``call``."""
    section = ptx.split("call.uni (retval0), vprintf")[call]
    section = section[section.rfind("} // callseq") + 1:] if call else section
    return [(int(bits) // 8, int(offset or 0))
            for bits, offset in re.findall(r"st\.local\.b(32|64)\s+\[%rd\d+(?:\+(\d+))?\]", section)]


def c_layout(fields: list) -> tuple[list[tuple[int, int]], int]:
    """``(size, offset)`` of each field of a C struct of ``fields`` (ctypes types), and its size."""
    struct = type("Args", (ctypes.Structure,), {"_fields_": [(f"f{i}", t) for i, t in enumerate(fields)]})
    return [(ctypes.sizeof(t), getattr(struct, f"f{i}").offset) for i, t in enumerate(fields)], ctypes.sizeof(struct)


# -- the hooks -------------------------------------------------------------------------------------
def test_printf_packs_arguments_as_c_lays_out_a_struct(target, kernel_ir):
    """vprintf reads its arguments from a buffer laid out as a C struct: each at its size's alignment."""
    def body(h, b, fn):
        t = h.thread_id(b)
        h.printf(b, "%d %lld %d %f %d\n", [t, b.zext(t, I64), b.add(t, fn.args[0]), b.uitofp(t, F64), b.add(t, t)])

    llir = kernel_ir(body, [I32])
    assert re.search(r'declare i32 @"vprintf"\(ptr %"?\.?\w*"?, ptr %"?\.?\w*"?\)', llir)
    ptx = compile_ptx(target, llir)
    fields, size = c_layout([ctypes.c_int32, ctypes.c_int64, ctypes.c_int32, ctypes.c_double, ctypes.c_int32])
    assert fields == [(4, 0), (8, 8), (4, 16), (8, 24), (4, 32)]  # the reference itself pads
    assert local_stores(ptx) == fields
    assert f".local .align 8 .b8 \t__local_depot0[{size}]" in ptx
    assert re.search(r"st\.param\.b64\s+\[param1\], %rd\d+;", ptx)  # the buffer's generic address
    assert constant_strings(ptx) == ["%d %lld %d %f %d\n"]


def test_printf_without_arguments_passes_a_null_buffer(target, kernel_ir):
    ptx = compile_ptx(target, kernel_ir(lambda h, b, fn: h.printf(b, "hello\n", []), [I32]))
    assert re.search(r"st\.param\.b64\s+\[param1\], 0;", ptx)
    assert "__local_depot" not in ptx and constant_strings(ptx) == ["hello\n"]


def test_format_strings_are_generic_pointers_to_constants_in_global_memory(target, kernel_ir):
    def body(h, b, fn):
        for text in ("a %d\n", "b %d\n", "a %d\n"):
            h.printf(b, text, [fn.args[0]])

    llir = kernel_ir(body, [I32])
    assert llir.count("private unnamed_addr addrspace(1) constant") == 2  # one per distinct text
    assert re.search(r"addrspacecast ptr addrspace\(1\) @\S+ to ptr", llir)
    ptx = compile_ptx(target, llir)
    assert sorted(constant_strings(ptx)) == ["a %d\n", "b %d\n"]
    assert re.search(r"cvta\.global\.u64", ptx)
    assert ptx.count("call.uni (retval0), vprintf") == 3


def test_calls_reuse_one_argument_buffer_per_type_list(target, kernel_ir):
    """Buffers sit in the kernel's entry block, allocated once: prints in loops do not grow the stack."""
    def body(h, b, fn):
        t = h.thread_id(b)
        h.printf(b, "%d\n", [t])
        h.printf(b, "%d again\n", [b.add(t, t)])
        h.printf(b, "%f\n", [b.uitofp(t, F64)])

    llir = kernel_ir(body, [I32])
    assert llir.count("alloca") == 2
    entry = llir[llir.index("{\n"):llir.index("br label")]
    assert entry.count("alloca") == 2
    ptx = compile_ptx(target, llir)
    assert local_stores(ptx, 0) == [(4, 0)] and local_stores(ptx, 1) == [(4, 0)]


def test_assert_fail_calls_assertfail_as_cuda_assert_does(target, kernel_ir):
    ptx = compile_ptx(target, kernel_ir(lambda h, b, fn: h.assert_fail(b, "x > 0", "kernels.py", 42), [I32],
                                        name="checked"))
    assert re.search(r"\.extern \.func __assertfail\s*\(\s*\.param \.b64 \w+,\s*\.param \.b64 \w+,\s*"
                     r"\.param \.b32 \w+,\s*\.param \.b64 \w+,\s*\.param \.b64 \w+\s*\)", ptx)
    assert sorted(constant_strings(ptx)) == ["checked", "kernels.py", "x > 0"]  # message, file, function
    assert re.search(r"st\.param\.b32\s+\[param2\], 42;", ptx)
    assert re.search(r"st\.param\.b64\s+\[param4\], 1;", ptx)  # sizeof(char)
    assert "call.uni __assertfail, (param0, param1, param2, param3, param4);" in ptx


# -- kernels ---------------------------------------------------------------------------------------
@tritium.jit
def prints(x_ptr, h_ptr, b_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_print("x", x)
    tl.device_print("h", tl.load(h_ptr + offs), hex=True)
    tl.device_print("b", tl.load(b_ptr + offs))
    print("n", n, x_ptr, n.to(tl.int64) * 3)
    tl.device_print("u", n.to(tl.uint8))
    tl.device_print("done")


PRINT_TYPES = {"x_ptr": "*fp32", "h_ptr": "*fp16", "b_ptr": "*bf16", "n": "i32"}
PRINT_FORMATS = [f"{HEAD} idx (%2d) x: %f\n", f"{HEAD} idx (%2d) h: 0x%04x\n", f"{HEAD} idx (%2d) b: %f\n",
                 f"{HEAD} idx () n: (operand 0) %d\n", f"{HEAD} idx () n: (operand 1) 0x%llx\n",
                 f"{HEAD} idx () n: (operand 2) %lld\n", f"{HEAD} idx () u: %u\n", f"{HEAD} done\n"]


@tritium.jit
def asserting(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_assert(x > 0, "x must be positive")
    tl.store(x_ptr + tl.arange(0, BLOCK), x + 1)


ASSERT_LINE = inspect.getsourcelines(asserting.fn)[1] + 3


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_device_print_kernel_prints_each_value_in_the_interpreters_format(target, arch):
    k = compile_specialized(prints, target, PRINT_TYPES, {"BLOCK": 64}, {}, {"num_warps": 1, "arch": arch})
    ptx = k.asm["ptx"]
    assert sorted(constant_strings(ptx)) == sorted(PRINT_FORMATS)
    assert ptx.count("call.uni (retval0), vprintf") >= len(PRINT_FORMATS)
    if toolchain.ptxas_path():
        assert k.metadata["binary_format"] == "cubin" and k.metadata["spills"] == 0


@pytest.mark.parametrize("how", ["option", "environment"])
def test_device_assert_in_debug_mode_calls_assertfail(target, monkeypatch, how):
    options = {"debug": True} if how == "option" else {}
    if how == "environment":
        monkeypatch.setenv("TRITIUM_DEBUG", "1")
    k = compile_specialized(asserting, target, {"x_ptr": "*fp32"}, {"BLOCK": 256}, {}, options)
    ptx = k.asm["ptx"]
    assert {"x must be positive", __file__, "asserting"} <= set(constant_strings(ptx))
    assert re.search(rf"st\.param\.b32\s+\[param2\], {ASSERT_LINE};", ptx)
    assert "call.uni __assertfail" in ptx
    if toolchain.ptxas_path():
        assert k.metadata["binary_format"] == "cubin"


def test_device_assert_is_compiled_out_without_debug_mode(target, monkeypatch):
    monkeypatch.delenv("TRITIUM_DEBUG", raising=False)
    ptx = compile_specialized(asserting, target, {"x_ptr": "*fp32"}, {"BLOCK": 256}, {}, {}).asm["ptx"]
    assert "__assertfail" not in ptx and "x must be positive" not in constant_strings(ptx)


# -- the driver ------------------------------------------------------------------------------------
ASSERT = libcuda.CUDA_ERROR_ASSERT
ASSERT_REPORT = r"device-side assertion \(tl\.device_assert\) failed.*printed.*restart the process"


def test_a_failed_assertion_is_reported_when_synchronising(monkeypatch):
    monkeypatch.setattr(cuda, "make_current", lambda device: None)
    monkeypatch.setattr(cuda, "api", lambda: types.SimpleNamespace(cuCtxSynchronize=lambda: (ASSERT,)))
    with pytest.raises(DeviceAssertionError, match="cuCtxSynchronize: .*" + ASSERT_REPORT):
        NvptxDriver().synchronize()


def test_a_failed_assertion_is_reported_at_the_next_launch(fake_driver):
    fake_driver(result=ASSERT)
    launcher = NvptxLauncher(b"", KernelSignature("k", ("n",), ("i32",)), {"num_warps": 4})
    with pytest.raises(DeviceAssertionError, match="cuLaunchKernel of kernel k: .*" + ASSERT_REPORT):
        launcher((1, 1, 1), [3])


def test_other_driver_errors_keep_their_names(monkeypatch):
    names = {libcuda.CUDA_ERROR_INVALID_VALUE: b"CUDA_ERROR_INVALID_VALUE"}
    monkeypatch.setattr(cuda, "api", lambda: types.SimpleNamespace(cuGetErrorName=lambda err: (0, names[err])))
    with pytest.raises(cuda.CudaError, match="cuMemcpyDtoH failed: CUDA_ERROR_INVALID_VALUE") as info:
        cuda.check("cuMemcpyDtoH", (libcuda.CUDA_ERROR_INVALID_VALUE,))
    assert not isinstance(info.value, DeviceAssertionError)
    with pytest.raises(DeviceAssertionError, match="cuMemcpyDtoH: .*" + ASSERT_REPORT):
        cuda.check("cuMemcpyDtoH", (ASSERT,))


# -- on a GPU --------------------------------------------------------------------------------------
gpu = pytest.mark.skipif(not NvptxTarget().availability()[0], reason="no usable NVIDIA GPU here")


@gpu
def test_gpu_prints_the_lines_the_interpreter_prints(monkeypatch, capfd, tmp_path):
    """Printed at the synchronisation after the launch, in no particular order."""
    monkeypatch.setenv("TRITIUM_TARGET", "nvptx")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    rng = np.random.default_rng(1)
    x = rng.standard_normal(64).astype(np.float32)
    h = rng.standard_normal(64).astype(np.float16)
    s = rng.integers(-2**15, 2**15, 64).astype(np.int16)  # b_ptr as *i16: sign-extended to %d
    driver = plugins.targets()["nvptx"].driver
    args = [driver.to_device(a) for a in (x, h, s)]
    capfd.readouterr()
    prints[(2,)](*args, -7, BLOCK=64)
    driver.synchronize()
    ctypes.CDLL(None).fflush(None)
    printed = capfd.readouterr().out.splitlines()
    expected = []
    for pid in ((0, 0, 0), (1, 0, 0)):
        expected += debug_output.print_lines(" x: ", pid, [(x, tl.float32)], False)
        expected += debug_output.print_lines(" h: ", pid, [(h, tl.float16)], True)
        expected += debug_output.print_lines(" b: ", pid, [(s, tl.int16)], False)
        scalars = [(np.int32(-7), tl.int32), (np.uint64(args[0].ptr), tl.pointer_type(tl.float32)), (np.int64(-21), tl.int64)]
        expected += debug_output.print_lines(" n: ", pid, scalars, False)
        expected += debug_output.print_lines(" u: ", pid, [(np.uint8(249), tl.uint8)], False)
        expected += debug_output.print_lines(" done", pid, [], False)
    assert sorted(printed) == sorted(expected)


@gpu
def test_gpu_assertion_prints_on_the_device_and_poisons_the_context(tmp_path):
    """In a process of its own: a failed assertion leaves the GPU unusable to its process."""
    script = tmp_path / "assert_on_gpu.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import tritium
        import tritium.language as tl
        from tritium import plugins
        from tritium.errors import DeviceAssertionError

        @tritium.jit
        def asserting(x_ptr, BLOCK: tl.constexpr):
            x = tl.load(x_ptr + tl.arange(0, BLOCK))
            tl.device_assert(x > 0, "x must be positive")

        driver = plugins.targets()["nvptx"].driver
        x = driver.to_device(np.arange(64, dtype=np.float32))
        asserting[(1,)](x, BLOCK=64)
        for step in (driver.synchronize, lambda: (asserting[(1,)](x, BLOCK=64), driver.synchronize())):
            try:
                step()
            except DeviceAssertionError as e:
                print("REPORTED", e, flush=True)
    """))
    env = dict(os.environ, TRITIUM_TARGET="nvptx", TRITIUM_DEBUG="1", TRITIUM_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert re.search(r"asserting: block: \[0,0,0\], thread: \[\d+,0,0\] Assertion `x must be positive` failed",
                     done.stdout + done.stderr)
    reports = [line for line in done.stdout.splitlines() if line.startswith("REPORTED")]
    assert len(reports) == 2 and all(re.search(ASSERT_REPORT, line) for line in reports)
    assert "cuCtxSynchronize" in reports[0]  # then at the next launch, or the synchronisation after it
