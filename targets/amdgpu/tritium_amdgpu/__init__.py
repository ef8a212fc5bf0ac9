"""tritium's AMD GPU target (``TRITIUM_TARGET=amdgpu``): kernels compiled to AMDGPU code objects."""
