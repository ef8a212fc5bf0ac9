"""Host-side microscaling (OCP MX) formats for ``tl.dot_scaled``'s operands, as Triton's
``triton.tools.mxfp`` gives them: ``MXFP4Tensor`` holds E2M1 values as their 4-bit codes and packs
two to a byte; ``MXScaleTensor`` holds E8M0 scales (a biased power of two) as bytes.

They take and give torch tensors, as Triton's host code passes them, or numpy arrays: the
arithmetic is numpy's, on the host, and a torch result goes back to its tensor's device.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: E2M1's magnitudes by code (the sign is bit 3): 0, 0.5 (the subnormal), 1, 1.5, 2, 3, 4, 6
E2M1_VALUES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], np.float32)
#: E8M0's exponent bias, and its one special code (NaN); it has no zero, no sign and no infinity
E8M0_BIAS, E8M0_NAN = 127, 255


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def _host(x: Any) -> np.ndarray:
    return x.detach().cpu().numpy() if _is_torch(x) else np.asarray(x)


def _like(result: np.ndarray, reference: Any, device: Any = None) -> Any:
    """``result`` as an array of ``reference``'s kind: a torch tensor on its device, or numpy."""
    if not _is_torch(reference):
        return result
    import torch

    return torch.from_numpy(np.ascontiguousarray(result)).to(device if device is not None else reference.device)


def _zeros(size: Any, device: Any) -> Any:
    """Zero codes of ``size``: a torch tensor where torch is installed (Triton's), else numpy."""
    try:
        import torch
    except ImportError:
        return np.zeros(size, np.uint8)
    return torch.zeros(size, dtype=torch.uint8, device=device)


def _as_dtype(values: np.ndarray, reference: Any, dtype: Any) -> Any:
    """``values`` (float32) in ``dtype``: a torch dtype gives a tensor on ``reference``'s device."""
    if type(dtype).__module__.startswith("torch"):
        import torch

        device = reference.device if _is_torch(reference) else None
        return torch.from_numpy(np.ascontiguousarray(values)).to(device=device, dtype=dtype)
    return values.astype(dtype)


class _Codes:
    """Codes of a format, one per ``uint8`` element of ``data``: encoded from float ``data``, or zeros
    of ``size`` on ``device``."""

    @staticmethod
    def _encode(values: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def __init__(self, data: Any = None, size: Any = None, device: Any = None):
        if data is not None:
            self.device = getattr(data, "device", None) if device is None else device
            self.data = _like(self._encode(_host(data)), data, device)
        elif size is not None:
            self.device = device
            self.data = _zeros(size, device)
        else:
            raise ValueError(f"{type(self).__name__} needs data (float values) or a size")


class MXFP4Tensor(_Codes):
    """E2M1 values, one code (0..15) per ``uint8`` element of ``data``.

    ``MXFP4Tensor(values)`` rounds float values to the nearest E2M1 value, ties to the even code, and
    saturates: beyond +-6 (infinities too) becomes +-6; NaN, which E2M1 cannot hold, becomes 0.
    ``MXFP4Tensor(size=..., device=...)`` makes zeros; ``.random()`` fills them with random codes.
    """

    _encode = staticmethod(lambda values: encode_e2m1(values))

    def random(self) -> "MXFP4Tensor":
        """Fill with codes drawn uniformly from all 16 (both zeros included); returns self."""
        codes = np.random.default_rng().integers(0, 16, tuple(self.data.shape), dtype=np.uint8)
        self.data = _like(codes, self.data)
        return self

    def to(self, dtype: Any) -> Any:
        """The values, as an array of ``dtype`` (a torch or numpy dtype)."""
        codes = _host(self.data)
        magnitude = E2M1_VALUES[codes & 0x7]
        return _as_dtype(np.where(codes & 0x8, -magnitude, magnitude), self.data, dtype)

    def to_packed_tensor(self, dim: int) -> Any:
        """Two codes per byte along ``dim``: element ``2i`` in the low nibble, ``2i + 1`` in the high
        one; an odd length is padded with a zero code."""
        codes = _host(self.data)
        assert 0 <= dim < codes.ndim, f"dim {dim} is not a dimension of a {codes.ndim}-D tensor"
        if codes.shape[dim] % 2:
            pad = [(0, 0)] * codes.ndim
            pad[dim] = (0, 1)
            codes = np.pad(codes, pad)
        even = np.take(codes, np.arange(0, codes.shape[dim], 2), axis=dim)
        odd = np.take(codes, np.arange(1, codes.shape[dim], 2), axis=dim)
        return _like((even | (odd << 4)).astype(np.uint8), self.data)

    def unpack_packed_tensor(self, packed: Any, dim: int, original_shape: Any) -> Any:
        """The codes of ``to_packed_tensor(dim)``'s bytes, cut back to ``original_shape``."""
        raw = _host(packed)
        both = np.stack([raw & 0xF, (raw >> 4) & 0xF], axis=dim + 1)
        shape = list(raw.shape)
        shape[dim] *= 2
        codes = both.reshape(shape)
        return _like(np.take(codes, np.arange(original_shape[dim]), axis=dim).astype(np.uint8), packed)


def encode_e2m1(values: np.ndarray) -> np.ndarray:
    """The E2M1 codes of float ``values``: nearest, ties to the even code, saturating at 6."""
    x = np.asarray(values, np.float32)
    magnitude = np.minimum(np.nan_to_num(np.abs(x), nan=0.0, posinf=6.0), E2M1_VALUES[-1])
    midpoints = (E2M1_VALUES[1:] + E2M1_VALUES[:-1]) / 2
    code = np.searchsorted(midpoints, magnitude, side="left")  # a value on a midpoint: the lower code
    on_midpoint = np.isin(magnitude, midpoints)
    code = np.where(on_midpoint & (code % 2 == 1), code + 1, code)  # ties to the even code
    sign = np.signbit(x) & ~np.isnan(x)
    return (code | np.where(sign, 8, 0)).astype(np.uint8)


class MXScaleTensor(_Codes):
    """E8M0 scales, one biased exponent per ``uint8`` element of ``data``: code ``e`` is
    ``2**(e - 127)``, 255 is NaN.

    ``MXScaleTensor(values)`` takes each positive finite value to the power of two nearest in
    exponent (``round(log2(v))``), clamped to the format's range; zero, negative, infinite and NaN
    values become NaN.
    """

    _encode = staticmethod(lambda values: encode_e8m0(values))

    def random(self, low: float | None = None, high: float | None = None) -> "MXScaleTensor":
        """Fill with scales drawn uniformly among the powers of two in ``[low, high]`` (by default
        every finite code, 0..254); returns self."""
        first = 0 if low is None else int(encode_e8m0(np.array([low]))[0])
        last = E8M0_NAN - 1 if high is None else int(encode_e8m0(np.array([high]))[0])
        if first > last or E8M0_NAN in (first, last):
            raise ValueError(f"no E8M0 scale lies in [{low}, {high}]")
        codes = np.random.default_rng().integers(first, last + 1, tuple(self.data.shape), dtype=np.uint8)
        self.data = _like(codes, self.data)
        return self

    def to(self, dtype: Any) -> Any:
        """The scales, as an array of ``dtype`` (NaN for code 255)."""
        codes = _host(self.data).astype(np.int32)
        values = np.where(codes == E8M0_NAN, np.nan, np.exp2(codes - E8M0_BIAS)).astype(np.float32)
        return _as_dtype(values, self.data, dtype)


def encode_e8m0(values: np.ndarray) -> np.ndarray:
    """The E8M0 codes of float ``values`` (see ``MXScaleTensor``)."""
    x = np.asarray(values, np.float32)
    valid = np.isfinite(x) & (x > 0)
    exponent = np.round(np.log2(np.where(valid, x, 1.0)))
    code = np.clip(exponent + E8M0_BIAS, 0, E8M0_NAN - 1)
    return np.where(valid, code, E8M0_NAN).astype(np.uint8)
