"""The one place that imports the MLIR Python bindings.

LLVM's own ``mlir`` package wins when it is importable; otherwise the full copy of the upstream
bindings that the ``torch-mlir`` wheel vendors as ``torch_mlir`` is used. Every other module
imports ``ir``, ``passmanager``, ``rewrite`` and the dialect modules from here.
"""

from __future__ import annotations

import importlib

_ROOTS = ("mlir", "torch_mlir")


def _provider() -> str:
    for root in _ROOTS:
        try:
            importlib.import_module(f"{root}.dialects.ext")
        except ImportError:
            continue
        return root
    raise ImportError(
        "tritium needs the MLIR Python bindings: install LLVM's 'mlir' Python package or "
        "'pip install torch-mlir==20261001'"
    )


PROVIDER = _provider()


def _mod(name: str):
    return importlib.import_module(f"{PROVIDER}.{name}")


ir = _mod("ir")
passmanager = _mod("passmanager")
rewrite = _mod("rewrite")
arith = _mod("dialects.arith")
math = _mod("dialects.math")
scf = _mod("dialects.scf")
func = _mod("dialects.func")
ext = _mod("dialects.ext")


# The bindings find the Python module of a dialect by importing ``<prefix>.<namespace>``; without
# a prefix that holds ``tile`` they retry (and fail) that import on every tile op they hand out,
# which made walking tile IR an order of magnitude slower.
_mod("_mlir_libs._mlir").globals.append_dialect_search_prefix("tritium.ir")
