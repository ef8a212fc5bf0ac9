"""``tritium.knobs``: Triton's configuration object (``triton.knobs``), on tritium's settings.

Each knob reads one of tritium's environment variables, which the runtime reads when it needs
them; setting a knob on its section overrides the variable for this process, and (while
``propagate_env`` is true, the default) writes it to the environment, so the runtime sees it. A
section's ``scope()`` restores what it changed; ``copy()`` and ``reset()`` (drop every override)
serve tests, as Triton's do.

Core's sections are Triton's where tritium has the setting: ``cache.dir`` (``TRITIUM_CACHE_DIR``),
``cache.override_dir`` (``TRITIUM_OVERRIDE_DIR``), ``compilation.dump_ir`` (``TRITIUM_DUMP``),
``runtime.debug`` (``TRITIUM_DEBUG``), ``runtime.interpret`` (``TRITIUM_TARGET=interpreter``) and
``language.default_fp_fusion`` (``TRITIUM_DEFAULT_FP_FUSION``).
A target package adds its own (nvptx: ``nvidia.ptxas``) through the ``tritium_knobs`` hook. A knob
Triton has and tritium does not is absent: reading it raises ``AttributeError``, never a value
that changes nothing.
"""

from __future__ import annotations

import contextlib
import copy as _copy
import os
from typing import Any, Iterator

#: write knobs that are set to the environment (Triton's ``knobs.propagate_env``)
propagate_env: bool = True

_TRUE = ("1", "true", "yes", "on")
_UNSET = object()


def _setenv(key: str, value: str | None) -> None:
    if not propagate_env:
        return
    if value is None:
        os.environ.pop(key, None)
    else:
        os.environ[key] = value


class Knob:
    """One setting of a section: environment variable ``key`` read as ``kind`` (``bool``, ``int``
    or ``str``), ``default`` (or ``default()``) where it is unset."""

    def __init__(self, key: str, default: Any = None, kind: type = str):
        self.key, self.default, self.kind = key, default, kind

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def get(self) -> Any:
        """The value the environment gives."""
        text = os.environ.get(self.key)
        if text is None or not text.strip():
            return self.default() if callable(self.default) else self.default
        text = text.strip()
        if self.kind is bool:
            return text.lower() in _TRUE
        return self.kind(text)

    def to_env(self, value: Any) -> str | None:
        if value is None:
            return None
        if self.kind is bool:
            return "1" if value else "0"
        return str(value)

    def transform(self, value: Any) -> Any:
        """What reading a knob set to ``value`` gives (a tool's path -> the tool)."""
        return value

    def __get__(self, section: Any, owner: type) -> Any:
        if section is None:
            return self
        value = section.__dict__.get(self.name, _UNSET)
        return self.get() if value is _UNSET else self.transform(value)

    def __set__(self, section: Any, value: Any) -> None:
        section.__dict__[self.name] = value
        _setenv(self.key, self.to_env(value))

    def __delete__(self, section: Any) -> None:
        section.__dict__.pop(self.name, None)


class base_knobs:  # noqa: N801  (Triton's name)
    """A section of knobs (``knobs.cache``, ``knobs.runtime``, ...)."""

    @property
    def knob_descriptors(self) -> dict[str, Knob]:
        found: dict[str, Knob] = {}
        for cls in reversed(type(self).__mro__):
            found.update({k: v for k, v in vars(cls).items() if isinstance(v, Knob)})
        return found

    @property
    def knobs(self) -> dict[str, Any]:
        """Every knob's current value, by name."""
        return {name: getattr(self, name) for name in self.knob_descriptors}

    def copy(self) -> "base_knobs":
        return _copy.copy(self)

    def reset(self) -> "base_knobs":
        """Drop every override: the knobs read the environment again."""
        for name in self.knob_descriptors:
            self.__dict__.pop(name, None)
        return self

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        """Knobs set inside the block, and the environment variables that set them, are restored
        when it ends."""
        overrides = dict(self.__dict__)
        environment = {k.key: os.environ.get(k.key) for k in self.knob_descriptors.values()}
        try:
            yield
        finally:
            self.__dict__.clear()
            self.__dict__.update(overrides)
            for key, value in environment.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def _default_cache_dir() -> str:
    from .runtime.cache import cache_dir

    return cache_dir()


class cache_knobs(base_knobs):  # noqa: N801
    #: where compiled kernels are kept (default ``$XDG_CACHE_HOME/tritium``, else ``~/.cache/tritium``)
    dir = Knob("TRITIUM_CACHE_DIR", _default_cache_dir)
    #: stage outputs found here (named for the kernel) replace the compiler's
    override_dir = Knob("TRITIUM_OVERRIDE_DIR")


class _Dump(Knob):
    """``compilation.dump_ir``: every stage's output written as it is produced (``TRITIUM_DUMP=all``;
    tritium also takes a list of stage names there, which reads as true)."""

    def get(self) -> bool:
        return bool(os.environ.get(self.key, "").strip())

    def to_env(self, value: Any) -> str | None:
        return "all" if value else None


class compilation_knobs(base_knobs):  # noqa: N801
    dump_ir = _Dump("TRITIUM_DUMP", False, bool)


class _Interpret(Knob):
    """``runtime.interpret``: the interpreter target (``TRITIUM_TARGET=interpreter``)."""

    def get(self) -> bool:
        return os.environ.get(self.key, "").strip() == "interpreter"

    def to_env(self, value: Any) -> str | None:
        if value:
            return "interpreter"
        return None if self.get() else os.environ.get(self.key)


class runtime_knobs(base_knobs):  # noqa: N801
    #: device assertions and bounds checks in every kernel, as ``debug=True`` does
    debug = Knob("TRITIUM_DEBUG", False, bool)
    #: run kernels with the interpreter (Triton's ``TRITON_INTERPRET``)
    interpret = _Interpret("TRITIUM_TARGET", False, bool)


class language_knobs(base_knobs):  # noqa: N801
    #: ``enable_fp_fusion`` where a launch does not give it, on targets that have the option (unset:
    #: each target's own default; Triton's GPUs fuse, the cpu does not)
    default_fp_fusion = Knob("TRITIUM_DEFAULT_FP_FUSION", None, bool)


cache = cache_knobs()
compilation = compilation_knobs()
language = language_knobs()
runtime = runtime_knobs()


def _add_target_sections() -> None:
    """The sections target packages provide (``tritium_knobs``), as attributes of this module."""
    from . import plugins

    for name, section in plugins.knob_sections().items():
        globals().setdefault(name, section)


_add_target_sections()


def __getattr__(name: str) -> Any:
    raise AttributeError(f"tritium.knobs has no '{name}': tritium has no such setting (Triton's knobs that tritium "
                         "implements: cache, compilation, language, runtime, and the sections its target packages add)")
