"""Loads and stores with Triton's cache hints (tests/test_memory_hints.py)."""

import tritium
import tritium.language as tl


@tritium.jit
def hinted_copy(x_ptr, out_ptr, n, CACHE: tl.constexpr, EVICT: tl.constexpr, VOLATILE: tl.constexpr,
                STORE_CACHE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0, cache_modifier=CACHE, eviction_policy=EVICT, volatile=VOLATILE)
    tl.store(out_ptr + offs, x * 2, mask=mask, cache_modifier=STORE_CACHE)


@tritium.jit
def unmasked_hinted_copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, cache_modifier=".cg") + 1, eviction_policy="evict_first")
