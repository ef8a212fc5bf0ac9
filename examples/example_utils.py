"""Helpers the examples share: the selected target's memory and the result check."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np


def device() -> Any:
    """The memory API (``to_device``/``empty``/``to_host``/``synchronize``) of the selected target
    (``TRITIUM_TARGET``, default automatic)."""
    from tritium import plugins

    return plugins.get_target().driver


def report(name: str, got: np.ndarray, want: np.ndarray, *, rtol: float, atol: float,
           ms: float | None = None, nbytes: int | None = None) -> bool:
    """Print whether ``got`` matches the float64 reference ``want`` (and the time); True if it does."""
    err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
    try:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
        ok, verdict = True, "ok"
    except AssertionError as e:
        ok, verdict = False, "MISMATCH\n" + str(e).strip()
    timing = ""
    if ms is not None:
        timing = f"  {ms:.3f} ms" + (f"  {nbytes / ms / 1e6:.2f} GB/s" if nbytes else "")
    print(f"{name}: max abs error {err:.3g} (rtol {rtol:g}, atol {atol:g}) {verdict}{timing}")
    return ok


def exit_status(ok: bool) -> None:
    """Leave the process with status 0 when every check passed, 1 otherwise."""
    sys.exit(0 if ok else 1)
