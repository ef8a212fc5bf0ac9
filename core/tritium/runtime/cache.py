"""Disk cache of compiled kernels.

One entry is one file, ``<dir>/<key[:2]>/<key>.tcache``, named by a sha256 hex key that the caller
derives with ``cache_key(parts)`` from everything that changes the compiled result (kernel source
and the sources of the jit functions it calls, signature, specialisation, constexprs, options, and
the compiler itself: ``source_hash`` of core and of the target package, and the pipeline plugins).
An entry holds the binary, a JSON metadata dict and the text of every pipeline stage (so
``compiled.asm[...]`` works after a hit)::

    from tritium.runtime.cache import Cache, cache_key, source_hash

    key = cache_key({"source": src, "signature": sig, "options": opts, "compiler": source_hash("tritium")})
    entry = Cache().get(key)          # Entry | None
    if entry is None:
        ...compile...
        Cache().put(key, binary, metadata, asm)
    else:
        entry.binary, entry.metadata, entry.asm

File format: ``TRITIUMCACHE1\\n`` + sha256 hex (64 bytes) + ``\\n`` + one line of JSON header
(``{"key", "name", "sections": [[name, kind, length], ...]}``) + ``\\n`` + the section payloads. The
digest covers the header line and the payload, so a truncated or corrupted file is detected; it is
then deleted and reported as a miss. Writes go to a temporary file in the same directory, are
fsynced and moved into place with ``os.replace``, so the final name only ever holds a complete entry
and concurrent writers of one key are safe (the last one wins; both wrote the same thing).

Environment: ``TRITIUM_CACHE_DIR`` (default ``$XDG_CACHE_HOME/tritium``, else
``~/.cache/tritium``); ``TRITIUM_CACHE_DISABLE=1`` makes ``get`` always miss and ``put`` do nothing.
A directory that cannot be used (not a directory, not writable, disk full) is not an error: the
first failure in a process is one ``CacheWarning`` naming the path and the reason, and compiling
goes on without the cache.

This module imports only the standard library (and ``tritium.errors``, which imports only that):
a warm-cache first call must stay fast.
"""

from __future__ import annotations

import enum
import errno
import functools
import hashlib
import importlib.util
import json
import os
import time

MAGIC = b"TRITIUMCACHE1\n"
SUFFIX = ".tcache"
_DIGEST_LEN = 64
_HEX = frozenset("0123456789abcdef")
_TMP_MARK = ".tmp."


class CacheWarning(UserWarning):
    """The kernel cache directory cannot be used; kernels are compiled without it."""


_warned = False


def _warn_unusable(path: str, exc: OSError) -> None:
    """One warning per process: a cache that does not work costs compile time, so say so once."""
    from ..errors import warn  # (standard library only, as this module)

    global _warned
    if _warned:
        return
    _warned = True
    reason = exc.strerror or str(exc)
    warn(f"tritium: the kernel cache cannot be used at {path} ({reason}); kernels are compiled without it. Set "
         "TRITIUM_CACHE_DIR to a writable directory (or TRITIUM_CACHE_DISABLE=1).", CacheWarning)


def cache_dir() -> str:
    """The cache directory: ``TRITIUM_CACHE_DIR``, else ``$XDG_CACHE_HOME/tritium``, else
    ``~/.cache/tritium``. It is created on the first ``put``."""
    explicit = os.environ.get("TRITIUM_CACHE_DIR", "").strip()
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tritium")


def cache_disabled() -> bool:
    return os.environ.get("TRITIUM_CACHE_DISABLE", "").strip().lower() in ("1", "true", "yes", "on")


# ------------------------------------------------------------------------------------------------
# Keys
# ------------------------------------------------------------------------------------------------
def _canonical(value):
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return {"__float__": value.hex()}  # exact, and distinct from ints
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"__bytes__": bytes(value).hex()}
    if isinstance(value, dict):
        items = [(_canonical_key(k), _canonical(v)) for k, v in value.items()]
        return {"__dict__": sorted(items)}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return {"__set__": sorted((_canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))}
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None:
        return {"__dataclass__": type(value).__qualname__,
                "fields": [[f, _canonical(getattr(value, f))] for f in fields]}
    if isinstance(value, enum.Enum):
        return {"__enum__": f"{type(value).__qualname__}.{getattr(value, '_name_', '')}"}
    text = repr(value)
    if " at 0x" in text or text.startswith("<"):
        raise TypeError(f"cache_key: {type(value).__name__} has no stable representation ({text[:80]}); "
                        "pass a str, number, bytes, tuple, list, dict, set, enum or dataclass instead")
    return {"__repr__": f"{type(value).__qualname__}:{text}"}


def _canonical_key(key):
    canon = _canonical(key)
    return json.dumps(canon, sort_keys=True, separators=(",", ":"))


def cache_key(parts: dict) -> str:
    """The sha256 hex key of ``parts``, a dict of everything that changes the compiled result.

    Values may be str, int, float, bool, None, bytes, and tuples/lists/dicts/sets, enums and
    dataclasses of those; anything whose ``repr`` holds a memory address is refused (``TypeError``),
    since it would make the key differ in every process. Dict order does not matter.
    """
    if not isinstance(parts, dict):
        raise TypeError("cache_key expects a dict")
    text = json.dumps(_canonical(parts), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


@functools.lru_cache(maxsize=None)
def source_hash(package: str) -> str:
    """The sha256 of every ``.py`` file of an installed package (paths and contents), computed once
    per process without importing it: a compiler edited without a version bump gets new keys."""
    spec = importlib.util.find_spec(package)
    roots = list(spec.submodule_search_locations or []) if spec else []
    if not roots:
        return file_hash(spec.origin) if spec and spec.origin else ""
    h = hashlib.sha256()
    for root in roots:
        for folder, subdirs, files in os.walk(root):
            subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
            for name in sorted(f for f in files if f.endswith(".py")):
                path = os.path.join(folder, name)
                h.update(os.path.relpath(path, root).encode() + b"\0" + _read(path) + b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def file_hash(path: str) -> str:
    """The sha256 of one source file ('' when it cannot be read), once per process."""
    return hashlib.sha256(_read(path)).hexdigest()


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def _check_key(key: str) -> str:
    if not isinstance(key, str) or not (16 <= len(key) <= 128) or not _HEX.issuperset(key):
        raise ValueError(f"cache key must be a lower-case hex string (from cache_key), got {key!r}")
    return key


# ------------------------------------------------------------------------------------------------
# Entries
# ------------------------------------------------------------------------------------------------
class Entry:
    """A cache hit: ``binary`` (bytes), ``metadata`` (dict), ``asm`` (stage name -> str or bytes)."""

    __slots__ = ("key", "name", "binary", "metadata", "asm", "path")

    def __init__(self, key: str, name: str, binary: bytes, metadata: dict, asm: dict, path: str):
        self.key, self.name, self.binary, self.metadata, self.asm, self.path = key, name, binary, metadata, asm, path

    def __repr__(self) -> str:
        return f"Entry(key={self.key[:12]}..., name={self.name!r}, binary={len(self.binary)} bytes, asm={list(self.asm)})"


class EntryInfo:
    """What ``Cache.entries()`` reports for one file."""

    __slots__ = ("key", "name", "path", "size", "mtime", "valid", "error")

    def __init__(self, key, name, path, size, mtime, valid, error=""):
        self.key, self.name, self.path, self.size, self.mtime = key, name, path, size, mtime
        self.valid, self.error = valid, error

    def as_dict(self) -> dict:
        return {s: getattr(self, s) for s in self.__slots__}


class CorruptEntry(Exception):
    """Internal: an entry file that fails its checks."""


def _encode(key: str, name: str, binary: bytes, metadata: dict, asm: dict) -> bytes:
    sections: list[list] = []
    chunks: list[bytes] = []

    def add(sname: str, kind: str, data: bytes) -> None:
        sections.append([sname, kind, len(data)])
        chunks.append(data)

    binary = bytes(binary)
    add("binary", "bytes", binary)
    add("metadata", "json", json.dumps(metadata, sort_keys=True, separators=(",", ":")).encode())
    for stage, value in (asm or {}).items():
        if isinstance(value, (bytes, bytearray, memoryview)):
            value = bytes(value)
            if value == binary:
                sections.append(["asm:" + stage, "=binary", 0])
            else:
                add("asm:" + stage, "bytes", value)
        else:
            add("asm:" + stage, "text", str(value).encode("utf-8", "surrogatepass"))
    header = json.dumps({"key": key, "name": name, "sections": sections},
                        separators=(",", ":"), ensure_ascii=True).encode()
    payload = b"".join(chunks)
    digest = hashlib.sha256(header + b"\n" + payload).hexdigest().encode()
    return b"".join((MAGIC, digest, b"\n", header, b"\n", payload))


def _parse_header(data: bytes) -> tuple[dict, int]:
    """(header dict, offset of the payload); checks the digest."""
    if not data.startswith(MAGIC):
        raise CorruptEntry("bad magic")
    start = len(MAGIC)
    digest = data[start:start + _DIGEST_LEN]
    if data[start + _DIGEST_LEN:start + _DIGEST_LEN + 1] != b"\n":
        raise CorruptEntry("truncated digest")
    hstart = start + _DIGEST_LEN + 1
    hend = data.find(b"\n", hstart)
    if hend < 0:
        raise CorruptEntry("truncated header")
    if hashlib.sha256(data[hstart:]).hexdigest().encode() != digest:
        raise CorruptEntry("checksum mismatch")
    try:
        header = json.loads(data[hstart:hend])
    except ValueError as exc:
        raise CorruptEntry(f"bad header: {exc}") from None
    if not isinstance(header, dict) or not isinstance(header.get("sections"), list):
        raise CorruptEntry("bad header")
    return header, hend + 1


def _decode(data: bytes, path: str) -> Entry:
    header, pos = _parse_header(data)
    binary = None
    metadata = None
    asm: dict = {}
    try:
        for sname, kind, length in header["sections"]:
            if kind == "=binary":
                asm[sname[4:]] = binary
                continue
            chunk = data[pos:pos + length]
            pos += length
            if len(chunk) != length:
                raise CorruptEntry("truncated payload")
            if kind == "bytes":
                value = chunk
            elif kind == "text":
                value = chunk.decode("utf-8", "surrogatepass")
            elif kind == "json":
                value = json.loads(chunk)
            else:
                raise CorruptEntry(f"unknown section kind {kind!r}")
            if sname == "binary":
                binary = value
            elif sname == "metadata":
                metadata = value
            elif sname.startswith("asm:"):
                asm[sname[4:]] = value
    except (ValueError, TypeError) as exc:
        raise CorruptEntry(f"bad section: {exc}") from None
    if pos != len(data) or not isinstance(binary, bytes) or not isinstance(metadata, dict):
        raise CorruptEntry("incomplete entry")
    return Entry(header.get("key", ""), header.get("name", ""), binary, metadata, asm, path)


def _kernel_name(metadata: dict) -> str:
    for field in ("name", "kernel", "kernel_name"):
        value = metadata.get(field) if isinstance(metadata, dict) else None
        if isinstance(value, str) and value:
            return value
    return ""


# ------------------------------------------------------------------------------------------------
# The cache
# ------------------------------------------------------------------------------------------------
class Cache:
    """A directory of cache entries. ``Cache()`` uses ``cache_dir()`` as it is at construction."""

    def __init__(self, directory: "str | os.PathLike[str] | None" = None, *, disabled: bool | None = None):
        self.directory = os.fspath(directory) if directory is not None else cache_dir()
        self.disabled = cache_disabled() if disabled is None else disabled

    def __repr__(self) -> str:
        return f"Cache({self.directory!r}{', disabled' if self.disabled else ''})"

    def path(self, key: str) -> str:
        """Where the entry for ``key`` lives (whether or not it exists)."""
        _check_key(key)
        return os.path.join(self.directory, key[:2], key + SUFFIX)

    # -- reading ---------------------------------------------------------------------------------
    def get(self, key: str) -> Entry | None:
        """The entry for ``key``, or None on a miss. A corrupt entry is deleted and is a miss."""
        path = self.path(key)
        if self.disabled:
            return None
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):  # absent is a miss; unreadable is worth a word
                _warn_unusable(path, exc)
            return None
        try:
            st = os.fstat(fd)
            chunks = [os.read(fd, st.st_size + 1)]
            while chunks[-1]:  # normally one read; loop to EOF in case of short reads
                chunks.append(os.read(fd, 1 << 20))
            data = b"".join(chunks)
            try:
                entry = _decode(data, path)
                if entry.key != key:
                    raise CorruptEntry("entry belongs to another key")
            except CorruptEntry:
                _drop_corrupt(path, st)
                return None
        except OSError as exc:
            _warn_unusable(path, exc)
            return None
        finally:
            os.close(fd)
        return entry

    # -- writing ---------------------------------------------------------------------------------
    def put(self, key: str, binary: bytes, metadata: dict | None = None, asm: dict | None = None,
            *, name: str | None = None) -> str | None:
        """Store an entry atomically; return its path (None when the cache is disabled).

        ``metadata`` must be JSON-serialisable; ``asm`` maps stage name to text (``str``) or
        ``bytes``. ``name`` (default: ``metadata["name"]``) is the kernel name ``tritium cache list``
        shows. A cache that cannot be written (read-only or full disk) is not an error for the
        caller: nothing is stored, ``None`` is returned and the first such failure in a process
        is a ``CacheWarning``. A bad key or non-JSON metadata still raises.
        """
        final = self.path(key)
        if self.disabled:
            return None
        metadata = dict(metadata or {})
        data = _encode(key, name if name is not None else _kernel_name(metadata), binary, metadata, asm or {})
        folder = os.path.dirname(final)
        tmp = f"{final}{_TMP_MARK}{os.getpid()}.{os.urandom(6).hex()}"
        try:
            os.makedirs(folder, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
        except OSError as exc:
            return _warn_unusable(self.directory, exc)
        try:
            try:
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, final)
        except BaseException as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            if isinstance(exc, OSError):
                return _warn_unusable(self.directory, exc)
            raise
        _fsync_dir(folder)
        return final

    # -- housekeeping ----------------------------------------------------------------------------
    def _files(self):
        try:
            subdirs = sorted(os.listdir(self.directory))
        except OSError:
            return
        for sub in subdirs:
            folder = os.path.join(self.directory, sub)
            if len(sub) != 2 or not os.path.isdir(folder):
                continue
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                continue
            for fname in names:
                yield folder, fname

    def entries(self) -> list[EntryInfo]:
        """Every entry file, checked (``valid`` False with ``error`` for a corrupt one); stray
        temporary files of interrupted writers are left out."""
        out = []
        for folder, fname in self._files():
            if not fname.endswith(SUFFIX):
                continue
            path = os.path.join(folder, fname)
            key = fname[:-len(SUFFIX)]
            try:
                st = os.stat(path)
                with open(path, "rb") as f:
                    data = f.read()
            except OSError as exc:
                out.append(EntryInfo(key, "", path, 0, 0.0, False, str(exc)))
                continue
            try:
                header, _ = _parse_header(data)
                _decode(data, path)
                out.append(EntryInfo(key, str(header.get("name", "")), path, st.st_size, st.st_mtime, True))
            except CorruptEntry as exc:
                out.append(EntryInfo(key, "", path, st.st_size, st.st_mtime, False, str(exc)))
        return out

    def clear(self, *, stale_tmp_seconds: float | None = None) -> int:
        """Delete every entry and temporary file (or, with ``stale_tmp_seconds``, only temporary
        files older than that); return how many files were removed."""
        removed = 0
        now = time.time()
        for folder, fname in self._files():
            path = os.path.join(folder, fname)
            is_tmp = _TMP_MARK in fname
            if not (fname.endswith(SUFFIX) or is_tmp):
                continue
            if stale_tmp_seconds is not None:
                try:
                    if not is_tmp or now - os.stat(path).st_mtime < stale_tmp_seconds:
                        continue
                except OSError:
                    continue
            try:
                os.unlink(path)
                removed += 1
            except OSError:
                pass
        if stale_tmp_seconds is None:
            try:
                for sub in os.listdir(self.directory):
                    folder = os.path.join(self.directory, sub)
                    if len(sub) == 2 and os.path.isdir(folder):
                        try:
                            os.rmdir(folder)
                        except OSError:
                            pass
            except OSError:
                pass
        return removed

def _drop_corrupt(path: str, st: os.stat_result) -> None:
    try:  # delete it unless another writer has meanwhile replaced it with a good one
        now = os.stat(path)
        if (now.st_ino, now.st_dev) == (st.st_ino, st.st_dev):
            os.unlink(path)
    except OSError:
        pass


def _fsync_dir(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = ["Cache", "CacheWarning", "Entry", "EntryInfo", "cache_dir", "cache_disabled", "cache_key", "file_hash",
           "source_hash"]
