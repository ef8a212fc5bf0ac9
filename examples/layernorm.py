"""Layer normalisation, forward pass (a port of the forward kernel of Triton's tutorial 05).

One program normalises one row: ``y = (x - mean) / sqrt(var + eps) * weight + bias``. Rows wider
than BLOCK_SIZE are walked in BLOCK_SIZE-wide pieces, three times (mean, variance, output); the
mean and 1/std of each row are stored too, as a backward pass would need them.

    python examples/layernorm.py [--rows M] [--cols N] [--block B]
"""

import argparse

import numpy as np

import tritium as triton
import tritium.language as tl
from example_utils import device, exit_status, report
from tritium.testing import do_bench


@triton.jit
def layer_norm_fwd_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    # mean
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    # variance
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    # normalise and apply the affine transform
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        tl.store(Y + cols, x_hat * w + b, mask=mask)


def layer_norm(x, weight, bias, y, mean, rstd, eps=1e-5, BLOCK_SIZE=None):
    """Normalise each row of the contiguous 2-D device array ``x`` into ``y``; also fills the
    per-row ``mean`` and ``rstd``. BLOCK_SIZE defaults to the row width, at most 1024."""
    M, N = x.shape
    if BLOCK_SIZE is None:
        BLOCK_SIZE = min(1024, triton.next_power_of_2(N))
    layer_norm_fwd_kernel[(M,)](x, y, weight, bias, mean, rstd, N, N, eps, BLOCK_SIZE=BLOCK_SIZE)
    return y


def layer_norm_reference(x, weight, bias, eps):
    """float64 numpy layer norm: (y, mean, rstd)."""
    x = x.astype(np.float64)
    mean = x.mean(axis=1)
    rstd = 1.0 / np.sqrt(x.var(axis=1) + eps)
    return (x - mean[:, None]) * rstd[:, None] * weight + bias, mean, rstd


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=151)
    parser.add_argument("--cols", type=int, default=1500)
    parser.add_argument("--block", type=int, default=None, help="columns per step (default: min(1024, N))")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    M, N, eps = args.rows, args.cols, 1e-5
    x = (rng.standard_normal((M, N)) * 2.0 + 0.5).astype(np.float32)
    w = rng.random(N, dtype=np.float32) + 0.5
    b = rng.standard_normal(N, dtype=np.float32)
    dev = device()
    x_d, w_d, b_d = dev.to_device(x), dev.to_device(w), dev.to_device(b)
    y_d, mean_d, rstd_d = dev.empty((M, N), np.float32), dev.empty((M,), np.float32), dev.empty((M,), np.float32)

    ms = do_bench(lambda: layer_norm(x_d, w_d, b_d, y_d, mean_d, rstd_d, eps, args.block))
    want_y, want_mean, want_rstd = layer_norm_reference(x, w, b, eps)
    ok = report(f"layernorm {M}x{N}", dev.to_host(y_d), want_y, rtol=1e-5, atol=1e-5, ms=ms, nbytes=2 * x.nbytes)
    ok &= report("  mean", dev.to_host(mean_d), want_mean, rtol=1e-5, atol=1e-5)
    ok &= report("  rstd", dev.to_host(rstd_d), want_rstd, rtol=1e-5, atol=0.0)
    exit_status(ok)


if __name__ == "__main__":
    main()
