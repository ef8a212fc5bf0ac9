"""Compilation driver: specialisation -> pipeline -> binary, through the disk cache.

``compile_specialized`` serves the launch path; ``tritium.compile`` compiles from an explicit
signature without launching. Both return a ``CompiledKernel`` whose ``asm`` maps stage names to
their text (or bytes for binaries).
"""

from __future__ import annotations

import functools
import json
import os
import re
from typing import Any

from ..errors import ArgumentError, CompilationError, TritiumError, option_error, user_facing
from ..target import KernelSignature
from ..tools.tensor_descriptor import TensorDescriptor
from . import cache as disk_cache
from .compile_lock import COMPILE_LOCK
from .descriptors import FlatLauncher, is_descriptor_type
from .descriptors import canonical as descriptor_type_of
from .descriptors import parameter as descriptor_parameter
from .descriptors import parameter_attributes as descriptor_attributes
from .tuple_args import flat_signature, is_tuple_type, layout_key, leaf_value
from .tuple_args import parameter as tuple_parameter


class KernelMetadata(dict):
    """The compile metadata (a dict, as the disk cache keeps it) read as attributes, as Triton's
    ``compiled.metadata.shared`` reads it; names the stages did not record fall back to the launch
    options (``num_warps``, ``num_stages``, ``debug``) and ``shared`` to 0 (until ``_init_handles``
    asks the target)."""

    def __init__(self, metadata: dict, options: Any = None):
        super().__init__(metadata)
        self._options = options

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # private and special names (copying, pickling) are not metadata
            raise AttributeError(name)
        if name in self:
            return self[name]
        if name == "shared":
            return 0
        if self._options is not None and hasattr(self._options, name):
            return getattr(self._options, name)
        raise AttributeError(f"the compile metadata has no '{name}'; it has {', '.join(sorted(self))}")


class CompiledKernel:
    """A kernel compiled for one target and one specialisation.

    As Triton's: ``asm`` maps stage names to their text (bytes for binaries), ``metadata`` reads as
    attributes (``metadata.shared``, ``metadata.num_warps``), and ``_init_handles()`` loads it on the
    current device and reads what it uses, ``n_regs``, ``n_spills`` and ``n_max_threads`` (through
    ``Target.kernel_resources``; reading one of them calls it).
    """

    def __init__(self, target, signature: KernelSignature, asm: dict[str, Any], metadata: dict, binary: bytes,
                 cache_hit: bool = False, options: Any = None, constants: dict[str, Any] | None = None,
                 params: tuple[str, ...] = (), arg_types: dict[str, str] | None = None):
        self.target, self.signature, self.asm = target, signature, asm
        #: each runtime parameter's type as launches give it (a descriptor: ``tensordesc<...>``), where
        #: ``signature`` is what the target compiled and loads, descriptors spread into their parts
        self.arg_types = dict(arg_types) if arg_types is not None else dict(zip(signature.arg_names,
                                                                                signature.arg_types))
        #: the constexpr values it was compiled with, and every parameter of the @jit function in order
        self.constants, self.params = dict(constants or {}), tuple(params) or signature.arg_names
        self.metadata = KernelMetadata(metadata, options)
        self.options = options
        self.binary = binary
        self.cache_hit = cache_hit  # True when it came from the disk cache without compiling
        self._launcher = None
        self._resources: dict[str, int] | None = None
        #: positions among the @jit function's parameters of ``written_args``, checked for read-only
        #: arrays on every launch (set by the launch path, for targets whose kernels read host memory)
        self.written_params: list[int] = []

    @property
    def launcher(self):
        if self._launcher is None:
            with COMPILE_LOCK:
                if self._launcher is None:
                    launcher = self.target.driver.load(self.binary, self.signature, self.metadata)
                    spread = frozenset(i for i, t in enumerate(self.arg_types.values())
                                       if is_descriptor_type(t) or is_tuple_type(t))
                    self._launcher = FlatLauncher(launcher, spread) if spread else launcher
        return self._launcher

    @property
    def name(self) -> str:
        return self.signature.name

    def _init_handles(self) -> None:
        """Load the kernel on the current device and read its resources (Triton's method of the same
        name); raises ``tritium.OutOfResources`` when it does not fit the device."""
        if self._resources is None:
            resources = dict(self.target.kernel_resources(self))
            self.metadata["shared"] = int(resources.get("shared", self.metadata.shared))
            self._resources = resources

    def _resource(self, name: str) -> int:
        self._init_handles()
        assert self._resources is not None
        return int(self._resources[name])

    @property
    def n_regs(self) -> int:
        """Registers per thread."""
        return self._resource("n_regs")

    @property
    def n_spills(self) -> int:
        """Registers per thread spilled to local memory (4-byte units)."""
        return self._resource("n_spills")

    @property
    def n_max_threads(self) -> int:
        """The most threads a program of this kernel may have on the current device."""
        return self._resource("n_max_threads")

    @functools.cached_property
    def written_args(self) -> tuple[str, ...]:
        """Arguments the kernel may store through (every pointer when the compiler could not tell)."""
        sig, stored = self.signature, self.metadata.get("stored_args")
        if stored is None:
            return tuple(n for n, t in zip(sig.arg_names, sig.arg_types) if t.startswith("*"))
        return tuple(sig.arg_names[i] for i in stored)

    def check_writable(self, values: dict[str, Any]) -> None:
        """Refuse read-only arrays (numpy's writeable flag) where the kernel stores."""
        for name in self.written_args:
            value = leaf_value(values, name)
            flags = getattr(value.base if isinstance(value, TensorDescriptor) else value, "flags", None)
            if flags is not None and getattr(flags, "writeable", True) is False:
                raise ArgumentError(f"kernel '{self.name}' stores through '{name}', but that array is read-only; "
                                    "pass a writable array (e.g. numpy.array(x) makes a writable copy)")

    def __getitem__(self, grid):
        """``compiled[grid](*args)``: launch with the runtime arguments only, or with every parameter
        in order as Triton's compiled kernels take them (tutorial 02 does), the constexprs being the
        values it was compiled with."""
        from .args import arg_type, bind
        from .launch import run_on_grid

        @user_facing
        def run(*args):
            names, types, kernel = list(self.arg_types), list(self.arg_types.values()), self.name
            if len(args) == len(self.params) != len(types):
                args = self._runtime_args(args)
            if len(args) != len(types):
                raise ArgumentError(f"kernel '{kernel}' takes {len(types)} runtime arguments "
                                    f"({', '.join(names)}), got {len(args)}")
            for a, t, n in zip(args, types, names):
                given = arg_type(a, n, kernel)
                if not _fits(given, t):
                    raise ArgumentError(f"kernel '{kernel}' was compiled with '{n}' of type {t}, but it was "
                                        f"given {_describe_type(given)}; pass {_describe_type(t)} or compile "
                                        f"for this type")
            named = dict(zip(names, args))
            vals = [bind(self.target, a, t, n, kernel) for a, t, n in zip(args, types, names)]
            self.check_writable(named)
            run_on_grid(self, grid, vals, named)
        return run

    def _runtime_args(self, args: tuple) -> tuple:
        """The runtime arguments among ``args`` (every parameter in order); a constexpr must be the
        value the kernel was compiled with."""
        from ..language.core import constexpr

        runtime = []
        for name, value in zip(self.params, args):
            if name in self.arg_types:
                runtime.append(value)
                continue
            given = value.value if isinstance(value, constexpr) else value
            compiled = self.constants.get(name)
            if given != compiled or type(given) is not type(compiled):
                raise ArgumentError(f"kernel '{self.name}' was compiled with {name}={compiled!r}, but it was given "
                                    f"{given!r}; compile it for that value (warmup or a launch with it)")
        return tuple(runtime)

    def __repr__(self) -> str:
        return f"CompiledKernel({self.signature.name}, target={self.target.name}, stages={list(self.asm)})"


def _signature_type(kernel: str, name: str, text: Any) -> str:
    """One type of a ``compile`` signature, checked: ``*fp32``, ``i32``, ..."""
    from ..language import dtypes as T

    t = str(text).strip()
    try:
        if is_descriptor_type(t):
            return descriptor_type_of(t)
        T.from_signature(t)
    except ValueError:
        valid = ", ".join(T.dtype(n).short for n in T.dtype.SINTS + T.dtype.UINTS + T.dtype.FLOATS)
        raise ArgumentError(f"kernel '{kernel}': unknown type {text!r} for '{name}' in the signature; valid types "
                            f"are {valid}, '*' before one of them for a pointer (e.g. '*fp32'), and "
                            "'tensordesc<fp16[64, 64]>' for a tensor descriptor") from None
    return t


def _split_types(signature: str) -> list[str]:
    """The types of a signature written as one string, split at the commas between them (not those
    inside ``tensordesc<fp16[64, 64]>``)."""
    types, depth, start = [], 0, 0
    for i, c in enumerate(signature + ","):
        depth += (c in "[<") - (c in "]>")
        if c == "," and depth == 0:
            types.append(signature[start:i].strip())
            start = i + 1
    return [t for t in types if t]


def _fits(given: str, compiled: str) -> bool:
    """Whether a value typed ``given`` may be passed where ``compiled`` was compiled: pointers only to
    the same element type (the kernel reads the memory as that type), integers to integer
    parameters, numbers to float parameters (the target checks ranges)."""
    if given[0] in "*t" or compiled[0] in "*t":  # pointers and tensor descriptors
        return given == compiled
    if compiled.startswith("fp") or compiled == "bf16":
        return True
    return not (given.startswith("fp") or given == "bf16")


def _describe_type(t: str) -> str:
    if is_descriptor_type(t):
        return f"a tensor descriptor ({t})"
    return f"an array of {t[1:]} ({t})" if t.startswith("*") else f"a scalar of type {t}"


@functools.lru_cache(maxsize=None)
def _versions() -> dict[str, str]:
    from ..plugins import distribution_version as dist

    # the compiler's own sources, not its version string: an edit without a version bump must
    # never load an old binary. Read from package metadata: importing MLIR would cost a hit ~100 ms
    return {"tritium": disk_cache.source_hash("tritium"), "llvmlite": dist("llvmlite"),
            "mlir": f"torch-mlir {dist('torch-mlir')}, mlir {dist('mlir')}"}


def build_pipeline(target, options):
    """The ordered stages for ``target``: frontend, neutral passes, the target's, then plugins'."""
    from .. import plugins
    from ..passes.neutral import optimize
    from ..passes.pipeline import Pipeline

    stages = Pipeline()
    stages["tile"] = _frontend
    stages["tile-opt"] = optimize
    target.add_stages(stages, options)
    plugins.extend_pipeline(target, stages, options)
    return stages


def _frontend(request, ctx):
    """Python AST -> tile dialect (frontend.ast_to_tile)."""
    from ..frontend.ast_to_tile import generate_module

    jitfn, arg_values, arg_attrs, known = request
    module = generate_module(jitfn, arg_values, arg_attrs, known, debug=getattr(ctx.options, "debug", False),
                             name=ctx.signature.name, num_warps=getattr(ctx.options, "num_warps", 4))
    try:
        module.operation.verify()
    except Exception as e:  # an IR the frontend should never produce: report it with the kernel name
        raise CompilationError(jitfn.__name__, f"internal error, generated IR does not verify: {e}") from e
    return module




def compile_specialized(jitfn, target, arg_types: dict[str, str], constants: dict[str, Any],
                        specs: dict[str, str], options: dict[str, Any], given=None) -> CompiledKernel:
    """Compile ``jitfn`` for runtime argument types, constexpr values and specialisations.

    ``given`` (a ``GivenStage``) starts the pipeline from that stage's text; without it, the files
    of ``TRITIUM_OVERRIDE_DIR`` named for the kernel (if any) do, read once for the key and the run.
    """
    with COMPILE_LOCK:
        return _compile_specialized(jitfn, target, arg_types, constants, specs, options, given)


def _compile_specialized(jitfn, target, arg_types, constants, specs, options, given) -> CompiledKernel:
    from .. import plugins
    from ..passes.given_stage import choose_override, override_files

    try:
        opts = target.parse_options(options)
    except TritiumError as e:
        raise option_error(jitfn.__name__, e) from None
    if given is None and override_files(jitfn.__name__):  # read once: the key and the pipeline see one text
        given = choose_override(jitfn.__name__, list(build_pipeline(target, opts)))
    both = jitfn.do_not_specialize & jitfn.constexprs
    if both:
        raise CompilationError(jitfn.__name__, f"{', '.join(sorted(both))} marked as constexpr and listed in "
                                               "do_not_specialize: a constexpr is always specialised; drop one")
    name = _kernel_name(jitfn, arg_types, constants, specs)
    signature = KernelSignature(name, *flat_signature(tuple(arg_types), tuple(arg_types.values()), constants))
    key = disk_cache.cache_key({
        "source": jitfn.cache_key, "name": name, "arg_types": list(arg_types.items()),
        "specialization": sorted(specs.items()), "constants": sorted((k, _key_repr(v)) for k, v in constants.items()),
        "options": repr(opts), "target": target.name, "target_version": target.version(), **_versions(),
        "pipeline": plugins.pipeline_identity(),
        **({"given": [given.stage, given.suffix, given.digest()]} if given is not None else {}),
    })
    jitfn.check_globals()  # a global reassigned since the source key was taken
    cache = disk_cache.Cache()
    entry = cache.get(key)
    if entry is not None:
        if os.environ.get("TRITIUM_DUMP"):
            from ..passes.pipeline import check_dump_selection, dump

            check_dump_selection(list(entry.asm))
            dump(jitfn.__name__, entry.asm, key, target)
        return CompiledKernel(target, signature, entry.asm, entry.metadata, entry.binary, cache_hit=True, options=opts,
                              constants=constants, params=tuple(jitfn.arg_names), arg_types=arg_types)
    asm, metadata = _run_pipeline(jitfn, target, opts, signature, arg_types, constants, specs, key, given)
    binary = asm[target.binary_stage]
    binary = binary.encode() if isinstance(binary, str) else binary  # e.g. PTX, loaded as text
    cache.put(key, binary, metadata, asm)
    return CompiledKernel(target, signature, asm, metadata, binary, options=opts, constants=constants,
                          params=tuple(jitfn.arg_names), arg_types=arg_types)


def _run_pipeline(jitfn, target, opts, signature, arg_types, constants, specs, key, given):
    from ..ir import tile
    from ..ir.mlir import ir
    from ..passes.pipeline import CompileContext

    ctx = CompileContext(signature, target, opts, {"name": jitfn.__name__}, key=key)
    with tile.context(), ir.Location.unknown():
        arg_values, attrs, known = [], [], {}
        for name in jitfn.arg_names:
            t = arg_types.get(name)
            if t is None:
                arg_values.append(constants.get(name))
            elif is_tuple_type(t):
                leaf = functools.partial(parameter_placeholder, attrs=attrs)
                arg_values.append(tuple_parameter(constants[layout_key(name)], leaf))
            else:
                arg_values.append(parameter_placeholder(t, specs.get(name, ""), attrs))
                if specs.get(name) == "1":
                    known[name] = 1
        asm = build_pipeline(target, opts).run((jitfn, arg_values, attrs, known), ctx, given)
    return asm, _plain(ctx.metadata)


def _kernel_name(jitfn, arg_types: dict[str, str], constants: dict[str, Any], specs: dict[str, str]) -> str:
    """The compiled kernel's name: the function's, or what its ``repr`` says of the specialisation
    (made an identifier: other characters become ``_``)."""
    import types

    if jitfn.repr is None:
        return jitfn.__name__
    ones = {n: 1 for n, s in specs.items() if s == "1"}
    spec = types.SimpleNamespace(signature=dict(arg_types), constants={**constants, **ones})
    name = re.sub(r"\W", "_", str(jitfn.repr(spec)))
    return name if name and not name[0].isdigit() else f"_{name}"


def _key_repr(value: Any) -> str:
    """A constexpr as the disk cache's key spells it: a @jit function by its sources' hash (its repr
    names it only), anything else by its repr."""
    cache_key = getattr(value, "cache_key", None)
    return cache_key if isinstance(cache_key, str) else repr(value)


def parameter_placeholder(arg_type: str, spec: str = "", attrs: list[dict] | None = None) -> Any:
    """The frontend's value of a runtime parameter (or of a tuple's runtime leaf) of ``arg_type``: a
    tensor without IR, or a descriptor's parts; with ``attrs``, the attributes its specialisation
    ``spec`` gives the function's parameters are added to it."""
    from ..ir import tile
    from ..language import core as tlc
    from ..language import dtypes as T

    if is_descriptor_type(arg_type):
        if attrs is not None:
            attrs += descriptor_attributes(arg_type, spec)
        return descriptor_parameter(arg_type)
    if attrs is not None:
        attrs.append({"tile.divisibility": tile.i32_attr(16)} if spec == "D" else {})
    return tlc.tensor(None, T.from_signature(arg_type), ())


def _plain(metadata: dict) -> dict:
    """The JSON values of ``metadata``, as the disk cache gives them back: a launcher sees the same
    metadata on a fresh compile and on a cache hit."""
    json_types = (str, int, float, bool, list, tuple, dict, type(None))
    kept = {k: v for k, v in metadata.items() if isinstance(v, json_types)}
    return json.loads(json.dumps(kept))


@user_facing
def compile(fn=None, signature: dict[str, str] | str | None = None,  # noqa: A001
            constants: dict[str, Any] | None = None, target: Any = None, *,
            source: str | bytes | os.PathLike | None = None, stage: str | None = None, src: Any = None,
            **options) -> CompiledKernel:
    """Compile a ``@jit`` function without launching it.

    ``signature`` maps runtime parameter names to types (``{"x_ptr": "*fp32", "n": "i32"}``) or lists
    them in order as ``"*fp32, i32"``; ``constants`` gives every constexpr parameter; ``target`` names
    a tritium target (default: the selected one).

    ``source`` starts from a stage instead of the kernel's Python: the text of ``stage`` (an MLIR
    module for the MLIR stages, LLVM IR for ``llir``, ...), or without ``stage`` the path of a dump
    ``<kernel>.<stage>.<suffix>`` (the stage is read from its name). The stages up to that one do
    not run; ``TRITIUM_OVERRIDE_DIR`` is not consulted.

    Triton's form, ``compile(ASTSource(fn, signature, constexprs), target=GPUTarget(...),
    options={...})``, is ``tritium.compiler.compile``'s.
    """
    from .. import plugins
    from ..compiler import ASTSource
    from ..compiler import compile as compile_source
    from ..passes.given_stage import GivenStage, read_dump

    if src is not None or isinstance(fn, ASTSource):  # Triton's form: (src, target, options)
        return compile_source(src if src is not None else fn, target if target is not None else signature,
                              options.pop("options", None) or constants)
    if signature is None:
        raise ArgumentError(f"kernel '{fn.__name__}': tritium.compile needs a signature (the runtime parameters' "
                            "types, e.g. {'x_ptr': '*fp32', 'n': 'i32'})")
    constants = dict(constants or {})
    if isinstance(signature, str):
        names = [n for n in fn.arg_names if n not in constants and n not in fn.constexprs]
        types = _split_types(signature)
        if len(types) != len(names):
            raise ArgumentError(f"kernel '{fn.__name__}': signature lists {len(types)} types for "
                                f"{len(names)} runtime parameters ({', '.join(names)})")
        signature = dict(zip(names, types))
    tgt = plugins.get_target(target, runnable=False)  # compiling needs no device
    given = None
    if isinstance(source, os.PathLike) or (source is not None and stage is None):
        given = read_dump(source, fn.__name__)
        if stage is not None and stage != given.stage:
            raise ArgumentError(f"kernel '{fn.__name__}': stage={stage!r}, but the file {source!s} holds "
                                f"stage '{given.stage}'")
    elif source is not None:
        given = GivenStage(stage, source, tgt.stage_suffix(stage, source), "the text given to tritium.compile")
    elif stage is not None:
        raise ArgumentError(f"kernel '{fn.__name__}': stage={stage!r} needs source= (that stage's text)")
    return compile_for_signature(fn, tgt, signature, constants, {}, options, given)


def compile_for_signature(fn, target, signature: dict[str, str], constants: dict[str, Any], specs: dict[str, str],
                          options: dict[str, Any], given=None) -> CompiledKernel:
    """Compile ``fn`` for ``target`` with the runtime parameters' types ``signature`` (any order),
    the constexprs ``constants`` (parameters with defaults may be left out) and ``specs`` (a
    runtime parameter's specialisation, ``"D"`` for a multiple of 16)."""
    constants = dict(constants)
    missing = [n for n in fn.arg_names if n not in signature and n not in constants
               and fn.signature.parameters[n].default is fn.signature.parameters[n].empty]
    if missing:
        raise ArgumentError(f"kernel '{fn.__name__}': no type or constant given for {', '.join(missing)}")
    for n in fn.arg_names:
        if n not in signature and n not in constants:
            constants[n] = fn.signature.parameters[n].default
    ordered = {n: _signature_type(fn.__name__, n, signature[n]) for n in fn.arg_names if n in signature}
    options = dict(options)
    if fn.debug is not None:
        options.setdefault("debug", fn.debug)
    return compile_specialized(fn, target, ordered, constants, {n: specs[n] for n in ordered if n in specs},
                               options, given)
