"""The documented Python runs as written, as doctests do (issue 45).

Every ```python block of README.md, docs/*.md and the binding READMEs runs
as its reader runs it, a script in a Python process of its own (a block that
starts Ray must not leave Ray's crash handlers in the test process, where
they take the module's traps for crashes), from a directory linking the repository root's
entries (so a file it writes lands in a temporary directory), unless the
line just before its fence is ``<!-- docs-test: skip (why) -->``: a
fragment of a larger program, or one that needs a service or a package
the tests do not install. Skipped blocks are listed with their reasons.
What a block prints is checked against what the doc says it prints: the
``# `` lines after a ``# prints`` line, or the trailing comment of a
``print(...)`` line. cmd/polyloop-assemble/docs_test.go runs the shell
commands the same way.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

SKIP = re.compile(r"^<!--\s*docs-test:\s*skip\s*\((.+)\)\s*-->$")
# A block that runs where an optional package is installed (Ray: make python.data-deps), skipped elsewhere.
NEEDS = re.compile(r"^<!--\s*docs-test:\s*needs\s+([A-Za-z0-9_]+)\s*\((.+)\)\s*-->$")
FENCE = re.compile(r"^\s*```\s*([A-Za-z0-9_-]*)")


def doc_files() -> list[Path]:
    docs = sorted((REPO / "docs").glob("*.md"))
    assert docs, "no docs/*.md"
    return [REPO / "README.md", *docs, REPO / "bindings/python/README.md", REPO / "bindings/js/README.md"]


def python_blocks() -> list[tuple[str, str, str | None]]:
    """(where, code, why skipped or None) for each ```python block."""
    blocks = []
    for path in doc_files():
        lines = path.read_text(encoding="utf-8").split("\n")
        prev, i = "", 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if not m:
                if lines[i].strip():
                    prev = lines[i].strip()
                i += 1
                continue
            start, lang = i + 1, m.group(1)
            end = i + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            if lang == "python":
                skip, needs = SKIP.match(prev), NEEDS.match(prev)
                where = "%s:%d" % (path.relative_to(REPO), start)
                why = skip.group(1) if skip else "only with %s (%s)" % needs.groups() if needs else None
                blocks.append((where, "\n".join(lines[i + 1 : end]) + "\n", why))
            prev, i = lines[i].strip(), end + 1
    return blocks


def expected_output(code: str) -> str | None:
    """What the block says it prints, or None if it does not say."""
    lines = code.split("\n")
    for k, line in enumerate(lines):
        if line.strip() == "# prints":
            out = []
            for rest in lines[k + 1 :]:
                if not rest.startswith("# "):
                    break
                out.append(rest[2:])
            return "\n".join(out) + "\n"
    printed = [re.match(r"^print\(.*\)\s+#\s?(.*)$", line) for line in lines]
    said = [m.group(1) for m in printed if m]
    return "\n".join(said) + "\n" if said else None


BLOCKS = python_blocks()


def test_blocks_found() -> None:
    run = [w for w, _, skip in BLOCKS if skip is None or skip.startswith("only with ")]
    skipped = ["%s (%s)" % (w, skip) for w, _, skip in BLOCKS if skip is not None]
    print("documented Python blocks: %d run, %d skipped:\n  %s" % (len(run), len(skipped), "\n  ".join(skipped)))
    assert run, "no runnable Python block found"


@pytest.mark.parametrize(("where", "code", "skip"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_block_runs(where: str, code: str, skip: str | None, tmp_path: Path) -> None:
    if skip is not None:
        if skip.startswith("only with ray "):  # started on the data suite's 2-CPU cluster, not here (its own Ray costs a minute)
            pytest.skip("run by tests_data/test_docs_ray.py on make test.data's 2-CPU Ray cluster")
        if skip.startswith("only with "):  # a docs-test: needs block
            pytest.importorskip(skip.split()[2], reason=skip)
        else:
            pytest.skip(skip)
    for entry in REPO.iterdir():
        if entry.name != ".git":
            (tmp_path / entry.name).symlink_to(entry)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))  # the tests' package and conftest's paths
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, "%s failed:\n%s" % (where, run.stderr[-4000:])
    want = expected_output(code)
    if want is not None:
        assert run.stdout == want, "%s prints what its doc does not say" % where
