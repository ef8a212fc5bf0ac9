"""LLVM IR emission shared by targets: type mapping, intrinsics, elementwise ops, math hooks.

Targets decide how tensors are laid out and iterated; this package lowers what is the same
everywhere: one arith/math op on llvmlite values that may be scalars or LLVM vectors.
"""
