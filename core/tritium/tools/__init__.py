"""Host-side helpers of Triton's ``triton.tools`` that kernels' host code uses: ``tensor_descriptor``, ``mxfp``."""
