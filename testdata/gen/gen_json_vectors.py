"""Write testdata/json-vectors/*.json: JSON text -> expected response.

Run with CPython 3.12 (`make vectors`). The output is deterministic.

The oracle is independent of the Go JSON reader (wirejson):

1. CPython's json module parses the text (its pure-Python scanner, so that
   the hooks below see every value), with
   - ``object_pairs_hook`` keeping every pair, repeated keys included;
   - ``parse_int`` keeping integers the wire carries (-2**63 .. 2**64-1) and
     writing the others as ext 3 with their decimal text as written (the wire
     has no bigger integer; the core says "an int beyond 64 bits");
   - ``parse_float`` marking every number with a fraction or an exponent as
     a float64 (``1.0`` is a float, as in msgpack);
   - ``parse_constant`` refusing NaN and Infinity (not JSON);
   - its own string scanner (below), because a string's value must be its
     exact bytes: raw bytes as they are (invalid UTF-8 included: the text is
     decoded with ``surrogateescape``), a ``\\u`` escape of a lone surrogate
     as its three-byte generalized UTF-8 form (``surrogatepass``), a pair as
     one code point. Python's own scanner would merge a raw byte 0x80 and
     an escaped ``\\udc80`` into the same character.
2. The parsed value is written as msgpack by the reference's own canonical
   writer (reference.pack; strings as BadStr, i.e. a str header and the
   bytes).
3. reference.assemble_bytes answers that msgpack: the expected response
   bytes, or the expected error code and path.

A JSON syntax error (Python raises JSONDecodeError) expects
``malformed_request`` at ``""``. Its message (``invalid JSON at byte N:
...``) is not compared: Python reports character offsets and its own words,
so the vectors pin the code, the path and the message's prefix only (see
testdata/json-vectors/README.md).

Every case states its expected outcome by hand; the generator asserts that
the oracle agrees, so a mistake in either shows up here.
"""

from __future__ import annotations

import base64
import json
import json.decoder
import json.scanner
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import reference as R  # noqa: E402
import schema  # noqa: E402

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "json-vectors")
NAME_RE = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
SYNTAX = "syntax"  # expected outcome: a JSON syntax error

sys.setrecursionlimit(1_000_000)  # the pure-Python scanner recurses per level
sys.set_int_max_str_digits(0)  # integers of any length are read, then judged


# ---------------------------------------------------------------------------
# The oracle: JSON text -> msgpack bytes (or None for a syntax error)


class BStr(bytes):
    """A JSON string's exact bytes."""


_ESCAPES = {'"': b'"', "\\": b"\\", "/": b"/", "b": b"\b", "f": b"\f", "n": b"\n", "r": b"\r", "t": b"\t"}
_HEX = re.compile(r"[0-9A-Fa-f]{4}")


def _hex4(s: str, i: int) -> int | None:
    m = _HEX.match(s, i)
    return int(m.group(), 16) if m else None


def _scanstring(s: str, end: int, strict: bool = True) -> tuple[BStr, int]:
    """json.decoder.scanstring returning the string's bytes; end is just
    after the opening quote."""
    out = bytearray()
    i = end
    while True:
        if i >= len(s):
            raise json.JSONDecodeError("Unterminated string starting at", s, end - 1)
        c = s[i]
        if c == '"':
            return BStr(out), i + 1
        if c == "\\":
            e = s[i + 1 : i + 2]
            if e == "u":
                v = _hex4(s, i + 2)
                if v is None:
                    raise json.JSONDecodeError("Invalid \\uXXXX escape", s, i)
                i += 6
                if 0xD800 <= v < 0xDC00 and s[i : i + 2] == "\\u":
                    w = _hex4(s, i + 2)
                    if w is not None and 0xDC00 <= w <= 0xDFFF:
                        v = 0x10000 + ((v - 0xD800) << 10) + (w - 0xDC00)
                        i += 6
                out += chr(v).encode("utf-8", "surrogatepass")
                continue
            if e not in _ESCAPES:
                raise json.JSONDecodeError("Invalid \\escape", s, i)
            out += _ESCAPES[e]
            i += 2
            continue
        if ord(c) < 0x20:
            raise json.JSONDecodeError("Invalid control character at", s, i)
        out += c.encode("utf-8", "surrogateescape")  # raw bytes as they came
        i += 1


def _int(t: str):
    n = int(t)
    return n if -(1 << 63) <= n < (1 << 64) else R.Ext(3, t.encode("ascii"))  # EXT_BIG_INT: its decimal text


def _constant(t: str):
    raise json.JSONDecodeError(f"{t} is not JSON", t, 0)


class _Decoder(json.JSONDecoder):
    def __init__(self):
        super().__init__(
            object_pairs_hook=lambda pairs: R.Map(pairs),
            parse_float=lambda t: R.Float(float(t)),
            parse_int=_int,
            parse_constant=_constant,
            strict=True,
        )
        self.parse_string = _scanstring
        saved = json.scanner.NUMBER_RE
        # JSON digits are ASCII; the pure-Python scanner's pattern (\d)
        # would take any Unicode digit.
        json.scanner.NUMBER_RE = re.compile(saved.pattern, (saved.flags & ~re.UNICODE) | re.ASCII)
        try:
            self.scan_once = json.scanner.py_make_scanner(self)
        finally:
            json.scanner.NUMBER_RE = saved


def _pack(value) -> bytes:
    """The parsed value as msgpack, by the reference's writer: reference.pack
    for every scalar (strings as BadStr: a str header and the exact bytes)
    and reference._container_header for every map and array, walked with
    an explicit stack (reference.pack recurses, and the vectors nest
    12,000 levels deep)."""
    out = bytearray()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, R.Map):
            out += R._container_header(len(v.pairs), None, 0x80, 0xDE)
            for k, x in reversed(v.pairs):
                stack += [x, k]
        elif isinstance(v, list):
            out += R._container_header(len(v), None, 0x90, 0xDC)
            stack.extend(reversed(v))
        elif isinstance(v, BStr):
            out += R.pack(R.BadStr(bytes(v)))
        else:
            out += R.pack(v)  # int, bool, None, Float
    return bytes(out)


def to_msgpack(text: bytes) -> bytes | None:
    """The msgpack request that says what the JSON text says, or None for a
    JSON syntax error."""
    s = text.decode("utf-8", "surrogateescape")
    saved = json.decoder.scanstring
    json.decoder.scanstring = _scanstring  # object keys are read with it
    try:
        value = _Decoder().decode(s)
    except json.JSONDecodeError:
        return None
    finally:
        json.decoder.scanstring = saved
    return _pack(value)


# ---------------------------------------------------------------------------
# The cases


class Book:
    def __init__(self):
        self.files: dict[str, tuple[str, list]] = {}
        self.names: set[str] = set()
        self.current = ""

    def file(self, name: str, description: str):
        self.files[name] = (description, [])
        self.current = name

    def case(self, name: str, description: str, text: str | bytes, expect):
        """expect: "ok", SYNTAX, or (code, path)."""
        assert NAME_RE.fullmatch(name), name
        assert name not in self.names, name
        self.names.add(name)
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        case = {"name": name, "description": description, "request": base64.b64encode(data).decode("ascii")}
        mp = to_msgpack(data)
        if mp is None:
            assert expect == SYNTAX, f"{name}: the oracle says syntax error, expected {expect}"
            case["syntax"] = True
            case["error"] = {"code": R.MALFORMED, "path": ""}
        else:
            assert expect != SYNTAX, f"{name}: the oracle parsed it, expected a syntax error"
            case["msgpack"] = base64.b64encode(mp).decode("ascii")
            resp, err = R.assemble_bytes(mp)
            if expect == "ok":
                assert err is None, f"{name}: expected ok, the reference says {err}"
                case["response"] = base64.b64encode(resp).decode("ascii")
            else:
                assert err == tuple(expect), f"{name}: expected {expect}, the reference says {err}"
                case["error"] = {"code": err[0], "path": err[1]}
        self.files[self.current][1].append(case)

    def render(self) -> dict[str, str]:
        """The files' names and texts."""
        out = {}
        for name, (description, cases) in self.files.items():
            cases.sort(key=lambda c: c["name"])
            out[name + ".json"] = json.dumps({"description": description, "cases": cases}, indent=1, ensure_ascii=True) + "\n"
        schema.check_texts("json-vectors", out)
        return out

    def write(self):
        os.makedirs(OUT_DIR, exist_ok=True)
        for old in os.listdir(OUT_DIR):
            if old.endswith(".json"):
                os.remove(os.path.join(OUT_DIR, old))
        for name, text in self.render().items():
            with open(os.path.join(OUT_DIR, name), "w", encoding="ascii") as f:
                f.write(text)


T = '"observation_template": "{observation}"'
MAL, UTF8, DUP = R.MALFORMED, R.INVALID_UTF8, R.DUPLICATE_KEY


def req(*fields: str) -> str:
    """A request object with the given member texts and the template last."""
    return "{" + ", ".join(list(fields) + [T]) + "}"


def step(raw: str = '""', obs: str = '""') -> str:
    return f'"steps": [{{"raw_output": {raw}, "observation": {obs}}}]'


def build() -> Book:
    b = Book()

    b.file("ok", "Valid JSON requests: white space, key spellings, the values JSON and msgpack share.")
    b.case("ok-minimal", "the template only", "{" + T + "}", "ok")
    b.case(
        "ok-full",
        "every field",
        '{"v": 1, "run_messages": [{"role": "system", "content": [{"type": "text", "text": "sys"}]}], '
        '"injections": {"hints": [{"entry_id": "h1", "content": "look"}]}, "goal_messages": [{"role": "user", "content": '
        '[{"type": "text", "text": "goal"}]}], "steps": [{"raw_output": "ls", "observation": "a b"}], '
        '"observation_template": "Output: {observation!r}", "max_prompt_chars": 100}',
        "ok",
    )
    b.case(
        "ok-whitespace-everywhere",
        "space, tab, CR and LF around every token",
        ' \t\r\n{ \t\r\n"v"\r\n:\t1 ,\n"steps" : [ { "raw_output" : "a" , "observation" : "b" } ] ,\r\n'
        '"observation_template"\t:\n"{observation}"\r\n}\t \n',
        "ok",
    )
    b.case(
        "ok-no-whitespace",
        "no white space at all",
        '{"v":1,"steps":[{"raw_output":"a","observation":"b"}],"observation_template":"{observation}"}',
        "ok",
    )
    b.case(
        "ok-escapes-every-kind",
        'every escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t and \\u (lower and upper hex, NUL, BMP, a pair)',
        req(step(r'"\" \\ \/ \b \f \n \r \t"', r'"\u0000 \u00e9 \u00E9 \u2028 \uFFFF \ud83d\ude00 \uD83D\uDE00"')),
        "ok",
    )
    b.case(
        "ok-escaped-key",
        "a key spelled with escapes is the same key",
        '{"observation\\u005ftemplate": "{observation}", "st\\u0065ps": []}',
        "ok",
    )
    b.case(
        "ok-raw-utf8", "raw UTF-8 of every length", req(step('"é ✓ 😀"', '"\u0080\u07ff\u0800\uffff\U00010000\U0010ffff"')), "ok"
    )
    b.case(
        "ok-bom-inside-string",
        "U+FEFF at the start of a string is kept (raw and escaped)",
        req(step('"\ufeffraw"', '"\\ufeffescaped"')),
        "ok",
    )
    b.case("ok-budget-null", "max_prompt_chars null is no budget", req('"max_prompt_chars": null'), "ok")
    b.case(
        "ok-empty-containers",
        "empty arrays and objects",
        req('"run_messages": []', '"injections": {}', '"goal_messages": []', '"steps": []'),
        "ok",
    )
    b.case("ok-template-last-or-first", "the template first", "{" + T + ', "steps": []}', "ok")
    b.case("ok-long-string", "a string of 300 bytes (str16 header) with escapes", req(step('"' + "ab\\n" * 100 + '"')), "ok")
    b.case(
        "ok-sixteen-steps",
        "16 steps (array16) and a map of 16 channels (map16)",
        req(
            '"steps": [' + ", ".join('{"raw_output": "r", "observation": "o"}' for _ in range(16)) + "]",
            '"injections": {' + ", ".join(f'"c{i:02d}": []' for i in range(16)) + "}",
        ),
        "ok",
    )

    b.file("duplicates", "A repeated key is duplicate_key at every level (never last-wins), also when spelled with escapes.")
    b.case("dup-top-template", "observation_template twice", "{" + T + ", " + T + "}", (DUP, "observation_template"))
    b.case("dup-top-v", "v twice", req('"v": 1', '"v": 1'), (DUP, "v"))
    b.case("dup-top-steps", "steps twice", req('"steps": []', '"steps": []'), (DUP, "steps"))
    b.case(
        "dup-top-budget",
        "max_prompt_chars twice",
        req('"max_prompt_chars": 1', '"max_prompt_chars": null'),
        (DUP, "max_prompt_chars"),
    )
    b.case(
        "dup-step-raw-output",
        "raw_output twice (the preview's last-wins lost the first)",
        req('"steps": [{"raw_output": "first", "raw_output": "second", "observation": ""}]'),
        (DUP, "steps[0].raw_output"),
    )
    b.case(
        "dup-step-escaped-spelling",
        "raw_output and raw\\u005foutput are one key",
        req('"steps": [{"raw_output": "a", "raw\\u005foutput": "b", "observation": ""}]'),
        (DUP, "steps[0].raw_output"),
    )
    b.case(
        "dup-message-role",
        "role twice in a run message",
        req('"run_messages": [{"role": "user", "role": "system", "content": []}]'),
        (DUP, "run_messages[0].role"),
    )
    b.case(
        "dup-block-text",
        "text twice in a goal block",
        req('"goal_messages": [{"role": "user", "content": [{"type": "text", "text": "a", "text": "b"}]}]'),
        (DUP, "goal_messages[0].content[0].text"),
    )
    b.case(
        "dup-entry-id",
        "entry_id twice in an injection",
        req('"injections": {"c": [{"entry_id": "a", "entry_id": "b", "content": ""}]}'),
        (DUP, 'injections["c"][0].entry_id'),
    )
    b.case("dup-channel", "a channel name twice", req('"injections": {"c": [], "c": []}'), (DUP, 'injections["c"]'))
    b.case(
        "dup-unknown-then-dup",
        "the first problem wins: an unknown key before a repeat",
        req('"x": 1', '"x": 2'),
        (R.UNKNOWN_FIELD, "x"),
    )

    b.file(
        "numbers",
        "Numbers: a fraction or exponent is a float (malformed where an int belongs); integers up to the wire's range are exact; beyond it ext 3 (an int beyond 64 bits).",
    )
    for name, v, expect in [
        ("num-v-1-0", "1.0", (MAL, "v")),
        ("num-v-1e0", "1e0", (MAL, "v")),
        ("num-v-1e0-capital", "1E0", (MAL, "v")),
        ("num-v-10e-1", "10e-1", (MAL, "v")),
        ("num-v-neg-zero-float", "-0.0", (MAL, "v")),
        ("num-v-neg-zero", "-0", (R.UNSUPPORTED_VERSION, "v")),
        ("num-v-2-53-plus-1", "9007199254740993", (R.UNSUPPORTED_VERSION, "v")),
        ("num-v-int64-min", "-9223372036854775808", (R.UNSUPPORTED_VERSION, "v")),
        ("num-v-uint64-max", "18446744073709551615", (R.UNSUPPORTED_VERSION, "v")),
        ("num-v-2-64", "18446744073709551616", (MAL, "v")),
        ("num-v-2-70", "1180591620717411303424", (MAL, "v")),
        ("num-v-neg-2-70", "-1180591620717411303424", (MAL, "v")),
    ]:
        b.case(name.lower(), f"v: {v}", req(f'"v": {v}'), expect)
    for name, v, expect in [
        ("num-budget-1e2", "1e2", (MAL, "max_prompt_chars")),
        ("num-budget-100-0", "100.0", (MAL, "max_prompt_chars")),
        ("num-budget-1-5", "1.5", (MAL, "max_prompt_chars")),
        ("num-budget-neg-1-0", "-1.0", (MAL, "max_prompt_chars")),
        ("num-budget-1e400", "1e400", (MAL, "max_prompt_chars")),
        ("num-budget-neg-1e400", "-1e400", (MAL, "max_prompt_chars")),
        ("num-budget-neg-zero", "-0", "ok"),
        ("num-budget-neg-zero-float", "-0.0", (MAL, "max_prompt_chars")),
        ("num-budget-2-53-plus-1", "9007199254740993", "ok"),
        ("num-budget-int64-max", "9223372036854775807", "ok"),
        ("num-budget-2-63", "9223372036854775808", "ok"),
        ("num-budget-uint64-max", "18446744073709551615", "ok"),
        ("num-budget-2-64", "18446744073709551616", (MAL, "max_prompt_chars")),
        ("num-budget-int64-min", "-9223372036854775808", (R.INVALID_BUDGET, "max_prompt_chars")),
        ("num-budget-int64-min-minus-1", "-9223372036854775809", (MAL, "max_prompt_chars")),
        ("num-budget-5000-digits", "9" * 5000, (MAL, "max_prompt_chars")),
    ]:
        b.case(name, f"max_prompt_chars: {v[:40]}", req(f'"max_prompt_chars": {v}'), expect)
    b.case("num-in-string-position", "a number where a str belongs", req(step("1")), (MAL, "steps[0].raw_output"))
    b.case("num-float-in-string-position", "a float where a str belongs", req(step('""', "1.5")), (MAL, "steps[0].observation"))

    b.file(
        "strings",
        "Strings: lone surrogate escapes and raw invalid UTF-8 are invalid_utf8 at their path (keys: at the map); a BOM before the text is a syntax error.",
    )
    b.case("str-lone-high-escape", "\\ud800 alone", req(step(r'"\ud800"')), (UTF8, "steps[0].raw_output"))
    b.case("str-lone-low-escape", "\\udfff alone", req(step('""', r'"\udfff"')), (UTF8, "steps[0].observation"))
    b.case("str-reversed-pair", "low then high", req(step('""', r'"\udfff\ud800"')), (UTF8, "steps[0].observation"))
    b.case("str-high-at-end", "a high surrogate as the last escape", req(step(r'"abc\ud83d"')), (UTF8, "steps[0].raw_output"))
    b.case(
        "str-high-then-letter",
        "a high surrogate followed by \\u0041",
        req(step(r'"\ud83d\u0041"')),
        (UTF8, "steps[0].raw_output"),
    )
    b.case("str-lone-in-key", "a lone surrogate in a top-level key: at the map", r'{"\ud800": 1, ' + T + "}", (UTF8, ""))
    b.case(
        "str-lone-in-channel", "a lone surrogate in a channel name", req(r'"injections": {"\udc00": []}'), (UTF8, "injections")
    )
    b.case(
        "str-lone-in-role",
        "a lone surrogate in a role",
        req(r'"run_messages": [{"role": "\ud800", "content": []}]'),
        (UTF8, "run_messages[0].role"),
    )
    b.case(
        "str-lone-in-template",
        "a lone surrogate in the template",
        r'{"observation_template": "{observation}\udbff"}',
        (UTF8, "observation_template"),
    )
    b.case(
        "str-raw-ff",
        "a raw 0xff byte",
        req_bytes(b'"steps": [{"raw_output": "a\xffb", "observation": ""}]'),
        (UTF8, "steps[0].raw_output"),
    )
    b.case(
        "str-raw-truncated",
        "a cut 3-byte sequence",
        req_bytes(b'"steps": [{"raw_output": "\xe2\x9c", "observation": ""}]'),
        (UTF8, "steps[0].raw_output"),
    )
    b.case(
        "str-raw-overlong",
        "an overlong NUL (C0 80)",
        req_bytes(b'"steps": [{"raw_output": "", "observation": "\xc0\x80"}]'),
        (UTF8, "steps[0].observation"),
    )
    b.case(
        "str-raw-surrogate",
        "a raw encoded surrogate (ED A0 80)",
        req_bytes(b'"steps": [{"raw_output": "\xed\xa0\x80", "observation": ""}]'),
        (UTF8, "steps[0].raw_output"),
    )
    b.case(
        "str-raw-in-key",
        "raw invalid UTF-8 in a step key: at the step",
        req_bytes(b'"steps": [{"raw\xff": "", "observation": ""}]'),
        (UTF8, "steps[0]"),
    )
    b.case(
        "str-raw-in-channel",
        "raw invalid UTF-8 in a channel name",
        req_bytes(b'"injections": {"t\xffx": []}'),
        (UTF8, "injections"),
    )
    b.case("str-bom-before-text", "a UTF-8 BOM before the JSON text", b"\xef\xbb\xbf" + ("{" + T + "}").encode(), SYNTAX)
    b.case("str-raw-control-tab", "a raw tab inside a string", req(step('"a\tb"')), SYNTAX)
    b.case("str-raw-control-newline", "a raw newline inside a string", req(step('"a\nb"')), SYNTAX)
    b.case("str-raw-del-c1", "raw DEL and C1 characters are allowed", req(step('"\x7f\u0085\u009b"')), "ok")
    b.case("str-invalid-escape", "\\x is no JSON escape", req(step(r'"\x41"')), SYNTAX)
    b.case("str-short-u-escape", "\\u with three hex digits", req(step(r'"\u041"')), SYNTAX)
    b.case("str-non-hex-u-escape", "\\u with a non-hex digit", req(step(r'"\u00g1"')), SYNTAX)
    b.case("str-signed-u-escape", "\\u+041 (Python's int() would take it)", req(step(r'"\u+041"')), SYNTAX)
    b.case("str-unterminated", "a string that never ends", '{"observation_template": "{observation}', SYNTAX)

    b.file("nesting", "Depth: the JSON reader has no depth limit of its own; deep JSON is judged where the same msgpack is.")
    deep = 12000  # deeper than any limit a reader might keep (10,000 before)
    b.case(
        "deep-steps-arrays",
        f"steps holds arrays {deep} deep: at steps[0], as in msgpack",
        req('"steps": ' + "[" * deep + "]" * deep),
        (MAL, "steps[0]"),
    )
    b.case(
        "deep-steps-objects",
        f"a step's raw_output is objects {deep} deep",
        req('"steps": [{"raw_output": ' + '{"a": ' * deep + "1" + "}" * deep + ', "observation": ""}]'),
        (MAL, "steps[0].raw_output"),
    )
    b.case(
        "deep-unknown-field",
        f"an unknown key holding arrays {deep} deep",
        req('"x": ' + "[" * deep + "]" * deep),
        (R.UNKNOWN_FIELD, "x"),
    )
    b.case("deep-top-level-array", f"a top-level array {deep} deep", "[" * deep + "]" * deep, (MAL, ""))
    b.case(
        "deep-with-long-string",
        f"a 70,000-byte string (str32 header) at depth {deep // 2}",
        req('"steps": ' + "[" * (deep // 2) + '"' + "x\\n" * 35_000 + '"' + "]" * (deep // 2)),
        (MAL, "steps[0]"),
    )
    b.case("deep-unclosed", "deep arrays never closed: a syntax error", req('"steps": ' + "[" * deep), SYNTAX)
    b.case("deep-mismatched", "deep arrays closed by a brace", "[" * 100 + "}" * 100, SYNTAX)

    b.file("syntax", "JSON syntax errors: malformed_request at \"\", message 'invalid JSON at byte N: ...'.")
    for name, text in [
        ("syntax-empty", ""),
        ("syntax-whitespace-only", " \t\r\n"),
        ("syntax-trailing-comma-object", "{" + T + ",}"),
        ("syntax-trailing-comma-array", req('"steps": [],')[: -len(T) - 1] + "]}"),
        ("syntax-missing-colon", '{"observation_template" "{observation}"}'),
        ("syntax-single-quotes", "{'observation_template': '{observation}'}"),
        ("syntax-unquoted-key", '{observation_template: "{observation}"}'),
        ("syntax-comment", "{" + T + "} // done"),
        ("syntax-block-comment", "/* a */ {" + T + "}"),
        ("syntax-nan", req('"max_prompt_chars": NaN')),
        ("syntax-infinity", req('"max_prompt_chars": Infinity')),
        ("syntax-neg-infinity", req('"max_prompt_chars": -Infinity')),
        ("syntax-leading-zero", req('"max_prompt_chars": 01')),
        ("syntax-neg-leading-zero", req('"max_prompt_chars": -01')),
        ("syntax-dot-no-digits", req('"max_prompt_chars": 1.')),
        ("syntax-leading-dot", req('"max_prompt_chars": .5')),
        ("syntax-plus-sign", req('"max_prompt_chars": +1')),
        ("syntax-hex-number", req('"max_prompt_chars": 0x10')),
        ("syntax-lone-minus", req('"max_prompt_chars": -')),
        ("syntax-exponent-no-digits", req('"max_prompt_chars": 1e')),
        ("syntax-non-ascii-digit", req('"max_prompt_chars": 1\u0663')),
        ("syntax-capital-true", req('"max_prompt_chars": True')),
        ("syntax-two-values", "{" + T + "} {}"),
        ("syntax-trailing-garbage", "{" + T + "}x"),
        ("syntax-unclosed-object", "{" + T),
        ("syntax-extra-close", "{" + T + "}}"),
        ("syntax-nul-outside-string", "{" + T + "}\x00"),
        ("syntax-form-feed-whitespace", "{\f" + T + "}"),
        ("syntax-nbsp-whitespace", "{\u00a0" + T + "}"),
        ("syntax-line-separator-whitespace", "{\u2028" + T + "}"),
        ("syntax-missing-comma", '{"v": 1 ' + T + "}"),
        ("syntax-key-not-string", "{1: 2}"),
    ]:
        b.case(name, "not JSON: " + name[len("syntax-") :].replace("-", " "), text, SYNTAX)

    b.file("toplevel", 'Valid JSON that is not an object: malformed_request at "" (the wire\'s verdict, not a syntax error).')
    for name, text in [
        ("top-array", "[]"),
        ("top-string", '"{observation}"'),
        ("top-number", "1"),
        ("top-float", "1.5"),
        ("top-null", "null"),
        ("top-true", "true"),
        ("top-array-of-request", "[{" + T + "}]"),
    ]:
        b.case(name, "a top-level " + name[4:].replace("-", " "), text, (MAL, ""))
    return b


def req_bytes(*fields: bytes) -> bytes:
    return b"{" + b", ".join(list(fields) + [T.encode()]) + b"}"


def main():
    book = build()
    book.write()
    n = sum(len(c) for _, c in book.files.values())
    print(f"wrote {n} JSON-text vectors in {len(book.files)} files to testdata/json-vectors/")


if __name__ == "__main__":
    main()
