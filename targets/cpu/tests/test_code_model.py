"""Kernels JIT-load anywhere in a large process: their code reaches what it calls with 64-bit
addresses (LLVM's large code model). With the small model, a process with torch and CUDA loaded
put a kernel more than 2 GB from a callee, and LLVM's runtime linker aborted the process."""

import platform
import re

import pytest
import tritium
import tritium.language as tl


@tritium.jit
def printing_kernel(x_ptr, BLOCK: tl.constexpr):
    tl.device_print("x", tl.load(x_ptr + tl.arange(0, BLOCK)))


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="reads x86-64 assembly")
def test_calls_out_of_a_kernel_take_64_bit_addresses(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    asm = tritium.compile(printing_kernel, signature="*fp32", constants={"BLOCK": 16}, target="cpu").asm["asm"]
    calls = [line.split(None, 1)[1] for line in asm.splitlines() if re.match(r"\s*call", line)]
    assert calls, "the kernel calls its print callback"
    assert all(target.startswith("*") for target in calls), calls  # through a register, never call sym@PLT
