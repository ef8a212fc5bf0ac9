"""tritium's SIMT emulation target (``TRITIUM_TARGET=simt``): GPU code generation run on the host."""
