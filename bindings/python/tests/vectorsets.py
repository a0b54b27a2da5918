"""The shared vector sets of testdata/ for the Python tests: one loader for
every set, the error check through the binding's own decoder, and the reader
that turns a vector's msgpack into the Python value a user would write.

The files' shape is checked once, where they are written and committed
(testdata/gen/schema.py, run by the generators and the reference suite), so
the loader only decodes them; and host-test proves that every engine gives
native Go's bytes, so an error response is read here as users read it: the
:class:`AssemblyError` the API raises for it.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import polyloop_assembly as pa
from polyloop_assembly import _crossing

from conftest import REPO

TESTDATA = REPO / "testdata"
_BASE64_KEYS = ("request", "response", "msgpack")  # base64 wherever they are strings (the formats' READMEs)


@dataclass(frozen=True)
class Case:
    """One case of a vector set, its base64 values decoded."""

    file: str
    name: str
    description: str
    request: Any  # bytes (msgpack or JSON text), or the request dict of a prompt vector
    response: Optional[bytes] = None  # the exact response of an ok case
    error: Optional[Dict[str, Any]] = None  # code, path (and offset for invalid_template)
    msgpack: Optional[bytes] = None  # json-vectors: the msgpack the text says
    syntax: bool = False  # json-vectors: a JSON syntax error
    steps: Tuple[Dict[str, Any], ...] = ()  # prompt-vectors: raw_output, observation, response or error

    @property
    def id(self) -> str:
        return "%s/%s" % (self.file[: -len(".json")], self.name)


def _decoded(obj: Dict[str, Any]) -> Dict[str, Any]:
    return {k: base64.b64decode(v) if k in _BASE64_KEYS and isinstance(v, str) else v for k, v in obj.items()}


def load(set_name: str) -> List[Case]:
    """Every case of testdata/<set_name>/*.json (vectors, json-vectors,
    prompt-vectors), files in name order."""
    files = sorted((TESTDATA / set_name).glob("*.json"))
    if not files:
        raise FileNotFoundError("no vector files in testdata/%s: run `make vectors`" % set_name)
    out = []
    for f in files:
        for c in json.loads(f.read_text(encoding="ascii"))["cases"]:
            fields = _decoded(c)
            fields["steps"] = tuple(_decoded(s) for s in c.get("steps", ()))
            out.append(Case(file=f.name, **fields))
    return out


def error_of(response: bytes) -> pa.AssemblyError:
    """The AssemblyError the binding raises for these response bytes."""
    try:
        _crossing.decode(pa.default_assembler().pool, op=0, answer=response)  # what assemble() does with the response bytes
    except pa.AssemblyError as e:
        return e
    raise AssertionError("an ok response where an error was expected: %s" % response[:200].hex(" "))


def check_error(e: pa.AssemblyError, want: Dict[str, Any], what: str) -> None:
    """The error has the vector's code, path and offset (None unless the vector
    gives one) and a message."""
    got = (e.code, e.path, e.offset)
    assert got == (want["code"], want["path"], want.get("offset")), "%s (message %r)" % (what, e.message)
    assert e.message != "", "%s: empty error message" % what


def describe_mismatch(got: bytes, want: bytes) -> str:
    """Where two byte strings first differ."""
    i = 0
    while i < len(got) and i < len(want) and got[i] == want[i]:
        i += 1
    start = max(i - 16, 0)
    return "responses differ at byte %d (got %d bytes, want %d)\n got  ...%s\n want ...%s" % (
        i,
        len(got),
        len(want),
        got[start : start + 48].hex(" "),
        want[start : start + 48].hex(" "),
    )


# --- msgpack -> the Python value a user would write ----------------------------


class Unrepresentable(Exception):
    """The request bytes have no Python value that encodes to the same request."""


class _Ext:
    """An object msgpack cannot pack (the binding sends it as an opaque ext)."""


class _PyReader:
    """Msgpack bytes → the Python value a user would write. Independent of any
    msgpack package and of the binding's encoder and decoder.

    Representable: nil, bool, int, float, bin (bytes), ext (an object msgpack
    cannot pack), str of valid UTF-8 or of 3-byte-encoded surrogates (Python
    keeps lone surrogates, even two in a row), arrays (list; tuple as a map
    key), maps (dict) whose keys are distinct for Python.
    Not representable: duplicate keys (also 1 / 1.0 / True, which Python
    merges), other invalid UTF-8, 0xc1, truncation, trailing bytes, map keys
    that are maps.
    """

    def __init__(self, b: bytes) -> None:
        self.b = b
        self.pos = 0

    def take(self, n: int) -> bytes:
        if n > len(self.b) - self.pos:
            raise Unrepresentable("truncated")
        out = self.b[self.pos : self.pos + n]
        self.pos += n
        return out

    def uint(self, n: int) -> int:
        return int.from_bytes(self.take(n), "big")

    def value(self) -> Any:
        b = self.take(1)[0]
        if b <= 0x7F:
            return b
        if b >= 0xE0:
            return b - 0x100
        if 0x80 <= b <= 0x8F:
            return self.map(b & 0x0F)
        if 0x90 <= b <= 0x9F:
            return self.array(b & 0x0F)
        if 0xA0 <= b <= 0xBF:
            return self.str(b & 0x1F)
        if b == 0xC0:
            return None
        if b in (0xC2, 0xC3):
            return b == 0xC3
        if b in (0xC4, 0xC5, 0xC6):
            return self.take(self.uint(1 << (b - 0xC4)))
        if b in (0xC7, 0xC8, 0xC9):
            self.take(1 + self.uint(1 << (b - 0xC7)))
            return _Ext()
        if b in (0xD4, 0xD5, 0xD6, 0xD7, 0xD8):
            self.take(1 + (1 << (b - 0xD4)))
            return _Ext()
        if b in (0xCA, 0xCB):
            return struct.unpack(">f" if b == 0xCA else ">d", self.take(4 if b == 0xCA else 8))[0]
        if 0xCC <= b <= 0xCF:
            return self.uint(1 << (b - 0xCC))
        if 0xD0 <= b <= 0xD3:
            return int.from_bytes(self.take(1 << (b - 0xD0)), "big", signed=True)
        if b in (0xD9, 0xDA, 0xDB):
            return self.str(self.uint(1 << (b - 0xD9)))
        if b in (0xDC, 0xDD):
            return self.array(self.uint(2 if b == 0xDC else 4))
        if b in (0xDE, 0xDF):
            return self.map(self.uint(2 if b == 0xDE else 4))
        raise Unrepresentable("type byte %#x" % b)

    def str(self, n: int) -> str:
        raw = self.take(n)
        try:
            s = raw.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise Unrepresentable("invalid UTF-8 that is not a 3-byte surrogate") from None
        if s.encode("utf-8", "surrogatepass") != raw:  # pragma: no cover - defensive
            raise Unrepresentable("str does not round-trip")
        return s

    def array(self, n: int) -> list:
        return [self.value() for _ in range(n)]

    def map(self, n: int) -> dict:
        out: Dict[Any, Any] = {}
        for _ in range(n):
            k = self.value()
            if isinstance(k, list):
                k = tuple(k)
            if isinstance(k, float) and math.isnan(k):
                raise Unrepresentable("NaN key")
            try:
                hash(k)
            except TypeError:
                raise Unrepresentable("a map key that is a map") from None
            if k in out:
                raise Unrepresentable("duplicate keys (for Python)")
            out[k] = self.value()
        return out


def request_to_python(b: bytes) -> Any:
    """The Python value of msgpack bytes (a request, or an expected response)."""
    r = _PyReader(b)
    v = r.value()
    if r.pos != len(b):
        raise Unrepresentable("trailing bytes")
    return v
