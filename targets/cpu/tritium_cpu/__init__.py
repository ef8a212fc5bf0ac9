"""tritium-cpu: the host CPU target of tritium (LLVM through llvmlite, JIT-loaded in process)."""

__version__ = "0.1.0"
