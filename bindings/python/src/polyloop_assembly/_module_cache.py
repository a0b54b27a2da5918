"""The compiled-module cache on disk, one layout with the Go hosts (the project's docs/SPEC.md §7.4, in the source repository).

``<dir>/wasmtime-<version>/<module sha256>.cwasm``, sealed and checked before
wasmtime sees it; compiled once across processes under its ``.lock``; the 4
most recently used kept. A file that fails is compiled afresh and replaced; a
directory another user could write is not used; each fallback says so on stderr.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import sys
import tempfile
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Callable, Optional, Set, Tuple

import wasmtime

from . import _consts

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no cross-process lock
    fcntl = None  # type: ignore[assignment]

#: The environment variable naming the cache's directory (``-``: no disk cache).
CACHE_DIR_ENV = _consts.CACHE_DIR_ENV

#: Compiled modules kept in one ``wasmtime-<version>`` directory (the newest by mtime; a hit refreshes it).
CACHE_KEEP = _consts.CACHE_KEEP

#: How a module was obtained: ``"warm"`` (from the cache), ``"cold"`` (compiled
#: and cached), ``"uncached"`` (compiled; not cached) or ``"disabled"``.
Status = str


def cache_dir() -> Optional[Path]:
    """The cache's directory (None: disabled): ``$POLYLOOP_ASSEMBLY_CACHE_DIR``, else Go's ``os.UserCacheDir`` + ``polyloop-assembly``."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override == _consts.CACHE_DISABLED:
        return None
    if override:
        return Path(override)
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / _consts.CACHE_DIR_NAME
    if sys.platform == "win32":
        local = os.environ.get("LocalAppData")
        if local:
            return Path(local) / _consts.CACHE_DIR_NAME
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / _consts.CACHE_DIR_NAME
    return Path.home() / ".cache" / _consts.CACHE_DIR_NAME


@lru_cache(maxsize=1)
def wasmtime_version() -> str:
    """The installed wasmtime's version."""
    try:
        return metadata.version("wasmtime")
    except metadata.PackageNotFoundError:  # pragma: no cover - vendored wasmtime
        return "unknown"


def _engine_dir() -> str:
    """``wasmtime-<version>``: the directory of this wasmtime's modules."""
    return "wasmtime-%s" % wasmtime_version()


def module_cache_path(module_sha256: str) -> Optional[Path]:
    """Where the compiled module of this hash is cached; None if the cache is disabled."""
    d = cache_dir()
    if d is None:
        return None
    return d / _engine_dir() / (module_sha256 + _consts.CACHE_FILE_SUFFIX)


def _notice(text: str) -> None:
    sys.stderr.write("polyloop_assembly: %s\n" % text)
    sys.stderr.flush()


def cache_file_limit(module_size: int) -> int:
    """The size past which a ``.cwasm`` of a module of ``module_size`` bytes is not read (wasmtime's is ~3.2 times it)."""
    return _consts.CACHE_FILE_LIMIT_MODULES * module_size + _consts.CACHE_FILE_LIMIT_EXTRA_BYTES


#: The bound when the caller does not give the module's size.
_DEFAULT_FILE_LIMIT = 256 << 20

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_SAFE = _O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)

#: A symbolic link where the cache keeps a file: the cache never makes one.
_SYMLINK_PROBLEM = "is a symbolic link, not a file this cache wrote"


def _untrusted(st: os.stat_result) -> Optional[Tuple[str, str]]:
    """Why a cache directory or file must not be trusted (owned by another user than you or root, or
    writable by others: they could seal code of their own), and what to do; None if it may be."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None:  # pragma: no cover - Windows: no uid, no mode bits
        return None
    euid = geteuid()
    if st.st_uid not in (euid, 0):
        return "owned by uid %d, not by you (uid %d)" % (st.st_uid, euid), "chown it to yourself or remove it"
    if st.st_mode & 0o022:
        return "writable by other users (mode %04o)" % (st.st_mode & 0o7777), "chmod go-w it"
    return None


#: The distrust notices this process printed (each is printed once).
_noticed: Set[str] = set()


def _distrusted(directory: Path, problem: str, fix: str) -> None:
    """The notice line for a cache directory not used (the Go hosts' words)."""
    text = (
        "not using the module cache %s: %s; compiling the module in memory. To use the cache, %s, "
        "or set %s to a directory of your own" % (directory, problem, fix, CACHE_DIR_ENV)
    )
    if text not in _noticed:
        _noticed.add(text)
        _notice(text)


def _trusted_dirs(*dirs: Path) -> bool:
    """Whether the cache directories that exist may be used; else the notice (:func:`_distrusted`)."""
    for d in dirs:
        try:
            st = os.stat(d)
        except OSError:
            continue  # not made yet, or unusable: the caller falls back
        if not stat.S_ISDIR(st.st_mode):
            continue
        why = _untrusted(st)
        if why is not None:
            _distrusted(d, "it is %s, so another user could plant code in it" % why[0], why[1])
            return False
    return True


_KINDS = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISDIR, "a directory"))


def _file_kind(mode: int) -> str:
    return next((kind for test, kind in _KINDS if test(mode)), "a socket" if stat.S_ISSOCK(mode) else "a special file")


def _file_problem(st: os.stat_result) -> Optional[str]:
    """Why an opened cache file must not be used, or None."""
    if not stat.S_ISREG(st.st_mode):
        return "is %s, not a regular file" % _file_kind(st.st_mode)
    why = _untrusted(st)
    return None if why is None else "is " + why[0]


def _open_safely(path: str, flags: int, mode: int = 0o600) -> Tuple[Optional[int], Optional[str]]:
    """A descriptor of path (no symbolic link followed, no pipe waited on) if it is a regular file you
    may trust; else why not (None: no file)."""
    if not _O_NOFOLLOW and os.path.islink(path):  # pragma: no cover - no O_NOFOLLOW (Windows)
        return None, _SYMLINK_PROBLEM
    try:
        fd = os.open(path, flags | _O_SAFE, mode)
    except FileNotFoundError:
        return None, None
    except OSError:
        if os.path.islink(path):
            return None, _SYMLINK_PROBLEM
        raise
    problem = _file_problem(os.fstat(fd))
    if problem is not None:
        os.close(fd)
        return None, problem
    return fd, None


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _evict(keep: Path) -> None:
    """Keep the CACHE_KEEP newest ``.cwasm`` of keep's directory (keep included), with their lock files."""
    try:
        others = [p for p in keep.parent.glob("*" + _consts.CACHE_FILE_SUFFIX) if p.is_file() and p != keep]
        others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for old in others[CACHE_KEEP - 1 :]:
            old.unlink()
            Path(str(old) + _consts.CACHE_LOCK_SUFFIX).unlink(missing_ok=True)
    except OSError:
        pass


_SEAL_MAGIC = _consts.CACHE_SEAL_MAGIC.encode("ascii")

#: The trailer's length: the magic, then the digest.
SEAL_SIZE = len(_SEAL_MAGIC) + 32


def _seal_digest(module_sha256: str, payload: "bytes | memoryview") -> bytes:
    """SHA-256 of the binding (the module's hash, the engine), then the serialized module."""
    h = hashlib.sha256(_consts.cache_seal_binding(module_sha256, _engine_dir()).encode("ascii"))
    h.update(payload)
    return h.digest()


def seal(module_sha256: str, payload: bytes) -> bytes:
    """The ``.cwasm`` file of a serialized module: it, then the trailer."""
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


def _try_load(
    engine: wasmtime.Engine, path: Path, module_sha256: str, limit: int
) -> Tuple[Optional[wasmtime.Module], Optional[str]]:
    """The cached module if its file may be trusted, is at most ``limit`` bytes and its seal holds;
    else why not (None: no file). A hit refreshes the file's time (eviction keeps the most recently used)."""
    try:
        fd, problem = _open_safely(str(path), os.O_RDONLY)
    except OSError as e:
        return None, "could not be opened (%s)" % (e.strerror or e)
    if fd is None:
        return None, problem
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(fd).st_size
        if size > limit:
            return None, "is larger than a compiled module of this module can be (%d bytes, at most %d)" % (size, limit)
        try:
            data = f.read(size)
        except OSError as e:
            return None, "could not be read (%s)" % (e.strerror or e)
        problem = seal_problem(module_sha256, data)
        if problem is not None:
            return None, problem  # never handed to wasmtime
        # deserialize_file maps the file (1 ms, not 10-60 to copy it in); through /proc, the very file checked.
        fd_path = "/proc/self/fd/%d" % fd
        try:
            module = wasmtime.Module.deserialize_file(engine, fd_path if os.path.exists(fd_path) else str(path))
        except Exception as e:  # a wasmtime build that names itself the same
            first_line = (str(e).strip().splitlines() or [type(e).__name__])[0]
            return None, "passed its check but wasmtime could not load it (%s)" % first_line
        try:
            os.utime(fd if os.utime in os.supports_fd else path)  # recently used: kept by eviction
        except OSError:
            pass
        return module, None


def load_module(
    engine: wasmtime.Engine,
    module_sha256: str,
    compile_module: Callable[[], wasmtime.Module],
    module_size: Optional[int] = None,
) -> Tuple[wasmtime.Module, Status, Optional[Path]]:
    """``(module, status, cache path or None)``: from the cache, else compiled (once across processes) and
    cached; ``module_size`` bounds the file read (:func:`cache_file_limit`; None: 256 MiB)."""
    path = module_cache_path(module_sha256)
    if path is None:
        _notice("compiling the WebAssembly module in memory (a few seconds): the disk cache is disabled (%s=-)" % CACHE_DIR_ENV)
        return compile_module(), "disabled", None
    limit = _DEFAULT_FILE_LIMIT if module_size is None else cache_file_limit(module_size)
    root, d = path.parent.parent, path.parent
    if not _trusted_dirs(root, d):
        return compile_module(), "uncached", path
    module, _ = _try_load(engine, path, module_sha256, limit)
    if module is not None:
        return module, "warm", path
    lock_path = str(path) + _consts.CACHE_LOCK_SUFFIX
    try:
        # Each made 0700 (not the umask's mode), then checked: another user may have made them meanwhile.
        root.parent.mkdir(parents=True, exist_ok=True)
        root.mkdir(exist_ok=True, mode=0o700)
        d.mkdir(exist_ok=True, mode=0o700)
        if not _trusted_dirs(root, d):
            return compile_module(), "uncached", path
        lock_fd, problem = _open_safely(lock_path, os.O_RDWR | os.O_CREAT)
    except OSError as e:
        return _uncached(compile_module, path, e), "uncached", path
    if lock_fd is None:
        _distrusted(d, "its lock file %s %s" % (lock_path, problem), "remove " + lock_path)
        return compile_module(), "uncached", path
    try:
        if fcntl is not None:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)  # another process compiling: wait for its file
        module, problem = _try_load(engine, path, module_sha256, limit)
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
