"""The words a Python user meets: an error names Python's spelling of what
was passed (None, JSON text) and what to call instead, and the shipped
package cites only what ships (docstrings, comments, README)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import polyloop_assembly as pa

PKG = Path(__file__).resolve().parents[1]  # bindings/python
REQUEST = {"observation_template": "{observation}", "steps": [{"raw_output": "a", "observation": "b"}]}
TEXT = json.dumps(REQUEST)


@pytest.mark.parametrize(
    "call",
    [pa.assemble, lambda r: pa.Assembler(max_instances=1).assemble(r), lambda r: pa.default_assembler().prompt(r)],
    ids=["assemble", "Assembler.assemble", "prompt"],
)
def test_json_text_to_assemble_names_assemble_json(call) -> None:
    with pytest.raises(pa.AssemblyError) as info:
        call(TEXT)
    e = info.value
    assert (e.code, e.path) == ("malformed_request", "")
    assert e.message.startswith("the request must be a dict, found a str;")
    assert "assemble_json (Python)" in e.message
    assert pa.assemble_json(TEXT)["ok"] is True  # the advice holds


@pytest.mark.parametrize("data", [TEXT.encode(), b"\n" + TEXT.encode(), bytearray(TEXT.encode())])
def test_json_bytes_to_assemble_bytes_names_assemble_json(data) -> None:
    error = pa._codec.decode(pa.assemble_bytes(data))["error"]
    assert (error["code"], error["path"]) == ("malformed_request", "")
    assert "assemble_json (Python)" in error["message"]


def test_a_str_to_assemble_bytes_names_assemble_json() -> None:
    with pytest.raises(TypeError, match=r"not str; to assemble JSON text, call assemble_json\(text\)"):
        pa.assemble_bytes(TEXT)  # type: ignore[arg-type]
    with pytest.raises(TypeError) as info:
        pa.assemble_bytes(1)  # type: ignore[arg-type]
    assert "assemble_json" not in str(info.value)


@pytest.mark.parametrize(
    "request_, path",
    [
        ({"observation_template": None}, "observation_template"),
        ({"observation_template": "{observation}", "steps": [{"raw_output": None, "observation": "b"}]}, "steps[0].raw_output"),
        ({"observation_template": "{observation}", "run_messages": [None]}, "run_messages[0]"),
    ],
)
def test_none_is_called_none(request_, path) -> None:
    with pytest.raises(pa.AssemblyError) as info:
        pa.assemble(request_)
    assert (info.value.code, info.value.path) == ("malformed_request", path)
    assert info.value.message.endswith("found None")


def test_json_null_is_called_none() -> None:
    """A Python user reads Python's words (json.loads makes null None); the bytes keep the wire's."""
    with pytest.raises(pa.AssemblyError) as info:
        pa.assemble_json('{"observation_template": null}')
    assert info.value.message.endswith("found None")
    assert b"null in JSON" in pa.assemble_json_bytes('{"observation_template": null}')


def _shipped_texts():
    """The package's shipped text files (the wheel's .py files and its README,
    the wheel's long description), whitespace and comment markers collapsed."""
    files = sorted((PKG / "src" / "polyloop_assembly").glob("*.py")) + [PKG / "README.md"]
    for f in files:
        text = re.sub(r"\s*\n\s*(?:#:?\s*)?", " ", f.read_text(encoding="utf-8"))
        yield f.name, text


def test_spec_citations_say_where_the_spec_is() -> None:
    """docs/SPEC.md is not in the wheel: every mention links it or says it is
    in the source repository."""
    bad = []
    for name, text in _shipped_texts():
        for m in re.finditer(r"docs/SPEC\.md", text):
            linked = text[max(0, m.start() - 60) : m.start()].endswith("github.com/polyloop/assembly/blob/main/")
            if not linked and "in the source repository" not in text[m.end() : m.end() + 60]:
                bad.append("%s: ...%s" % (name, text[max(0, m.start() - 30) : m.end() + 60]))
    assert not bad, "\n".join(bad)


def test_the_readme_says_where_the_cli_comes_from() -> None:
    """The wheel ships ``python -m polyloop_assembly``, not ``polyloop-assemble``:
    each paragraph that names that CLI says how to get it."""
    paragraphs = (PKG / "README.md").read_text(encoding="utf-8").split("\n\n")
    naming = [p for p in paragraphs if "polyloop-assemble" in p]
    assert naming
    for p in naming:
        assert "go install github.com/polyloop/assembly/cmd/polyloop-assemble" in p or "not in this package" in p, p
