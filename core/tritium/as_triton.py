"""``import triton`` as tritium, on request: libraries written for Triton run unchanged.

``tritium run script.py`` (or ``tritium run -m pytest ...``) runs a program with every ``triton`` and
``triton.<sub>`` import resolved to tritium's module of the same name; ``install()`` does the same
from Python (a ``conftest.py``, a notebook). Without it nothing is shadowed: where the real Triton
is installed, ``import triton`` gives Triton.

Code that checks Triton's version sees the Triton version whose language tritium implements
(``TRITON_VERSION``), through ``triton.__version__`` and through the distribution metadata
(``importlib.metadata.version("triton")``), so it takes its Triton 3 path; ``tritium.__version__``
stays tritium's own.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import sys
import types
from typing import Any, Iterable

#: the Triton release whose language tritium implements
TRITON_VERSION = "3.6.0"
_PREFIX = "triton"


class _TritonModule(types.ModuleType):
    """The top-level ``triton``: tritium's names, with Triton's version."""

    def __getattr__(self, name: str) -> Any:
        import tritium

        return getattr(tritium, name)

    def __dir__(self) -> Iterable[str]:
        import tritium

        return sorted(set(dir(tritium)) | {"__version__"})


class _Loader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name == _PREFIX:
            import tritium

            module = _TritonModule(_PREFIX, tritium.__doc__)
            module.__version__ = TRITON_VERSION
            module.__path__ = []  # a package: its submodules come through the finder
            return module
        return importlib.import_module(self.target)  # the same module object: one set of globals

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: tritium's module ran when it was imported."""


class _Finder(importlib.abc.MetaPathFinder):
    """Maps ``triton[.sub]`` to ``tritium[.sub]``; tritium modules that do not exist are not found."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != _PREFIX and not fullname.startswith(_PREFIX + "."):
            return None
        real = "tritium" + fullname[len(_PREFIX):]
        if fullname != _PREFIX and importlib.util.find_spec(real) is None:
            return None
        is_package = fullname == _PREFIX or importlib.util.find_spec(real).submodule_search_locations is not None
        return importlib.machinery.ModuleSpec(fullname, _Loader(real), is_package=is_package)


class _Metadata(importlib.metadata.Distribution):
    """The ``triton`` distribution as code that asks the installed packages sees it."""

    def read_text(self, filename: str) -> str | None:
        if filename == "METADATA":
            return f"Metadata-Version: 2.1\nName: triton\nVersion: {TRITON_VERSION}\n"
        return None

    def locate_file(self, path: Any) -> Any:
        return path


class _MetadataFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, *args: Any) -> None:
        return None

    def find_distributions(self, context: Any = importlib.metadata.DistributionFinder.Context()) -> Iterable:
        name = getattr(context, "name", None)
        if name is None or name.lower().replace("-", "_") == _PREFIX:
            yield _Metadata()


_FINDERS = (_Finder(), _MetadataFinder())


#: put first on ``PYTHONPATH`` (``inherit``), it makes ``import triton`` give tritium in child processes
CHILD_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_triton_alias")


def inherit() -> None:
    """Make the processes this one starts (``subprocess``, ``multiprocessing``'s spawn) resolve
    ``import triton`` to tritium too: ``CHILD_PATH`` goes first on their ``PYTHONPATH``."""
    entries = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != CHILD_PATH]
    os.environ["PYTHONPATH"] = os.pathsep.join([CHILD_PATH, *entries])


def install() -> None:
    """Make ``import triton`` give tritium in this process (idempotent). Triton's
    ``TRITON_INTERPRET=1`` then selects the interpreter target, as it selects Triton's interpreter,
    unless ``TRITIUM_TARGET`` names a target."""
    if os.environ.get("TRITON_INTERPRET", "").strip() == "1" and not os.environ.get("TRITIUM_TARGET", "").strip():
        os.environ["TRITIUM_TARGET"] = "interpreter"
    for finder in _FINDERS:
        if finder not in sys.meta_path:
            sys.meta_path.insert(0, finder)


def installed() -> bool:
    return _FINDERS[0] in sys.meta_path
