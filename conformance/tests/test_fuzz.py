"""The differential tester: its numpy model of Triton's rules, its crash isolation, and a fixed set
of random kernels on every available target (``python -m tritium_conformance --fuzz N`` runs more)."""

import os

import numpy as np
import pytest

from tritium_conformance import fuzz
from tritium_conformance import fuzz_model as M
from tritium_conformance.fuzz_gen import Kernel, Output, generate

#: 120 seeds, not 150: since the generator covers loops, 2-D grids, bf16 and debug launches a kernel
#: takes about a quarter longer, and 120 keep this test near 13 s on two cores
CI_SEEDS = range(120)
#: constructs with a known bug, left out of CI until it is fixed (``--fuzz`` still generates them);
#: none now that issue 21's (numbers in maximum/minimum, signed >> unsigned, sum(dtype=), the
#: fp16-accumulating FMA dot, topk(x, 1)) are fixed
KNOWN_BUGS: frozenset[str] = frozenset()


def vec(ty, values):
    a = np.array([values], dtype=M.NP[ty])
    return M.Val(ty, (a.shape[1],), a, np.zeros(a.shape) if M.is_float(ty) else None)


# -- the model follows Triton, not tritium ----------------------------------------------------------
def test_model_invert_keeps_narrow_unsigned_type():
    r = M.unary("~", vec("uint16", [0, 1, 65535]), 1)
    assert r.ty == "uint16" and r.a.tolist() == [[65535, 65534, 0]]


def test_model_max_of_narrow_types_is_32_bit():
    m = M.reduce("max", vec("uint8", [3, 200, 10]), 0, 1)
    r = M.binary("+", m, M.lit(250), 1)
    assert (m.ty, r.ty, r.a.tolist()) == ("int32", "int32", [450])


def test_model_sum_of_narrow_unsigned_accumulates_in_uint32():
    s = M.reduce("sum", vec("uint8", [255, 255, 3]), 0, 1)
    assert (s.ty, s.a.tolist()) == ("uint32", [513])


def test_model_fp16_division_is_fp32():
    r = M.binary("/", vec("fp16", [1.0]), vec("fp16", [3.0]), 1)
    assert r.ty == "fp32" and r.a[0, 0] == np.float32(1) / np.float32(3)


def test_model_bool_add_wraps_and_literals_are_weak():
    r = M.binary("+", vec("int1", [True, True, False]), vec("int1", [True, False, False]), 1)
    assert r.ty == "int1" and r.a.tolist() == [[False, True, False]]
    assert M.binary("+", vec("uint8", [250]), M.lit(10), 1).a.tolist() == [[4]]
    assert M.binary("*", vec("int8", [3]), M.lit(1.5), 1).ty == "fp32"


def test_model_shift_right_follows_the_left_operand_signedness():
    """int8 -17 >> uint16 14: the common type is uint16, and the shift is arithmetic (Triton)."""
    r = M.binary(">>", vec("int8", [-17, 64]), vec("uint16", [14, 2]), 1)
    assert r.ty == "uint16" and r.a.tolist() == [[65535, 16]]
    assert M.binary(">>", vec("uint8", [239]), vec("int16", [2]), 1).a.tolist() == [[59]]


def test_model_maximum_makes_a_number_a_tensor_of_its_own_type():
    """tl.maximum(x_uint8, 0) - 1 is -1 in Triton: 0 is an int32 tensor, not a weak literal."""
    m = M.minmax("max", vec("uint8", [0, 7]), M.lit(0), 1)
    assert m.ty == "int32" and M.binary("-", m, M.lit(1), 1).a.tolist() == [[-1, 6]]
    assert M.minmax("min", vec("bf16", [1.0]), vec("bf16", [2.0]), 1).ty == "fp32"


def test_model_rejects_undefined_behaviour_and_what_triton_refuses():
    with pytest.raises(M.Reject):
        M.binary("//", vec("int32", [5]), vec("int32", [0]), 1)
    with pytest.raises(M.Reject):
        M.binary("//", vec("int8", [-128]), vec("int8", [-1]), 1)
    with pytest.raises(M.Reject):
        M.binary("<<", vec("int16", [1]), M.lit(16), 1)
    with pytest.raises(M.Reject):  # different signedness
        M.binary("%", vec("uint8", [5]), vec("int8", [3]), 1)
    with pytest.raises(M.Reject):  # out of int8's range
        M.cast_array(np.array([[300.5]], dtype=np.float32), None, "fp32", "int8")


def test_model_c_division_and_unsigned_offsets_of_casts():
    r = M.binary("//", vec("int32", [-7, 7]), vec("int32", [2, -2]), 1)
    m = M.binary("%", vec("int32", [-7, 7]), vec("int32", [2, -2]), 1)
    assert r.a.tolist() == [[-3, -3]] and m.a.tolist() == [[-1, 1]]
    a, _ = M.cast_array(np.array([[200]], dtype=np.int32), None, "int32", "uint8")
    assert M.cast_array(a, None, "uint8", "int32")[0].tolist() == [[200]]


def test_model_bf16_rounds_to_nearest_even_on_float32_bits():
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, -1.75, 3.4e38, np.nan], dtype=np.float32)
    r = M.to_bf16(x)
    assert r[:5].tolist() == [1.0, 1 + 2**-6, 1 + 2**-7, -1.75, np.inf] and np.isnan(r[5])


def test_model_bf16_typing_follows_triton():
    b, i, h = vec("bf16", [1.5]), vec("int32", [3]), vec("fp16", [2.0])
    assert M.binary("*", b, b, 1).ty == "bf16"
    assert M.binary("/", b, b, 1).ty == M.binary("%", b, b, 1).ty == "fp32"
    assert M.binary("+", b, M.lit(1.5), 1).ty == "bf16" and M.binary("/", b, M.lit(2.0), 1).ty == "fp32"
    assert M.binary("+", b, i, 1).ty == M.binary("+", b, vec("fp32", [1.0]), 1).ty == "fp32"
    assert M.binary("+", b, h, 1).ty == "fp16"     # Triton's rule 3 (fp16) comes before rule 4 (bf16)
    r = M.binary("+", vec("bf16", [256.0]), vec("bf16", [1.0]), 1)   # 257 is not a bf16: ties to even
    assert r.a.tolist() == [[256.0]]
    assert M.cast_array(np.array([[257.0]], np.float32), None, "fp32", "bf16")[0].tolist() == [[256.0]]


def test_model_follows_tritons_rules_for_what_issue_21_found():
    # int8 -17 >> uint16 14: promoted to uint16, shifted arithmetically as the left operand is signed
    assert M.binary(">>", vec("int8", [-17]), vec("uint16", [14]), 1).a.tolist() == [[65535]]
    assert M.binary(">>", vec("uint16", [65519]), vec("int8", [14]), 1).a.tolist() == [[3]]
    # maximum makes the number a tensor first: uint8 with int32 is int32
    m = M.minmax("max", vec("uint8", [3]), M.lit(0), 1)
    assert m.ty == "int32" and M.binary("-", m, M.lit(1), 1).a.tolist() == [[2]]
    assert M.binary("+", M.minmax("max", vec("int8", [-3]), M.lit(5), 1), M.lit(250), 1).a.tolist() == [[255]]
    assert M.minmax("min", vec("bf16", [1.5]), vec("bf16", [2.0]), 1).ty == "fp32"
    # sum(dtype=) casts first, then sums in that type: 1024 int8 ones wrap to 0
    ones = M.Val("int8", (32, 32), np.ones((1, 32, 32), np.int8))
    assert M.reduce("sum", M.Val("int8", (1024,), ones.a.reshape(1, 1024)), 0, 1, "int8").a.tolist() == [0]
    assert M.reduce("sum", ones, 0, 1).a.tolist() == [[32] * 32]
    assert M.reduce("xor_sum", vec("uint8", [1, 3, 4]), 0, 1).a.tolist() == [6]


def test_block_models_against_numpy():
    from tritium_conformance import fuzz_blocks as B

    rng = np.random.default_rng(0)
    a = rng.integers(-4, 5, (2, 16, 32)).astype(np.float16)
    w = rng.integers(-4, 5, (2, 32, 16)).astype(np.float16)
    d = B.dot(M.Val("fp16", (16, 32), a, np.zeros(a.shape)), M.Val("fp16", (32, 16), w, np.zeros(w.shape)), "fp32",
              False)
    assert d.ty == "fp32" and np.array_equal(d.a, a.astype(np.float32) @ w.astype(np.float32))
    i8 = M.Val("int8", (16, 32), np.full((1, 16, 32), 100, np.int8))
    assert B.dot(i8, M.Val("int8", (32, 16), np.full((1, 32, 16), 100, np.int8)), "int32", False).a[0, 0, 0] == 320000
    x = vec("int8", [100, 100, -3, 7])
    assert B.scan("cumsum", x, 0, False).a.tolist() == [[100, 200, 197, 204]]            # widened to int32
    assert B.scan("add", x, 0, False).a.tolist() == [[100, -56, -59, -52]]               # a + b in int8
    assert B.scan("cumprod", vec("int8", [2, 3, 50]), 0, True).a.tolist() == [[44, 150 - 256, 50]]
    assert B.scan("max", x, 0, True).a.tolist() == [[100, 100, 7, 7]]
    assert B.sort(x, False, None).a.tolist() == [[-3, 7, 100, 100]]
    assert B.sort(x, True, 2).a.tolist() == [[100, 100]]
    assert B.gather(vec("int32", [5, 6, 7, 8]), np.array([[3, 0, 0, 1]]), 0).a.tolist() == [[8, 5, 5, 6]]
    init = np.array([[2, 5, -1]], np.int32)
    new, _ = B.atomic("cas", "int32", init, vec("int32", [9, 9, 9]), np.where(init % 2 == 0, init, 1))
    assert new.tolist() == [[9, 5, -1]]
    assert B.atomic("max", "uint32", np.array([[1, 7]], np.uint32), vec("uint32", [5, 5]), None)[0].tolist() == [[5, 7]]


def test_generator_covers_the_language_widely():
    """The CI seeds reach every kernel-level construct the generator has."""
    kernels = [generate(s) for s in CI_SEEDS]
    tags = set().union(*(k.tags for k in kernels))
    assert {"grid-2d", "early-return", "bf16", "debug", "helper-tuple", "loop-for", "loop-while",
            "loop-static_range", "loop-tl.range", "loop-nested-if", "loop-runtime-count"} <= tags
    text = "".join(k.source for k in kernels)
    for construct in ("tl.num_programs(", "tl.program_id(1)", "if not (", "[:, None]", "[None, :]", "tl.where(pid",
                      "return\n", ".to(tl.bfloat16)", "keep_dims=True", "i += "):
        assert construct in text, construct
    # issue 21: the block-level constructs, with the forms its bugs needed
    many = [generate(s) for s in range(400)]
    tags = set().union(*(k.tags for k in many))
    assert {"dot", "dot-fp16-acc", "scan", "sort", "topk", "topk-1", "gather", "xor-sum", "block-ptr",
            "minmax-number", "shift-mixed"} <= tags
    assert {t for t in tags if t.startswith("atomic-")} == {f"atomic-{op}" for op in
                                                           ("add", "max", "min", "and", "or", "xor", "xchg", "cas")}
    text = "".join(k.source for k in many)
    for construct in ("tl.cumsum(", "tl.cumprod(", "tl.associative_scan(", "tl.advance(", "dtype=tl.", "mask=mask, sem",
                      'input_precision="ieee"'):
        assert construct in text, construct
    assert all(("bf16" in k.tags) == ("tl.bfloat16" in k.source) for k in kernels)


def test_generator_is_deterministic():
    assert generate(7).source == generate(7).source
    assert generate(7).source != generate(8).source


# -- crash and hang isolation -------------------------------------------------------------------
def _job(tmp_path, seed: int, body: str) -> str:
    k = Kernel(seed, body, [("output", "out", (1, "int32"))], [Output("out", "int32", np.zeros(1, np.int32), None)],
               1, {}, [])
    return fuzz.write_job(k, str(tmp_path)), k


def test_worker_reports_a_crash_and_goes_on(tmp_path):
    w = fuzz._Worker("interpreter", str(tmp_path), timeout=60)
    try:
        stem, k = _job(tmp_path, 1, "import os\nos.abort()\n")
        res = w.run(stem)
        assert "crash" in res and "killed by SIGABRT" in res["crash"]
        assert fuzz.compare(k, {"interpreter": res})[0].kind == "crash"
        stem, k = _job(tmp_path, 2, "import tritium as triton\nimport tritium.language as tl\n\n"
                                    "@triton.jit\ndef kernel(out):\n    tl.store(out, 7)\n")
        res = w.run(stem)
        assert res["outputs"][0].tolist() == [7] and set(res) == {"outputs", "seconds"} and res["seconds"] > 0
    finally:
        w.close()


def test_worker_reports_a_write_past_an_output(tmp_path):
    w = fuzz._Worker("interpreter", str(tmp_path), timeout=60)
    try:
        stem, k = _job(tmp_path, 4, "import tritium as triton\nimport tritium.language as tl\n\n"
                                    "@triton.jit\ndef kernel(out):\n    tl.store(out + tl.arange(0, 2), 7)\n")
        res = w.run(stem)
        assert res["outputs"][0].tolist() == [7] and "past its end" in res["overrun"]
        assert "overrun" in [f.kind for f in fuzz.compare(k, {"interpreter": res})]
    finally:
        w.close()


def test_worker_reports_a_hang(tmp_path):
    w = fuzz._Worker("interpreter", str(tmp_path), timeout=1)
    try:
        stem, _ = _job(tmp_path, 3, "import time\ntime.sleep(30)\n")
        assert "hang" in w.run(stem)
    finally:
        w.close()


def test_a_wrong_value_is_a_mismatch():
    k = generate(0)
    wrong = [o.want.copy() for o in k.outputs]
    wrong[0][0] = wrong[0][0] + 1 if wrong[0].dtype != np.bool_ else not wrong[0][0]
    found = fuzz.compare(k, {"t": {"outputs": wrong}})
    assert [f.kind for f in found] == ["mismatch"] and "seed 0" in str(found[0])


def test_an_abort_while_compiling_is_a_crash_with_the_kernel_kept(tmp_path):
    """A compile-only worker (nvptx without a GPU) that dies is a finding, its kernel saved."""
    body = "import os\nos.abort()\n"
    k = Kernel(5, body, [("output", "out", (1, "int32"))], [Output("out", "int32", np.zeros(1, np.int32), None)],
               (1,), {}, [])
    keep = tmp_path / "kept"
    found = fuzz.run([5], [], compile_only=["cpu"], keep=str(keep), generator=lambda seed, exclude: k)
    assert [f.kind for f in found] == ["crash"] and "SIGABRT" in found[0].detail
    assert (keep / "fuzz_5.py").read_text() == body


def test_a_compile_that_llvm_passed_only_on_the_fallback_pipeline_is_an_abort():
    body = ("import warnings\nfrom tritium.passes.llvm_worker import LLVMFallbackWarning\n"
            "warnings.warn(\"kernel 'kernel': LLVM failed in stage 'ptx'\", LLVMFallbackWarning)\n"
            "import tritium as triton\nimport tritium.language as tl\n\n"
            "@triton.jit\ndef kernel(out):\n    tl.store(out, 7)\n")
    k = Kernel(6, body, [("output", "out", (1, "int32"))], [Output("out", "int32", np.zeros(1, np.int32), None)],
               (1,), {}, [])
    found = fuzz.run([6], [], compile_only=["cpu"], generator=lambda seed, exclude: k)
    assert [f.kind for f in found] == ["abort"] and "LLVM failed in stage 'ptx'" in found[0].detail


# -- random kernels on every available target ----------------------------------------------------
def test_fixed_seeds_agree_with_the_model():
    """120 random kernels: every target agrees with the model (re-run one with
    ``python -m tritium_conformance --fuzz 1 --seed S``)."""
    findings = fuzz.run(CI_SEEDS, fuzz.available_targets(), jobs=min(2, os.cpu_count() or 1), exclude=KNOWN_BUGS)
    report = "\n".join(f"{f}\n{f.source}" for f in findings[:3])
    assert not findings, (f"{len(findings)} findings in seeds {sorted({f.seed for f in findings})}:\n{report}")


def test_fixed_seeds_compile_for_targets_without_their_device(tmp_path):
    """GPU targets compile random kernels without a GPU (CI has none): no LLVM abort, no internal
    error; a failing kernel is kept under ``tmp_path``."""
    targets = fuzz.compile_only_targets()
    if not targets:
        pytest.skip("every installed target runs here")
    findings = fuzz.run(range(40), [], jobs=min(2, os.cpu_count() or 1), exclude=KNOWN_BUGS, compile_only=targets,
                        keep=str(tmp_path))
    report = "\n".join(f"{f}\n{f.source}" for f in findings[:3])
    assert not findings, (f"{len(findings)} findings in seeds {sorted({f.seed for f in findings})} (kept in "
                          f"{tmp_path}):\n{report}")


def test_large_blocks_are_triton_s_tile_sizes_and_compile_in_seconds():
    """``--large-blocks`` kernels (blocks up to 128 x 128, issue 27): their shapes, and a few of them
    compile for the GPU targets without their device in 10 s each, the time reported per kernel."""
    from tritium_conformance.fuzz_gen import LARGE_1D, LARGE_2D

    for seed in range(20):
        meta = generate(seed, large=True).meta
        assert (meta["BM"], meta["BN"]) in LARGE_2D if "BM" in meta else meta["BLOCK"] in LARGE_1D
    targets = fuzz.compile_only_targets()
    if not targets:
        pytest.skip("every installed target runs here")
    seconds: dict = {}
    findings = fuzz.run(range(4), [], jobs=min(2, os.cpu_count() or 1), exclude=KNOWN_BUGS, compile_only=targets,
                        generator=lambda seed, exclude: generate(seed, exclude, large=True), seconds=seconds)
    assert not findings, "\n".join(f"{f}\n{f.source}" for f in findings[:2])
    for target in targets:
        assert sorted(seed for _, seed in seconds[target]) == [0, 1, 2, 3]
        assert max(t for t, _ in seconds[target]) <= 10.0, seconds[target]
