#!/usr/bin/env python3
"""Fails when a line of Markdown prose is longer than MAX characters (code points).

Prose is every line of the Markdown files git tracks but: fenced code blocks, table rows, link reference definitions
(``[name]: https://...``, where a long address goes) and files generated whole (those that say "do not edit" in their
first lines: BENCHMARKS.md). A long link in a sentence is written as a reference link. Usage (make check runs it):
    python3 scripts/check_prose_width.py [FILE.md ...]     (default: every tracked *.md)
"""

from __future__ import annotations

import re
import subprocess
import sys

MAX = 120
FENCE = re.compile(r"^\s*(```|~~~)")
LINK_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+\S+")
GENERATED = re.compile(r"do not edit", re.IGNORECASE)


def long_lines(path: str, text: str) -> list[str]:
    """``path:line: N characters`` for each prose line of text over MAX; none for a generated file."""
    lines = text.split("\n")
    if any(GENERATED.search(line) for line in lines[:5]):
        return []
    out, fenced = [], False
    for n, line in enumerate(lines, 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or line.lstrip().startswith("|") or LINK_DEFINITION.match(line):
            continue
        if len(line) > MAX:
            out.append("%s:%d: %d characters (at most %d)" % (path, n, len(line), MAX))
    return out


def main(argv: list[str]) -> int:
    paths = argv or subprocess.run(["git", "ls-files", "*.md"], check=True, capture_output=True, text=True).stdout.split()
    bad = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            bad += long_lines(path, f.read())
    for line in bad:
        print("check-prose-width: " + line)
    if bad:
        print(
            "check-prose-width: %d Markdown prose line(s) over %d characters: rewrap them "
            "(a long address goes in a reference link: [text][name], then [name]: URL on its own line)" % (len(bad), MAX)
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
