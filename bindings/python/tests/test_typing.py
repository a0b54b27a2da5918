"""The public types, checked as users meet them: ``mypy --strict`` on the
package and on a user script (clean), and on a script of mistakes (each one
reported on its line)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Tuple

import pytest

api = pytest.importorskip("mypy.api", reason="mypy is installed by make python.venv (pinned in constraints.txt)")

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


def _mypy(tmp_path: Path, *args: str) -> Tuple[int, List[str]]:
    config = ["--config-file", str(HERE.parent / "pyproject.toml")]
    out, err, status = api.run(["--strict", *config, "--cache-dir", str(tmp_path / "mypy-cache"), "--no-error-summary", *args])
    return status, [line for line in (out + err).splitlines() if line.strip()]


def test_the_package_passes_mypy_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SRC)
    status, lines = _mypy(tmp_path, "-p", "polyloop_assembly")
    assert status == 0, "\n".join(lines)


def test_a_user_script_passes_mypy_strict(tmp_path: Path) -> None:
    status, lines = _mypy(tmp_path, str(HERE / "typing" / "user_script.py"))
    assert status == 0, "\n".join(lines)


def test_mistakes_are_caught(tmp_path: Path) -> None:
    script = HERE / "typing" / "misspelt.py"
    status, lines = _mypy(tmp_path, str(script))
    assert status == 1
    want = {i for i, line in enumerate(script.read_text().splitlines(), 1) if "# E:" in line}
    got = {int(m.group(1)) for m in (re.match(r".*misspelt\.py:(\d+): error", line) for line in lines) if m}
    assert got == want, "\n".join(lines)


def test_the_generated_types_are_the_hand_written_ones(tmp_path: Path) -> None:
    status, lines = _mypy(tmp_path, str(HERE / "typing" / "shapes_0_2.py"))
    assert status == 0, "\n".join(lines)


def test_caching_mistakes_are_caught_with_their_codes(tmp_path: Path) -> None:
    """A misspelt report key, one request where the list belongs, a camelCase option, a provider that is none:
    each marked line gets an error of its code (``# E: [code]``), and no other line any."""
    script = HERE / "typing" / "caching_mistakes.py"
    status, lines = _mypy(tmp_path, str(script))
    assert status == 1
    want = {}
    for i, line in enumerate(script.read_text().splitlines(), 1):
        m = re.search(r"# E: \[([a-z-]+)\]", line)
        if m:
            want[i] = m.group(1)
    got: dict[int, set[str]] = {}
    for line in lines:
        m = re.match(r".*caching_mistakes\.py:(\d+): error: .*\[([a-z-]+)\]$", line)
        if m:
            got.setdefault(int(m.group(1)), set()).add(m.group(2))
    assert set(got) == set(want), "\n".join(lines)
    for at, code in want.items():
        assert code in got[at], "line %d: want [%s], got %s\n%s" % (at, code, got[at], "\n".join(lines))
