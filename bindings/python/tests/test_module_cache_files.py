"""What the compiled-module cache reads, and whom it trusts (docs/SPEC.md §7.4).

Only regular files are read, each read is bounded, and a cache directory or
file that another user owns or may write is never trusted: the seal is
unkeyed, so whoever can write the cache can seal code of their own. Each
case prepares a cache, then a NEW process (the cache is read at start-up,
under a timeout: a named pipe used to hang it for ever; with its data
segment capped at 4 GiB: a symbolic link to /dev/zero used to be read until
memory ran out) must answer the vectors of test_module_cache_integrity exactly (a
planted module answers ``unknown_fielX``) and print one notice line.

Giving a file to another user needs root (the tests' machines and CI run as
root); those cases are skipped otherwise.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, List

import pytest
from test_module_cache_integrity import _CHILD, _REQUESTS, _check_answers

import polyloop_assembly as pa
from polyloop_assembly import _module_cache, _runtime

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid"), reason="owners, modes and named pipes are POSIX")

#: The child, with its data segment capped (a read without end fails in seconds).
_LIMITED_CHILD = "import resource; resource.setrlimit(resource.RLIMIT_DATA, (4 << 30, 4 << 30))\n" + _CHILD

_NEEDS_ROOT = "giving a file to another user (chown) needs root; CI and the project's machines run the tests as root"


def _run(root: Path, label: str) -> str:
    """A new process answers the vectors on the cache root; returns its stderr."""
    env = dict(os.environ)
    env[pa.CACHE_DIR_ENV] = str(root)
    try:
        out = subprocess.run(
            [sys.executable, "-c", _LIMITED_CHILD, *(r.hex() for r in _REQUESTS)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("%s: no answer after 300 s (a hang)" % label)
    assert out.returncode == 0, "%s: the process died (%d): %s" % (label, out.returncode, out.stderr[-2000:])
    _check_answers(out.stdout, label)
    return out.stderr


def _one_notice(stderr: str, want: str, label: str) -> None:
    assert stderr.count("\n") == 1 and want in stderr, "%s: want one notice line with %r, got %r" % (label, want, stderr)


class _Layout:
    """A cache root, the module's .cwasm path in it, and a good sealed file (from a cold start)."""

    def __init__(self, tmp_path: Path, good: bytes) -> None:
        self.root = tmp_path / "cache"
        self.path = self.root / ("wasmtime-%s" % _module_cache.wasmtime_version()) / ("%s.cwasm" % pa.module_sha256)
        self.path.parent.mkdir(parents=True, mode=0o700)
        self.root.chmod(0o700)
        self.good = good

    def planted(self) -> bytes:
        """Code of someone else's under a seal that verifies: a string changed, then sealed again."""
        payload = self.good[: -_module_cache.SEAL_SIZE]
        assert b"unknown_field" in payload
        return _module_cache.seal(pa.module_sha256, payload.replace(b"unknown_field", b"unknown_fielX", 1))


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    root = tmp_path_factory.mktemp("good") / "cache"
    _run(root, "cold start")
    [path] = root.glob("wasmtime-*/*.cwasm")
    return path.read_bytes()


@pytest.fixture
def layout(tmp_path: Path, good: bytes) -> _Layout:
    return _Layout(tmp_path, good)


def _too_large(path: Path) -> None:
    with open(path, "wb") as f:  # sparse: no disk used
        f.truncate(_module_cache.cache_file_limit(len(_runtime._read_resource("assembly.wasm"))) + 1)


_STRANGE: List[tuple] = [
    ("fifo", lambda p: os.mkfifo(p), "is a named pipe, not a regular file"),
    ("dev-zero", lambda p: os.symlink("/dev/zero", p), "is a symbolic link, not a file this cache wrote"),
    ("too-large", _too_large, "is larger than a compiled module of this module can be"),
]


@pytest.mark.parametrize("name,make,notice", _STRANGE, ids=[c[0] for c in _STRANGE])
def test_strange_file_at_the_cache_path(layout: _Layout, name: str, make: Callable[[Path], None], notice: str) -> None:
    """Not read (no hang, no unbounded read), compiled afresh and replaced; the next process uses it silently."""
    make(layout.path)
    stderr = _run(layout.root, name)
    _one_notice(stderr, "%s %s" % (layout.path, notice), name)
    assert "compiling it afresh (a few seconds) and replacing it" in stderr, stderr
    assert layout.path.is_file() and not layout.path.is_symlink() and layout.path.read_bytes() == layout.good, name
    assert _run(layout.root, name + ", then") == ""


def test_symlink_to_a_sealed_file_elsewhere(layout: _Layout, tmp_path: Path) -> None:
    """The cache never makes a symbolic link: where one points is not looked at, even a good file."""
    elsewhere = tmp_path / "elsewhere.cwasm"
    elsewhere.write_bytes(layout.planted())
    layout.path.symlink_to(elsewhere)
    _one_notice(_run(layout.root, "symlink"), "%s is a symbolic link" % layout.path, "symlink")
    assert elsewhere.read_bytes() == layout.planted(), "the link's target was written"


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_strange_lock_file(layout: _Layout, tmp_path: Path, kind: str) -> None:
    """The lock is not opened through a link nor waited on as a pipe: the module is compiled in memory."""
    lock = Path(str(layout.path) + ".lock")
    if kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.symlink_to(tmp_path / "elsewhere.lock")
    _one_notice(
        _run(layout.root, kind),
        "not using the module cache %s: its lock file %s is a %s"
        % (layout.path.parent, lock, "named pipe" if kind == "fifo" else "symbolic link"),
        kind,
    )
    assert not layout.path.exists() and not (tmp_path / "elsewhere.lock").exists()


def _world_writable_root(layout: _Layout) -> Path:
    layout.root.chmod(0o777)
    return layout.root


def _group_writable_dir(layout: _Layout) -> Path:
    layout.path.parent.chmod(0o775)
    return layout.path.parent


def _foreign_root(layout: _Layout) -> Path:
    if os.geteuid() != 0:
        pytest.skip(_NEEDS_ROOT)
    os.chown(layout.root, 65534, 65534)
    return layout.root


def _foreign_dir(layout: _Layout) -> Path:
    if os.geteuid() != 0:
        pytest.skip(_NEEDS_ROOT)
    os.chown(layout.path.parent, 65534, 65534)
    return layout.path.parent


_UNTRUSTED_DIRS = [
    ("root-world-writable", _world_writable_root, "it is writable by other users (mode 0777)"),
    ("dir-group-writable", _group_writable_dir, "it is writable by other users (mode 0775)"),
    ("root-foreign", _foreign_root, "it is owned by uid 65534, not by you (uid 0)"),
    ("dir-foreign", _foreign_dir, "it is owned by uid 65534, not by you (uid 0)"),
]


@pytest.mark.parametrize("name,spoil,notice", _UNTRUSTED_DIRS, ids=[c[0] for c in _UNTRUSTED_DIRS])
def test_untrusted_directory_is_not_used(layout: _Layout, name: str, spoil: Callable[[_Layout], Path], notice: str) -> None:
    """A module planted in it is not run, nothing is written to it, and the notice says why and what to do."""
    planted = layout.planted()
    layout.path.write_bytes(planted)
    layout.path.chmod(0o600)
    named = spoil(layout)
    stderr = _run(layout.root, name)
    _one_notice(stderr, "polyloop_assembly: not using the module cache %s: %s" % (named, notice), name)
    assert pa.CACHE_DIR_ENV in stderr
    assert layout.path.read_bytes() == planted and sorted(os.listdir(layout.path.parent)) == [layout.path.name], name


def test_untrusted_file_is_replaced(layout: _Layout) -> None:
    """A .cwasm another user could have written is not read, but replaced: the directory is yours."""
    layout.path.write_bytes(layout.planted())
    layout.path.chmod(0o666)
    _one_notice(_run(layout.root, "0666"), "%s is writable by other users (mode 0666): compiling it afresh" % layout.path, "0666")
    assert layout.path.read_bytes() == layout.good
    if os.geteuid() != 0:
        pytest.skip(_NEEDS_ROOT)
    layout.path.write_bytes(layout.planted())
    os.chown(layout.path, 65534, 65534)
    _one_notice(
        _run(layout.root, "foreign"), "%s is owned by uid 65534, not by you (uid 0): compiling it afresh" % layout.path, "foreign"
    )
    assert layout.path.read_bytes() == layout.good


def test_a_hit_refreshes_the_file_so_eviction_keeps_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Eviction keeps the CACHE_KEEP most recently USED files: a module loaded from
    the cache an hour after it was written outlives files written since."""
    monkeypatch.setenv(pa.CACHE_DIR_ENV, str(tmp_path))
    rt = _runtime.Runtime()
    assert rt.cache_status == "cold" and rt.cache_path is not None
    mine = rt.cache_path
    now = time.time()
    others = []
    for i in range(_module_cache.CACHE_KEEP - 1):  # written after mine, before the hit
        p = mine.parent / ("%064d.cwasm" % i)
        p.write_bytes(b"another module")
        os.utime(p, (now - 3000 + i, now - 3000 + i))
        others.append(p)
    os.utime(mine, (now - 3600, now - 3600))
    module, status, _ = _module_cache.load_module(rt.engine, rt.module_sha256, lambda: rt.module)
    assert status == "warm"
    # a new module is compiled and cached: one file must go
    _, status, newest = _module_cache.load_module(rt.engine, "ff" * 32, lambda: rt.module)
    assert status == "cold" and newest is not None
    kept = sorted(p.name for p in mine.parent.glob("*.cwasm"))
    assert mine.exists(), "the file just used was evicted: %s" % kept
    assert not others[0].exists() and len(kept) == _module_cache.CACHE_KEEP, kept
