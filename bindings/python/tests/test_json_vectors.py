"""The shared JSON-text vectors (testdata/json-vectors; rules in its README.md)
through ``assemble_json_bytes`` and ``assemble_json``.

The Go runners are ``internal/testing/hostvec/jsontext.go`` and
``host-test/json_test.go``; this is their port:

- each case's text as bytes: an ok case gives the expected response bytes
  exactly; an error case a canonical error response with the expected code
  and path (a syntax error's message starts ``invalid JSON at byte``);
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
from typing import Any, Dict, List, NamedTuple, Optional

import msgpack
import pytest

import polyloop_assembly as pa

from conftest import REPO
from test_vectors import _b64, _check_keys, _no_duplicates, decode_error_response, describe_mismatch

JSON_VECTORS_DIR = REPO / "testdata" / "json-vectors"
FILE_KEYS = {"description", "cases"}
CASE_KEYS = {"name", "description", "request", "msgpack", "response", "error", "syntax"}
ERROR_KEYS = {"code", "path"}
SYNTAX_PREFIX = "invalid JSON at byte "


class JSONCase(NamedTuple):
    file: str
    name: str
    description: str
    text: bytes
    msgpack: Optional[bytes]  # None exactly for a syntax error
    response: Optional[bytes]  # the exact response of an ok case
    error: Optional[Dict[str, str]]
    syntax: bool


def load_json_vectors() -> List[JSONCase]:
    """Every *.json of testdata/json-vectors, in name order; unknown keys,
    repeated names and inconsistent cases are errors (hostvec.LoadJSON's rules)."""
    import json

    files = sorted(JSON_VECTORS_DIR.glob("*.json"))
    if not files:
        raise FileNotFoundError("no JSON-text vectors in %s: run `make vectors`" % JSON_VECTORS_DIR)
    out: List[JSONCase] = []
    seen: Dict[str, str] = {}
    for f in files:
        doc = json.loads(f.read_text(encoding="utf-8"), object_pairs_hook=_no_duplicates)
        _check_keys(doc, FILE_KEYS, f.name)
        for c in doc["cases"]:
            name = c.get("name")
            where = "%s/%s" % (f.name, name)
            _check_keys(c, CASE_KEYS, where)
            if name in seen:
                raise ValueError("%s: case name also in %s" % (where, seen[name]))
            seen[name] = f.name
            if ("response" in c) == ("error" in c):
                raise ValueError("%s: give exactly one of response and error" % where)
            syntax = c.get("syntax", False)
            if syntax is not (c.get("msgpack") is None):
                raise ValueError("%s: a syntax-error case has no msgpack, every other case has one" % where)
            err = c.get("error")
            if err is not None:
                _check_keys(err, ERROR_KEYS, where + ".error")
                if syntax and (err["code"], err["path"]) != ("malformed_request", ""):
                    raise ValueError('%s: a syntax error is malformed_request at ""' % where)
            out.append(JSONCase(
                file=f.name,
                name=name,
                description=c.get("description", ""),
                text=_b64(c["request"], where + ": request"),
                msgpack=_b64(c["msgpack"], where + ": msgpack") if "msgpack" in c else None,
                response=_b64(c["response"], where + ": response") if "response" in c else None,
                error=err,
                syntax=syntax,
            ))
    return out


CASES = load_json_vectors()
IDS = ["%s/%s" % (c.file[: -len(".json")], c.name) for c in CASES]


def check(c: JSONCase, got: bytes) -> None:
    """The case's expectation (the README's "Running them")."""
    if c.response is not None:
        assert got == c.response, "%s\n%s" % (c.description, describe_mismatch(got, c.response))
        return
    assert c.error is not None
    try:
        code, path, message, _ = decode_error_response(got)
    except ValueError as e:
        pytest.fail("%s: want %s at %r; not a canonical error response: %s\n%s" % (
            c.description, c.error["code"], c.error["path"], e, got[:200].hex(" ")))
    assert (code, path) == (c.error["code"], c.error["path"]), "%s (message %r)" % (c.description, message)
    assert message != ""
    if c.syntax:
        assert message.startswith(SYNTAX_PREFIX), message


def _as_str(text: bytes) -> Optional[str]:
    try:
        return text.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_json_vectors(c: JSONCase) -> None:
    got = pa.assemble_json_bytes(c.text)
    check(c, got)
    assert pa.assemble_json_bytes(bytearray(c.text)) == got
    assert pa.assemble_json_bytes(memoryview(c.text)) == got
    s = _as_str(c.text)
    if s is not None:
        assert pa.assemble_json_bytes(s) == got, "the str gives other bytes than its UTF-8 (surrogatepass)"
    # assemble_json: the decoded response, or its error raised
    want = msgpack.unpackb(got, raw=False, unicode_errors="surrogatepass")
    if want["ok"]:
        assert pa.assemble_json(c.text) == want
        if s is not None:
            assert pa.default_assembler().assemble_json(s) == want
    else:
        with pytest.raises(pa.AssemblyError) as info:
            pa.assemble_json(c.text if s is None else s)
        e = want["error"]
        assert (info.value.code, info.value.path, info.value.message) == (e["code"], e["path"], e["message"])
    # a valid JSON text says the msgpack request: the same bytes as assemble_bytes of it
    if c.msgpack is not None:
        assert pa.assemble_bytes(c.msgpack) == got


def test_json_vectors_run_as_str() -> None:
    """Every case but the raw invalid UTF-8 ones also ran as a str, lone
    surrogates included (raw ED A0 80 and the like decode with surrogatepass)."""
    as_bytes_only = [c.name for c in CASES if _as_str(c.text) is None]
    assert len(as_bytes_only) <= 8, as_bytes_only
    lone = [c.name for c in CASES if any(0xD800 <= ord(ch) <= 0xDFFF for ch in _as_str(c.text) or "")]
    assert lone, "no case carries a raw lone surrogate that a str can hold"
    assert len(CASES) >= 100


def test_json_vectors_cover_the_verdicts() -> None:
    """The themes the README lists are all there (a vector file that went
    missing would otherwise pass silently)."""
    assert {c.file for c in CASES} >= {"duplicates.json", "numbers.json", "strings.json", "syntax.json",
                                        "nesting.json", "ok.json", "toplevel.json"}
    codes = {c.error["code"] for c in CASES if c.error is not None}
    assert {"duplicate_key", "malformed_request", "invalid_utf8"} <= codes
    assert sum(c.syntax for c in CASES) >= 20


# --- the command-line tool: the native Go reader, byte for byte -----------------


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = shutil.which("go")
    if go is None or not (REPO / "cmd" / "polyloop-assemble").is_dir():
        pytest.skip("the command-line tool is built from the Go source: go or the checkout is missing")
    exe = tmp_path_factory.mktemp("cli") / "polyloop-assemble"
    subprocess.run([go, "build", "-o", str(exe), "./cmd/polyloop-assemble"], cwd=REPO, check=True,
                   env=dict(os.environ, CGO_ENABLED="0"))
    return exe


def test_json_vectors_equal_the_cli(cli: Path) -> None:
    """Each case's bytes through the CLI (``--in json --out msgpack``) and
    through the module: identical, syntax-error messages included. An input of
    white space only is the CLI's usage error ("the input is empty"), not a
    request: those cases are compared with the vectors only."""
    compared = 0
    for c in CASES:
        p = subprocess.run([str(cli), "--in", "json", "--out", "msgpack"], input=c.text, capture_output=True)
        if not c.text.strip(b" \t\r\n"):
            assert p.returncode == 2 and b"empty" in p.stderr, c.name
            continue
        assert p.returncode in (0, 1), "%s: %s" % (c.name, p.stderr[-500:])
        got = pa.assemble_json_bytes(c.text)
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
