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
the 4 newest ``.cwasm`` of that ``wasmtime-<version>`` directory are kept, by
mtime, which a load from the cache refreshes: the 4 most recently used.
An unusable or unwritable cache falls back to compiling in memory, and the
notice on stderr says so.

wasmtime checks only a serialized module's header, so each ``.cwasm`` seals
its own bytes (the project's docs/SPEC.md §7.4, in the source repository):
the serialized module, then a trailer of ``polyloop-cwasm-1`` and
SHA-256(binding + the serialized module), where the binding names the module's sha256 and ``wasmtime-<version>``. The trailer is
checked before wasmtime sees the file; a file that fails is never loaded but
compiled afresh and replaced, with one notice line on stderr. So is anything
at that path that is not a regular file (a symbolic link, a named pipe, a
device: opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked with ``fstat``),
a file another user could have written, or one larger than
:func:`cache_file_limit`.

The seal is unkeyed: it catches corruption, truncation and files of another
module, wasmtime or release, not someone who can write the cache. So, as ssh
treats its keys, a cache directory (``<dir>`` or ``wasmtime-<version>``) not
owned by you (or root), or writable by its group or others, is not used at
all: the module is compiled in memory, with one notice line saying why and
what to do. The directories above ``<dir>`` are not checked. Without
``os.geteuid`` (Windows) there is no owner or mode check.
"""

from __future__ import annotations

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

__all__ = [
    "CACHE_DIR_ENV",
    "CACHE_KEEP",
    "Status",
    "cache_dir",
    "cache_file_limit",
    "load_module",
    "module_cache_path",
    "wasmtime_version",
]

#: Environment variable that overrides the directory of the compiled-module cache
#: (``-`` disables the disk cache).
CACHE_DIR_ENV = _consts.CACHE_DIR_ENV

#: Compiled modules kept in one ``wasmtime-<version>`` directory (the newest by mtime; a hit refreshes it).
CACHE_KEEP = _consts.CACHE_KEEP

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
    """The installed wasmtime's version (the cache's directory name)."""
    try:
        return metadata.version("wasmtime")
    except metadata.PackageNotFoundError:  # pragma: no cover - vendored wasmtime
        return "unknown"


def _engine_dir() -> str:
    """The directory of this wasmtime's compiled modules: ``wasmtime-<version>``."""
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
    """The size past which a ``.cwasm`` of a module of ``module_size`` bytes is not read.

    16 times the module, plus 16 MiB: wasmtime's serialized code is about 3.2
    times the module (8.9 MB for this project's 2.8 MB), so no file the cache
    wrote comes near it, and a read is bounded even if a file grows without end.
    """
    return _consts.CACHE_FILE_LIMIT_MODULES * module_size + _consts.CACHE_FILE_LIMIT_EXTRA_BYTES


#: The bound when the caller does not give the module's size.
_DEFAULT_FILE_LIMIT = 256 << 20

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_SAFE = _O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)

#: The phrase for a symbolic link where the cache keeps a file: the cache
#: never makes one, so where it points is not looked at.
_SYMLINK_PROBLEM = "is a symbolic link, not a file this cache wrote"


def _untrusted(st: os.stat_result) -> Optional[Tuple[str, str]]:
    """Why a cache directory or file must not be trusted, and what to do; None if it may be.

    Not owned by this process's effective user (nor by root, who can replace
    any of your files anyway), or writable by its group or others: whoever
    can write the cache can seal code of their own (the seal is unkeyed).
    """
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
    """The one notice line for a cache directory not used (the Go hosts print the same words)."""
    text = (
        "not using the module cache %s: %s; compiling the module in memory. To use the cache, %s, "
        "or set %s to a directory of your own" % (directory, problem, fix, CACHE_DIR_ENV)
    )
    if text not in _noticed:
        _noticed.add(text)
        _notice(text)


def _trusted_dirs(*dirs: Path) -> bool:
    """Whether the cache directories may be used: each that exists is yours and
    writable by no other user. Otherwise prints the notice (:func:`_distrusted`)."""
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


def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _file_problem(st: os.stat_result) -> Optional[str]:
    """Why an opened cache file must not be used: not a regular file, or another user could have written it."""
    if not stat.S_ISREG(st.st_mode):
        return "is %s, not a regular file" % _file_kind(st.st_mode)
    why = _untrusted(st)
    return None if why is None else "is " + why[0]


def _open_safely(path: str, flags: int, mode: int = 0o600) -> Tuple[Optional[int], Optional[str]]:
    """A descriptor of path opened without following a symbolic link or waiting
    on a named pipe, if it is a regular file you may trust; else why not (None:
    there is no file). Other errors are raised."""
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
        others = [p for p in keep.parent.glob("*" + _consts.CACHE_FILE_SUFFIX) if p.is_file() and p != keep]
        others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for old in others[CACHE_KEEP - 1 :]:
            old.unlink()
            Path(str(old) + _consts.CACHE_LOCK_SUFFIX).unlink(missing_ok=True)
    except OSError:
        pass


#: Opens the trailer that seals a ``.cwasm`` file; a SHA-256 follows it.
_SEAL_MAGIC = _consts.CACHE_SEAL_MAGIC.encode("ascii")

#: Length of the trailer: the magic, then the digest.
SEAL_SIZE = len(_SEAL_MAGIC) + 32


def _seal_digest(module_sha256: str, payload: "bytes | memoryview") -> bytes:
    """SHA-256 of the binding (the module's hash, the wasmtime version), then the serialized module."""
    h = hashlib.sha256(_consts.cache_seal_binding(module_sha256, _engine_dir()).encode("ascii"))
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


def _try_load(
    engine: wasmtime.Engine, path: Path, module_sha256: str, limit: int
) -> Tuple[Optional[wasmtime.Module], Optional[str]]:
    """The cached module if its file is a regular file of at most limit bytes that
    no other user could have written and its seal verifies; else why not (None
    if there is no file). A hit refreshes the file's time (eviction keeps the
    most recently used, as the Go hosts do)."""
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
        # deserialize_file maps the file (about 1 ms, against 10-60 ms to copy
        # 8 MB of code in); through /proc it maps the very file checked, even
        # if another process renamed a new one over it meanwhile.
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
    """The compiled module: from the cache, else compiled (once across processes) and cached.

    Args:
        module_size: the module's size in bytes, which bounds the cache file
            read (:func:`cache_file_limit`); None: 256 MiB.

    Returns:
        (module, status, cache path or None if the cache is disabled).
    """
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
        # Each made 0700 (parents=True would make the root with the umask's
        # mode, maybe group-writable), then checked: another user may have
        # made them meanwhile.
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
