"""The shared vectors (testdata/vectors; rules in testdata/vectors/README.md).

A 1:1 port of ``core/vectors_test.go`` through ``assemble_bytes``, then the
same vectors through ``assemble`` wherever Python can express the request.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import typing
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import pytest

import polyloop_assembly as pa

from conftest import VECTORS_DIR

FILE_KEYS = {"description", "cases"}
CASE_KEYS = {"name", "description", "request", "response", "error"}
ERROR_KEYS = {"code", "path", "offset"}  # offset: invalid_template only


class Vector(NamedTuple):
    file: str
    name: str
    description: str
    request: bytes
    response: Optional[bytes]  # None for error cases
    error: Optional[Dict[str, Any]]


def _b64(s: Any, what: str) -> bytes:
    if not isinstance(s, str):
        raise ValueError("%s: not a base64 string" % what)
    try:
        return base64.b64decode(s, validate=True)
    except binascii.Error as e:
        raise ValueError("%s: %s" % (what, e)) from None


def _no_duplicates(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError("duplicate JSON key %r" % k)
        out[k] = v
    return out


def _check_keys(obj: Any, allowed: set, where: str) -> None:
    if not isinstance(obj, dict):
        raise ValueError("%s: not a JSON object" % where)
    unknown = set(obj) - allowed
    if unknown:
        raise ValueError("%s: unknown keys %s" % (where, sorted(unknown)))


def load_vectors() -> List[Vector]:
    """Rule 1: read every file; unknown keys, duplicate names and cases without
    exactly one of response / error are errors."""
    files = sorted(VECTORS_DIR.glob("*.json"))
    if not files:
        raise FileNotFoundError("no vector files in %s: run `make vectors`" % VECTORS_DIR)
    out: List[Vector] = []
    seen: Dict[str, str] = {}
    for f in files:
        vf = json.loads(f.read_text(encoding="utf-8"), object_pairs_hook=_no_duplicates)
        _check_keys(vf, FILE_KEYS, f.name)
        cases = vf.get("cases")
        if not isinstance(cases, list) or not cases:
            raise ValueError("%s: no cases" % f.name)
        for c in cases:
            _check_keys(c, CASE_KEYS, "%s/%s" % (f.name, c.get("name")))
            name = c.get("name")
            if name in seen:
                raise ValueError("%s: case name %r also in %s" % (f.name, name, seen[name]))
            seen[name] = f.name
            if ("response" in c) == ("error" in c):
                raise ValueError("%s/%s: a case has exactly one of response and error" % (f.name, name))
            err = c.get("error")
            if err is not None:
                _check_keys(err, ERROR_KEYS, "%s/%s.error" % (f.name, name))
            out.append(
                Vector(
                    file=f.name,
                    name=name,
                    description=c.get("description", ""),
                    request=_b64(c["request"], "%s/%s: request" % (f.name, name)),
                    response=_b64(c["response"], "%s/%s: response" % (f.name, name)) if "response" in c else None,
                    error=err,
                )
            )
    return out


VECTORS = load_vectors()
IDS = ["%s/%s" % (v.file[: -len(".json")], v.name) for v in VECTORS]


def describe_mismatch(got: bytes, want: bytes) -> str:
    """Where two byte strings first differ."""
    i = 0
    while i < len(got) and i < len(want) and got[i] == want[i]:
        i += 1
    start = max(i - 16, 0)
    return "responses differ at byte %d (got %d bytes, want %d)\n got  ...%s\n want ...%s" % (
        i, len(got), len(want), got[start:start + 48].hex(" "), want[start:start + 48].hex(" "))


# --- a tiny strict msgpack reader for error responses -------------------------
#
# It accepts only what a canonical error response may contain: maps, strs and
# non-negative ints in their shortest form, and bools.


class _MpReader:
    def __init__(self, b: bytes) -> None:
        self.b = b
        self.pos = 0

    def next(self, n: int) -> bytes:
        if n < 0 or n > len(self.b) - self.pos:
            raise ValueError("truncated at byte %d" % self.pos)
        out = self.b[self.pos:self.pos + n]
        self.pos += n
        return out

    def uint_n(self, n: int) -> int:
        return int.from_bytes(self.next(n), "big")

    def read_value(self) -> Any:
        """A str, int, bool or list of (key, value) pairs (a map in wire order)."""
        b = self.next(1)[0]
        if b <= 0x7F:
            return b
        if 0x80 <= b <= 0x8F:
            return self.read_map(b & 0x0F)
        if 0xA0 <= b <= 0xBF:
            return self.read_str(b & 0x1F)
        if b in (0xC2, 0xC3):
            return b == 0xC3
        if b in (0xCC, 0xCD, 0xCE, 0xCF):
            size = 1 << (b - 0xCC)
            v = self.uint_n(size)
            if (size > 1 and v < 1 << (8 * (size // 2))) or (size == 1 and v < 0x80):
                raise ValueError("int %d not in its shortest form" % v)
            return v
        if b in (0xD9, 0xDA, 0xDB):
            size = {0xD9: 1, 0xDA: 2, 0xDB: 4}[b]
            n = self.uint_n(size)
            if (size == 1 and n < 32) or (size > 1 and n < 1 << (8 * (size // 2))):
                raise ValueError("str header of length %d not in its shortest form" % n)
            return self.read_str(n)
        if b == 0xDE:
            n = self.uint_n(2)
            if n < 16:
                raise ValueError("map16 of %d entries" % n)
            return self.read_map(n)
        raise ValueError("unexpected type byte %#x at %d in an error response" % (b, self.pos - 1))

    def read_str(self, n: int) -> str:
        return self.next(n).decode("utf-8")  # Go's string(b) accepts anything; the core only writes UTF-8

    def read_map(self, n: int) -> List[Tuple[str, Any]]:
        out = []
        for _ in range(n):
            k = self.read_value()
            if not isinstance(k, str):
                raise ValueError("non-str map key %r" % (k,))
            out.append((k, self.read_value()))
        return out


def decode_error_response(b: bytes) -> Tuple[str, str, str, Optional[int]]:
    """Check the shape {v: 1, ok: false, error: {code, message, path}} (keys in
    this order, nothing else, no trailing bytes), with a fourth key offset (an
    int) exactly when code is invalid_template; return (code, path, message,
    offset or None)."""
    r = _MpReader(b)
    v = r.read_value()
    if r.pos != len(b):
        raise ValueError("%d trailing bytes" % (len(b) - r.pos))
    if not isinstance(v, list) or [k for k, _ in v] != ["v", "ok", "error"]:
        raise ValueError("top level is not the map {v, ok, error}: %r" % (v,))
    if not (v[0][1] == 1 and v[0][1] is not True) or v[1][1] is not False:
        raise ValueError("want v 1 and ok false, got v %r ok %r" % (v[0][1], v[1][1]))
    e = v[2][1]
    if not isinstance(e, list) or [k for k, _ in e][:3] != ["code", "message", "path"]:
        raise ValueError("error is not the map {code, message, path[, offset]}: %r" % (e,))
    strs = [x for _, x in e[:3]]
    for (k, x) in e[:3]:
        if not isinstance(x, str):
            raise ValueError("error.%s is not a str" % k)
    offset: Optional[int] = None
    if strs[0] == "invalid_template":
        if [k for k, _ in e] != ["code", "message", "path", "offset"] or not isinstance(e[3][1], int) or isinstance(e[3][1], bool):
            raise ValueError("an invalid_template error is not the map {code, message, path, offset}: %r" % (e,))
        offset = e[3][1]
    elif len(e) != 3:
        raise ValueError("error is not the map {code, message, path}: %r" % (e,))
    return strs[0], strs[2], strs[1], offset


# --- TestVectors ----------------------------------------------------------------


@pytest.mark.parametrize("lv", VECTORS, ids=IDS)
def test_vectors(lv: Vector) -> None:
    """Every shared vector through assemble_bytes: ok cases give the expected
    bytes exactly; error cases a canonical error response with the expected
    code and path and a non-empty message."""
    got = pa.assemble_bytes(lv.request)
    if lv.error is None:
        assert lv.response is not None
        assert got == lv.response, "%s\n%s" % (lv.description, describe_mismatch(got, lv.response))
        return
    try:
        code, path, msg, offset = decode_error_response(got)
    except ValueError as e:
        pytest.fail("%s\nwant error %s at %r; the response is not a canonical error response: %s\n%s" % (
            lv.description, lv.error["code"], lv.error["path"], e, got[:200].hex(" ")))
    want = (lv.error["code"], lv.error["path"], lv.error.get("offset"))
    assert (code, path, offset) == want, "%s (message %r)" % (lv.description, msg)
    assert msg != "", "%s: empty error message" % lv.description


def test_vectors_cover_every_error_code() -> None:
    """The vectors use only codes the binding declares, and cover every one
    except too_large and internal."""
    declared = set(typing.get_args(pa.ErrorCode))
    assert len(declared) >= 13
    covered = set()
    for lv in VECTORS:
        if lv.error is not None:
            assert lv.error["code"] in declared, "%s/%s: code %r is not declared" % (lv.file, lv.name, lv.error["code"])
            covered.add(lv.error["code"])
    missing = declared - covered - {"too_large", "internal"}
    assert not missing, "no vector has error codes %s" % sorted(missing)


def test_vectors_empty_injections() -> None:
    """A request without injections, with {}, and with only empty channels give
    byte-identical responses (docs/SPEC.md §3)."""
    names = ["injections-empty-absent", "injections-empty-map", "injections-empty-channels"]
    by_name = {lv.name: lv for lv in VECTORS}
    first: Optional[bytes] = None
    for i, n in enumerate(names):
        lv = by_name.get(n)
        assert lv is not None and lv.response is not None, "vector %s missing or not an ok case" % n
        assert lv.response == by_name[names[0]].response, "vectors %s and %s expect different responses" % (names[0], n)
        got = pa.assemble_bytes(lv.request)
        if i == 0:
            first = got
        else:
            assert got == first, "%s and %s give different bytes:\n%s" % (names[0], n, describe_mismatch(got, first))


# --- the same vectors through assemble() ----------------------------------------
#
# The request as the Python value a user would write (when one exists) must give
# the same response, or an AssemblyError with the vector's code and path.


class Unrepresentable(Exception):
    """The request bytes have no Python value that encodes to the same request."""


class _Ext:
    """An object msgpack cannot pack (the binding sends it as an opaque ext)."""


class _PyReader:
    """Msgpack bytes → the Python value a user would write. Independent of any
    msgpack package and of the binding's encoder.

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
        out = self.b[self.pos:self.pos + n]
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
            n = self.uint(1 << (b - 0xC7))
            self.take(1 + n)
            return _Ext()
        if b in (0xD4, 0xD5, 0xD6, 0xD7, 0xD8):
            self.take(1 + (1 << (b - 0xD4)))
            return _Ext()
        if b == 0xCA:
            import struct

            return struct.unpack(">f", self.take(4))[0]
        if b == 0xCB:
            import struct

            return struct.unpack(">d", self.take(8))[0]
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
    r = _PyReader(b)
    v = r.value()
    if r.pos != len(b):
        raise Unrepresentable("trailing bytes")
    return v


def _as_python(lv: Vector) -> Any:
    try:
        return request_to_python(lv.request)
    except Unrepresentable:
        return Unrepresentable


PY_VECTORS = [(lv, _as_python(lv)) for lv in VECTORS]
PY_RUN = [(lv, py) for lv, py in PY_VECTORS if py is not Unrepresentable]
PY_IDS = ["%s/%s" % (lv.file[: -len(".json")], lv.name) for lv, _ in PY_RUN]


@pytest.mark.parametrize("lv,py", PY_RUN, ids=PY_IDS)
def test_vectors_through_assemble(lv: Vector, py: Any) -> None:
    if lv.error is None:
        assert lv.response is not None
        assert pa.assemble(py) == request_to_python(lv.response)
        from polyloop_assembly import _codec

        assert pa.assemble_bytes(_codec.encode(py)) == lv.response
        return
    with pytest.raises(pa.AssemblyError) as info:
        pa.assemble(py)
    assert (info.value.code, info.value.path) == (lv.error["code"], lv.error["path"]), lv.description
    assert info.value.message != ""
    if "offset" in lv.error:  # AssemblyError.offset: the template error's offset (None for other codes)
        assert info.value.offset == lv.error["offset"], lv.description


def test_assemble_ran_every_ok_vector_and_most_error_vectors() -> None:
    ok_total = sum(1 for lv in VECTORS if lv.error is None)
    err_total = len(VECTORS) - ok_total
    ok_run = sum(1 for lv, _ in PY_RUN if lv.error is None)
    err_run = len(PY_RUN) - ok_run
    skipped = [lv.name for lv, py in PY_VECTORS if py is Unrepresentable]
    assert ok_run == ok_total, "ok vectors not representable in Python: %s" % skipped
    assert err_run >= 0.6 * err_total, "only %d of %d error vectors ran; skipped: %s" % (err_run, err_total, skipped)


def test_vector_files_exist() -> None:
    assert Path(VECTORS_DIR, "README.md").is_file()
    assert len(VECTORS) > 100
