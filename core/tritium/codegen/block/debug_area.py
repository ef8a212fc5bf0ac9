"""Debug mode's memory layout at launch (``debug=True`` / ``TRITIUM_DEBUG=1``): the spans of the
pointer arguments the launcher writes after the argument slots, and the report a kernel writes
back, read here into ``OutOfBoundsError``. Kept free of MLIR so a cache hit loads without it;
``bounds`` emits the checks.

A debug kernel reads, after its argument slots (the cpu's ``abi``), a *debug area*: each argument's byte
span ``lo, hi`` (two u64; ``0, 2**64-1`` for scalars and unknown memory), then a ``Report``. The
sites' source locations travel in the object as a JSON string ``<kernel>_debug_sites``.

What a GPU target would reuse: ``HostPointer``-style binding that keeps the array (for its span),
the span/report layout and ``raise_report``.
"""

from __future__ import annotations

import json
import linecache
import struct
from typing import Any, Sequence

from ...errors import OutOfBoundsError
from ...runtime.host import host_span

SPAN_BYTES = 16
MAX_LANES = 64
#: the report: claimed flag, site, argument (-1: none traced), pid x, y, z, lanes, then
#: MAX_LANES i64 lane offsets (elements from the argument's start; addresses when untraced)
#: and MAX_LANES bytes, 1 for each offending lane
HEADER = struct.Struct("<7q")
REPORT_BYTES = HEADER.size + MAX_LANES * 9
ANY_MEMORY = (0, (1 << 64) - 1)


def sites_symbol(kernel: str) -> str:
    return f"{kernel}_debug_sites"


def debug_area_bytes(n_args: int) -> int:
    return n_args * SPAN_BYTES + REPORT_BYTES


class HostPointer(int):
    """A pointer argument's address that keeps its array, whose span a debug launch checks."""

    array: Any


def pack_spans(buffer, offset: int, values: Sequence[Any], arg_types: Sequence[str]) -> None:
    """Write each argument's span into the debug area at ``offset`` and clear the report."""
    for i, (value, t) in enumerate(zip(values, arg_types)):
        span = host_span(value.array) if isinstance(value, HostPointer) and t.startswith("*") else None
        struct.pack_into("<QQ", buffer, offset + i * SPAN_BYTES, *(span or ANY_MEMORY))
    struct.pack_into("<q", buffer, offset + len(values) * SPAN_BYTES, 0)


def raise_report(buffer, offset: int, kernel: str, arg_names: Sequence[str], sites: list) -> None:
    """Raise ``OutOfBoundsError`` if the launch recorded an out-of-bounds access."""
    claimed, site, arg, px, py, pz, lanes = HEADER.unpack_from(buffer, offset)
    if not claimed:
        return
    offsets = struct.unpack_from(f"<{lanes}q", buffer, offset + HEADER.size)
    bad = struct.unpack_from(f"<{lanes}b", buffer, offset + HEADER.size + MAX_LANES * 8)
    hits = [o for o, flag in zip(offsets, bad) if flag]
    filename, line, col, what = sites[site]
    if arg >= 0:
        where = f"outside argument '{arg_names[arg]}' at element offsets {hits}"
    else:
        where = f"outside the memory of every pointer argument, at addresses {[hex(a) for a in hits]}"
    raise OutOfBoundsError(kernel, f"out-of-bounds {what} in program ({px}, {py}, {pz}): {where}",
                           filename=filename, lineno=line or None,
                           source_line=linecache.getline(filename, line) if filename else "", col=col)


def load_sites(text: bytes) -> list:
    return json.loads(text.decode())
