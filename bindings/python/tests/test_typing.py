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
