"""The shared JSON-text vectors (testdata/json-vectors; rules in its README.md)
through ``assemble_json_bytes`` and ``assemble_json``.

The Go runners are ``internal/testing/hostvec/jsontext.go`` and
``host-test/json_test.go``; here:

- each case's text as bytes: an ok case gives the expected response bytes
  exactly; an error case the AssemblyError (the binding's own decoder) with
  the expected code and path (a syntax error's message starts ``invalid JSON
  at byte``);
- the same text as a ``str`` (decoded with ``surrogatepass``, which every
  case but the raw invalid UTF-8 ones allows): byte-identical to the bytes
  answer, so a lone surrogate reaches the module as the command-line tool
  reads it;
- byte for byte the command-line tool's answer (``--in json --out msgpack``,
  the native Go reader), syntax-error messages included, where ``go`` can
  build it;
- ``assemble_json`` raises the error of the response, or returns its decoded
  dict.
"""

from __future__ import annotations

import os
import subprocess
import shutil
from pathlib import Path
from typing import Any, Dict, Optional

import msgpack
import pytest

import polyloop_assembly as pa
from polyloop_assembly._consts import CALL_ASSEMBLE_JSON, WORDS_PYTHON

from conftest import REPO
from vectorsets import Case, check_error, describe_mismatch, error_of, load

SYNTAX_PREFIX = "invalid JSON at byte "
CASES = load("json-vectors")
IDS = [c.id for c in CASES]


def check(c: Case, got: bytes) -> None:
    """The case's expectation (the README's "Running them")."""
    if c.response is not None:
        assert got == c.response, "%s\n%s" % (c.description, describe_mismatch(got, c.response))
        return
    assert c.error is not None
    e = error_of(got)
    check_error(e, c.error, c.description)
    if c.syntax:
        assert e.message.startswith(SYNTAX_PREFIX), e.message


def _as_str(text: bytes) -> Optional[str]:
    try:
        return text.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_json_vectors(c: Case) -> None:
    got = pa.assemble_json_bytes(c.request)
    check(c, got)
    assert pa.assemble_json_bytes(bytearray(c.request)) == got
    assert pa.assemble_json_bytes(memoryview(c.request)) == got
    s = _as_str(c.request)
    if s is not None:
        assert pa.assemble_json_bytes(s) == got, "the str gives other bytes than its UTF-8 (surrogatepass)"
    # assemble_json: the decoded response, or its error raised
    want = msgpack.unpackb(got, raw=False, unicode_errors="surrogatepass")
    if want["ok"]:
        assert pa.assemble_json(c.request) == want
        if s is not None:
            assert pa.default_assembler().assemble_json(s) == want
    else:
        with pytest.raises(pa.AssemblyError) as info:
            pa.assemble_json(c.request if s is None else s)
        e = want["error"]
        assert (info.value.code, info.value.path) == (e["code"], e["path"])
        # the message in Python's words: the core's for these bytes under WORDS_PYTHON
        py = msgpack.unpackb(pa.default_assembler()._pool.call(bytes(c.request), CALL_ASSEMBLE_JSON | WORDS_PYTHON), raw=False)
        assert info.value.message == py["error"]["message"]
    # a valid JSON text says the msgpack request: the same bytes as assemble_bytes of it
    if c.msgpack is not None:
        assert pa.assemble_bytes(c.msgpack) == got


def test_json_vectors_run_as_str() -> None:
    """Every case but the raw invalid UTF-8 ones also ran as a str, lone
    surrogates included (raw ED A0 80 and the like decode with surrogatepass)."""
    as_bytes_only = [c.name for c in CASES if _as_str(c.request) is None]
    assert len(as_bytes_only) <= 8, as_bytes_only
    lone = [c.name for c in CASES if any(0xD800 <= ord(ch) <= 0xDFFF for ch in _as_str(c.request) or "")]
    assert lone, "no case carries a raw lone surrogate that a str can hold"
    assert len(CASES) >= 100


def test_json_vectors_cover_the_verdicts() -> None:
    """The themes the README lists are all there (a vector file that went
    missing would otherwise pass silently)."""
    assert {c.file for c in CASES} >= {
        "duplicates.json",
        "numbers.json",
        "strings.json",
        "syntax.json",
        "nesting.json",
        "ok.json",
        "toplevel.json",
    }
    codes = {c.error["code"] for c in CASES if c.error is not None}
    assert {"duplicate_key", "malformed_request", "invalid_utf8"} <= codes
    assert sum(c.syntax for c in CASES) >= 20


# --- the command-line tool: the native Go reader, byte for byte -----------------


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("POLYLOOP_CLI"):  # built once by make for every suite that runs it
        return Path(os.environ["POLYLOOP_CLI"])
    go = shutil.which("go")
    if go is None or not (REPO / "cmd" / "polyloop-assemble").is_dir():
        pytest.skip("the command-line tool is built from the Go source: go or the checkout is missing")
    exe = tmp_path_factory.mktemp("cli") / "polyloop-assemble"
    subprocess.run(
        [go, "build", "-o", str(exe), "./cmd/polyloop-assemble"], cwd=REPO, check=True, env=dict(os.environ, CGO_ENABLED="0")
    )
    return exe


def test_json_vectors_equal_the_cli(cli: Path) -> None:
    """Each case's bytes through the CLI (``--in json --out msgpack``) and
    through the module: identical, syntax-error messages included. An input of
    white space only is the CLI's usage error ("the input is empty"), not a
    request: those cases are compared with the vectors only."""
    compared = 0
    for c in CASES:
        p = subprocess.run([str(cli), "--in", "json", "--out", "msgpack"], input=c.request, capture_output=True)
        if not c.request.strip(b" \t\r\n"):
            assert p.returncode == 2 and b"empty" in p.stderr, c.name
            continue
        assert p.returncode in (0, 1), "%s: %s" % (c.name, p.stderr[-500:])
        got = pa.assemble_json_bytes(c.request)
        assert got == p.stdout, "%s: the module and the CLI differ\n%s" % (c.name, describe_mismatch(got, p.stdout))
        compared += 1
    assert compared >= len(CASES) - 3


# --- beyond the vectors ---------------------------------------------------------


def test_assemble_json_equals_assemble() -> None:
    req: Dict[str, Any] = {
        "run_messages": [{"role": "system", "content": [{"type": "text", "text": "\ufeffsys\x00"}]}],
        "injections": {"m": [{"entry_id": "e", "content": "c"}]},
        "steps": [{"raw_output": "r", "observation": "o 🙂"}],
        "observation_template": "{observation!r:>9}",
        "max_prompt_chars": 9007199254740993,
    }
    import json

    text = json.dumps(req, ensure_ascii=False)
    assert pa.assemble_json(text) == pa.assemble(req)  # type: ignore[arg-type]
    assert pa.assemble_json_bytes(text.encode()) == pa.assemble_bytes(msgpack.packb(req))
    asm = pa.Assembler(max_instances=1)
    assert asm.assemble_json(text) == pa.assemble(req)  # type: ignore[arg-type]


def test_assemble_json_takes_text_only() -> None:
    for bad in (None, 5, {"v": 1}, ["{}"]):
        with pytest.raises(TypeError, match="JSON text"):
            pa.assemble_json_bytes(bad)  # type: ignore[arg-type]


def test_assemble_json_lone_surrogate_in_a_str() -> None:
    """A str holding a lone surrogate (e.g. read with surrogateescape) goes in
    as its generalized UTF-8 bytes: invalid_utf8 at its path, as the CLI says
    for the same bytes and as assemble() says for the same dict."""
    text = '{"observation_template": "x\udce9{observation}"}'
    with pytest.raises(pa.AssemblyError) as info:
        pa.assemble_json(text)
    assert (info.value.code, info.value.path) == ("invalid_utf8", "observation_template")
    assert pa.assemble_json_bytes(text) == pa.assemble_json_bytes(text.encode("utf-8", "surrogatepass"))
    with pytest.raises(pa.AssemblyError) as again:
        pa.assemble({"observation_template": "x\udce9{observation}"})
    assert (again.value.code, again.value.path) == ("invalid_utf8", "observation_template")
