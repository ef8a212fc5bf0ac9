"""Plugins: the hooks a target package implements, entry-point discovery and target selection.

For backend authors
-------------------
A target package is an ordinary pip distribution that declares an entry point in the group
``tritium``; the entry point names a module (or any object) holding hook implementations::

    # pyproject.toml of the package "acme-tritium"
    [project.entry-points.tritium]
    acme = "tritium_acme.plugin"

    # tritium_acme/plugin.py
    from tritium.plugins import hookimpl
    from .target import AcmeTarget

    @hookimpl
    def tritium_targets():
        return [AcmeTarget()]

The hooks are listed below (``tritium_targets``, ``tritium_extend_pipeline``, ``tritium_knobs``,
``tritium_conformance_expectations``); implement any subset, with the same name and any subset of
the arguments. ``tritium targets`` shows what was found, whether each target can run here, and which
package provides it.

Host code ported from Triton asks the selected target about its devices through
``tritium.runtime.driver.active`` (``get_current_target()``, ``utils.get_device_properties()``,
``get_active_torch_device()``) and a compiled kernel's ``_init_handles()``: a target answers with the
device methods of ``tritium.target.Target`` (``device_count``, ``set_current_device``,
``current_target``, ``device_properties``, ``torch_device``, ``kernel_resources``, ...), whose defaults
describe one host device. The conformance suite pins one worker per device with the same methods.

For core
--------
``get_target(name=None)`` picks the target (``TRITIUM_TARGET``, else automatic selection: the
available target with the highest ``priority``; targets with a negative priority are only used when
named), ``targets()`` lists them, ``extend_pipeline(...)`` and ``conformance_expectations(...)`` call
the other two hooks. Nothing here knows any target by name.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
import threading
from typing import TYPE_CHECKING, Any, Iterable

import pluggy

from .environment import raw_reader
from .errors import TargetError

if TYPE_CHECKING:  # pragma: no cover - the real import would pull numpy into every CLI call
    from .target import Target

PROJECT = "tritium"
#: the entry-point group target packages register in
ENTRY_POINT_GROUP = "tritium"
#: plugins that ship with core; each is registered when its module exists
BUILTIN_PLUGINS: tuple[str, ...] = ("tritium.interpreter.plugin",)
#: environment variable naming the target; unset, empty or ``auto`` selects automatically
TARGET_ENV = "TRITIUM_TARGET"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# ------------------------------------------------------------------------------------------------
# Hook specifications
# ------------------------------------------------------------------------------------------------
class HookSpecs:
    """The hooks of the ``tritium`` plugin system (pluggy ``project_name="tritium"``).

    Implement them as module-level functions decorated with ``@tritium.plugins.hookimpl`` in the
    module your entry point names; ``self`` is not part of an implementation's signature.
    """

    @hookspec
    def tritium_targets(self) -> "list[Target]":
        """Return the targets this plugin provides.

        Each element is an instance of a :class:`tritium.target.Target` subclass with a unique,
        non-empty ``name`` (what users put in ``TRITIUM_TARGET``). Return every target the package
        implements, also those that cannot run on this machine: availability is asked separately
        through ``Target.availability()``, so ``tritium targets`` can say *why* a target is not
        usable. Keep this hook cheap: do not initialise devices here.

        Automatic selection picks the available target with the highest ``priority``; a target
        with a negative priority is never picked automatically (use it for debugging targets).

        :return: a list (possibly empty) of target objects.
        """

    @hookspec
    def tritium_extend_pipeline(self, target: "Target", stages: Any, options: Any) -> None:
        """Add, replace or remove stages of the compilation pipeline of ``target``.

        Called for every compilation after core's target-neutral stages and the target's own
        ``Target.add_stages`` have filled ``stages``: an ordered mapping (a
        :class:`tritium.passes.pipeline.Pipeline`) of stage name to callable
        ``stage(previous_output, ctx) -> output``. Mutate it in place; the return value is ignored.
        Check ``target.name`` if the change applies to one target only. Stage names are stable and
        appear in dumps and in ``compiled.asm``, so a replacement stage should keep the name of the
        stage it replaces. An added stage is dumped with core's default suffix (``mlir``, ``txt``,
        ``bin``: see ``Target.stage_suffix``) unless the target names it in ``stage_suffixes``.

        Implementations run in pluggy's order (last registered first; use
        ``@hookimpl(tryfirst=True)`` or ``trylast=True`` to move one).

        :param target: the target being compiled for.
        :param stages: the ordered stage mapping, to be changed in place.
        :param options: the target's parsed options (``Target.parse_options``) for this compilation.
        """

    @hookspec
    def tritium_knobs(self) -> "dict[str, Any]":
        """Sections of ``tritium.knobs`` (Triton's ``triton.knobs``) this plugin provides, by name:
        instances of ``tritium.knobs.base_knobs`` whose ``Knob`` descriptors read the settings its
        target reads. nvptx provides ``nvidia`` (``nvidia.ptxas``: the ptxas it assembles with).
        A name core or another plugin already gives is ignored."""

    @hookspec
    def tritium_conformance_expectations(self, target: "Target") -> "dict[str, str]":
        """Declare the conformance cases ``target`` is known to fail, with a reason.

        The shared conformance suite marks each listed case ``xfail`` with the given reason, so a
        report separates declared gaps from regressions. Return an empty dict (or ``None``) for
        targets this plugin does not know about.

        :param target: the target under test.
        :return: a mapping of conformance case id (as the suite names it) to a human reason.
        """


# ------------------------------------------------------------------------------------------------
# Records
# ------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class BrokenPlugin:
    """An entry point (or built-in plugin) that failed to load, or whose hook raised."""

    name: str  #: entry-point name, or the module name of a built-in plugin
    value: str  #: what the entry point points at (``module:attr``)
    distribution: str
    version: str
    error: str  #: ``ExceptionType: message``
    stage: str = "load"  #: ``load`` or the name of the hook that raised

    def describe(self) -> str:
        where = f"{self.distribution} {self.version}".strip()
        what = "failed to load" if self.stage == "load" else f"raised in {self.stage}"
        return f"plugin '{self.name}' ({self.value}, from {where or 'unknown distribution'}) {what}: {self.error}"


@dataclasses.dataclass(frozen=True)
class TargetInfo:
    """One installed target and where it came from."""

    name: str
    target: Any  #: the Target object
    distribution: str  #: the distribution providing it ('' when registered at run time)
    version: str
    plugin: str  #: the plugin (entry point) name

    @property
    def priority(self) -> int:
        try:
            return int(getattr(self.target, "priority", 0))
        except (TypeError, ValueError):
            return 0

    @property
    def provider(self) -> str:
        return f"{self.distribution} {self.version}".strip() or f"plugin '{self.plugin}'"

    def availability(self) -> tuple[bool, str]:
        return availability(self.target)


@dataclasses.dataclass
class _State:
    pm: pluggy.PluginManager
    origin: dict[int, tuple[str, str, str]]  # id(plugin) -> (plugin name, distribution, version)
    broken: list[BrokenPlugin]
    infos: list[TargetInfo] | None = None
    hook_broken: list[BrokenPlugin] = dataclasses.field(default_factory=list)
    avail: dict[int, tuple[bool, str]] = dataclasses.field(default_factory=dict)
    #: ``TRITIUM_TARGET``'s raw value -> the target it selected (launches ask on every call)
    selected: dict[str | None, "Target"] = dataclasses.field(default_factory=dict)


_lock = threading.RLock()
_state: _State | None = None


# ------------------------------------------------------------------------------------------------
# Plugin manager
# ------------------------------------------------------------------------------------------------
def _describe_exc(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


# Entry points are read straight from the ``*.dist-info`` / ``*.egg-info`` folders on ``sys.path``
# (what importlib.metadata does, first folder on the path winning per distribution): importing
# importlib.metadata costs ~20 ms, a large part of the budget of a warm-cache first launch. Paths that
# are not plain directories (zip files) fall back to importlib.metadata.
@dataclasses.dataclass(frozen=True)
class EntryPoint:
    """One entry point of a distribution found on ``sys.path``."""

    name: str
    value: str
    group: str
    dist: "Distribution"

    def load(self) -> Any:
        module, _, attrs = self.value.partition(":")
        obj = importlib.import_module(module.strip())
        for attr in filter(None, attrs.split("[", 1)[0].strip().split(".")):
            obj = getattr(obj, attr)
        return obj


@dataclasses.dataclass(frozen=True)
class Distribution:
    """A distribution's metadata folder; ``name``/``version`` come from its metadata file."""

    path: str  #: the ``.dist-info`` or ``.egg-info`` folder

    def _field(self, field: str) -> str:
        for fname in ("METADATA", "PKG-INFO"):
            try:
                with open(os.path.join(self.path, fname), encoding="utf-8", errors="replace") as f:
                    for line in f:
                        if not line.strip():
                            break  # end of the headers
                        key, sep, value = line.partition(":")
                        if sep and key.strip().lower() == field:
                            return value.strip()
            except OSError:
                continue
        return ""

    @property
    def name(self) -> str:
        return self._field("name") or os.path.basename(self.path).rsplit(".", 1)[0].split("-")[0]

    @property
    def version(self) -> str:
        return self._field("version")

    def entry_points(self) -> list[EntryPoint]:
        try:
            with open(os.path.join(self.path, "entry_points.txt"), encoding="utf-8") as f:
                text = f.read()
        except OSError:
            return []
        eps, group = [], None
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                group = line[1:-1].strip()
                continue
            name, sep, value = line.partition("=")
            if sep and group is not None:
                eps.append(EntryPoint(name.strip(), value.strip(), group, self))
        return eps


def _normalize(name: str) -> str:
    out, dash = [], False
    for ch in name.lower():
        if ch in "-_.":
            dash = True
            continue
        if dash and out:
            out.append("-")
        dash = False
        out.append(ch)
    return "".join(out)


def distributions() -> list[Distribution] | None:
    """Every distribution on ``sys.path`` (first one wins per name), or None when ``sys.path``
    holds something other than directories (then ask importlib.metadata)."""
    found = _installed()
    return None if found is None else list(found.values())


#: ``tuple(sys.path)`` -> its distributions by normalised name (read once: a first launch asks
#: several times, and a large environment has hundreds of them); ``reset()`` forgets it
_installed_cache: dict[tuple[str, ...], dict[str, Distribution] | None] = {}


def _installed() -> dict[str, Distribution] | None:
    import sys

    key = tuple(sys.path)
    if key in _installed_cache:
        return _installed_cache[key]
    found: dict[str, Distribution] | None = {}
    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except NotADirectoryError:
            found = None
            break
        except OSError:
            continue
        for fname in sorted(names):
            if not (fname.endswith(".dist-info") or fname.endswith(".egg-info")):
                continue
            path = os.path.join(folder, fname)
            name = _normalize(fname.rsplit(".", 1)[0].split("-")[0])
            if name not in found and os.path.isdir(path):
                found[name] = Distribution(path)
    _installed_cache.clear()
    _installed_cache[key] = found
    return found


def distribution_version(name: str) -> str:
    """The installed version of distribution ``name`` ('' when absent), without importlib.metadata."""
    found = _installed()
    if found is None:
        from importlib import metadata

        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return ""
    dist = found.get(_normalize(name))
    return dist.version if dist is not None else ""


def _dist_version(dist: str) -> str:
    return distribution_version(dist)


def _iter_entry_points() -> Iterable[Any]:
    """Entry points of the ``tritium`` group, one per (distribution, name)."""
    dists = distributions()
    if dists is None:
        from importlib import metadata

        return metadata.entry_points(group=ENTRY_POINT_GROUP)
    return [ep for dist in dists for ep in dist.entry_points() if ep.group == ENTRY_POINT_GROUP]


def _load(state: _State) -> None:
    pm = state.pm
    for module_name in BUILTIN_PLUGINS:
        try:
            found = importlib.util.find_spec(module_name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            continue
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # a plugin bug must not take everything down
            state.broken.append(BrokenPlugin(module_name, module_name, PROJECT, _dist_version(PROJECT),
                                             _describe_exc(exc)))
            continue
        _register(state, module, module_name, PROJECT, _dist_version(PROJECT))

    # What pluggy's load_setuptools_entrypoints("tritium") does, one entry point at a time, so
    # that one broken package is recorded (and shown by `tritium targets`) instead of fatal.
    try:
        eps = list(_iter_entry_points())
    except Exception as exc:
        state.broken.append(BrokenPlugin("*", ENTRY_POINT_GROUP, "", "", _describe_exc(exc)))
        eps = []
    for ep in eps:
        dist = getattr(ep, "dist", None)
        dist_name = getattr(dist, "name", "") or ""
        dist_version = getattr(dist, "version", "") or ""
        if pm.is_blocked(ep.name):
            continue
        try:
            plugin = ep.load()
        except Exception as exc:
            state.broken.append(BrokenPlugin(ep.name, ep.value, dist_name, dist_version, _describe_exc(exc)))
            continue
        _register(state, plugin, ep.name, dist_name, dist_version)


def _register(state: _State, plugin: Any, name: str, dist: str, version: str) -> None:
    pm = state.pm
    if pm.is_registered(plugin):  # the same module named by two entry points
        return
    unique = name
    n = 1
    while pm.get_plugin(unique) is not None:
        n += 1
        unique = f"{name}#{n}"
    try:
        pm.register(plugin, name=unique)
    except Exception as exc:  # e.g. a hookimpl with an argument no hookspec has
        state.broken.append(BrokenPlugin(name, getattr(plugin, "__name__", repr(plugin)), dist, version,
                                         _describe_exc(exc)))
        return
    state.origin[id(plugin)] = (name, dist, version)


def _get_state() -> _State:
    global _state
    state = _state
    if state is not None:
        return state
    with _lock:
        if _state is None:
            pm = pluggy.PluginManager(PROJECT)
            pm.add_hookspecs(HookSpecs)
            new = _State(pm=pm, origin={}, broken=[])
            _load(new)
            _state = new
        return _state


def plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager (created and loaded on first use)."""
    return _get_state().pm


def register(plugin: Any, name: str | None = None) -> None:
    """Register a plugin object at run time (e.g. a module defining a target in a script).

    Its targets appear in ``targets()`` from the next call on.
    """
    state = _get_state()
    with _lock:
        _register(state, plugin, name or getattr(plugin, "__name__", None) or repr(plugin), "", "")
        state.infos = None
        state.selected.clear()


def reset() -> None:
    """Forget all plugins, targets and cached availability; the next call discovers them again."""
    global _state
    with _lock:
        _state = None
        _installed_cache.clear()


def broken_plugins() -> list[BrokenPlugin]:
    """Plugins that failed to load or whose ``tritium_targets`` hook raised."""
    state = _get_state()
    _target_infos(state)
    return list(state.broken) + list(state.hook_broken)


# ------------------------------------------------------------------------------------------------
# Targets
# ------------------------------------------------------------------------------------------------
def _target_infos(state: _State) -> list[TargetInfo]:
    if state.infos is not None:
        return state.infos
    with _lock:
        if state.infos is not None:
            return state.infos
        infos: list[TargetInfo] = []
        hook_broken: list[BrokenPlugin] = []
        for impl in state.pm.hook.tritium_targets.get_hookimpls():
            plugin_name, dist, version = state.origin.get(id(impl.plugin), (impl.plugin_name, "", ""))
            value = getattr(impl.plugin, "__name__", impl.plugin_name)
            try:
                result = impl.function()
                provided = list(result or [])
            except Exception as exc:
                hook_broken.append(BrokenPlugin(plugin_name, value, dist, version, _describe_exc(exc),
                                                stage="tritium_targets"))
                continue
            for target in provided:
                name = getattr(target, "name", None)
                if not isinstance(name, str) or not name:
                    hook_broken.append(BrokenPlugin(plugin_name, value, dist, version,
                                                    f"returned {target!r}, which has no non-empty str 'name'",
                                                    stage="tritium_targets"))
                    continue
                infos.append(TargetInfo(name, target, dist, version, plugin_name))
        infos.sort(key=lambda i: (-i.priority, i.name))
        state.hook_broken = hook_broken
        state.infos = infos
        return infos


def target_infos() -> list[TargetInfo]:
    """Every target found, highest priority first, duplicates included (see ``duplicate_targets``)."""
    return list(_target_infos(_get_state()))


def duplicate_targets() -> dict[str, list[TargetInfo]]:
    """Target names that more than one plugin provides, with every provider."""
    by_name: dict[str, list[TargetInfo]] = {}
    for info in target_infos():
        by_name.setdefault(info.name, []).append(info)
    return {name: infos for name, infos in by_name.items() if len(infos) > 1}


def _duplicate_error(dups: dict[str, list[TargetInfo]]) -> TargetError:
    lines = []
    for name, infos in sorted(dups.items()):
        providers = " and ".join(f"{i.provider} (entry point '{i.plugin}')" for i in infos)
        lines.append(f"target '{name}' is provided by more than one package: {providers}")
    return TargetError("; ".join(lines) + ". Uninstall all but one of them.")


def targets() -> dict[str, "Target"]:
    """All installed targets by name, highest priority first.

    Raises ``TargetError`` naming the packages when two of them provide the same target name.
    """
    dups = duplicate_targets()
    if dups:
        raise _duplicate_error(dups)
    return {info.name: info.target for info in target_infos()}


def availability(target: "Target") -> tuple[bool, str]:
    """``target.availability()``, asked once per process; an exception counts as unavailable."""
    state = _get_state()
    key = id(target)
    cached = state.avail.get(key)
    if cached is not None:
        return cached
    try:
        ok, why = target.availability()
        result = (bool(ok), "" if ok else (str(why) or "unavailable (no reason given)"))
    except Exception as exc:
        result = (False, f"availability check raised {_describe_exc(exc)}")
    with _lock:
        state.avail[key] = result
    return result


def _installed_summary(infos: list[TargetInfo]) -> str:
    names = sorted({i.name for i in infos})
    text = "installed targets: " + (", ".join(names) if names else "none")
    broken = broken_plugins()
    if broken:
        text += "; plugins that failed: " + "; ".join(b.describe() for b in broken)
    return text


def auto_target_info() -> TargetInfo | None:
    """The target automatic selection picks: the available one with the highest priority, among
    those with a priority >= 0 (ties broken by name). ``None`` when no such target is available."""
    for info in target_infos():  # sorted by descending priority, then name
        if info.priority < 0:
            break
        if availability(info.target)[0]:
            return info
    return None


_raw_target = raw_reader(TARGET_ENV)


def selected_target() -> "Target":
    """``get_target()``, with its common case (the target already selected for this value of
    ``TRITIUM_TARGET``) in one call: every ``kernel[grid]`` asks."""
    state = _state
    if state is not None:
        target = state.selected.get(_raw_target())
        if target is not None:
            return target
    return get_target()


def get_target(name: "str | Target | None" = None, runnable: bool = True) -> "Target":
    """The target to compile for.

    ``name`` None reads ``TRITIUM_TARGET``; None, ``""`` and ``"auto"`` select automatically (see
    ``auto_target_info``). A Target object is returned as it is. Raises ``TargetError`` for an
    unknown name (listing the installed targets), an unavailable target (with its reason) or
    duplicate target names. ``runnable=False`` returns a named target that cannot run here, for
    compiling only (a GPU target on a machine without the GPU).
    """
    if name is not None and not isinstance(name, str):
        return name
    if name is None:
        raw = _raw_target()
        state = _get_state()
        target = state.selected.get(raw)
        if target is None:
            target = state.selected[raw] = get_target(os.environ.get(TARGET_ENV, ""))
        return target
    name = name.strip()
    infos = target_infos()
    dups = duplicate_targets()
    if dups and (not name or name.lower() == "auto" or name in dups):
        raise _duplicate_error(dups)
    if not name or name.lower() == "auto":
        info = auto_target_info()
        if info is not None:
            return info.target
        if not infos:
            broken = broken_plugins()
            raise TargetError("no tritium target is installed; install a target package such as tritium-cpu"
                              + ("; plugins that failed: " + "; ".join(b.describe() for b in broken)
                                 if broken else ""))
        reasons = "; ".join(
            f"{i.name}: " + ("not selected automatically (negative priority)" if i.priority < 0
                             else availability(i.target)[1])
            for i in infos)
        raise TargetError(f"no installed target is available here ({reasons}); "
                          f"set {TARGET_ENV} to choose one explicitly")
    for info in infos:
        if info.name == name:
            ok, why = availability(info.target)
            if not ok and runnable:
                raise TargetError(f"target '{name}' ({info.provider}) is not available: {why}")
            return info.target
    raise TargetError(f"unknown target '{name}' (from {TARGET_ENV} or the target argument); "
                      + _installed_summary(infos))


# ------------------------------------------------------------------------------------------------
# The other hooks
# ------------------------------------------------------------------------------------------------
def extend_pipeline(target: "Target", stages: Any, options: Any) -> None:
    """Let every plugin change ``stages`` for ``target`` (after ``target.add_stages``)."""
    plugin_manager().hook.tritium_extend_pipeline(target=target, stages=stages, options=options)


def pipeline_identity() -> list[list[str]]:
    """What the ``tritium_extend_pipeline`` implementations are, for cache keys: each one's plugin,
    function and the sha256 of its package's sources (of its file when it is no package). Core's and
    the target's own stages are covered by their packages' hashes; this covers what plugins add or
    replace, so installing, removing or editing such a plugin never loads a binary built without it."""
    from .runtime.cache import file_hash, source_hash

    out = []
    for impl in plugin_manager().hook.tritium_extend_pipeline.get_hookimpls():
        fn = impl.function
        module = getattr(fn, "__module__", None) or ""
        top = module.split(".")[0]
        digest = source_hash(top) if top and top != "__main__" else ""
        code = getattr(fn, "__code__", None)
        if not digest and code is not None:
            digest = file_hash(code.co_filename)
        out.append([impl.plugin_name, f"{module}.{getattr(fn, '__qualname__', repr(fn))}", digest])
    return out


def knob_sections() -> dict[str, Any]:
    """The ``tritium.knobs`` sections every plugin provides (``tritium_knobs``); the first plugin
    to give a name keeps it."""
    sections: dict[str, Any] = {}
    for result in reversed(plugin_manager().hook.tritium_knobs()):
        for name, section in dict(result or {}).items():
            sections.setdefault(name, section)
    return sections


def conformance_expectations(target: "Target") -> dict[str, str]:
    """Known conformance gaps of ``target`` from every plugin: case id -> reason.

    When two plugins give different reasons for one case, the reasons are joined with ``"; "``.
    """
    merged: dict[str, str] = {}
    for result in reversed(plugin_manager().hook.tritium_conformance_expectations(target=target)):
        for case, reason in dict(result or {}).items():
            reason = str(reason)
            if case in merged and reason not in merged[case].split("; "):
                merged[case] = f"{merged[case]}; {reason}"
            else:
                merged.setdefault(case, reason)
    return merged


__all__ = [
    "BUILTIN_PLUGINS", "ENTRY_POINT_GROUP", "TARGET_ENV", "BrokenPlugin", "Distribution", "EntryPoint",
    "HookSpecs", "TargetInfo", "pipeline_identity", "distribution_version", "distributions",
    "auto_target_info", "availability", "broken_plugins", "conformance_expectations",
    "duplicate_targets", "extend_pipeline", "get_target", "hookimpl", "hookspec", "plugin_manager",
    "register", "reset", "selected_target", "target_infos", "targets",
]
