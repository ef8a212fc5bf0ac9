"""The host side of TMA: each launch passes, after the kernel's parameters, the tensor map of every
host descriptor the kernel copies from with TMA (``tma`` is the kernel side).

The compile metadata's ``tensor_maps`` (``passes.tensor_copies.tensor_maps``) say where each
descriptor's parts are among the launch's arguments (the base, then the shape, then the strides
but the last) and the box and swizzle the kernel's shared memory expects. A map is encoded by
the driver (``cuTensorMapEncodeTiled``) once per tensor and kept: a training loop or a benchmark
passes the same tensors again and again.
"""

from __future__ import annotations

from typing import Any, Sequence

from . import cuda

#: CUtensorMapDataType by element bytes: unsigned integers of that width (the bytes are copied as
#: they are; zero padding is zero in every type)
_DATA_TYPES = {1: 0, 2: 1, 4: 2, 8: 4}
#: CUtensorMapSwizzle by the swizzled row bytes
_SWIZZLES = {0: 0, 32: 1, 64: 2, 128: 3}
_CACHED_MAPS = 4096


class TensorMaps:
    """``maps(args)``: the encoded tensor maps (bytes) of one kernel's launches, in order."""

    def __init__(self, specs: Sequence[dict], kernel: str):
        self._specs = [(s["base"], s["rank"], tuple(s["box"]), s["element_bytes"], _SWIZZLES[s["swizzle"]])
                       for s in specs]
        self._kernel = kernel
        self._cache: dict[tuple, bytes] = {}

    def __len__(self) -> int:
        return len(self._specs)

    def __call__(self, args: Sequence[Any]) -> tuple[bytes, ...]:
        out = []
        for spec in self._specs:
            base, rank, box, size, swizzle = spec
            parts = tuple(int(a) for a in args[base:base + 2 * rank])  # base, shape, strides but the last
            key = (spec, parts)
            found = self._cache.get(key)
            if found is None:
                found = self._encode(parts, rank, box, size, swizzle)
                if len(self._cache) >= _CACHED_MAPS:
                    self._cache.clear()
                self._cache[key] = found
            out.append(found)
        return tuple(out)

    def _encode(self, parts: tuple[int, ...], rank: int, box: tuple[int, ...], size: int, swizzle: int) -> bytes:
        address, shape, strides = parts[0], parts[1:1 + rank], parts[1 + rank:]
        dims = list(reversed(shape))
        byte_strides = [s * size for s in reversed(strides)]
        return cuda.check(f"cuTensorMapEncodeTiled for kernel {self._kernel}", cuda.api().cuTensorMapEncodeTiled(
            _DATA_TYPES[size], address, dims, byte_strides, list(box), swizzle))
