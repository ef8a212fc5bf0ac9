"""Bad input gets a clear tritium error naming the kernel and the line or argument to change."""

import numpy as np
import pytest

import tritium
from tritium import plugins

from .kernels import bad
from .kernels.frontend_only import FrontendOnly


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))


def compile_error(fn, signature, constants=None) -> str:
    with pytest.raises(tritium.CompilationError) as info:
        tritium.compile(fn, signature=signature, constants=constants or {}, target=FrontendOnly())
    msg = str(info.value)
    assert f"in kernel '{fn.__name__}'" in msg and "bad.py:" in msg
    return msg


def test_unknown_target_lists_installed(monkeypatch):
    monkeypatch.setenv("TRITIUM_TARGET", "nosuchtarget")
    with pytest.raises(tritium.TargetError) as info:
        bad.needs_block[(1,)](np.zeros(4, np.float32), BLOCK=4)
    assert "nosuchtarget" in str(info.value)
    for name in plugins.targets():
        assert name in str(info.value)


@pytest.mark.parametrize("fn,line,what", [
    (bad.uses_with, 'with open("f") as f:', "With"),
    (bad.uses_lambda, "f = lambda v: v + 1", "Lambda"),
])
def test_unsupported_construct(fn, line, what):
    msg = compile_error(fn, "*fp32")
    assert f"unsupported Python construct in a kernel: {what}" in msg
    assert line in msg


def test_arange_extent_must_be_power_of_two():
    msg = compile_error(bad.arange_not_pow2, "*fp32")
    assert "power of two" in msg and "tl.arange(0, 100)" in msg


def test_arange_extent_must_be_constexpr():
    msg = compile_error(bad.arange_runtime_extent, "*fp32, i32")
    assert "compile-time constant" in msg and "offs = tl.arange(0, n)" in msg


def test_shape_mismatch():
    msg = compile_error(bad.shape_mismatch, "*fp32")
    assert "shape mismatch" in msg and "[16]" in msg and "[32]" in msg and "(a + b)" in msg


def test_loop_carried_type_change():
    msg = compile_error(bad.loop_changes_type, "*fp32, i32")
    assert "loop-carried variable 'acc'" in msg and "int32" in msg and "float32" in msg


@pytest.mark.parametrize("launch", ["subscript", "run"])
def test_missing_constexpr(host_target, launch):
    x = np.zeros(4, np.float32)
    with pytest.raises(tritium.ArgumentError) as info:  # run(): not the generated launcher's TypeError
        bad.needs_block[(1,)](x) if launch == "subscript" else bad.needs_block.run(x, grid=(1,))
    assert "needs_block" in str(info.value) and "'BLOCK'" in str(info.value) and "BLOCK=" in str(info.value)


@pytest.mark.parametrize("warps", [0, 3, -4, 6])
def test_num_warps_not_a_power_of_two_is_refused_on_every_target(target, warps):
    x = target.driver.to_device(np.zeros(4, np.float32))
    with pytest.raises(tritium.ArgumentError, match=f"kernel 'needs_block': num_warps must be a power of 2 .* "
                                                    f"got {warps}") as info:
        bad.needs_block[(1,)](x, BLOCK=4, num_warps=warps)
    assert isinstance(info.value, AssertionError)  # as Triton's backends assert it (its test_num_warps_pow2)
    bad.needs_block[(1,)](x, BLOCK=4, num_warps=2)  # a power of two launches


@pytest.mark.parametrize("how", ["arange", "zeros", "full", "broadcast", "join", "cat", "reshape", "dot"])
def test_a_block_larger_than_triton_allows_is_refused_on_every_target(target, how):
    out = target.driver.to_device(np.zeros(16, np.int32))
    with pytest.raises(tritium.CompilationError) as info:
        bad.too_many_elements[(1,)](out, HOW=how, N=2**20)
    assert "in kernel 'too_many_elements'" in str(info.value) and "bad.py:" in str(info.value)
    assert "numel (2097152) exceeds triton maximum tensor numel (1048576)" in str(info.value)


def test_a_block_of_triton_s_largest_size_compiles():
    compiled = tritium.compile(bad.too_many_elements, signature="*i32", constants={"HOW": "broadcast", "N": 2**19},
                               target=FrontendOnly())
    assert "tensor<2x524288xi32" in compiled.asm["tile"]


def test_list_instead_of_array(host_target):
    with pytest.raises(tritium.ArgumentError) as info:
        bad.needs_block[(1,)]([0.0] * 4, BLOCK=4)
    assert "'x_ptr'" in str(info.value) and "list" in str(info.value) and "numpy" in str(info.value)


def test_wrong_number_of_arguments(host_target):
    with pytest.raises(tritium.ArgumentError) as info:
        bad.needs_block[(1,)](np.zeros(4, np.float32), np.zeros(4, np.float32), BLOCK=4)
    assert "needs_block" in str(info.value)


class FakeGpuArray:
    """Looks like a CUDA array (CuPy/Numba expose this interface)."""

    dtype = np.dtype(np.float32)
    __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (1 << 40, False), "version": 3}


def test_gpu_array_on_host_target(host_target):
    with pytest.raises(tritium.ArgumentError) as info:
        bad.needs_block[(1,)](FakeGpuArray(), BLOCK=4)
    assert "GPU memory" in str(info.value) and "TRITIUM_TARGET" in str(info.value)


def test_interpreter_errors_point_at_the_line(monkeypatch):
    monkeypatch.setenv("TRITIUM_TARGET", "interpreter")
    with pytest.raises(tritium.CompilationError) as info:
        bad.shape_mismatch[(1,)](np.zeros(16, np.float32))
    assert "shape mismatch" in str(info.value) and "(a + b)" in str(info.value)


def test_interpreter_rejects_what_the_compiler_rejects(monkeypatch):
    monkeypatch.setenv("TRITIUM_TARGET", "interpreter")
    with pytest.raises(tritium.CompilationError) as info:
        bad.uses_lambda[(1,)](np.zeros(4, np.float32))
    assert "unsupported Python construct in a kernel: Lambda" in str(info.value)
    assert "f = lambda v: v + 1" in str(info.value)


def test_interpreter_names_the_line_of_any_error(monkeypatch):
    monkeypatch.setenv("TRITIUM_TARGET", "interpreter")
    with pytest.raises(tritium.CompilationError) as info:
        bad.uses_undefined[(1,)](np.zeros(4, np.float32))
    assert "name 'undefined_name' is not defined" in str(info.value)  # the compiler's words
    assert "tl.store(x_ptr, undefined_name)" in str(info.value)


def test_mutual_recursion_is_reported():
    msg = compile_error(bad.ping, "*fp32")
    assert "recursive" in msg and "ping -> pong -> ping" in msg


def test_misspelt_keyword_is_reported(host_target):
    with pytest.raises(tritium.ArgumentError) as info:
        bad.needs_block[(1,)](np.zeros(4, np.float32), BLOCK=4, num_warpz=4)
    assert "kernel 'needs_block'" in str(info.value) and "num_warpz" in str(info.value)


def test_array_as_constexpr_is_reported(host_target):
    with pytest.raises(tritium.ArgumentError) as info:
        bad.needs_block[(1,)](np.zeros(4, np.float32), BLOCK=np.arange(4))
    assert "BLOCK" in str(info.value)


def test_mask_must_be_boolean():
    msg = compile_error(bad.float_mask, "*fp32")
    assert "mask must be boolean" in msg and "tl.float32" in msg


def test_kernel_cannot_return_a_value():
    msg = compile_error(bad.returns_value, "*fp32")
    assert "cannot return a value" in msg and "return 1" in msg


@pytest.mark.parametrize("grid", [(1.5,), (-1,), (1, 2, 3, 4), (2**31,)])
def test_bad_grids(host_target, grid):
    with pytest.raises(tritium.ArgumentError, match="kernel 'needs_block'.*grid"):
        bad.needs_block[grid](np.zeros(4, np.float32), BLOCK=4)


def test_argument_given_twice(host_target):
    x = np.zeros(4, np.float32)
    with pytest.raises(tritium.ArgumentError, match="kernel 'needs_block'.*multiple values for argument 'x_ptr'"):
        bad.needs_block[(1,)](x, x_ptr=x, BLOCK=4)


def test_boolean_operators_need_scalars():
    msg = compile_error(bad.and_on_blocks, "*fp32")
    assert "'and' needs scalars" in msg and "use &" in msg


@pytest.fixture
def missing_builtin(monkeypatch):
    """A Triton builtin tritium lacks (every one of Triton 3.6's exists now): ``tl.NOT_YET`` names them."""
    import tritium.language as tl

    monkeypatch.setattr(tl, "NOT_YET", frozenset({"a_builtin_not_there_yet"}))
    return "a_builtin_not_there_yet"


def test_triton_builtins_not_implemented_say_so(host_target, missing_builtin):
    from .kernels.basic import static_kernel, uses_missing_builtin

    with pytest.raises(tritium.CompilationError,
                       match=f"tl.{missing_builtin} is a Triton builtin that tritium does not implement yet"):
        uses_missing_builtin[(1,)](np.zeros(256, np.float32))
    with pytest.raises(tritium.CompilationError, match="static assertion failed: N too large"):
        static_kernel[(1,)](np.zeros(8, np.int32), N=9)


def test_errors_in_helpers_point_at_the_helper_line(monkeypatch):
    msg = compile_error(bad.calls_bad_helper, "*i32")
    assert "in @jit function 'mismatched_add'" in msg and "return a + b" in msg
    monkeypatch.setenv("TRITIUM_TARGET", "interpreter")
    with pytest.raises(tritium.CompilationError) as info:
        bad.calls_bad_helper[(1,)](np.zeros(8, np.int32))
    assert "shape mismatch" in str(info.value) and "return a + b" in str(info.value)


def test_missing_builtins_are_attribute_errors_that_say_not_implemented(missing_builtin):
    import tritium.language as tl

    assert not hasattr(tl, missing_builtin) and getattr(tl, missing_builtin, None) is None
    with pytest.raises(AttributeError,
                       match=f"tl.{missing_builtin} is a Triton builtin that tritium does not implement yet"):
        getattr(tl, missing_builtin)
    with pytest.raises(tritium.TritiumError):
        getattr(tl, missing_builtin)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_thing'"):
        tl.no_such_thing  # noqa: B018


def _library_frames(exc: BaseException) -> list:
    import os
    import traceback

    root = os.path.dirname(tritium.__file__)
    return [f for f in traceback.extract_tb(exc.__traceback__)
            if f.filename.startswith(root) or f.filename.startswith("<tritium launch of")]


def _user_facing(frame) -> bool:
    """The one library frame an error may leave: ``errors.user_facing``'s, or the generated launch
    function's (``kernel[grid]``'s fast path), which strip the library's frames the same way."""
    return frame.filename.endswith("errors.py") or frame.filename.startswith("<tritium launch of")


def test_compile_error_at_launch_shows_the_launch_line_not_library_frames(compiling_target, host_target):
    import traceback

    with pytest.raises(tritium.CompilationError) as info:
        bad.uses_undefined[(1,)](np.zeros(4, np.float32))  # the launch line
    exc = info.value
    frames = traceback.extract_tb(exc.__traceback__)
    assert frames[0].line == "bad.uses_undefined[(1,)](np.zeros(4, np.float32))  # the launch line"
    assert [_user_facing(f) for f in _library_frames(exc)] == [True]  # only user_facing
    assert len(frames) == 2
    text = "".join(traceback.format_exception(exc))
    assert "in kernel 'uses_undefined'" in text and "bad.py:" in text and "^" in text
    assert "During handling" not in text and "direct cause" not in text


def test_compile_error_from_compile_is_trimmed_too():
    with pytest.raises(tritium.CompilationError) as info:
        tritium.compile(bad.uses_undefined, signature="*fp32", target=FrontendOnly())
    assert [f.filename.endswith("errors.py") for f in _library_frames(info.value)] == [True]


def test_missing_builtins_say_whether_triton_has_them(missing_builtin):
    import tritium.language as tl
    from tritium.errors import NotImplementedYet

    with pytest.raises(NotImplementedYet,
                       match=rf"tl\.{missing_builtin} is a Triton builtin that tritium does not implement yet"):
        getattr(tl, missing_builtin)
    for name in ("full_like", "tanh"):  # not in triton.language either: a plain AttributeError
        with pytest.raises(AttributeError, match=rf"has no attribute '{name}'"):
            getattr(tl, name)


def test_a_compile_error_is_chained_to_what_its_line_raised_without_library_frames(monkeypatch):
    """As Triton's tests read it (``e.__cause__``): the error the source line raised, its message
    alone, with no traceback, so a printed error shows no frame of tritium's; on a launch, through
    the generated launch path, and from ``compile``."""
    import traceback

    import tritium.language as tl

    @tritium.jit
    def bad_axis(x_ptr):
        tl.store(x_ptr, tl.program_id(20))

    monkeypatch.setenv("TRITIUM_TARGET", "cpu")
    for attempt in range(2):  # the first launch takes the general path, the second the generated one
        with pytest.raises(tritium.CompilationError) as info:
            bad_axis[(1,)](np.zeros(1, np.int32))
        cause = info.value.__cause__
        assert str(cause) == "program_id axis must be 0, 1, or 2 but got 20" and cause.__traceback__ is None
        printed = "".join(traceback.format_exception(info.value))
        assert "tritium/language" not in printed and "tritium/frontend" not in printed
    with pytest.raises(tritium.CompilationError) as info:
        tritium.compile(bad_axis, {"x_ptr": "*i32"}, target=FrontendOnly())
    assert str(info.value.__cause__) == "program_id axis must be 0, 1, or 2 but got 20"


_TABLE = np.arange(4)  # a global that is no constexpr: kernels may not read it


def test_triton_s_words_for_a_global_a_static_assertion_and_a_non_boolean_where():
    import tritium.language as tl

    @tritium.jit
    def reads_global(x_ptr):
        tl.store(x_ptr, _TABLE[0])

    @tritium.jit
    def fails_statically(x_ptr):
        tl.static_assert(isinstance(0, tl.tensor))

    @tritium.jit
    def int_condition(x_ptr):
        c = tl.full((64,), 0, tl.uint32)
        tl.store(x_ptr + tl.arange(0, 64), tl.where(c, 1.0, 2.0))

    with pytest.raises(tritium.CompilationError, match="Cannot access global variable '_TABLE'"):
        tritium.compile(reads_global, {"x_ptr": "*fp32"}, target=FrontendOnly())
    with pytest.raises(tritium.CompilationError) as info:
        tritium.compile(fails_statically, {"x_ptr": "*fp32"}, target=FrontendOnly())
    assert info.value.__cause__ is None  # as Triton's CompileTimeAssertionFailure
    with pytest.warns(UserWarning, match="tl.where with a non-boolean condition is deprecated"):
        tritium.compile(int_condition, {"x_ptr": "*fp32"}, target=FrontendOnly())
