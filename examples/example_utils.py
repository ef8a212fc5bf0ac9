"""Helpers the examples share: arrays for the selected target and the result check."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

#: targets whose kernels take torch tensors on a GPU, and torch's name for that device (ROCm's
#: torch calls AMD GPUs "cuda" too); every other target reads host numpy arrays
TORCH_DEVICE = {"nvptx": "cuda", "amdgpu": "cuda"}


class Arrays:
    """Arrays the selected target's kernels take: numpy on host targets (cpu, interpreter), torch
    tensors on the GPU for a GPU target, as users of Triton pass them."""

    def __init__(self, target_name: str):
        self.torch_device = TORCH_DEVICE.get(target_name)
        if self.torch_device is not None:
            try:
                import torch
            except ImportError:
                sys.exit(f"the examples pass torch tensors to the {target_name} target: install torch")
            self.torch = torch

    def to_device(self, array: np.ndarray) -> Any:
        array = np.ascontiguousarray(array)
        return array.copy() if self.torch_device is None else self.torch.from_numpy(array).to(self.torch_device)

    def empty(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self.to_device(np.empty(shape, dtype))

    def to_host(self, array: Any) -> np.ndarray:
        return np.asarray(array) if self.torch_device is None else array.cpu().numpy()  # .cpu() waits

    @property
    def library(self) -> str:
        """The library whose arrays these are, to compare speeds with: numpy on the host, torch on a GPU."""
        return "numpy" if self.torch_device is None else "torch"

    def flop_rate(self, flops: int, ms: float) -> str:
        """Compute speed as it is judged where the arrays live: TFLOP/s on a GPU, GFLOP/s on the host."""
        return f"{flops / ms / 1e6:.2f} GFLOP/s" if self.torch_device is None else f"{flops / ms / 1e9:.2f} TFLOP/s"


def device() -> Arrays:
    """``Arrays`` for the selected target (``TRITIUM_TARGET``, default automatic)."""
    from tritium import plugins

    return Arrays(plugins.get_target().name)


def report(name: str, got: np.ndarray, want: np.ndarray, *, rtol: float, atol: float,
           ms: float | None = None, nbytes: int | None = None, speed: str = "") -> bool:
    """Print whether ``got`` matches the float64 reference ``want`` (and the time, with the bandwidth
    of ``nbytes`` or the given ``speed``); True if it does."""
    err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
    try:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
        ok, verdict = True, "ok"
    except AssertionError as e:
        ok, verdict = False, "MISMATCH\n" + str(e).strip()
    timing = ""
    if ms is not None:
        timing = f"  {ms:.3f} ms" + (f"  {nbytes / ms / 1e6:.2f} GB/s" if nbytes else "")
        timing += f"  {speed}" if speed else ""
    print(f"{name}: max abs error {err:.3g} (rtol {rtol:g}, atol {atol:g}) {verdict}{timing}")
    return ok


def exit_status(ok: bool) -> None:
    """Leave the process with status 0 when every check passed, 1 otherwise."""
    sys.exit(0 if ok else 1)
