"""Runs the Triton-style library against numpy and prints what it saw of Triton."""

import math

import numpy as np

import gelu_lib

x = np.linspace(-4, 4, 1000, dtype=np.float32)
out = np.full_like(x, np.nan)
gelu_lib.gelu(x, out)
want = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(np.float64)])
np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
print(f"gelu ok; triton {gelu_lib.triton.__version__}, installed {gelu_lib.INSTALLED}, triton 3 path: {gelu_lib.TRITON_3}")
