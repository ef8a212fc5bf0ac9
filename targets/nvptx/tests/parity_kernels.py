"""Kernels run by both Triton and tritium in ``test_triton_parity.py``: this file is executed with
``jit``, ``tl`` and ``TensorDescriptor`` bound to one framework's (it imports neither)."""

jit = tl = TensorDescriptor = None  # noqa: F811 - bound by the loader


@jit
def convert_kernel(x_ptr, out_ptr, n, FMT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m).to(FMT).to(tl.uint8, bitcast=True), mask=m)


@jit
def decode_kernel(bits_ptr, out_ptr, FMT: tl.constexpr):
    offs = tl.arange(0, 256)
    tl.store(out_ptr + offs, tl.load(bits_ptr + offs).to(FMT, bitcast=True).to(tl.float32))


@jit
def desc_matmul_kernel(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([om, k]), b_desc.load([k, on]), acc)
    c_desc.store([om, on], acc.to(tl.float16))


@jit
def desc_padded_kernel(src, out, OW, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    tl.store(out + rows[:, None] * OW + cols[None, :], src.load([tl.program_id(0) * BM, tl.program_id(1) * BN]))
