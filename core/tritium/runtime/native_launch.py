"""The call that launches a GPU kernel: ``launch(entry, function, gx, gy, gz, block, shared, stream,
codes, args) -> result``, which packs ``args`` into the kernel's parameters as ``codes`` says and
calls the driver's launch function at address ``entry``: CUDA's ``cuLaunchKernel`` or HIP's
``hipModuleLaunchKernel``, which take the same parameters (see ``_launch.c`` for the contract). GPU
targets share it, so that no target compiles C at run time or keeps its own launcher.

The native version, built when tritium is installed, is the one used; ``python_launch`` does the
same through ctypes where it was not built (no C compiler at install time).
"""

from __future__ import annotations

import ctypes
import struct
from functools import lru_cache
from typing import Any, Callable, Sequence

#: the parameter code of each signature type; other integers are "q" (a signed integer fills its
#: slot and the kernel reads its parameter's width), pointers "Q"
_CODES = {"fp32": "f", "fp64": "d", "fp16": "e", "bf16": "H", "u64": "Q"}


def parameter_codes(arg_types: Sequence[str]) -> str:
    """The ``codes`` of a kernel's parameters (one a signature type, ``"*fp32"``...)."""
    return "".join("Q" if t[0] == "*" else _CODES.get(t, "q") for t in arg_types)


def conversions(arg_types: Sequence[str]) -> list[tuple[int, Callable[[Any], int]]]:
    """``(index, convert)`` of the parameters a launch passes as their bits (bf16), converted first."""
    from ..language.dtypes import bf16_bits

    return [(i, bf16_bits) for i, t in enumerate(arg_types) if t == "bf16"]


def slots(arg_types: Sequence[str]) -> struct.Struct:
    """How a kernel's arguments fill 8-byte slots (little-endian, each value at the start of its
    slot, as ``launch`` packs them; bf16 as its bits after ``conversions``): a target whose kernels
    read their arguments from memory packs them with it."""
    return _packer(parameter_codes(arg_types).encode())


#: how each parameter code fills its 8-byte slot, in ``struct``'s words
_SLOT = {"Q": "Q", "q": "q", "f": "f4x", "d": "d", "e": "e6x", "H": "H6x"}

#: the C signature of cuLaunchKernel and hipModuleLaunchKernel
LAUNCH_KERNEL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7, ctypes.c_void_p,
                                 ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p))


@lru_cache(maxsize=None)
def _entry(address: int) -> Any:
    return LAUNCH_KERNEL(address)


@lru_cache(maxsize=1024)
def _packer(codes: bytes) -> struct.Struct:
    return struct.Struct("<" + "".join(_SLOT[c] for c in codes.decode()))


def python_launch(entry: int, function: int, gx: int, gy: int, gz: int, block: int, shared: int, stream: int,
                  codes: bytes, args: tuple) -> int:
    """The native ``launch`` in Python."""
    if not entry:
        raise ValueError("no launch function to call")
    n = len(args)
    if len(codes) != n:
        raise ValueError(f"{len(codes)} parameter codes for {n} arguments")
    if b"B" in codes:
        params, keep = _with_blobs(codes, args)
    else:  # every parameter in a slot: the common case, as before tensor maps
        keep = ctypes.create_string_buffer(8 * max(1, n))
        _packer(codes).pack_into(keep, 0, *args)
        base = ctypes.addressof(keep)
        params = (ctypes.c_void_p * (n + 1))(*[base + 8 * i for i in range(n)], None)
    return _entry(entry)(function, gx, gy, gz, block, 1, 1, shared, stream, params, None)


def _with_blobs(codes: bytes, args: tuple) -> tuple[Any, list]:
    """The parameter array where ``B`` parameters (128-byte TMA tensor maps) point at their bytes,
    the others at 8-byte slots; and the buffers to keep alive until the call."""
    text = codes.decode()
    blobs = {i: ctypes.create_string_buffer(args[i], len(args[i])) for i, c in enumerate(text) if c == "B"}
    slotted = [(i, c) for i, c in enumerate(text) if c != "B"]
    slots = ctypes.create_string_buffer(8 * max(1, len(slotted)))
    _packer("".join(c for _, c in slotted).encode()).pack_into(slots, 0, *[args[i] for i, _ in slotted])
    where = {i: ctypes.addressof(slots) + 8 * k for k, (i, _) in enumerate(slotted)}
    addresses = [ctypes.addressof(blobs[i]) if i in blobs else where[i] for i in range(len(args))]
    return (ctypes.c_void_p * (len(args) + 1))(*addresses, None), [slots, blobs]


try:
    from ._launch import launch as native_launch
except ImportError:  # not built: no C compiler when the package was installed
    native_launch = None

launch: Callable[..., int] = native_launch or python_launch
