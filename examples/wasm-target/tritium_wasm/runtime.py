"""The wasm target's device half: wasmtime runs each kernel module in its own linear memory.

A launch copies the host arrays its pointer arguments point into (merged where they overlap, so
aliases stay aliases) above the module's ``__heap_base``, packs the argument slots after them,
calls ``<kernel>_grid``, and copies back the arrays the kernel may have stored through
(``metadata["stored_args"]``). The module imports its memory, the print and assert functions of
core's block generator and any math compiler-rt lacks (``MATH``), all provided here.
"""

from __future__ import annotations

import ctypes
import math
import struct
from typing import Any, Callable, Sequence

import numpy as np
import wasmtime
from tritium.codegen.block import debug_area
from tritium.codegen.block.hooks import ASSERT_SYMBOL, PRINT_SYMBOL
from tritium.errors import ArgumentError, DeviceAssertionError, TritiumError
from tritium.runtime import debug_output
from tritium.runtime.host import host_span
from tritium.runtime.native_launch import conversions, slots
from tritium.target import Driver, KernelSignature

PAGE = 65536
ALIGN = 64
#: libm functions compiler-rt does not define, by C name (the ``f`` suffix: float)
MATH = {name + suffix: (fn, suffix == "f") for name, fn in {
    "erf": math.erf, "erfc": math.erfc, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "atan2": np.arctan2, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "expm1": np.expm1, "log1p": np.log1p, "pow": np.power,
    "cbrt": np.cbrt, "hypot": np.hypot, "fmod": np.fmod}.items() for suffix in ("", "f")}


class WasmDriver(Driver):
    """Kernels run in wasmtime; the memory API is numpy's (a launch copies arrays in and out)."""

    def __init__(self) -> None:
        self.engine = wasmtime.Engine()

    def load(self, binary: bytes, signature: KernelSignature, metadata) -> "WasmKernel":
        return WasmKernel(self.engine, binary, signature, metadata)

    def to_device(self, array: Any) -> np.ndarray:
        return np.array(array, copy=True)

    def empty(self, shape: Sequence[int], dtype: Any) -> np.ndarray:
        return np.empty(shape, dtype)

    def to_host(self, buffer: Any) -> np.ndarray:
        return np.asarray(buffer)


class WasmKernel:
    """One kernel module, instantiated in its own store and memory: ``kernel(grid, bound_args)``."""

    def __init__(self, engine: wasmtime.Engine, binary: bytes, signature: KernelSignature, metadata) -> None:
        self.name, self.signature = signature.name, signature
        self.store = wasmtime.Store(engine)
        module = wasmtime.Module(engine, binary)
        imports = [self._provide(i) for i in module.imports]
        exports = wasmtime.Instance(self.store, module, imports).exports(self.store)
        self.grid = exports[f"{self.name}_grid"]
        self.heap = exports["__heap_base"].value(self.store)
        sites = exports.get(debug_area.sites_symbol(self.name))
        self.sites = debug_area.load_sites(self._string(sites.value(self.store))) if sites is not None else None
        stored = metadata.get("stored_args")
        self.stored = set(range(len(signature.arg_types)) if stored is None else stored)
        self.slots, self.converts = slots(signature.arg_types), conversions(signature.arg_types)
        self.failure: DeviceAssertionError | None = None

    # -- imports -------------------------------------------------------------------------------
    def _provide(self, imported: wasmtime.ImportType) -> Any:
        t, name = imported.type, imported.name
        if isinstance(t, wasmtime.MemoryType):
            self.memory = wasmtime.Memory(self.store, t)
            return self.memory
        if name == PRINT_SYMBOL:
            return wasmtime.Func(self.store, t, self._print)
        if name == ASSERT_SYMBOL:
            return wasmtime.Func(self.store, t, self._assert)
        if name in MATH:
            fn, single = MATH[name]
            return wasmtime.Func(self.store, t, lambda *xs: _math(fn, xs, single))
        raise TritiumError(f"kernel '{self.name}' needs '{name}', which the wasm runtime does not provide")

    def _string(self, address: int) -> bytes:
        return ctypes.string_at(self._base() + address)

    def _print(self, prefix, type_code, shape, values, hex, operand, count, x, y, z) -> None:
        read = (lambda n: ctypes.string_at(self._base() + values, n)) if values else None  # noqa: E731
        text = [self._string(a).decode() for a in (prefix, type_code, shape)]
        debug_output.write(debug_output.call_lines(*text, read, bool(hex), operand, count, (x, y, z)))

    def _assert(self, kernel, file, line, message, shape, x, y, z, index) -> None:
        kernel, file, message, shape = (self._string(a).decode() for a in (kernel, file, message, shape))
        self.failure = debug_output.call_assertion(kernel, file, line, message, shape, (x, y, z), index)
        raise self.failure  # a trap: the launch stops at the first failed assertion

    def _base(self) -> int:
        return ctypes.addressof(self.memory.data_ptr(self.store).contents)

    # -- launching ------------------------------------------------------------------------------
    def __call__(self, grid: tuple[int, int, int], args: Sequence[Any]) -> None:
        types = self.signature.arg_types
        spans = [self._span(a, n) if t.startswith("*") else None
                 for a, t, n in zip(args, types, self.signature.arg_names)]
        regions, top = _regions([s for s in spans if s is not None], self.heap)
        values = list(args)
        for i, convert in self.converts:
            values[i] = convert(values[i])
        for i, span in enumerate(spans):
            if span is not None:
                lo, start = next((lo, start) for lo, hi, start in regions if lo <= span[0] and span[1] <= hi)
                values[i] = start + (int(args[i]) - lo)
        slots_at = top
        debug_at = slots_at + self.slots.size
        end = debug_at + (debug_area.debug_area_bytes(len(types)) if self.sites is not None else 0)
        self._reserve(end)
        base = self._base()
        for lo, hi, start in regions:
            ctypes.memmove(base + start, lo, hi - lo)
        area = (ctypes.c_char * (end - slots_at)).from_address(base + slots_at)
        self.slots.pack_into(area, 0, *values)
        if self.sites is not None:
            for i, span in enumerate(spans):
                wasm_span = (values[i] - (int(args[i]) - span[0]), values[i] + (span[1] - int(args[i]))) \
                    if span else debug_area.ANY_MEMORY
                struct.pack_into("<QQ", area, self.slots.size + i * debug_area.SPAN_BYTES, *wasm_span)
            struct.pack_into("<q", area, self.slots.size + len(types) * debug_area.SPAN_BYTES, 0)
        self.failure = None
        try:
            self.grid(self.store, slots_at, *grid)
        except (wasmtime.Trap, wasmtime.WasmtimeError) as trap:
            if self.failure is not None:
                raise self.failure from None
            raise TritiumError(f"kernel '{self.name}' trapped in wasm: {trap}") from None
        finally:
            base = self._base()
            for lo, hi, start in regions:
                if any(s is not None and lo <= s[0] < hi for i, s in enumerate(spans) if i in self.stored):
                    ctypes.memmove(lo, base + start, hi - lo)
        if self.sites is not None:
            debug_area.raise_report(bytes(area), self.slots.size + len(types) * debug_area.SPAN_BYTES,
                                    self.name, self.signature.arg_names, self.sites)

    def _span(self, pointer: Any, name: str) -> tuple[int, int]:
        span = host_span(getattr(pointer, "array", None))
        if span is None:
            raise ArgumentError(f"kernel '{self.name}': the wasm target copies argument '{name}' into its memory "
                                "and needs its extent: pass a numpy array or a CPU torch tensor")
        return span

    def _reserve(self, end: int) -> None:
        pages = -(-end // PAGE) - self.memory.size(self.store)
        if pages > 0:
            self.memory.grow(self.store, pages)


def _regions(spans: list[tuple[int, int]], start: int) -> tuple[list[tuple[int, int, int]], int]:
    """The host byte ranges to copy (overlapping spans merged) with their addresses in the module's
    memory from ``start``, and the first free address after them."""
    merged: list[list[int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    regions, at = [], -(-start // ALIGN) * ALIGN
    for lo, hi in merged:
        at += lo % ALIGN  # the same alignment as on the host
        regions.append((lo, hi, at))
        at = -(-(at + hi - lo) // ALIGN) * ALIGN
    return regions, at


def _math(fn: Callable, xs: tuple, single: bool) -> float:
    """``fn`` of the arguments as C's libm gives it (NaN or an infinity, no exception), rounded to
    float32 for the ``f`` functions."""
    with np.errstate(all="ignore"):
        value = float(fn(*xs))
    return float(np.float32(value)) if single else value
