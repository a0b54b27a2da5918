"""Pure-Python reference of polyloop-assembly wire format v1.

This is the independent oracle of the shared test vectors. It implements
docs/SPEC.md §2-6 (§2.1-2.2 the order of checks and paths) from scratch, with the CPython 3.12
standard library only: its own small msgpack reader and writer, CPython's
own ``str.format`` for rendering, ``len()`` for sizes, ``sorted()`` for the
channel order, ``hashlib.sha256`` for the prefix digests. It shares no code
with the Go core or with any msgpack package.

Public entry points:

- ``assemble_bytes(request) -> (response, None) | (None, (code, path))``
- ``answer(request) -> (response, None) | (None, Reject)`` (a Reject has
  ``code``, ``path`` and ``offset``: None except for invalid_template)
- ``validate_template(t) -> str | None`` (None when accepted, else a reason)
- ``template_error_offset(t) -> int | None`` (where a rejected template's
  first problem is)
- ``request(**fields) -> bytes`` and the node types (``Str``, ``Int``,
  ``Map``, ``Arr``, ``Bin``, ``Float``, ``Ext``, ``Nil``, ``Raw``,
  ``BadStr``) used to write test requests, including non-canonical and
  broken encodings.

Run with CPython 3.12 (Unicode 15.0, the tables the Go core uses).
"""

from __future__ import annotations

import _string
import hashlib
import json
import re
import struct
import unicodedata
from dataclasses import dataclass
from typing import Any

# ---------------------------------------------------------------------------
# Error codes (docs/SPEC.md §6)

MALFORMED = "malformed_request"
UNSUPPORTED_VERSION = "unsupported_version"
UNKNOWN_FIELD = "unknown_field"
MISSING_FIELD = "missing_field"
DUPLICATE_KEY = "duplicate_key"
INVALID_UTF8 = "invalid_utf8"
INVALID_ROLE = "invalid_role"
UNKNOWN_BLOCK_TYPE = "unknown_block_type"
INVALID_ENTRY_ID = "invalid_entry_id"
INVALID_BUDGET = "invalid_budget"
INVALID_TEMPLATE = "invalid_template"
TOO_LARGE = "too_large"
INTERNAL = "internal"

ALL_CODES = (
    MALFORMED,
    UNSUPPORTED_VERSION,
    UNKNOWN_FIELD,
    MISSING_FIELD,
    DUPLICATE_KEY,
    INVALID_UTF8,
    INVALID_ROLE,
    UNKNOWN_BLOCK_TYPE,
    INVALID_ENTRY_ID,
    INVALID_BUDGET,
    INVALID_TEMPLATE,
    TOO_LARGE,
    INTERNAL,
)

MAX_REQUEST_BYTES = 1 << 30
MAX_WIDTH = 1_048_576
ROLES = ("system", "user", "assistant")


class Reject(Exception):
    """The first problem of a request: an error code and a path, and for
    invalid_template the code-point offset of the problem in the template."""

    def __init__(self, code: str, path: str, offset: int | None = None):
        super().__init__(f"{code} at {path!r}")
        self.code = code
        self.path = path
        self.offset = offset


# ---------------------------------------------------------------------------
# Paths (docs/SPEC.md §2.2)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


EXCERPT_CHARS = 256


def excerpt(s: str) -> str:
    """What an error quotes of a value or key (docs/SPEC.md §6): the first
    EXCERPT_CHARS code points, then "…" (U+2026) when there are more."""
    return s if len(s) <= EXCERPT_CHARS else s[:EXCERPT_CHARS] + "\u2026"


def quote(name: str) -> str:
    """Quote the excerpt of a channel name or key exactly like
    json.dumps(ensure_ascii=False)."""
    return json.dumps(excerpt(name), ensure_ascii=False)


def field_path(parent: str, name: str) -> str:
    """Path of a fixed field: top-level fields have no leading dot."""
    return name if parent == "" else f"{parent}.{name}"


def key_path(parent: str, key: str) -> str:
    """Path of a key that is not a fixed field (unknown_field)."""
    if _IDENT.fullmatch(key):
        return field_path(parent, key)
    return f"{parent}[{quote(key)}]"


def channel_path(name: str) -> str:
    return f"injections[{quote(name)}]"


# ---------------------------------------------------------------------------
# Strict forward-pass msgpack reader


class Reader:
    """Reads msgpack headers one by one; every problem is a Reject."""

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def take(self, n: int, path: str) -> bytes:
        if n > len(self.data) - self.pos:
            raise Reject(MALFORMED, path)  # the bytes end early
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def uint(self, size: int, path: str) -> int:
        return int.from_bytes(self.take(size, path), "big")

    def header(self, path: str) -> tuple[str, Any]:
        """Read one type byte and its length/value; return (kind, arg).

        kind is one of int, nil, bool, str, bin, float, ext, array, map.
        For str the arg is the payload length (payload not read yet); for
        array/map the element count; for int/bool the value. Payloads of
        bin/float/ext are not read: they are always a wrong type here.
        """
        b = self.take(1, path)[0]
        if b <= 0x7F:
            return "int", b
        if b >= 0xE0:
            return "int", b - 0x100
        if 0x80 <= b <= 0x8F:
            return "map", b & 0x0F
        if 0x90 <= b <= 0x9F:
            return "array", b & 0x0F
        if 0xA0 <= b <= 0xBF:
            return "str", b & 0x1F
        if b == 0xC0:
            return "nil", None
        if b == 0xC1:
            raise Reject(MALFORMED, path)  # never-used type byte
        if b in (0xC2, 0xC3):
            return "bool", b == 0xC3
        if b in (0xC4, 0xC5, 0xC6):
            return "bin", self.uint(1 << (b - 0xC4), path)
        if b in (0xC7, 0xC8, 0xC9, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8):
            return "ext", None
        if b in (0xCA, 0xCB):
            return "float", None
        if 0xCC <= b <= 0xCF:
            return "int", self.uint(1 << (b - 0xCC), path)
        if 0xD0 <= b <= 0xD3:
            size = 1 << (b - 0xD0)
            return "int", int.from_bytes(self.take(size, path), "big", signed=True)
        if 0xD9 <= b <= 0xDB:
            return "str", self.uint(1 << (b - 0xD9), path)
        if b in (0xDC, 0xDD):
            return "array", self.uint(2 if b == 0xDC else 4, path)
        if b in (0xDE, 0xDF):
            return "map", self.uint(2 if b == 0xDE else 4, path)
        raise AssertionError(f"unhandled type byte {b:#x}")

    def text(self, n: int, path: str) -> str:
        """Read the payload of a str header and decode it strictly."""
        raw = self.take(n, path)
        try:
            return raw.decode("utf-8")  # strict: surrogates are rejected too
        except UnicodeDecodeError:
            raise Reject(INVALID_UTF8, path) from None

    def str_value(self, path: str) -> str:
        kind, n = self.header(path)
        if kind != "str":
            raise Reject(MALFORMED, path)
        return self.text(n, path)

    def container(self, want: str, path: str) -> int:
        kind, n = self.header(path)
        if kind != want:
            raise Reject(MALFORMED, path)
        return n

    def key(self, map_path: str) -> str:
        """A map key: every problem before the key is known is at the map's path."""
        kind, n = self.header(map_path)
        if kind != "str":
            raise Reject(MALFORMED, map_path)
        return self.text(n, map_path)


# ---------------------------------------------------------------------------
# The request schema, decoded in one forward pass


def read_struct(r: Reader, path: str, fields: dict, required: tuple) -> dict:
    """Read a map with fixed fields. fields: name -> reader(r, path)."""
    n = r.container("map", path)
    out: dict = {}
    for _ in range(n):
        k = r.key(path)
        if k in out:
            raise Reject(DUPLICATE_KEY, field_path(path, k))
        if k not in fields:
            raise Reject(UNKNOWN_FIELD, key_path(path, k))
        out[k] = fields[k](r, field_path(path, k))
    for k in required:
        if k not in out:
            raise Reject(MISSING_FIELD, field_path(path, k))
    return out


def read_array(r: Reader, path: str, elem) -> list:
    n = r.container("array", path)
    return [elem(r, f"{path}[{i}]") for i in range(n)]


def checked_str(rule):
    """A str value followed by its own rule (rule returns an error code or None)."""

    def read(r: Reader, path: str) -> str:
        s = r.str_value(path)
        code = rule(s)
        if code:
            raise Reject(code, path)
        return s

    return read


plain_str = checked_str(lambda s: None)
role_str = checked_str(lambda s: None if s in ROLES else INVALID_ROLE)
type_str = checked_str(lambda s: None if s == "text" else UNKNOWN_BLOCK_TYPE)
entry_id_str = checked_str(lambda s: None if s else INVALID_ENTRY_ID)


def template_str(r: Reader, path: str) -> str:
    """The template: a str, then docs/SPEC.md §5 (invalid_template with its offset)."""
    t = r.str_value(path)
    offset = template_error_offset(t)
    if (offset is None) != (validate_template(t) is None):
        raise AssertionError(f"the offset rules and CPython disagree on {t!r}: offset {offset}, reason {validate_template(t)}")
    if offset is not None:
        raise Reject(INVALID_TEMPLATE, path, offset)
    return t


def read_version(r: Reader, path: str) -> int:
    kind, v = r.header(path)
    if kind != "int":
        raise Reject(MALFORMED, path)
    if v != 1:
        raise Reject(UNSUPPORTED_VERSION, path)
    return v


def read_budget(r: Reader, path: str) -> int | None:
    kind, v = r.header(path)
    if kind == "nil":
        return None
    if kind != "int":
        raise Reject(MALFORMED, path)
    if v < 0:
        raise Reject(INVALID_BUDGET, path)
    return v


def read_block(r: Reader, path: str) -> dict:
    return read_struct(r, path, {"type": type_str, "text": plain_str}, ("type", "text"))


def read_message(r: Reader, path: str) -> dict:
    return read_struct(r, path, {"role": role_str, "content": lambda r, p: read_array(r, p, read_block)}, ("role", "content"))


def read_messages(r: Reader, path: str) -> list:
    return read_array(r, path, read_message)


def read_injection(r: Reader, path: str) -> dict:
    return read_struct(r, path, {"entry_id": entry_id_str, "content": plain_str}, ("entry_id", "content"))


def read_step(r: Reader, path: str) -> dict:
    return read_struct(r, path, {"raw_output": plain_str, "observation": plain_str}, ("raw_output", "observation"))


def read_injections(r: Reader, path: str) -> dict:
    """Every key is a channel name; problems with a key are at `injections`."""
    n = r.container("map", path)
    out: dict = {}
    for _ in range(n):
        name = r.key(path)
        if name in out:
            raise Reject(DUPLICATE_KEY, channel_path(name))
        out[name] = read_array(r, channel_path(name), read_injection)
    return out


REQUEST_FIELDS = {
    "v": read_version,
    "run_messages": read_messages,
    "injections": read_injections,
    "goal_messages": read_messages,
    "steps": lambda r, p: read_array(r, p, read_step),
    "observation_template": template_str,
    "max_prompt_chars": read_budget,
}


def decode_request(data: bytes) -> dict:
    """Decode and validate a request; raise Reject with the first problem."""
    if len(data) > MAX_REQUEST_BYTES:
        raise Reject(TOO_LARGE, "")
    r = Reader(data)
    req = read_struct(r, "", REQUEST_FIELDS, ("observation_template",))
    if r.pos != len(data):
        raise Reject(MALFORMED, "")  # trailing bytes
    return req


# ---------------------------------------------------------------------------
# Observation template (docs/SPEC.md §5)


def spec_width(spec: str) -> tuple[int, int, int] | None:
    """(width, start, end) of the width digits of a str format spec, parsed
    like CPython 3.12's parse_internal_render_format_spec
    (Python/formatter_unicode.c), or None when there is no width. Digits are
    any Unicode Nd digit, as CPython's Py_UNICODE_TODECIMAL. Also used by
    formatdiff.py to classify the differential's templates."""
    pos, end = 0, len(spec)
    fill_specified = False
    if end - pos >= 2 and spec[pos + 1] in "<>=^":
        pos += 2
        fill_specified = True
    elif end - pos >= 1 and spec[pos] in "<>=^":
        pos += 1
    if pos < end and spec[pos] in " +-":
        pos += 1
    if pos < end and spec[pos] == "z":
        pos += 1
    if pos < end and spec[pos] == "#":
        pos += 1
    if not fill_specified and pos < end and spec[pos] == "0":
        pos += 1
    start, width = pos, 0
    while pos < end and unicodedata.decimal(spec[pos], None) is not None:
        width = width * 10 + unicodedata.decimal(spec[pos])
        pos += 1
    return (width, start, pos) if pos > start else None


def _spec_width(spec: str) -> int | None:
    """The width of a str format spec, or None (see spec_width)."""
    w = spec_width(spec)
    return w[0] if w else None


def validate_template(t: str) -> str | None:
    """None if t is accepted, else a short reason (docs/SPEC.md §5).

    The GAP classes are checked before calling format, because a huge width
    would allocate."""
    try:
        parts = list(_string.formatter_parser(t))
    except ValueError as e:
        return f"CPython parse error: {e}"
    fields = [p for p in parts if p[1] is not None]
    if not fields:
        return "no replacement field"
    for _literal, name, spec, _conversion in fields:
        if "." in name or "[" in name:
            return "GAP: attribute access or indexing"
        if "{" in spec or "}" in spec:
            return "GAP: brace inside a format spec"
        width = _spec_width(spec)
        if width is not None and width > MAX_WIDTH:
            return "GAP: width above 1,048,576"
    try:
        t.format(observation="x")
    except Exception as e:  # noqa: BLE001 - any CPython error rejects
        return f"CPython raises {type(e).__name__}: {e}"
    return None


def render(t: str, obs: str) -> str:
    return t.format(observation=obs)


# ---------------------------------------------------------------------------
# Where a template's problem is (docs/SPEC.md §5 "Offsets", §6 `offset`)
#
# CPython accepts or rejects (validate_template); these rules only say where.
# The template is walked with CPython's own lazy parser, _string.formatter_parser:
# a field is checked whole (name, conversion, nested brace, format spec)
# before the parser reads on, so the first problem from the left wins. When
# the parser itself raises, its message says which syntax rule broke, and
# the offset is found in the source text after the last item it yielded.

_CONVERSIONS = ("s", "r", "a", "\x00")  # CPython reads a NUL conversion as none

# [[fill]align][sign][z][#][0][width][grouping][.precision][rest]; \d is any
# Unicode Nd digit, as CPython's get_integer reads them; the 0 flag only
# when no fill was given.
_SPEC = re.compile(
    r"(?:(?P<fill>.)(?P<align>[<>=^])|(?P<align_only>[<>=^]))?"
    r"(?P<sign>[-+ ])?(?P<z>z)?(?P<alt>#)?(?(fill)|0?)"
    r"(?P<width>\d*)(?P<group>,_?|_,?)?(?:(?P<dot>\.)(?P<prec>\d*))?(?P<rest>.*)",
    re.S,
)
_SSIZE_MAX = (1 << 63) - 1


def _spec_offset(spec: str) -> int | None:
    """Index in spec (no braces in it) of its first problem as the format spec
    of a str, in this order (docs/SPEC.md §5), or None."""
    m = _SPEC.fullmatch(spec)
    width, group, prec, rest = m["width"], m["group"] or "", m["prec"], m["rest"]
    if width and int(width) > _SSIZE_MAX:
        return m.start("width")  # too many digits
    if len(group) == 2:
        return m.start("group") + 1  # both ',' and '_'
    if m["dot"] is not None:
        if prec and int(prec) > _SSIZE_MAX:
            return m.start("prec")
        if not prec:
            return m.start("dot")  # '.' without a precision
    if len(rest) > 1:
        return m.start("rest")  # more than one type character
    if group:
        return m.start("group")  # a grouping option for text
    if rest not in ("", "s"):
        return m.start("rest")  # a type other than s
    for part in ("sign", "z", "alt"):
        if m[part] is not None:
            return m.start(part)
    if m["align"] == "=":
        return m.start("align")
    if m["align_only"] == "=":
        return m.start("align_only")
    if width and int(width) > MAX_WIDTH:
        return m.start("width")  # GAP: width above 1,048,576
    return None


def _field_offset(t: str, open_: int, name: str) -> int | None:
    """Offset of the first problem of the field whose '{' is at open_ (its
    name as CPython split it), or None."""
    at = open_ + 1  # the name
    after = at + len(name)
    if t[after : after + 2] == "!}":
        return after  # '!' without a conversion: {observation!}}
    first = re.match(r"[^.\[]*", name)[0]
    if first != "observation":
        return open_ if first == "" else at  # {} or {[0]}: the field; else the name
    if len(first) < len(name):
        return at + len(first)  # GAP: the '.' or '[' after observation
    if t[after] == "!":
        if t[after + 1] not in _CONVERSIONS:
            return after + 1
        after += 2
    if t[after] == ":":
        end = _field_end(t, after + 1)
        spec = t[after + 1 : end]
        if "{" in spec:
            return after + 1 + spec.index("{")  # GAP: a nested field
        off = _spec_offset(spec)
        if off is not None:
            return after + 1 + off
    return None


def _field_end(t: str, i: int) -> int:
    """Index of the '}' that closes a format spec starting at i."""
    depth = 1
    while True:
        depth += {"{": 1, "}": -1}.get(t[i], 0)
        if depth == 0:
            return i
        i += 1


def _name_end(t: str, i: int) -> int:
    """Index of the character that ends a field name starting at i (one of
    '}', ':', '!', '{'), len(t) when none does; '[...]' is skipped."""
    while i < len(t):
        if t[i] == "[":
            close = t.find("]", i)
            i = len(t) if close < 0 else close + 1
            continue
        if t[i] in "}:!{":
            return i
        i += 1
    return i


def _syntax_offset(t: str, pos: int, message: str) -> int:
    """Offset of the syntax error CPython's parser raised (message) while
    reading the item that starts at pos."""
    brace = min(i for i in (t.find("{", pos), t.find("}", pos)) if i >= 0)
    if message.startswith("Single"):  # a lone '}', or a '{' ending the template
        return brace
    end = _name_end(t, brace + 1)
    if message == "unexpected '{' in field name":
        return end
    if message == "expected '}' before end of string":
        return brace
    if message == "end of string while looking for conversion specifier":
        return end
    conv_is_brace = end + 1 < len(t) and t[end] == "!" and t[end + 1] == "}"
    if message == "expected ':' after conversion specifier":
        return end if conv_is_brace else end + 2
    if message == "unmatched '{' in format spec":
        return end if conv_is_brace else brace
    raise AssertionError(f"unknown CPython parse error {message!r} for {t!r}")


def template_error_offset(t: str) -> int | None:
    """The code-point offset of the first problem of template t (docs/SPEC.md §5), or
    None when t has none (then validate_template(t) is None too)."""
    pos = 0  # where the next item of the parser starts in t
    first_escape = None
    fields = 0
    items = _string.formatter_parser(t)
    while True:
        try:
            literal, name, _spec, _conv = next(items)
        except StopIteration:
            break
        except ValueError as e:
            return _syntax_offset(t, pos, str(e))
        if name is None:
            pos += len(literal)
            if literal[-1:] in ("{", "}"):  # an escaped brace: two in the text
                if literal[-1] == "{" and first_escape is None:
                    first_escape = pos - 1
                pos += 1
            continue
        fields += 1
        open_ = pos + len(literal)
        off = _field_offset(t, open_, name)
        if off is not None:
            return off
        after = open_ + 1 + len(name)
        if t[after] == "!":
            after += 2
        pos = (_field_end(t, after + 1) if t[after] == ":" else after) + 1
    if fields == 0:  # no field: at the first '{{', else 0
        return first_escape if first_escape is not None else 0
    return None


# ---------------------------------------------------------------------------
# Canonical msgpack writer (docs/SPEC.md §6) and the non-canonical node types


@dataclass
class Raw:
    """Bytes pasted as they are (broken encodings, 0xc1, truncation...)."""

    data: bytes


@dataclass
class Str:
    """A str; fmt None = shortest, else 'fix', 'str8', 'str16' or 'str32'."""

    s: str
    fmt: str | None = None


@dataclass
class BadStr:
    """A str header followed by arbitrary (e.g. invalid UTF-8) bytes."""

    data: bytes
    fmt: str | None = None


@dataclass
class Int:
    """An int; fmt None = shortest, else fixint, uint8..uint64, int8..int64."""

    n: int
    fmt: str | None = None


@dataclass
class Map:
    """A map as a list of (key, value) pairs: keys may repeat or be non-str."""

    pairs: list
    fmt: str | None = None  # None = shortest, 'fix', 'map16', 'map32'
    count: int | None = None  # header count, if it must lie


@dataclass
class Arr:
    items: list
    fmt: str | None = None  # None = shortest, 'fix', 'array16', 'array32'
    count: int | None = None


@dataclass
class Bin:
    data: bytes


@dataclass
class Float:
    x: float
    double: bool = True


@dataclass
class Ext:
    type: int
    data: bytes


class _Nil:
    def __repr__(self):
        return "Nil"


Nil = _Nil()
OMIT = object()  # request(): leave a field out

_INT_FORMATS = {
    "uint8": (0xCC, ">B"),
    "uint16": (0xCD, ">H"),
    "uint32": (0xCE, ">I"),
    "uint64": (0xCF, ">Q"),
    "int8": (0xD0, ">b"),
    "int16": (0xD1, ">h"),
    "int32": (0xD2, ">i"),
    "int64": (0xD3, ">q"),
}


def _int(n: int, fmt: str | None) -> bytes:
    if fmt is None:
        if 0 <= n <= 0x7F or -32 <= n < 0:
            fmt = "fixint"
        elif n >= 0:
            fmt = next(
                f for f, lim in (("uint8", 1 << 8), ("uint16", 1 << 16), ("uint32", 1 << 32), ("uint64", 1 << 64)) if n < lim
            )
        else:
            fmt = next(
                f for f, lim in (("int8", 1 << 7), ("int16", 1 << 15), ("int32", 1 << 31), ("int64", 1 << 63)) if n >= -lim
            )
    if fmt == "fixint":
        assert -32 <= n <= 0x7F
        return bytes([n & 0xFF])
    tag, pack = _INT_FORMATS[fmt]
    return bytes([tag]) + struct.pack(pack, n)


def _str_header(n: int, fmt: str | None) -> bytes:
    if fmt is None:
        fmt = "fix" if n < 32 else "str8" if n < 1 << 8 else "str16" if n < 1 << 16 else "str32"
    if fmt == "fix":
        assert n < 32
        return bytes([0xA0 | n])
    tag, size = {"str8": (0xD9, 1), "str16": (0xDA, 2), "str32": (0xDB, 4)}[fmt]
    return bytes([tag]) + n.to_bytes(size, "big")


def _container_header(n: int, fmt: str | None, fix: int, t16: int) -> bytes:
    if fmt is None:
        fmt = "fix" if n < 16 else "16" if n < 1 << 16 else "32"
    fmt = fmt[-2:] if fmt.endswith(("16", "32")) else fmt
    if fmt == "fix":
        assert n < 16
        return bytes([fix | n])
    if fmt == "16":
        return bytes([t16]) + n.to_bytes(2, "big")
    return bytes([t16 + 1]) + n.to_bytes(4, "big")


def pack(v: Any) -> bytes:
    """Encode a value. Plain Python values get the canonical (shortest) form:
    str, int, bool, None, list, dict (in insertion order). Node types give
    any other form."""
    if isinstance(v, Raw):
        return v.data
    if v is Nil or v is None:
        return b"\xc0"
    if isinstance(v, bool):
        return b"\xc3" if v else b"\xc2"
    if isinstance(v, int):
        return _int(v, None)
    if isinstance(v, Int):
        return _int(v.n, v.fmt)
    if isinstance(v, str):
        v = Str(v)
    if isinstance(v, Str):
        b = v.s.encode("utf-8")  # refuses lone surrogates: use BadStr
        return _str_header(len(b), v.fmt) + b
    if isinstance(v, BadStr):
        return _str_header(len(v.data), v.fmt) + v.data
    if isinstance(v, dict):
        v = Map(list(v.items()))
    if isinstance(v, Map):
        n = len(v.pairs) if v.count is None else v.count
        return _container_header(n, v.fmt, 0x80, 0xDE) + b"".join(pack(k) + pack(x) for k, x in v.pairs)
    if isinstance(v, (list, tuple)):
        v = Arr(list(v))
    if isinstance(v, Arr):
        n = len(v.items) if v.count is None else v.count
        return _container_header(n, v.fmt, 0x90, 0xDC) + b"".join(pack(x) for x in v.items)
    if isinstance(v, Bin):
        n = len(v.data)
        hdr = (b"\xc4" + bytes([n])) if n < 256 else (b"\xc5" + n.to_bytes(2, "big"))
        return hdr + v.data
    if isinstance(v, Float):
        return b"\xcb" + struct.pack(">d", v.x) if v.double else b"\xca" + struct.pack(">f", v.x)
    if isinstance(v, Ext):
        n = len(v.data)
        fixed = {1: 0xD4, 2: 0xD5, 4: 0xD6, 8: 0xD7, 16: 0xD8}
        if n in fixed:
            return bytes([fixed[n], v.type & 0xFF]) + v.data
        if n < 256:
            return b"\xc7" + bytes([n, v.type & 0xFF]) + v.data
        if n < 65536:
            return b"\xc8" + n.to_bytes(2, "big") + bytes([v.type & 0xFF]) + v.data
        return b"\xc9" + n.to_bytes(4, "big") + bytes([v.type & 0xFF]) + v.data
    raise TypeError(f"cannot encode {type(v).__name__}: use Raw, Bin, BadStr...")


def request(**fields) -> bytes:
    """Encode a request map with the given fields in the given order.

    observation_template defaults to "{observation}" (appended last); pass
    observation_template=OMIT to leave it out. Values may be plain Python
    values or node types."""
    if "observation_template" not in fields:
        fields["observation_template"] = "{observation}"
    return pack({k: v for k, v in fields.items() if v is not OMIT})


# Small builders for requests (plain values, canonical when packed).


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def msg(role: str, *texts: str) -> dict:
    return {"role": role, "content": [text(t) for t in texts]}


def inj(entry_id: str, content: str) -> dict:
    return {"entry_id": entry_id, "content": content}


def step(raw_output: str, observation: str) -> dict:
    return {"raw_output": raw_output, "observation": observation}


# ---------------------------------------------------------------------------
# Assembly (docs/SPEC.md §3, §4, §6)


def assemble(req: dict) -> dict:
    """Assemble a decoded request into the ok response (a plain dict in
    canonical key order)."""
    run = req.get("run_messages", [])
    goal = req.get("goal_messages", [])
    channels = req.get("injections", {})
    template = req["observation_template"]
    budget = req.get("max_prompt_chars")

    messages = [{"role": m["role"], "content": [text(b["text"]) for b in m["content"]]} for m in run]
    end_run = len(messages)
    injected = []
    for name in sorted(channels):  # code-point order
        for e in channels[name]:
            injected.append({"channel": name, "entry_id": e["entry_id"], "message_index": len(messages)})
            messages.append(msg("user", e["content"]))
    end_injections = len(messages)
    messages += [{"role": m["role"], "content": [text(b["text"]) for b in m["content"]]} for m in goal]
    end_goal = len(messages)
    for s in req.get("steps", []):
        messages.append(msg("assistant", s["raw_output"]))
        messages.append(msg("user", render(template, s["observation"])))

    message_chars = [sum(len(b["text"]) for b in m["content"]) for m in messages]
    prompt_chars = sum(message_chars)

    def digest(end: int) -> str:
        return hashlib.sha256(pack(messages[:end])).hexdigest()

    return {
        "v": 1,
        "ok": True,
        "messages": messages,
        "message_chars": message_chars,
        "prompt_chars": prompt_chars,
        "context_overflow": budget is not None and prompt_chars > budget,
        "injected": injected,
        "prefix_digests": {"run": digest(end_run), "injections": digest(end_injections), "goal": digest(end_goal)},
    }


def answer(data: bytes) -> tuple[bytes | None, Reject | None]:
    """The wire function: (canonical ok response, None) or (None, the Reject
    with its code, path and offset; the offset is None except for
    invalid_template)."""
    try:
        req = decode_request(data)
    except Reject as e:
        return None, e
    return pack(assemble(req)), None


def assemble_bytes(data: bytes) -> tuple[bytes | None, tuple[str, str] | None]:
    """The wire function: (canonical ok response, None) or (None, (code, path));
    answer() also gives a template error's offset."""
    resp, e = answer(data)
    return resp, None if e is None else (e.code, e.path)


def error_response(code: str, message: str, path: str, offset: int | None = None) -> bytes:
    """The canonical error response (the message text is the host's own)."""
    error: dict = {"code": code, "message": message, "path": path}
    if offset is not None:
        error["offset"] = offset
    return pack({"v": 1, "ok": False, "error": error})
