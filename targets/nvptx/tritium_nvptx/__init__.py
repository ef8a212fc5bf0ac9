"""tritium-nvptx: the NVIDIA GPU target of tritium (LLVM's NVPTX back end through llvmlite, PTX
assembled by ptxas or JIT-compiled by the driver, launched through cuda-python's driver API)."""

__version__ = "0.1.0"
