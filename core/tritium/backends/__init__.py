"""Triton's ``triton.backends``: ``triton.backends.compiler.GPUTarget``, the name of a compile target."""
