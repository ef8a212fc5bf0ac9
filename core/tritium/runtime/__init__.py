"""The runtime: launching, compiling, caching, autotuning. ``tritium.runtime.driver`` is Triton's
``triton.runtime.driver`` object (``driver.active``), as in Triton, where it shadows its module."""

from .driver import driver  # noqa: F401
from .errors import OutOfResources, TritonError  # noqa: F401
