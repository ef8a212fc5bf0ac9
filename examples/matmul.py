"""Matrix multiplication: a port of Triton's tutorial 03 (blocked, grouped program order, ``tl.dot``).

Each program computes one BLOCK_SIZE_M x BLOCK_SIZE_N block of C, looping over K in steps of
BLOCK_SIZE_K with masked loads; programs are ordered in groups of GROUP_SIZE_M rows of blocks so
that neighbouring programs reuse the same blocks of A and B from cache.

    python examples/matmul.py [--size N] [--dtype fp32|fp16]      # TRITIUM_TARGET picks the target

It prints the speed in FLOP/s (2 N^3 per product), beside the same product by numpy on the host or
torch on a GPU.
"""

import argparse

import numpy as np

import tritium as triton
import tritium.language as tl
from example_utils import device, exit_status, report
from tritium.testing import do_bench


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


#: the block sizes that run fastest on the cpu target (fewest loads per multiply-add; measured on 2 cores)
CPU_BLOCKS = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}


def matmul(a, b, c, **blocks):
    """``c = a @ b`` for row-major (contiguous) 2-D device arrays; ``blocks`` default to ``CPU_BLOCKS``."""
    (M, K), (_, N) = a.shape, b.shape
    meta = {**CPU_BLOCKS, **blocks}
    grid = (triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, **meta)
    return c


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--dtype", choices=["fp32", "fp16"], default="fp32")
    args = parser.parse_args()

    t = np.float32 if args.dtype == "fp32" else np.float16
    rng = np.random.default_rng(0)
    a = rng.standard_normal((args.size, args.size)).astype(t)
    b = rng.standard_normal((args.size, args.size)).astype(t)
    dev = device()
    a_d, b_d, c_d = dev.to_device(a), dev.to_device(b), dev.empty((args.size, args.size), t)
    ms = do_bench(lambda: matmul(a_d, b_d, c_d))
    library_ms = do_bench(lambda: a_d @ b_d)  # numpy's or torch's product of the same arrays
    flops = 2 * args.size ** 3
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = 1e-4 * args.size ** 0.5 if args.dtype == "fp32" else 2e-2 * args.size ** 0.5
    speed = f"{dev.flop_rate(flops, ms)} ({dev.library} {dev.flop_rate(flops, library_ms)})"
    exit_status(report(f"matmul {args.size}^3 {args.dtype}", dev.to_host(c_d), want, rtol=0.0, atol=tol,
                       ms=ms, speed=speed))


if __name__ == "__main__":
    main()
