"""Cold starts: warming the cache ahead (API and command) and the cross-process
compile lock (N processes starting on a cold cache compile once)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Dict

import pytest

import polyloop_assembly as pa

_WARM_CHILD = textwrap.dedent(
    """
    import json, sys, time
    t0 = time.perf_counter()
    import polyloop_assembly as pa
    info = pa.warm()
    out = pa.assemble({"observation_template": "{observation}"})
    print(json.dumps({"status": info.status, "path": str(info.path), "seconds": time.perf_counter() - t0, "ok": out["ok"]}))
    """
)


def _env(cache: Path) -> Dict[str, str]:
    env = dict(os.environ)
    env[pa.CACHE_DIR_ENV] = str(cache)
    return env


def _start(cache: Path) -> "subprocess.Popen[str]":
    return subprocess.Popen(
        [sys.executable, "-c", _WARM_CHILD], env=_env(cache), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_two_processes_on_a_cold_cache_compile_once(tmp_path: Path) -> None:
    """Started together on an empty cache, one process compiles (status cold,
    one notice) while the other waits on the lock and loads its file (warm,
    silent). Times are printed for the record, never asserted."""
    cache = tmp_path / "cache"
    t0 = time.perf_counter()
    procs = [_start(cache) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    wall = time.perf_counter() - t0
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    results = [json.loads(out) for out, _ in outs]
    assert sorted(r["status"] for r in results) == ["cold", "warm"], results
    notices = "".join(err for _, err in outs)
    assert notices.count("compiling the WebAssembly module") == 1, notices
    assert all(r["ok"] is True for r in results)
    assert len(list(cache.glob("wasmtime-*/*.cwasm"))) == 1
    assert results[0]["path"] == results[1]["path"]
    print(
        "two cold processes: %.2f s wall, per process %s" % (wall, ["%s %.2f s" % (r["status"], r["seconds"]) for r in results])
    )

    # and a third one, started on the warm cache, only loads
    out, err = _start(cache).communicate(timeout=600)
    assert json.loads(out)["status"] == "warm" and err == ""
    print("a warm process: %.2f s" % json.loads(out)["seconds"])


def _cli(cache: Path, *args: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [sys.executable, "-m", "polyloop_assembly", *args], env=_env(cache), capture_output=True, text=True, timeout=600
    )


def test_warm_command(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _cli(cache, "warm")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("polyloop_assembly: compiled and cached: %s" % cache), first.stdout
    assert "compiling the WebAssembly module" in first.stderr
    [cwasm] = cache.glob("wasmtime-*/*.cwasm")
    assert cwasm.name == pa.module_sha256 + ".cwasm"
    again = _cli(cache, "warm")
    assert again.returncode == 0 and again.stderr == ""
    assert again.stdout.startswith("polyloop_assembly: already cached: %s" % cwasm), again.stdout


def test_warm_command_fails_when_the_cache_cannot_be_written(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    out = _cli(blocker / "cache", "warm")
    assert out.returncode == 1
    assert "not cached (uncached)" in out.stderr and "cannot be written" in out.stderr, out.stderr
    disabled = _cli(Path("-"), "warm")
    assert disabled.returncode == 1 and "the cache is disabled" in disabled.stderr


def test_warm_api_in_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from polyloop_assembly import _runtime

    monkeypatch.setenv(pa.CACHE_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(_runtime._runtime, "value", None)  # as in a fresh process
    info = pa.warm()
    assert info.status == "cold" and info.path is not None and info.path.is_file()
    assert info.path.parent.parent == tmp_path and info.seconds > 0
    assert pa.warm() == info  # the process's runtime: loaded once


def test_usage_error() -> None:
    out = subprocess.run([sys.executable, "-m", "polyloop_assembly", "frobnicate"], capture_output=True, text=True)
    assert out.returncode == 2 and "warm" in out.stderr and "version" in out.stderr
