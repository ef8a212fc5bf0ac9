"""Shared helpers: an NvptxTarget that compiles for a fixed arch without a GPU, and small kernels
written directly with the NVPTX hooks (LLVM IR text, the ``llir`` stage)."""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable

import pytest
from llvmlite import ir as ll
from tritium.runtime import native_launch as launch
from tritium_nvptx import compiler, cuda
from tritium_nvptx.hooks import NvptxHooks
from tritium_nvptx.target import ARCH_ENV, NvptxTarget

GLOBAL = ll.PointerType(addrspace=1)
I32 = ll.IntType(32)


@pytest.fixture
def target(monkeypatch) -> NvptxTarget:
    monkeypatch.setenv(ARCH_ENV, "sm_90")
    return NvptxTarget()


def _kernel_ir(body: Callable, params: list[ll.Type], name: str = "k", num_threads: int = 128) -> str:
    """LLVM IR of a kernel ``name``: ``body(hooks, builder, function)`` emits everything but the return."""
    hooks = NvptxHooks()
    module = ll.Module()
    module.triple, module.data_layout = compiler.TRIPLE, compiler.datalayout()
    fn = hooks.kernel(module, name, params, num_threads)
    b = ll.IRBuilder(fn.append_basic_block("entry"))
    body(hooks, b, fn)
    b.ret_void()
    return str(module)


def _vector_add_ir(ty: ll.Type = ll.VectorType(ll.FloatType(), 4), masked: bool = True) -> str:
    """``z[i] = x[i] + y[i]`` over ``ty`` vectors per thread, masked by ``i < n`` when ``masked``."""
    count = ty.count if isinstance(ty, ll.VectorType) else 1
    element = ty.element if isinstance(ty, ll.VectorType) else ty
    align = count * (element.width // 8 if isinstance(element, ll.IntType) else
                     {"half": 2, "bfloat": 2, "float": 4, "double": 8}[str(element)])

    def body(h, b, fn):
        x, y, z, n = fn.args
        tid, pid = h.thread_id(b), h.program_id(b, 0)
        offset = b.add(b.mul(pid, ll.Constant(I32, 128 * count)), b.mul(tid, ll.Constant(I32, count)))
        mask = b.icmp_signed("<", offset, n) if masked else None
        at = [b.gep(p, [offset], source_etype=element) for p in (x, y, z)]
        xs = h.load(b, at[0], ty, mask, None, align)
        ys = h.load(b, at[1], ty, mask, None, align)
        add = b.fadd if not isinstance(element, ll.IntType) else b.add
        h.store(b, at[2], add(xs, ys), mask, align)

    return _kernel_ir(body, [GLOBAL, GLOBAL, GLOBAL, I32])


@pytest.fixture
def kernel_ir() -> Callable:
    """``kernel_ir(body, params, name="k", num_threads=128)``: see ``_kernel_ir``."""
    return _kernel_ir


@pytest.fixture
def vector_add_ir() -> Callable:
    """``vector_add_ir(ty=<4 x float>, masked=True)``: see ``_vector_add_ir``."""
    return _vector_add_ir


@functools.cache
def _core_test_module(relative: str) -> ModuleType:
    path = Path(__file__).resolve().parents[3] / "tests" / f"{relative}.py"
    spec = importlib.util.spec_from_file_location(f"tritium_core_tests_{relative.replace('/', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _core_test_kernels(name: str) -> ModuleType:
    return _core_test_module(f"kernels/{name}")


@pytest.fixture
def core_kernels() -> Callable[[str], ModuleType]:
    """``core_kernels(name)``: the module ``tests/kernels/<name>.py`` of the core tests, loaded by
    path, so that the nvptx tests compile the very kernels the core tests run (no second copy)."""
    return _core_test_kernels


@pytest.fixture
def threads_emulator() -> ModuleType:
    """The SIMT emulator (``tritium_simt.emulator``): runs tile-layout modules on the host, one OS
    thread per GPU thread, with an emulated matrix instruction."""
    from tritium_simt import emulator

    return emulator


class FakeDriverApi:
    """Records the driver calls of a launcher (no GPU here); every call succeeds. Launches reach
    ``entry``, a C-callable stand-in for ``cuLaunchKernel`` that ``launch.launch`` calls: it records
    ``(function, gx, gy, gz, bx, by, bz, shared, stream, slots, extra)``, ``slots`` being the 8 bytes
    of each parameter, and returns ``result``."""

    FUNCTION = 4242  # the handle cuModuleGetFunction gives

    class CUfunction_attribute:
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8

    def __init__(self, max_threads: int = 1024, result: int = 0):
        self.calls = []
        self.max_threads = max_threads
        self.result = result
        self.entry = launch.LAUNCH_KERNEL(self.launch)
        self.entry_address = ctypes.cast(self.entry, ctypes.c_void_p).value

    def __getattr__(self, name):
        def call(*args):
            self.calls.append((name, args))
            if name == "cuFuncGetAttribute":
                return 0, self.max_threads
            return 0, (self.FUNCTION if name == "cuModuleGetFunction" else f"{name}-handle")
        return call

    def launch(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        slots = []
        while params[len(slots)]:  # the array ends with NULL
            slots.append(ctypes.string_at(params[len(slots)], 8))
        self.calls.append(("cuLaunchKernel", (fn, gx, gy, gz, bx, by, bz, shared, stream, slots, extra or None)))
        return self.result


@pytest.fixture
def fake_driver(monkeypatch) -> Callable[..., FakeDriverApi]:
    """``fake_driver(**kwargs)``: a FakeDriverApi in place of the CUDA driver for this test."""

    def install(**kwargs) -> FakeDriverApi:
        fake = FakeDriverApi(**kwargs)
        fake.cuGetErrorName = lambda err: (0, b"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES") if err == 701 else (1, None)
        monkeypatch.setattr(cuda, "api", lambda: fake)
        monkeypatch.setattr(cuda, "launch_entry", lambda: fake.entry_address)
        monkeypatch.setattr(cuda, "make_current", lambda device: fake.calls.append(("make_current", (device,))))
        return fake
    return install
