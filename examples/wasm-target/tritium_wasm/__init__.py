"""tritium's WebAssembly target: kernels compiled to wasm32 with SIMD128 by core's whole-block
generator, linked by zig's ``wasm-ld``, run by wasmtime. Written from tritium's backend guide as
the template of a vendor's package: ``plugin`` registers it, ``target`` is its compiler and
device halves, ``codegen`` its stages, ``runtime`` its launcher and memory."""
