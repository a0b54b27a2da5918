"""The integrity of the compiled-module cache (docs/SPEC.md §7.4).

wasmtime checks only a serialized module's header and runs whatever code
follows it, so an altered ``.cwasm`` must never reach it. Each case alters
the cache file, then a NEW process (the file is read at start-up) answers two
requests whose true answers the shared vectors give: the vector
fields-unknown-block (its answer carries the string ``unknown_field``) and
history-after-goal-assistant (its answer carries ``assistant``). It must
answer them exactly, say so in one notice line and put the good file back.

Random bit flips: 10 in fresh processes (each recompiles, a few seconds),
and 100 in this process against the check itself.
"""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List, Tuple

import msgpack
import pytest
import wasmtime
from conftest import VECTORS_DIR

import polyloop_assembly as pa
from polyloop_assembly import _module_cache, _runtime

_CHILD = textwrap.dedent(
    """
    import sys
    import polyloop_assembly as pa
    for hex_request in sys.argv[1:]:
        print(pa.assemble_bytes(bytes.fromhex(hex_request)).hex())
    """
)


def _vector(file: str, name: str) -> Dict[str, object]:
    cases = json.loads((VECTORS_DIR / file).read_text(encoding="ascii"))["cases"]
    [case] = [c for c in cases if c["name"] == name]
    return case


_ERROR_CASE = _vector("errors-fields.json", "fields-unknown-block")
_OK_CASE = _vector("history.json", "history-after-goal-assistant")
_REQUESTS = [base64.b64decode(str(c["request"])) for c in (_ERROR_CASE, _OK_CASE)]
_OK_RESPONSE = base64.b64decode(str(_OK_CASE["response"]))


def _check_answers(stdout: str, label: str) -> None:
    """The child's answers are the true ones (the vectors')."""
    lines = stdout.split()
    assert len(lines) == 2, "%s: %r" % (label, stdout)
    error = msgpack.unpackb(bytes.fromhex(lines[0]), raw=False)["error"]
    assert (error["code"], error["path"]) == (_ERROR_CASE["error"]["code"], _ERROR_CASE["error"]["path"]), label  # type: ignore[index]
    assert bytes.fromhex(lines[1]) == _OK_RESPONSE, "%s: wrong bytes for the ok request" % label


class _Cache:
    """A cache directory holding the good compiled module, and fresh processes on it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / ("wasmtime-%s" % _module_cache.wasmtime_version()) / ("%s.cwasm" % pa.module_sha256)
        self.call("cold start", noticed=None)
        self.good = self.path.read_bytes()

    def call(self, label: str, noticed: "bool | None") -> None:
        """A new process answers the requests; noticed: it must print exactly
        one notice line about the bad file (False: nothing; None: unchecked)."""
        env = dict(os.environ)
        env[pa.CACHE_DIR_ENV] = str(self.root)
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, *(r.hex() for r in _REQUESTS)], env=env, capture_output=True, text=True, timeout=600
        )
        assert out.returncode == 0, "%s: the process died (%d): %s" % (label, out.returncode, out.stderr[-2000:])
        _check_answers(out.stdout, label)
        if noticed:
            assert out.stderr.count("\n") == 1, "%s: %r" % (label, out.stderr)
            assert str(self.path) in out.stderr and "compiling it afresh" in out.stderr, "%s: %r" % (label, out.stderr)
        elif noticed is False:
            assert out.stderr == "", "%s: %r" % (label, out.stderr)

    def corrupt(self, label: str, bad: bytes) -> None:
        """Write bad as the cache file; the next process recovers and rewrites it."""
        self.path.write_bytes(bad)
        self.call(label, noticed=True)
        assert self.path.read_bytes() == self.good, "%s: the bad file was not rewritten" % label


@pytest.fixture
def cache(tmp_path: Path) -> _Cache:
    return _Cache(tmp_path / "cache")


def test_tampered_strings_and_truncation_are_never_executed(cache: _Cache) -> None:
    for old, new in ((b"unknown_field", b"unknown_fielX"), (b"assistant", b"assistanX")):
        assert old in cache.good, old
        cache.corrupt("%r -> %r" % (old, new), cache.good.replace(old, new, 1))
    cache.corrupt("truncated by one byte", cache.good[:-1])
    cache.corrupt("truncated to half", cache.good[: len(cache.good) // 2])
    cache.call("a later process", noticed=False)  # the rewritten file serves, silently


def _flips(data: bytes, count: int, seed: int) -> List[Tuple[int, bytes]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        bit = rng.randrange(len(data) * 8)
        bad = bytearray(data)
        bad[bit // 8] ^= 1 << (bit % 8)
        out.append((bit, bytes(bad)))
    return out


def test_random_bit_flips_in_fresh_processes(cache: _Cache) -> None:
    for i, (bit, bad) in enumerate(_flips(cache.good, 10, seed=20250701)):
        cache.corrupt("flip %d (bit %d)" % (i, bit), bad)


def test_100_random_bit_flips_never_reach_wasmtime(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """In this process: every flipped file is rejected before wasmtime
    deserializes it, recompiled (here: the module compiled once, to keep the
    test short) and rewritten, with one notice line each."""
    monkeypatch.setenv(pa.CACHE_DIR_ENV, str(tmp_path))
    rt = _runtime.Runtime()
    assert rt.cache_status == "cold" and rt.cache_path is not None
    path, good = rt.cache_path, rt.cache_path.read_bytes()
    capsys.readouterr()
    loads: List[str] = []
    real = wasmtime.Module.deserialize_file

    def counted(engine: wasmtime.Engine, p: str) -> wasmtime.Module:
        loads.append(p)
        return real(engine, p)

    monkeypatch.setattr(wasmtime.Module, "deserialize_file", staticmethod(counted))
    flips = _flips(good, 100, seed=100)
    for bit, bad in flips:
        _module_cache._atomic_write(path, bad)
        module, status, _ = _module_cache.load_module(rt.engine, rt.module_sha256, lambda: rt.module)
        assert (module, status) == (rt.module, "cold"), bit
        assert path.read_bytes() == good, "flip of bit %d: not rewritten" % bit
    assert loads == [], "a corrupt file reached wasmtime"
    err = capsys.readouterr().err.splitlines()
    assert len(err) == len(flips) and all("failed its integrity check" in e or "no integrity digest" in e for e in err), err[:3]
    module, status, _ = _module_cache.load_module(rt.engine, rt.module_sha256, lambda: rt.module)
    assert status == "warm" and len(loads) == 1


def test_a_file_for_another_module_or_wasmtime_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    """The digest binds the module's sha256 and the wasmtime version."""
    payload = b"serialized code"
    sealed = _module_cache.seal("aa" * 32, payload)
    assert len(sealed) == len(payload) + _module_cache.SEAL_SIZE
    assert _module_cache.seal_problem("aa" * 32, sealed) is None
    assert "integrity check" in str(_module_cache.seal_problem("ab" * 32, sealed))
    monkeypatch.setattr(_module_cache, "wasmtime_version", lambda: "0.0.1")
    assert "integrity check" in str(_module_cache.seal_problem("aa" * 32, sealed))
    for short in (b"", sealed[: _module_cache.SEAL_SIZE - 1], payload):
        assert "no integrity digest" in str(_module_cache.seal_problem("aa" * 32, short))
