"""Triton itself as the reference, where it is installed beside a GPU: the same kernel source
(``parity_kernels.py``) run by Triton and by tritium must give the same bits. It checks the fp8
conversions Triton has on NVIDIA GPUs (e4m3fn, e5m2 and its software e4b15, from fp32 and from every
fp16 pattern, and every pattern's value) and host tensor descriptors (a matmul, NaN padding)."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")
if not torch.cuda.is_available():
    pytest.skip("Triton parity runs on a CUDA GPU", allow_module_level=True)

KERNELS = Path(__file__).with_name("parity_kernels.py")
FP8 = ["float8e4nv", "float8e5", "float8e4b15"]


def _build(framework: str) -> types.ModuleType:
    if framework == "tritium":
        import tritium as jit_module
        import tritium.language as tl
        from tritium.tools.tensor_descriptor import TensorDescriptor
    else:
        import triton as jit_module
        import triton.language as tl
        from triton.tools.tensor_descriptor import TensorDescriptor
    module = types.ModuleType(f"parity_kernels_{framework}")
    module.__file__ = str(KERNELS)
    sys.modules[module.__name__] = module
    source = KERNELS.read_text().replace("jit = tl = TensorDescriptor = None  # noqa: F811 - bound by the loader", "")
    module.jit, module.tl, module.TensorDescriptor = jit_module.jit, tl, TensorDescriptor
    exec(compile(source, str(KERNELS), "exec"), module.__dict__)
    return module


@pytest.fixture(scope="module")
def frameworks():
    return {name: _build(name) for name in ("triton", "tritium")}


@pytest.fixture(autouse=True)
def _nvptx(monkeypatch):
    monkeypatch.setenv("TRITIUM_TARGET", "nvptx")


def _fp32_sample() -> torch.Tensor:
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32)  # every kind of float32
    scaled = np.concatenate([rng.standard_normal(1 << 16) * s for s in (1e-6, 1e-3, 0.1, 1, 10, 300, 6e4)])
    x = np.concatenate([bits.view(np.float32), scaled.astype(np.float32)])
    return torch.from_numpy(x).cuda()


@pytest.mark.parametrize("fmt", FP8)
@pytest.mark.parametrize("source", ["fp32", "fp16"])
def test_fp8_conversion_bits_are_triton_s(frameworks, fmt, source):
    x = _fp32_sample() if source == "fp32" else \
        torch.arange(1 << 16, dtype=torch.int32).to(torch.int16).view(torch.float16).cuda()
    out = {}
    for name, k in frameworks.items():
        o = torch.zeros(x.numel(), dtype=torch.uint8, device="cuda")
        k.convert_kernel[(x.numel() // 1024 + 1,)](x, o, x.numel(), FMT=getattr(k.tl, fmt), BLOCK=1024)
        out[name] = o.cpu().numpy()
    bad = np.flatnonzero(out["triton"] != out["tritium"])
    xs = x.cpu().numpy()
    assert bad.size == 0, [(float(xs[i]), int(out["triton"][i]), int(out["tritium"][i])) for i in bad[:10]]


@pytest.mark.parametrize("fmt", FP8)
def test_fp8_values_are_triton_s(frameworks, fmt):
    bits = torch.arange(256, dtype=torch.int32).to(torch.uint8).cuda()
    out = {}
    for name, k in frameworks.items():
        o = torch.zeros(256, dtype=torch.float32, device="cuda")
        k.decode_kernel[(1,)](bits, o, FMT=getattr(k.tl, fmt))
        out[name] = o.cpu().numpy()
    np.testing.assert_array_equal(out["tritium"], out["triton"])
    np.testing.assert_array_equal(np.signbit(out["tritium"]), np.signbit(out["triton"]))


def test_host_descriptor_matmul_is_triton_s(frameworks):
    m, n, k = 200, 136, 256
    a = torch.randn(m, k, dtype=torch.float16, device="cuda")
    b = torch.randn(k, n, dtype=torch.float16, device="cuda")
    out = {}
    for name, kern in frameworks.items():
        c = torch.full((m, n), 7.0, dtype=torch.float16, device="cuda")
        D = kern.TensorDescriptor
        kern.desc_matmul_kernel[(triton_cdiv(m, 64), triton_cdiv(n, 64))](
            D.from_tensor(a, [64, 32]), D.from_tensor(b, [32, 64]), D.from_tensor(c, [64, 64]), k, BM=64, BN=64, BK=32)
        out[name] = c
    ref = (a.double() @ b.double()).half()
    torch.testing.assert_close(out["tritium"], ref, atol=2e-2, rtol=1e-2)
    torch.testing.assert_close(out["tritium"], out["triton"], atol=2e-2, rtol=1e-2)


@pytest.mark.parametrize("padding", ["zero", "nan"])
def test_host_descriptor_padding_is_triton_s(frameworks, padding):
    m, n, bm, bn = 21, 40, 16, 32
    src = torch.randn(m, n, device="cuda")
    out = {}
    for name, kern in frameworks.items():
        o = torch.full((32, 64), 5.0, device="cuda")
        kern.desc_padded_kernel[(2, 2)](kern.TensorDescriptor.from_tensor(src, [bm, bn], padding=padding), o, 64,
                                        BM=bm, BN=bn)
        out[name] = o.cpu().numpy()
    np.testing.assert_array_equal(out["tritium"], out["triton"])


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)
