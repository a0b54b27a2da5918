"""Lines are lines (issue 34, item 1): a JSON-lines file whose requests hold U+2028, U+2029, U+0085, a CR and
a CRLF inside their strings, a CRLF line end, a raw CR (not JSON) and a blank line gives one row per "\\n"
line, numbered from 1, the same rows from the serial way, ``assemble_json_many`` and the CLI's ``--batch``
(Ray and ``datasets``: tests_data/test_lines_typed.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, List, Tuple

import msgpack
import pytest

import polyloop_assembly as pa
from polyloop_assembly import data

REPO = Path(__file__).resolve().parents[3]


def _request(text: str) -> Any:
    return {
        "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "goal " + text}]}],
        "steps": [{"raw_output": text, "observation": "seen: " + text}],
        "observation_template": "Observation: {observation}",
    }


def tricky_lines() -> List[Tuple[str, bool]]:
    """The file's lines (without their "\\n") and whether each is a valid request: the oracle."""
    raw_cr = json.dumps(_request("a\rb")).replace("\\r", "\r")  # a raw CR in a string: not JSON
    return [
        (json.dumps(_request("line\u2028sep"), ensure_ascii=False), True),
        (json.dumps(_request("para\u2029sep"), ensure_ascii=False), True),
        (json.dumps(_request("next\x85line"), ensure_ascii=False), True),
        (json.dumps(_request("escaped\r\nCRLF and\rCR")), True),
        (json.dumps(_request("crlf line end"), ensure_ascii=False) + "\r", True),  # a CRLF file's line
        (raw_cr, False),
        ("", False),  # a blank line: a row, an error as the CLI answers it
        (json.dumps(_request("all\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e"), ensure_ascii=False), True),
    ]


@pytest.fixture()
def jsonl(tmp_path: Path) -> Path:
    p = tmp_path / "tricky.jsonl"
    p.write_bytes("".join(line + "\n" for line, _ in tricky_lines()).encode("utf-8"))
    return p


def test_str_splitlines_is_not_the_file_s_lines(jsonl: Path) -> None:
    """What read_text and text-mode readers do: more rows than lines (the defect this file is about)."""
    text = jsonl.read_text(encoding="utf-8")
    assert len(text.splitlines()) > len(tricky_lines())
    with open(jsonl, encoding="utf-8") as f:  # universal newlines: the raw CR ends a line
        assert len(list(f)) > len(tricky_lines())


def test_jsonl_lines_numbers_every_line(jsonl: Path) -> None:
    rows = list(data.jsonl_lines(jsonl, chunk_bytes=7))  # chunks cut lines and characters
    assert [r["line"] for r in rows] == list(range(1, len(tricky_lines()) + 1))
    assert [r["text"] for r in rows] == [line for line, _ in tricky_lines()]
    assert list(data.jsonl_lines(jsonl)) == rows


def test_last_line_without_newline_and_non_utf8(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_bytes(b"a\n\nb")
    assert list(data.jsonl_lines(p)) == [{"line": 1, "text": "a"}, {"line": 2, "text": ""}, {"line": 3, "text": "b"}]
    p.write_bytes(b"{}\n\xff\n")
    with pytest.raises(ValueError, match="line 2 is not UTF-8"):
        list(data.jsonl_lines(p))


def serial_rows(path: Path) -> Any:
    """The serial way: the lines, rendered one after another."""
    lines = list(data.jsonl_lines(path))
    cols = data.render_columns([r["text"] for r in lines], pa.Assembler(max_instances=1), response=True)
    return [r["line"] for r in lines], cols


def test_serial_rows_are_the_lines(jsonl: Path) -> None:
    ids, cols = serial_rows(jsonl)
    assert ids == list(range(1, len(tricky_lines()) + 1))
    assert cols["ok"] == [ok for _, ok in tricky_lines()]
    for k, (line, ok) in enumerate(tricky_lines()):
        if ok:  # the request the line holds, as Python reads it, assembles to the row's messages
            assert cols["messages"][k] == pa.assemble(json.loads(line))["messages"]
        else:
            assert cols["error_code"][k] == "malformed_request"


def test_assemble_json_many_gives_the_same_rows(jsonl: Path) -> None:
    _, cols = serial_rows(jsonl)
    with open(jsonl, encoding="utf-8", newline="\n") as f:  # lines end at "\n" alone
        got = list(pa.assemble_json_many(f, workers=2))
    assert len(got) == len(cols["ok"])
    for k, g in enumerate(got):
        if cols["ok"][k]:
            assert g["messages"] == cols["messages"][k]
        else:
            assert isinstance(g, pa.AssemblyError) and (g.code, g.path) == (cols["error_code"][k], cols["error_path"][k])


def _cli() -> Path:
    exe = Path(os.environ.get("POLYLOOP_CLI", REPO / "build" / "bin" / "polyloop-assemble"))
    if not exe.exists():
        pytest.skip("the CLI is not built (make cli)")
    return exe


def test_cli_batch_gives_the_same_rows(jsonl: Path) -> None:
    _, cols = serial_rows(jsonl)
    out = subprocess.run([str(_cli()), "--batch", "--jobs", "2", "--out", "msgpack", str(jsonl)], capture_output=True)
    assert out.returncode == 1, out.stderr[-2000:]  # 1: some requests are errors
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(out.stdout)
    responses = list(unpacker)
    assert len(responses) == len(cols["ok"])
    for k, resp in enumerate(responses):
        assert resp["ok"] == cols["ok"][k]
        if resp["ok"]:
            assert resp["messages"] == cols["messages"][k]
        else:
            assert (resp["error"]["code"], resp["error"]["path"]) == (cols["error_code"][k], cols["error_path"][k])
