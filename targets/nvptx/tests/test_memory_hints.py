"""nvptx honours ``tl.load``/``tl.store`` cache hints as PTX qualifiers (``ld.global.cg``,
``ld.global.L1::evict_last``, ``ld.volatile.global``, ``st.global.cs``), assembled by ptxas."""

from __future__ import annotations

import pytest
from tritium.runtime.compiler import compile_specialized
from tritium_nvptx import toolchain


@pytest.mark.parametrize("cache, evict, volatile, store_cache, load_text, store_text", [
    (".cg", "", False, ".cs", "ld.global.cg.", "st.global.cs."),
    ("", "evict_last", False, "", "ld.global.L1::evict_last.", "st.global."),
    (".cv", "", True, ".wt", "ld.volatile.global.", "st.global.wt."),
])
def test_hints_become_ptx_qualifiers(target, core_kernels, cache, evict, volatile, store_cache, load_text, store_text):
    types = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    k = compile_specialized(core_kernels("hints").hinted_copy, target, types,
                            {"CACHE": cache, "EVICT": evict, "VOLATILE": volatile, "STORE_CACHE": store_cache,
                             "BLOCK": 512}, {"x_ptr": "D", "out_ptr": "D", "n": ""}, {"num_warps": 4})
    ptx = k.asm["ptx"]
    assert load_text in ptx and store_text in ptx
    if toolchain.ptxas_path() is not None:
        assert "cubin" in k.asm


def test_unmasked_hinted_accesses_use_the_qualified_instructions(target, core_kernels):
    types = {"x_ptr": "*fp32", "out_ptr": "*fp32"}
    kernel = core_kernels("hints").unmasked_hinted_copy
    k = compile_specialized(kernel, target, types, {"BLOCK": 512}, {n: "D" for n in types},
                            {"num_warps": 4})
    assert "ld.global.cg." in k.asm["ptx"] and "st.global.L1::evict_first." in k.asm["ptx"]
