"""The compiled-module cache on disk, shared with the Go hosts (one layout).

::

    <dir>/wasmtime-<wasmtime version>/<module sha256>.cwasm        the serialized module
    <dir>/wasmtime-<wasmtime version>/<module sha256>.cwasm.lock   the cross-process compile lock

``<dir>`` is ``$POLYLOOP_ASSEMBLY_CACHE_DIR``, else the platform's user cache
directory + ``/polyloop-assembly`` (Linux: ``$XDG_CACHE_HOME`` or
``~/.cache``); ``-`` disables the disk cache. A module is written atomically
(a temporary file renamed into place) and only ever replaced whole, never
rewritten in place: processes map the file they loaded. Under the lock
(``fcntl.flock``), N processes starting on a cold cache compile once: the first
compiles and writes, the others wait and then load its file. After a compile,
the 4 newest ``.cwasm`` of that ``wasmtime-<version>`` directory are kept.
An unusable or unwritable cache falls back to compiling in memory, and the
notice on stderr says so.

wasmtime checks only a serialized module's header, so each ``.cwasm`` seals
its own bytes (the project's docs/SPEC.md §7.4, in the source repository):
the serialized module, then a trailer of ``polyloop-cwasm-1`` and
SHA-256(binding + the serialized module), where the binding names the module's sha256 and ``wasmtime-<version>``. The trailer is
checked before wasmtime sees the file; a file that fails is never loaded but
compiled afresh and replaced, with one notice line on stderr.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Callable, Optional, Tuple

import wasmtime

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no cross-process lock
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "CACHE_DIR_ENV",
    "CACHE_KEEP",
    "Status",
    "cache_dir",
    "load_module",
    "module_cache_path",
    "wasmtime_version",
]

#: Environment variable that overrides the directory of the compiled-module cache
#: (``-`` disables the disk cache).
CACHE_DIR_ENV = "POLYLOOP_ASSEMBLY_CACHE_DIR"

#: Compiled modules kept in one ``wasmtime-<version>`` directory (the newest by mtime).
CACHE_KEEP = 4

#: How a module was obtained: ``"warm"`` (loaded from the cache, possibly after
#: waiting for another process to compile it), ``"cold"`` (compiled here and
#: written to the cache), ``"uncached"`` (compiled here; the cache could not be
#: written) or ``"disabled"`` (compiled here; the cache is disabled).
Status = str


def cache_dir() -> Optional[Path]:
    """Directory of the compiled-module cache; None if disabled (``$POLYLOOP_ASSEMBLY_CACHE_DIR=-``).

    ``$POLYLOOP_ASSEMBLY_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/polyloop-assembly``
    (an absolute ``$XDG_CACHE_HOME``), else ``~/.cache/polyloop-assembly``; on
    macOS ``~/Library/Caches/polyloop-assembly`` and on Windows
    ``%LocalAppData%\\polyloop-assembly``, as Go's ``os.UserCacheDir``.
    """
    override = os.environ.get(CACHE_DIR_ENV)
    if override == "-":
        return None
    if override:
        return Path(override)
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "polyloop-assembly"
    if sys.platform == "win32":
        local = os.environ.get("LocalAppData")
        if local:
            return Path(local) / "polyloop-assembly"
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "polyloop-assembly"
    return Path.home() / ".cache" / "polyloop-assembly"


@lru_cache(maxsize=1)
def wasmtime_version() -> str:
    """The installed wasmtime's version (the cache's directory name)."""
    try:
        return metadata.version("wasmtime")
    except metadata.PackageNotFoundError:  # pragma: no cover - vendored wasmtime
        return "unknown"


def module_cache_path(module_sha256: str) -> Optional[Path]:
    """Where the compiled module of this hash is cached; None if the cache is disabled."""
    d = cache_dir()
    if d is None:
        return None
    return d / ("wasmtime-%s" % wasmtime_version()) / ("%s.cwasm" % module_sha256)


def _notice(text: str) -> None:
    sys.stderr.write("polyloop_assembly: %s\n" % text)
    sys.stderr.flush()


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _evict(keep: Path) -> None:
    """Keep the CACHE_KEEP newest ``.cwasm`` of keep's directory (keep included).

    Unlinking is safe for processes that still map a removed file. The lock
    file of a removed module goes with it.
    """
    try:
        others = [p for p in keep.parent.glob("*.cwasm") if p.is_file() and p != keep]
        others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for old in others[CACHE_KEEP - 1 :]:
            old.unlink()
            Path(str(old) + ".lock").unlink(missing_ok=True)
    except OSError:
        pass


#: Opens the trailer that seals a ``.cwasm`` file; a SHA-256 follows it.
_SEAL_MAGIC = b"polyloop-cwasm-1"

#: Length of the trailer: the magic, then the digest.
SEAL_SIZE = len(_SEAL_MAGIC) + 32


def _seal_digest(module_sha256: str, payload: "bytes | memoryview") -> bytes:
    """SHA-256 of the binding (the module's hash, the wasmtime version), then the serialized module."""
    h = hashlib.sha256(b"polyloop-assembly cwasm v1\n%s\nwasmtime-%s\n" % (module_sha256.encode(), wasmtime_version().encode()))
    h.update(payload)
    return h.digest()


def seal(module_sha256: str, payload: bytes) -> bytes:
    """The ``.cwasm`` file of a serialized module: it, then the trailer (the project's docs/SPEC.md §7.4, in the source repository)."""
    return payload + _SEAL_MAGIC + _seal_digest(module_sha256, payload)


def seal_problem(module_sha256: str, data: bytes) -> Optional[str]:
    """Why ``data`` is not a sealed file of this module and wasmtime (a phrase for a notice); None if it is."""
    n = len(data) - SEAL_SIZE
    if n < 0 or data[n : n + len(_SEAL_MAGIC)] != _SEAL_MAGIC:
        return "has no integrity digest (truncated, or written by an older release)"
    if data[n + len(_SEAL_MAGIC) :] != _seal_digest(module_sha256, memoryview(data)[:n]):
        return (
            "failed its integrity check (its sha256 does not match: corrupt, or not compiled from this module by this wasmtime)"
        )
    return None


def _try_load(engine: wasmtime.Engine, path: Path, module_sha256: str) -> Tuple[Optional[wasmtime.Module], Optional[str]]:
    """The cached module if its file's seal verifies; else why not (None if there is no file)."""
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return None, None
    except OSError as e:
        return None, "could not be read (%s)" % (e.strerror or e)
    with f:
        problem = seal_problem(module_sha256, f.read())
        if problem is not None:
            return None, problem  # never handed to wasmtime
        # deserialize_file maps the file (about 1 ms, against 10-60 ms to copy
        # 8 MB of code in); through /proc it maps the very file checked, even
        # if another process renamed a new one over it meanwhile.
        fd_path = "/proc/self/fd/%d" % f.fileno()
        try:
            return wasmtime.Module.deserialize_file(engine, fd_path if os.path.exists(fd_path) else str(path)), None
        except Exception as e:  # a wasmtime build that names itself the same
            first_line = (str(e).strip().splitlines() or [type(e).__name__])[0]
            return None, "passed its check but wasmtime could not load it (%s)" % first_line


def load_module(
    engine: wasmtime.Engine, module_sha256: str, compile_module: Callable[[], wasmtime.Module]
) -> Tuple[wasmtime.Module, Status, Optional[Path]]:
    """The compiled module: from the cache, else compiled (once across processes) and cached.

    Returns:
        (module, status, cache path or None if the cache is disabled).
    """
    path = module_cache_path(module_sha256)
    if path is None:
        _notice("compiling the WebAssembly module in memory (a few seconds): the disk cache is disabled (%s=-)" % CACHE_DIR_ENV)
        return compile_module(), "disabled", None
    module, _ = _try_load(engine, path, module_sha256)
    if module is not None:
        return module, "warm", path
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock_fd = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as e:
        return _uncached(compile_module, path, e), "uncached", path
    try:
        if fcntl is not None:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)  # another process compiling: wait for its file
        module, problem = _try_load(engine, path, module_sha256)
        if module is not None:
            return module, "warm", path
        if problem is None:
            _notice("compiling the WebAssembly module (first use, a few seconds); caching it in %s" % path.parent)
        else:
            _notice("the cached compiled module %s %s: compiling it afresh (a few seconds) and replacing it" % (path, problem))
        module = compile_module()
        try:
            _atomic_write(path, seal(module_sha256, bytes(module.serialize())))
        except OSError as e:
            _notice(
                "could not write the compiled module to %s (%s): it is not cached, and the next "
                "process compiles it again" % (path, e.strerror or e)
            )
            return module, "uncached", path
        _evict(path)
        return module, "cold", path
    finally:
        os.close(lock_fd)  # releases the lock


def _uncached(compile_module: Callable[[], wasmtime.Module], path: Path, e: OSError) -> wasmtime.Module:
    _notice(
        "compiling the WebAssembly module in memory (a few seconds): the cache directory %s cannot be "
        "written (%s), so every process compiles it again; set %s to a writable directory "
        "(or to - to disable the disk cache)" % (path.parent, e.strerror or e, CACHE_DIR_ENV)
    )
    return compile_module()
