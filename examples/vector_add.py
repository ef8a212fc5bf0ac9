"""Vector addition: the first tritium kernel (a port of Triton's tutorial 01).

Each program adds one BLOCK_SIZE-wide slice of the vectors; the mask keeps the last, partial
slice inside the arrays.

    python examples/vector_add.py [--size N] [--block B]      # TRITIUM_TARGET picks the target

On the cpu target and the interpreter the arrays are numpy arrays; on a GPU target
(TRITIUM_TARGET=nvptx) they are torch tensors on the GPU (see example_utils).
"""

import argparse

import numpy as np

import tritium as triton
import tritium.language as tl
from example_utils import device, exit_status, report
from tritium.testing import do_bench


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def add(x, y, output, BLOCK_SIZE=1024):
    """``output = x + y`` for 1-D device arrays of one length."""
    n_elements = x.shape[0]
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=98_432)
    parser.add_argument("--block", type=int, default=1024)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    x = rng.random(args.size, dtype=np.float32)
    y = rng.random(args.size, dtype=np.float32)
    dev = device()
    x_d, y_d, out_d = dev.to_device(x), dev.to_device(y), dev.empty(x.shape, np.float32)

    ms = do_bench(lambda: add(x_d, y_d, out_d, BLOCK_SIZE=args.block))
    got = dev.to_host(out_d)
    want = x.astype(np.float64) + y
    exit_status(report(f"vector_add n={args.size}", got, want, rtol=1e-6, atol=0.0,
                       ms=ms, nbytes=3 * x.nbytes))


if __name__ == "__main__":
    main()
