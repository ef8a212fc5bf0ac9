"""``import triton`` in a process started under ``tritium run``: installs the alias
(``tritium.as_triton``) and becomes the module it gives, so this process sees tritium as its parent
does."""

import importlib
import sys

from tritium import as_triton

as_triton.install()
del sys.modules[__name__]  # the alias's finder answers from here on
sys.modules[__name__] = importlib.import_module(__name__)
