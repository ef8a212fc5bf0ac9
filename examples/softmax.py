"""Fused softmax: one program normalises one row (a port of Triton's tutorial 02).

The row is loaded once, padded to a power of two with -inf (which exp turns into 0), and its
max, exponentials, sum and quotient never leave the program: one read and one write per element,
where numpy's unfused version makes several passes over memory.

    python examples/softmax.py [--rows M] [--cols N]
"""

import argparse

import numpy as np

import tritium as triton
import tritium.language as tl
from example_utils import device, exit_status, report
from tritium.testing import do_bench


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    row = tl.load(input_ptr + row_idx * input_row_stride + col_offsets, mask=mask, other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    tl.store(output_ptr + row_idx * output_row_stride + col_offsets, numerator / denominator, mask=mask)


def softmax(x, output):
    """Row-wise softmax of a contiguous 2-D device array into ``output`` (same shape)."""
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](output, x, n_cols, n_cols, n_cols, BLOCK_SIZE=BLOCK_SIZE)
    return output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=123)
    parser.add_argument("--cols", type=int, default=781)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.rows, args.cols), dtype=np.float32)
    dev = device()
    x_d, out_d = dev.to_device(x), dev.empty(x.shape, np.float32)

    ms = do_bench(lambda: softmax(x_d, out_d))
    got = dev.to_host(out_d)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    exit_status(report(f"softmax {args.rows}x{args.cols}", got, want, rtol=1e-5, atol=1e-7,
                       ms=ms, nbytes=2 * x.nbytes))


if __name__ == "__main__":
    main()
