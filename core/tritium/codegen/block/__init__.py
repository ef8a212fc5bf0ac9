"""Core's whole-block code generator, for targets where one program runs as one sequential
function over SIMD chunks (the host CPU; a device with few threads a program). The per-thread
generator for GPU-like targets, where a program's threads share its blocks, is ``codegen.threads``.

- ``layout.layout_stage(vector_bits)``: the ``tile-layout`` stage, chunk encodings on every tensor;
- ``kernel.generate(module, hooks, triple, data_layout, debug)``: the ``llir`` stage, LLVM IR text
  of one internal function per kernel, the program body, plus the entry the target emits around it;
- ``hooks.BlockHooks``: what the target decides (vector width, entry, interruption), with math
  from ``vecmath.VectorMathHooks``; ``debug`` names the print and assert functions its runtime
  provides, ``debug_area`` the layout of debug-mode bounds reports.

The package imports nothing itself: a warm cache hit of a target that uses it loads no MLIR.
"""
