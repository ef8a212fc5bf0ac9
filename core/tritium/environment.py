"""Fast reads of environment variables on the launch path.

``os.environ.get`` encodes the name and decodes the value on every call (about 1 µs); a launch
reads a few variables, so it reads the process environment's raw mapping instead. Values are
compared, never parsed, here: they are keys of caches (bytes on POSIX, str elsewhere).
"""

from __future__ import annotations

import os

_RAW = getattr(os.environ, "_data", None) if os.name == "posix" else None


def raw(name: str) -> bytes | str | None:
    """The raw value of environment variable ``name`` (None when unset)."""
    if _RAW is None:
        return os.environ.get(name)
    return _RAW.get(os.fsencode(name))


def raw_reader(name: str):
    """A zero-argument function returning ``raw(name)``, with the name encoded once."""
    if _RAW is None:
        return lambda: os.environ.get(name)
    key = os.fsencode(name)
    return lambda: _RAW.get(key)


def raw_expression(name: str, scope: dict) -> str:
    """Python source reading ``raw(name)``, for generated code: a lookup in the raw mapping, bound
    in ``scope`` (no call on POSIX)."""
    if _RAW is None:
        scope[f"_tritium_read_{name}"] = raw_reader(name)
        return f"_tritium_read_{name}()"
    scope["_tritium_environ"] = _RAW
    return f"_tritium_environ.get({os.fsencode(name)!r})"
