"""The built packages tested as users install them (``make test.python.dist``).

For the wheel and the sdist in ``--dist``: check what they carry (the module,
VERSION, the licence and its metadata), then, for each CPython given, create a
fresh venv, install the WHEEL into it (never the source tree) with the pinned
dependencies, warm its compile cache with ``python -m polyloop_assembly warm``,
and run the shared vectors and the package checks (tests/test_vectors.py,
tests/test_json_vectors.py, tests/test_prompt_vectors.py, tests/test_package.py)
against the installed package: all of them on the oldest CPython given (first,
so it also fills the compile cache the others load), the smoke set of
tests/dist_smoke.py (what can differ between interpreters) on the others.
One summary line on stdout; each interpreter's log under ``--artifacts``
(every command with its time), printed on failure.

Usage: dist_check.py --dist DIR --artifacts DIR PYTHON...
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path
from typing import List, Tuple

HERE = Path(__file__).resolve().parent  # bindings/python/tests
PKG = HERE.parent  # bindings/python
REPO = PKG.parents[1]
CONSTRAINTS = PKG / "constraints.txt"
# The shared vectors (and the prompt vectors where this checkout has them) and the package checks.
TEST_FILES = [
    p
    for p in (HERE / "test_vectors.py", HERE / "test_json_vectors.py", HERE / "test_prompt_vectors.py", HERE / "test_package.py")
    if p.exists()
]


class Failure(Exception):
    pass


def _one(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    if len(found) != 1:
        raise Failure("expected exactly one %s in %s, found %s" % (pattern, dist, [p.name for p in found]))
    return found[0]


def check_artifacts(wheel: Path, sdist: Path) -> None:
    """What the wheel and the sdist must carry."""
    version = (REPO / "VERSION").read_text().strip()
    if not wheel.name.startswith("polyloop_assembly-%s-py3-none-any" % version):
        raise Failure("%s: not a py3-none-any wheel of version %s" % (wheel.name, version))
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        info = "polyloop_assembly-%s.dist-info" % version
        for want in (
            "polyloop_assembly/assembly.wasm",
            "polyloop_assembly/VERSION",
            "polyloop_assembly/py.typed",
            "polyloop_assembly/__main__.py",
            "polyloop_assembly/data/__init__.py",
            "polyloop_assembly/data/_usage_rows.py",
            info + "/licenses/LICENSE",
        ):
            if want not in names:
                raise Failure("%s lacks %s" % (wheel.name, want))
        if z.read("polyloop_assembly/assembly.wasm") != (REPO / "wasm" / "assembly.wasm").read_bytes():
            raise Failure("%s: its assembly.wasm is not wasm/assembly.wasm" % wheel.name)
        meta = z.read(info + "/METADATA").decode()
    for line in (
        "License-Expression: Apache-2.0",
        "Project-URL: Repository, https://github.com/polyloop/assembly",
        "Project-URL: Homepage, https://github.com/polyloop/assembly",
        "Requires-Dist: wasmtime<51,>=50.0.1",
    ):
        if line not in meta.splitlines():
            raise Failure("%s: METADATA lacks %r" % (wheel.name, line))
    if "make " in meta.split("\n\n", 1)[1]:
        raise Failure("%s: the package README points at make targets; it is read by people who pip install" % wheel.name)
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for want in ("src/polyloop_assembly/assembly.wasm", "src/polyloop_assembly/VERSION", "LICENSE", "setup.py", "pyproject.toml"):
        if want not in names:
            raise Failure("%s lacks %s" % (sdist.name, want))


def check_build_refuses_without_module(work: Path) -> None:
    """A copy of the source tree without the staged files (as after a fresh
    clone, before make) must fail to build, naming `make dist`."""
    src = work / "unstaged"
    ignore = shutil.ignore_patterns("assembly.wasm", "VERSION", "LICENSE", "build", "*.egg-info", "__pycache__", ".*")
    shutil.copytree(PKG, src, ignore=ignore)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", str(work / "unstaged-out"), str(src)],
        capture_output=True,
        text=True,
    )
    if proc.returncode == 0 or "make dist" not in proc.stdout + proc.stderr:
        raise Failure(
            "building the package without its module did not fail naming `make dist`:\n%s%s" % (proc.stdout, proc.stderr)
        )


def _run(cmd: List[str], log: Path, env: "dict[str, str]", cwd: Path) -> None:
    with log.open("a") as f:
        f.write("$ %s\n" % " ".join(cmd))
        f.flush()
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=str(cwd))
        f.write("[%.1f s]\n" % (time.perf_counter() - t0))
    if proc.returncode != 0:
        raise Failure("`%s` exited with %d" % (" ".join(cmd), proc.returncode))


def _version(python: str) -> str:
    """The interpreter's version ("3.9.18"), or "0" when it does not run (its test then fails and says why)."""
    proc = subprocess.run([python, "-c", "import platform; print(platform.python_version())"], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else "0"


def _oldest_first(pythons: List[str]) -> List[Tuple[str, str]]:
    """(python, version) for each interpreter once, the oldest first, the others in the given order."""
    found = [(p, _version(p)) for p in dict.fromkeys(os.path.realpath(p) for p in pythons)]
    key = lambda pv: tuple(int(x) for x in pv[1].split(".") if x.isdigit())  # noqa: E731
    oldest = min(found, key=key)
    return [oldest] + [pv for pv in found if pv != oldest]


def test_on(python: str, version: str, wheel: Path, work: Path, cache: Path, log: Path, smoke: bool) -> str:
    """Install the wheel into a fresh venv of ``python`` and run the tests
    (the smoke set if ``smoke``); what ran, with pytest's last line."""
    venv = work / ("venv-" + version)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["POLYLOOP_ASSEMBLY_CACHE_DIR"] = str(cache)
    env["POLYLOOP_ASSEMBLY_TEST_INSTALLED"] = "1"
    _run([python, "-m", "venv", "--without-pip", str(venv)], log, env, work)
    vpy = str(venv / "bin" / "python")
    # this interpreter's pip installs into the venv (--python): no pip bootstrap per venv
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", "--python", vpy]
    # --no-compile: half of pip's time goes into byte-compiling wasmtime and
    # pytest; the package's own modules are compiled by this interpreter
    # instead, failing on any it cannot compile (pip ignores those).
    _run(pip + ["install", "--no-compile", "-c", str(CONSTRAINTS), str(wheel), "pytest"], log, env, work)
    pkg = sorted(venv.glob("lib/python*/site-packages/polyloop_assembly"))
    if len(pkg) != 1:
        raise Failure("the wheel installed %d polyloop_assembly packages into %s" % (len(pkg), venv))
    _run([vpy, "-m", "compileall", "-q", str(pkg[0])], log, env, work)
    _run([vpy, "-m", "polyloop_assembly", "warm"], log, env, work)
    plugin: List[str] = []
    if smoke:
        env["PYTHONPATH"] = str(HERE)  # where -p finds the plugin; the package still comes from the venv
        plugin = ["-p", "dist_smoke"]
    _run([vpy, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin, *map(str, TEST_FILES)], log, env, work)
    last = [line for line in log.read_text().splitlines() if " passed" in line]
    summary = last[-1].strip("= ") if last else "?"
    print(summary)  # pytest's closing line, alone on its line: scripts/suite counts it
    return "%s (%s%s)" % (version, "smoke: " if smoke else "all: ", summary)


def test_sdist(sdist: Path, work: Path, cache: Path, log: Path) -> None:
    """pip installs the sdist (a build from source, isolated, no Go on the
    path) into a fresh venv of this interpreter, and the result assembles."""
    venv = work / "venv-sdist"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["POLYLOOP_ASSEMBLY_CACHE_DIR"] = str(cache)
    env["PIP_CONSTRAINT"] = str(CONSTRAINTS)  # pins the isolated build's setuptools too
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if not (Path(p) / "go").exists())
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], log, env, work)
    vpy = str(venv / "bin" / "python")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--disable-pip-version-check",
            "-q",
            "--python",
            vpy,
            "install",
            "--no-compile",
            str(sdist),
        ],
        log,
        env,
        work,
    )
    probe = "import polyloop_assembly as pa; assert pa.assemble({'observation_template': '{observation}'})['ok']; print(pa.__version__)"
    _run([vpy, "-c", probe], log, env, work)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dist", type=Path, required=True)
    ap.add_argument("--artifacts", type=Path, required=True)
    ap.add_argument("pythons", nargs="+")
    args = ap.parse_args()
    args.dist = args.dist.resolve()
    t0 = time.perf_counter()
    shutil.rmtree(args.artifacts, ignore_errors=True)
    args.artifacts.mkdir(parents=True)
    try:
        wheel = _one(args.dist, "polyloop_assembly-*.whl")
        sdist = _one(args.dist, "polyloop_assembly-*.tar.gz")
        check_artifacts(wheel, sdist)
    except Failure as e:
        print("python dist: FAIL: %s" % e)
        return 1
    results = []
    failed = []
    with tempfile.TemporaryDirectory(prefix="polyloop-dist-") as tmp:
        work = Path(tmp)
        try:
            check_build_refuses_without_module(work)
        except Failure as e:
            print("python dist: FAIL: %s" % e)
            return 1
        cache = work / "cache"  # cold for the first interpreter, warm for the rest
        for i, (python, version) in enumerate(_oldest_first(args.pythons)):
            log = args.artifacts / (python.strip("/").replace("/", "_") + ".log")
            try:
                results.append(test_on(python, version, wheel, work, cache, log, smoke=i > 0))
            except (Failure, subprocess.CalledProcessError) as e:
                failed.append(python)
                print("python dist: %s FAILED: %s; log %s:" % (python, e, log))
                print(log.read_text() if log.exists() else "(no log)")
        sdist_log = args.artifacts / "sdist.log"
        try:
            test_sdist(sdist, work, cache, sdist_log)
            sdist_result = "the sdist installs with pip and assembles"
        except Failure as e:
            failed.append("sdist")
            sdist_result = "the sdist FAILED"
            print("python dist: installing the sdist FAILED: %s; log %s:" % (e, sdist_log))
            print(sdist_log.read_text() if sdist_log.exists() else "(no log)")
    kb = lambda p: "%.0f KB" % (p.stat().st_size / 1024)  # noqa: E731
    print(
        "python dist: %s: wheel %s (%s), sdist %s (%s); a build without the module fails naming make dist; %s; the wheel installed and tested on %s%s [%.0f s]"
        % (
            "FAIL" if failed else "ok",
            wheel.name,
            kb(wheel),
            sdist.name,
            kb(sdist),
            sdist_result,
            ", ".join(results) or "no interpreter",
            "; FAILED on " + ", ".join(failed) if failed else "",
            time.perf_counter() - t0,
        )
    )
    return 1 if failed or not results else 0


if __name__ == "__main__":
    sys.exit(main())
