"""Write testdata/vectors/*.json from the pure-Python reference.

Run with CPython 3.12 (`make vectors`). The output is deterministic: running
it twice gives identical files.

Every case is written by hand below. For error cases the expected (code,
path) is stated here and checked against the reference, so a mistake in
either shows up as a generator failure. Ok cases may state the expected
prompt_chars / context_overflow, and cases of one `same=` group must give
byte-identical responses (several encodings of one request).
"""

from __future__ import annotations

import base64
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import reference as R  # noqa: E402
import schema  # noqa: E402
from reference import (
    OMIT,
    Arr,
    BadStr,
    Bin,
    Ext,
    Float,
    Int,
    Map,
    Nil,  # noqa: E402
    Raw,
    Str,
    inj,
    msg,
    pack,
    request,
    step,
    text,
)

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vectors")
T = "{observation}"
NAME_RE = schema.NAME_RE

# error codes, short
MAL, VER, UNK, MISS, DUP = (R.MALFORMED, R.UNSUPPORTED_VERSION, R.UNKNOWN_FIELD, R.MISSING_FIELD, R.DUPLICATE_KEY)
UTF8, ROLE, BTYPE, EID, BUDGET, TPL = (
    R.INVALID_UTF8,
    R.INVALID_ROLE,
    R.UNKNOWN_BLOCK_TYPE,
    R.INVALID_ENTRY_ID,
    R.INVALID_BUDGET,
    R.INVALID_TEMPLATE,
)


class Book:
    """Collects the cases of every file and checks them against the reference."""

    def __init__(self):
        self.files: dict[str, tuple[str, list]] = {}
        self.names: set[str] = set()
        self.groups: dict[str, list] = defaultdict(list)
        self.current = None

    def file(self, name: str, description: str):
        assert name not in self.files
        self.files[name] = (description, [])
        self.current = name

    def _add(self, name: str, description: str, req: bytes, tail: dict):
        assert NAME_RE.fullmatch(name), name
        assert name not in self.names, f"duplicate case name {name}"
        assert "\n" not in description
        self.names.add(name)
        case = {"name": name, "description": description, "request": base64.b64encode(req).decode("ascii")}
        case.update(tail)
        self.files[self.current][1].append(case)

    def ok(self, name, description, req: bytes, chars=None, overflow=None, same=None, mchars=None):
        resp, err = R.assemble_bytes(req)
        assert err is None, f"{name}: expected ok, reference says {err}"
        full = R.assemble(R.decode_request(req))
        if chars is not None:
            assert full["prompt_chars"] == chars, f"{name}: prompt_chars {full['prompt_chars']} != {chars}"
        if mchars is not None:
            assert full["message_chars"] == mchars, f"{name}: message_chars {full['message_chars']}"
        if overflow is not None:
            assert full["context_overflow"] is overflow, f"{name}: overflow"
        if same is not None:
            self.groups[same].append((name, resp))
        self._add(name, description, req, {"response": base64.b64encode(resp).decode("ascii")})
        return full

    def err(self, name, description, req: bytes, code: str, path: str, offset: int | None = None):
        assert (offset is not None) == (code == TPL), f"{name}: an offset exactly for invalid_template"
        resp, e = R.answer(req)
        err = None if e is None else (e.code, e.path, e.offset)
        assert resp is None and err == (code, path, offset), f"{name}: expected {(code, path, offset)}, reference says {err}"
        error = {"code": code, "path": path}
        if offset is not None:
            error["offset"] = offset
        self._add(name, description, req, {"error": error})

    def render(self) -> dict[str, str]:
        """The text of every vector file, by file name."""
        for group, members in self.groups.items():
            first = members[0][1]
            for name, resp in members:
                assert resp == first, f"group {group}: {name} differs from {members[0][0]}"
            assert len(members) >= 2, f"group {group} has one member"
        out = {}
        for fname, (description, cases) in sorted(self.files.items()):
            cases = sorted(cases, key=lambda c: c["name"])
            out[fname + ".json"] = json.dumps({"description": description, "cases": cases}, indent=1, ensure_ascii=True) + "\n"
        schema.check_texts("vectors", out)
        return out

    def write(self):
        files = self.render()
        os.makedirs(OUT_DIR, exist_ok=True)
        for stale in os.listdir(OUT_DIR):
            if stale.endswith(".json") and stale not in files:
                os.remove(os.path.join(OUT_DIR, stale))
        for fname, body in files.items():
            with open(os.path.join(OUT_DIR, fname), "w", encoding="ascii", newline="\n") as f:
                f.write(body)

    def summary(self) -> str:
        lines = [f"{name}.json: {len(cases)}" for name, (_, cases) in sorted(self.files.items())]
        total = sum(len(c) for _, c in self.files.values())
        return "\n".join(lines + [f"total: {total}"])


B = Book()


def blk(t):
    return text(t)


def M(role, *blocks):
    """A message with the given blocks (dicts or texts)."""
    return {"role": role, "content": [b if isinstance(b, dict) else text(b) for b in blocks]}


def with_key(pairs, *more):
    """A request map from explicit (key, value) pairs (duplicates allowed)."""
    return pack(Map(list(pairs) + list(more)))


# ===========================================================================
B.file(
    "order",
    "Assembly order (docs/SPEC.md §3): run messages, injection slot, goal messages, "
    "then each step as assistant raw_output and user render; copying; no merging.",
)

RUN = [msg("system", "You are a careful agent."), msg("user", "demo question"), msg("assistant", "demo answer")]
GOAL = [msg("user", "Find the bug in main.go.")]
STEPS = [step("ls", "main.go\nmain_test.go"), step("cat main.go", "package main")]
TOOLS = {
    "tools": [inj("t1", "grep: search files"), inj("t2", "cat: print a file")],
    "memory": [inj("m1", "The user prefers Go.")],
}

B.ok("order-empty-request", "only the template: no messages, empty digests", request(), chars=0, same="empty")
B.ok(
    "order-explicit-empty-fields",
    "every optional field given empty (v 1, [], {}, nil): same as absent",
    request(v=1, run_messages=[], injections={}, goal_messages=[], steps=[], max_prompt_chars=None),
    same="empty",
)
B.ok("order-run-only", "run messages copied in order", request(run_messages=RUN))
B.ok("order-goal-only", "goal messages only", request(goal_messages=GOAL))
B.ok("order-steps-only", "history only: assistant then user per step", request(steps=STEPS))
B.ok("order-injections-only", "injection slot only", request(injections=TOOLS))
B.ok(
    "order-all-segments",
    "run, injections (memory before tools), goal, steps",
    request(
        v=1,
        run_messages=RUN,
        injections=TOOLS,
        goal_messages=GOAL,
        steps=STEPS,
        observation_template="Output:\n```\n{observation}\n```\n\n",
    ),
)
B.ok(
    "order-all-segments-wire-order-reversed",
    "the same fields in reverse wire order give the same response",
    request(
        observation_template="Output:\n```\n{observation}\n```\n\n",
        steps=STEPS,
        goal_messages=GOAL,
        injections=TOOLS,
        run_messages=RUN,
        v=1,
    ),
)
B.ok(
    "order-run-multi-block-copied",
    "a run message with several blocks is copied block by block",
    request(run_messages=[M("system", "part one. ", "", "part three.")]),
    chars=21,
)
B.ok(
    "order-goal-multi-block-copied",
    "a goal message with several blocks is copied block by block",
    request(goal_messages=[M("user", "a", "bc", "def"), M("assistant", "x", "y")]),
    chars=8,
)
B.ok(
    "order-empty-content-copied",
    "messages with an empty content array are kept, size 0",
    request(run_messages=[M("system")], goal_messages=[M("user")]),
    chars=0,
)
B.ok("order-empty-text-block-copied", "an empty text block is kept as a block", request(run_messages=[M("user", "")]), chars=0)
B.ok(
    "order-consecutive-user-not-merged",
    "run user, injected users and goal user stay separate messages",
    request(
        run_messages=[msg("user", "a"), msg("user", "b")],
        injections={"c": [inj("1", "c"), inj("2", "d")]},
        goal_messages=[msg("user", "e")],
    ),
    chars=5,
)
B.ok(
    "order-consecutive-assistant-not-merged",
    "a goal ending with assistant is followed by the step's assistant",
    request(goal_messages=[msg("assistant", "plan")], steps=[step("act", "done")]),
)
B.ok(
    "order-consecutive-system-not-merged",
    "two system messages stay two",
    request(run_messages=[msg("system", "a"), msg("system", "b")]),
)
B.ok(
    "order-last-user-then-step-user",
    "goal's user, then assistant, then user: nothing merged",
    request(goal_messages=[msg("user", "go")], steps=[step("", "")]),
)
B.ok(
    "order-roles-anywhere",
    "any role may appear in run and goal messages",
    request(run_messages=[msg("assistant", "a"), msg("user", "u")], goal_messages=[msg("system", "s"), msg("assistant", "b")]),
)
B.ok(
    "order-steps-oldest-first",
    "steps are emitted in the given order",
    request(steps=[step("first", "1"), step("second", "2"), step("third", "3")]),
)
B.ok(
    "order-injections-between-run-and-goal",
    "the slot sits after run and before goal",
    request(goal_messages=[msg("user", "goal")], run_messages=[msg("system", "run")], injections={"k": [inj("e", "entry")]}),
)
B.ok(
    "order-text-copied-as-given",
    "whitespace, CR LF, tabs and braces in copied text are kept",
    request(run_messages=[msg("system", "  lead\r\n\ttab {observation} {{x}} trail  ")], goal_messages=[msg("user", "\n")]),
)
B.ok(
    "order-sixteen-run-messages",
    "16 messages: array16 headers in messages and message_chars",
    request(run_messages=[msg("user", str(i)) for i in range(16)]),
)
B.ok(
    "order-many-everything",
    "17 run, 17 injected, 17 goal messages and 17 steps",
    request(
        run_messages=[msg("system", f"r{i}") for i in range(17)],
        injections={"c": [inj(f"e{i}", f"i{i}") for i in range(17)]},
        goal_messages=[msg("user", f"g{i}") for i in range(17)],
        steps=[step(f"a{i}", f"o{i}") for i in range(17)],
    ),
)

# ===========================================================================
B.file(
    "injections",
    "The injection slot (docs/SPEC.md §3): channels sorted by code point, entries "
    "in the given order, one user message per entry, `injected` records; empty injections invisible.",
)

BASE = dict(run_messages=[msg("system", "run")], goal_messages=[msg("user", "goal")], steps=[step("a", "o")])
B.ok("injections-empty-absent", "no injections key", request(**BASE), same="empty-injections")
B.ok("injections-empty-map", "injections is {}", request(**BASE, injections={}), same="empty-injections")
B.ok(
    "injections-empty-channels",
    "injections has only empty channels (including the empty name)",
    request(**BASE, injections={"tools": [], "": [], "memory": []}),
    same="empty-injections",
)
B.ok("injections-one-entry", "one channel, one entry", request(**BASE, injections={"c": [inj("e1", "hello")]}))
B.ok(
    "injections-sort-bmp-max-before-astral",
    "U+FFFF sorts before U+1F600 by code point (UTF-16 order would put the emoji first)",
    request(injections={"\U0001f600": [inj("emoji", "E")], "\uffff": [inj("ffff", "F")]}),
)
B.ok(
    "injections-sort-private-use-before-astral",
    "U+E000 before U+10000 (UTF-16 code units D800 < E000 would reverse them)",
    request(injections={"\U00010000": [inj("a", "astral")], "\ue000": [inj("p", "private")]}),
)
B.ok(
    "injections-sort-fffd-vs-astral",
    "U+FFFD, U+FF5E, U+1D11E, U+10FFFD in code-point order",
    request(
        injections={
            "\U0010fffd": [inj("4", "d")],
            "\U0001d11e": [inj("3", "c")],
            "\ufffd": [inj("2", "b")],
            "\uff5e": [inj("1", "a")],
        }
    ),
)
B.ok(
    "injections-sort-uppercase-first",
    "A B a b: no case folding",
    request(injections={"b": [inj("b", "b")], "B": [inj("B", "B")], "a": [inj("a", "a")], "A": [inj("A", "A")]}),
)
B.ok(
    "injections-sort-digits-as-text",
    "1, 10, 9: names compare as text, not numbers",
    request(injections={"9": [inj("x", "9")], "10": [inj("x", "10")], "1": [inj("x", "1")]}),
)
B.ok(
    "injections-sort-prefix-first",
    "a, a\\u0000, ab: a prefix sorts first, NUL is a character",
    request(injections={"ab": [inj("x", "ab")], "a\x00": [inj("x", "a0")], "a": [inj("x", "a")]}),
)
B.ok(
    "injections-sort-empty-name-first",
    "the empty channel name sorts before space and letters",
    request(injections={"a": [inj("x", "a")], " ": [inj("x", "space")], "": [inj("x", "empty")]}),
)
B.ok(
    "injections-sort-not-normalized",
    "e+U+0301 < z < U+00E9: no Unicode normalization, both forms distinct",
    request(injections={"\u00e9": [inj("nfc", "nfc")], "z": [inj("z", "z")], "e\u0301": [inj("nfd", "nfd")]}),
)
B.ok(
    "injections-sort-utf8-lengths",
    "U+007F, U+0080, U+07FF, U+0800, U+FFFF, U+10000 in order",
    request(
        injections={
            "\U00010000": [inj("6", "6")],
            "\u0800": [inj("4", "4")],
            "\u0080": [inj("2", "2")],
            "\uffff": [inj("5", "5")],
            "\u07ff": [inj("3", "3")],
            "\x7f": [inj("1", "1")],
        }
    ),
)
B.ok(
    "injections-sort-cjk-hangul-latin",
    "Latin, CJK, Hangul by code point",
    request(injections={"\ud55c": [inj("h", "hangul")], "\u4e2d": [inj("c", "cjk")], "zz": [inj("l", "latin")]}),
)
B.ok(
    "injections-sort-wire-descending",
    "channels sent in descending order come out ascending",
    request(injections={n: [inj(n, n)] for n in ["e", "d", "c", "b", "a"]}),
)
B.ok(
    "injections-entries-given-order",
    "entries keep the given order (not sorted by entry_id)",
    request(injections={"c": [inj("z", "1"), inj("a", "2"), inj("m", "3")]}),
)
B.ok(
    "injections-repeated-entry-ids",
    "repeated entry_ids within and across channels are accepted",
    request(injections={"a": [inj("same", "1"), inj("same", "2")], "b": [inj("same", "3")]}),
)
B.ok(
    "injections-empty-content",
    "an entry with empty content is one empty user message",
    request(injections={"c": [inj("e", "")]}),
    chars=0,
)
B.ok(
    "injections-empty-channel-name",
    "the empty channel name is a channel like any other",
    request(injections={"": [inj("e", "x")]}),
)
B.ok(
    "injections-empty-channel-among-others",
    "an empty channel adds nothing to injected",
    request(run_messages=[msg("system", "r")], injections={"a": [], "b": [inj("e", "x")], "c": []}),
)
B.ok(
    "injections-message-index-after-run",
    "message_index counts the run messages before the slot",
    request(
        run_messages=[msg("system", "1"), msg("user", "2"), msg("assistant", "3")],
        injections={"x": [inj("a", "A"), inj("b", "B")], "y": [inj("c", "C")]},
    ),
)
B.ok(
    "injections-content-not-rendered",
    "entry content with braces is pasted as given",
    request(injections={"c": [inj("e", "{observation} {0} {{")]}),
)
B.ok(
    "injections-channel-name-special-chars",
    "channel names with quotes, backslash, newline recorded exactly",
    request(injections={'q"uote': [inj("1", "a")], "back\\slash": [inj("2", "b")], "new\nline": [inj("3", "c")]}),
)
B.ok(
    "injections-entry-id-whitespace",
    "an entry_id of one space is non-empty, accepted",
    request(injections={"c": [inj(" ", "x")]}),
)
B.ok("injections-entry-id-nul", "an entry_id of U+0000 is non-empty, accepted", request(injections={"c": [inj("\x00", "x")]}))
B.ok("injections-channel-nul", "a channel named U+0000", request(injections={"\x00": [inj("e", "x")]}))
B.ok(
    "injections-seventeen-entries",
    "17 entries: array16 in injected",
    request(injections={"c": [inj(f"e{i}", f"text {i}") for i in range(17)]}),
)
B.ok(
    "injections-twenty-channels",
    "20 channels (map16 in the request), sorted",
    request(injections={f"ch{i:02d}"[::-1]: [inj(str(i), str(i))] for i in range(20)}),
)
B.ok(
    "injections-not-merged-with-goal",
    "the last injected user message and the goal's user message stay apart",
    request(injections={"c": [inj("e", "x")]}, goal_messages=[msg("user", "y")]),
)
B.ok(
    "injections-astral-channel-and-ids",
    "astral characters in channel, entry_id and content",
    request(injections={"\U0001f4da": [inj("\U0001f516", "\U0001f600 smile")]}),
)

# ===========================================================================
B.file(
    "history",
    "History (docs/SPEC.md §3): per step an assistant message with raw_output as "
    "given and a user message with the rendered observation.",
)

B.ok("history-one-step", "one step", request(steps=[step("run tests", "PASS")]))
B.ok("history-three-steps", "three steps in order", request(steps=[step("a", "1"), step("b", "2"), step("c", "3")]))
B.ok(
    "history-raw-output-not-rendered",
    "raw_output with braces is pasted as given, never formatted",
    request(steps=[step("{observation} {0} {{ }} {", "x")]),
)
B.ok(
    "history-observation-braces-literal",
    "an observation with braces is inserted literally, not re-formatted",
    request(steps=[step("x", "{observation} {0} {{ }} } {")]),
)
B.ok(
    "history-raw-output-long-not-truncated",
    "a 5000-character raw_output is pasted whole",
    request(steps=[step("r" * 5000, "o")]),
    chars=5001,
)
B.ok("history-empty-raw-output", "an empty raw_output gives an empty assistant message", request(steps=[step("", "obs")]))
B.ok(
    "history-empty-observation",
    "an empty observation renders the template's literal text",
    request(steps=[step("act", "")], observation_template="Output: [{observation}]"),
    chars=13,
)
B.ok(
    "history-observation-newlines",
    "CR, LF, CR LF and tabs in the observation are kept",
    request(steps=[step("x", "a\r\nb\nc\rd\te")]),
)
B.ok(
    "history-downstream-template",
    "the downstream template Output: fence",
    request(steps=[step("ls", "a.txt\nb.txt")], observation_template="Output:\n```\n{observation}\n```\n\n"),
)
B.ok(
    "history-observation-twice",
    "a template naming observation twice renders it twice",
    request(steps=[step("x", "ab")], observation_template="{observation}|{observation}"),
    chars=6,
)
B.ok(
    "history-after-goal-assistant",
    "a goal ending with an assistant message, then steps",
    request(goal_messages=[msg("user", "q"), msg("assistant", "thinking")], steps=[step("act", "result")]),
)
B.ok(
    "history-nul-and-astral",
    "U+0000 and astral characters in raw_output and observation",
    request(steps=[step("a\x00b", "\U0001f600\x00")]),
)
B.ok(
    "history-twenty-steps",
    "20 steps: 40 history messages",
    request(steps=[step(f"action {i}", f"observation {i}") for i in range(20)]),
)
B.ok("history-same-step-repeated", "identical steps are all kept", request(steps=[step("same", "same")] * 3))
B.ok(
    "history-template-not-applied-to-raw-output",
    "the template wraps observations only",
    request(steps=[step("raw", "obs")], observation_template="<{observation}>"),
    chars=8,
)

# ===========================================================================
B.file(
    "template-render",
    "Observation rendering (docs/SPEC.md §5): accepted templates render exactly "
    "like CPython 3.12's template.format(observation=obs).",
)


def render_case(name, template, obs, description, chars=None):
    B.ok(name, description, request(steps=[step("", obs)], observation_template=template), chars=chars)


render_case("template-render-plain", T, "hello", "just the observation", chars=5)
render_case("template-render-literal-around", "[{observation}]", "x", "literal text around the field")
render_case("template-render-escaped-braces", "{{{observation}}}", "x", "{{ and }} are literal braces", chars=3)
render_case("template-render-escaped-braces-spaced", "{{ {observation} }}", "x", "escapes with spaces")
render_case(
    "template-render-escaped-field-plus-field",
    "{{observation}} = {observation}",
    "x",
    "an escaped field name beside a real field",
)
render_case("template-render-only-closing-escapes", "}}{observation}}}", "x", "}} escapes on both sides")
render_case(
    "template-render-several-fields",
    "{observation}/{observation!r}/{observation:>3}",
    "x",
    "three fields, each with its own conversion and spec",
)
render_case("template-render-unicode-literal", "\u2192 {observation} \U0001f600", "x", "non-ASCII literal text")
render_case("template-render-conv-s", "{observation!s}", "x'y", "!s is the string itself")
render_case("template-render-conv-r", "{observation!r}", "abc", "!r quotes with '")
render_case("template-render-conv-r-single-quote", "{observation!r}", "it's", "!r switches to \" for a '")
render_case("template-render-conv-r-both-quotes", "{observation!r}", "'\"", "!r with both quotes escapes '")
render_case("template-render-conv-r-backslash", "{observation!r}", "a\\b", "!r doubles a backslash")
render_case(
    "template-render-conv-r-controls",
    "{observation!r}",
    "\x00\x07\t\n\r\x1b\x7f",
    "!r escapes C0 controls and DEL (\\t \\n \\r named, others \\x..)",
)
render_case(
    "template-render-conv-r-latin1-controls",
    "{observation!r}",
    "\x80\x85\x9f\xa0\xad\xe9",
    "!r: C1 controls, NBSP and soft hyphen escaped as \\x.., e-acute kept",
)
render_case(
    "template-render-conv-r-separators",
    "{observation!r}",
    "\u2028\u2029\u3000 ",
    "!r escapes line/paragraph separators and ideographic space; ASCII space kept",
)
render_case(
    "template-render-conv-r-format-chars",
    "{observation!r}",
    "\u200b\u200d\ufeff\u202e",
    "!r escapes format characters (ZWSP, ZWJ, BOM, RLO)",
)
render_case(
    "template-render-conv-r-printable-nonascii",
    "{observation!r}",
    "\u00e9\u4e2d\u0301\U0001f600\u05d0",
    "!r keeps printable letters, combining marks and emoji",
)
render_case(
    "template-render-conv-r-unassigned",
    "{observation!r}",
    "\u0378\U000e0080",
    "!r escapes unassigned code points (\\u0378, \\U000e0080)",
)
render_case(
    "template-render-conv-r-unicode16-addition",
    "{observation!r}",
    "\u1c89",
    "U+1C89 is unassigned in Unicode 15.0 (assigned in 16.0): !r escapes it",
)
render_case("template-render-conv-r-noncharacters", "{observation!r}", "\ufdd0\ufffe\uffff\U0010ffff", "!r escapes noncharacters")
render_case("template-render-conv-r-private-use", "{observation!r}", "\ue000\U000f0000", "!r escapes private-use characters")
render_case("template-render-conv-a", "{observation!a}", "abc", "!a of ASCII is like !r")
render_case(
    "template-render-conv-a-nonascii",
    "{observation!a}",
    "\u00e9\u4e2d\U0001f600\x85",
    "!a escapes every non-ASCII code point: \\xe9 \\u4e2d \\U0001f600 \\x85",
)
render_case("template-render-conv-a-quotes", "{observation!a}", "'\u00e9\"", "!a with both quotes")
render_case("template-render-width-default-left", "{observation:5}", "ab", "str default alignment is left", chars=5)
render_case("template-render-align-right", "{observation:>5}", "ab", "right alignment")
render_case("template-render-align-center-odd", "{observation:^6}", "x", "center: the extra pad goes right")
render_case("template-render-align-center-even", "{observation:^5}", "x", "center, equal pads")
render_case("template-render-fill-char", "{observation:*^7}", "ab", "fill character")
render_case("template-render-fill-astral", "{observation:\U0001f600>4}", "a", "an astral fill character", chars=4)
render_case("template-render-fill-nul", "{observation:\x00<3}", "a", "U+0000 as fill", chars=3)
render_case("template-render-fill-align-char", "{observation:<<4}", "a", "'<' as fill then align")
render_case("template-render-fill-digit", "{observation:5>3}", "a", "a digit as fill")
render_case("template-render-width-smaller", "{observation:2}", "abcdef", "a width below the length pads nothing")
render_case(
    "template-render-width-counts-code-points",
    "{observation:>4}",
    "e\u0301\U0001f600",
    "width counts code points (3 here), not graphemes or UTF-16 units",
    chars=4,
)
render_case("template-render-precision", "{observation:.3}", "abcdef", "precision truncates to 3 code points")
render_case(
    "template-render-precision-astral",
    "{observation:.2}",
    "\U0001f600\U0001f601\U0001f602",
    "precision counts code points of astral characters",
    chars=2,
)
render_case("template-render-precision-zero", "[{observation:.0}]", "abc", "precision 0 gives nothing", chars=2)
render_case("template-render-precision-longer", "{observation:.10}", "abc", "precision above the length")
render_case(
    "template-render-precision-huge", "{observation:.99999999999}", "abc", "a huge precision is accepted and truncates nothing"
)
render_case("template-render-width-precision", "{observation:*>6.2}", "abcdef", "fill, align, width and precision")
render_case("template-render-zero-flag", "{observation:05}", "x", "0 flag on str: fill 0, left aligned")
render_case("template-render-zero-flag-align", "{observation:<05}", "x", "align then 0 flag")
render_case("template-render-zero-flag-right", "{observation:>05}", "x", "0 flag with right alignment")
render_case("template-render-fill-then-zero-width", "{observation:x<05}", "ab", "with a fill, 0 is a width digit")
render_case("template-render-zero-fill-align", "{observation:0^5}", "x", "0 as fill with center")
render_case("template-render-type-s", "{observation:s}", "x", "type s")
render_case("template-render-type-s-width", "{observation:>3s}", "x", "width with type s")
render_case("template-render-empty-spec", "{observation:}", "x", "an empty format spec")
render_case("template-render-conv-empty-spec", "{observation!r:}", "x", "conversion then empty spec")
render_case("template-render-conv-r-width", "{observation!r:^9}", "ab", "width applies after !r")
render_case("template-render-conv-a-precision", "{observation!a:.4}", "\u00e9", "precision applies after !a")
render_case("template-render-align-no-width", "{observation:<}", "x", "alignment without width")
render_case("template-render-width-arabic-indic", "{observation:\u0665}", "x", "width in Arabic-Indic digits (5)", chars=5)
render_case("template-render-width-devanagari", "{observation:>\u0967\u0966}", "x", "width in Devanagari digits (10)", chars=10)
render_case("template-render-width-fullwidth", "{observation:\uff13}", "x", "width in fullwidth digits (3)", chars=3)
render_case(
    "template-render-width-math-bold",
    "{observation:\U0001d7d1}",
    "x",
    "width in an astral Nd digit (MATHEMATICAL BOLD DIGIT THREE)",
    chars=3,
)
render_case("template-render-width-mixed-digits", "{observation:1\u0660}", "x", "ASCII 1 and Arabic-Indic 0 (10)", chars=10)
render_case(
    "template-render-precision-unicode-digits", "{observation:.\u0662}", "abc", "precision in Arabic-Indic digits (2)", chars=2
)
render_case("template-render-width-leading-zeros", "{observation:>0003}", "x", "leading zeros in the width")
render_case("template-render-width-largeish", "{observation:1000}", "x", "width 1000", chars=1000)
render_case("template-render-nested-literal-braces-in-literal", "a}}b{{c{observation}", "x", "escapes between literal characters")
render_case("template-render-newline-fill", "{observation:\n^5}", "x", "a newline as fill character")
B.ok(
    "template-render-width-limit-unrendered",
    "width exactly 1,048,576 is accepted (no step renders it)",
    request(observation_template="{observation:x^1048576}"),
)
B.ok(
    "template-render-width-limit-zero-flag-unrendered",
    "0 flag then width 1048576: accepted",
    request(observation_template="{observation:01048576}"),
)
B.ok(
    "template-render-width-limit-unicode-digits-unrendered",
    "width 1048576 written in Arabic-Indic digits: accepted",
    request(observation_template="{observation:\u0661\u0660\u0664\u0668\u0665\u0667\u0666}"),
)
render_case(
    "template-render-precision-max",
    "{observation:.9223372036854775807}",
    "abc",
    "precision 2^63-1 (the largest CPython parses) truncates nothing",
    chars=3,
)
render_case("template-render-width-thai", "{observation:>\u0e53}", "x", "width in Thai digits (3)", chars=3)
render_case("template-render-conv-r-unicode-width", "{observation!r:\u0661\u0660}", "x", "Arabic-Indic width after !r", chars=10)
B.ok(
    "template-render-width-limit-after-precision",
    "a precision above the width limit is fine",
    request(observation_template="{observation:.1048577}", steps=[step("", "ab")]),
)

# ===========================================================================
B.file(
    "template-reject",
    "Template rejection (docs/SPEC.md §5): invalid_template at "
    "observation_template for every template CPython raises on, every template without a "
    "field, and the four GAP classes.",
)


def reject(name, template, offset, description):
    """invalid_template at observation_template, the problem at code point offset."""
    B.err(name, description, request(observation_template=template), TPL, "observation_template", offset)


reject("template-reject-empty", "", 0, "the empty template has no field")
reject("template-reject-no-field", "Output:", 0, "no replacement field at all")
reject("template-reject-escaped-field-only", "{{observation}}", 0, "an escaped field is literal text: observation would vanish")
reject("template-reject-nul-only", "\x00", 0, "U+0000 only")
reject("template-reject-positional-auto", "{}", 0, "an automatic positional field (CPython IndexError)")
reject("template-reject-positional-index", "{0}", 1, "a numbered field (CPython IndexError)")
reject("template-reject-other-name", "{obs}", 1, "another name (CPython KeyError)")
reject("template-reject-capitalized", "{Observation}", 1, "names are case-sensitive")
reject("template-reject-space-after-name", "{observation }", 1, "a space inside the field name")
reject("template-reject-space-before-name", "{ observation}", 1, "a leading space inside the field name")
reject("template-reject-second-field-unknown", "{observation}{x}", 14, "a second field with another name")
reject("template-reject-second-field-positional", "{observation} {}", 14, "a second, positional field")
reject("template-reject-unknown-first", "{x}{observation}", 1, "an unknown field before a good one")
reject("template-reject-gap-attribute", "{observation.x}", 12, "GAP: attribute access")
reject(
    "template-reject-gap-attribute-cpython-ok",
    "{observation.upper}",
    12,
    "GAP: attribute access CPython accepts (renders a bound method)",
)
reject("template-reject-gap-index", "{observation[0]}", 12, "GAP: indexing CPython accepts")
reject("template-reject-gap-index-name", "{observation[x]}", 12, "GAP: indexing with a name")
reject("template-reject-gap-empty-attribute", "{observation.}", 12, "an empty attribute (CPython raises too)")
reject("template-reject-gap-empty-index", "{observation[]}", 12, "an empty index (CPython raises too)")
reject("template-reject-gap-index-positional", "{[0]}", 0, "indexing a positional field")
reject("template-reject-gap-after-good-field", "{observation}{observation[0]}", 25, "a GAP field after a good one")
reject("template-reject-gap-nested-spec", "{observation:{x}}", 13, "GAP: a nested field in the format spec")
reject(
    "template-reject-gap-nested-spec-cpython-ok",
    "{observation:>{observation!s:.0}1}",
    14,
    "GAP: a nested field CPython accepts for every observation",
)
reject("template-reject-gap-nested-auto", "{observation:{}}", 13, "GAP: an automatic nested field")
reject("template-reject-gap-width-above", "{observation:1048577}", 13, "GAP: width 1,048,577")
reject("template-reject-gap-width-above-fill", "{observation:x<1048577}", 15, "GAP: width above the limit with a fill")
reject("template-reject-gap-width-above-zero-flag", "{observation:01048577}", 14, "GAP: 0 flag then width 1048577")
reject(
    "template-reject-gap-width-above-leading-zeros", "{observation:0001048577}", 14, "GAP: 0 flag, then width 001048577 = 1048577"
)
reject(
    "template-reject-gap-width-above-unicode",
    "{observation:\u0661\u0660\u0664\u0668\u0665\u0667\u0667}",
    13,
    "GAP: width 1048577 in Arabic-Indic digits",
)
reject("template-reject-gap-width-above-precision", "{observation:2000000.1}", 13, "GAP: width above the limit with a precision")
reject("template-reject-gap-width-above-conv", "{observation!r:>9999999}", 16, "GAP: width above the limit after !r")
reject(
    "template-reject-width-overflow",
    "{observation:99999999999999999999}",
    13,
    "a width beyond Py_ssize_t (CPython: too many decimal digits)",
)
reject(
    "template-reject-precision-overflow",
    "{observation:.99999999999999999999}",
    14,
    "a precision beyond Py_ssize_t (CPython: too many decimal digits)",
)
reject("template-reject-unclosed", "{observation", 0, "an unclosed field")
reject("template-reject-lone-open", "{observation}{", 13, "a single { at the end")
reject("template-reject-lone-close", "}{observation}", 0, "a single } before the field")
reject("template-reject-lone-close-after", "{observation}}", 13, "a single } after the field")
reject("template-reject-open-escape-mismatch", "{{observation}", 13, "{{ then a single }")
reject("template-reject-conv-missing", "{observation!}", 12, "! without a conversion character")
reject("template-reject-conv-unknown", "{observation!x}", 13, "unknown conversion x")
reject("template-reject-conv-uppercase", "{observation!R}", 13, "conversions are lowercase")
reject("template-reject-conv-two-chars", "{observation!rr}", 14, "two conversion characters")
reject("template-reject-conv-unclosed", "{observation!r", 0, "unclosed after the conversion")
reject("template-reject-align-equals", "{observation:=5}", 13, "'=' alignment is not allowed for str")
reject("template-reject-zero-flag-equals", "{observation:0=5}", 14, "'=' alignment with fill 0")
reject("template-reject-sign-plus", "{observation:+}", 13, "sign not allowed for str")
reject("template-reject-sign-minus", "{observation:-}", 13, "sign not allowed for str")
reject("template-reject-sign-space", "{observation: }", 13, "space sign not allowed for str")
reject("template-reject-alternate", "{observation:#}", 13, "alternate form not allowed for str")
reject("template-reject-z", "{observation:z}", 13, "z not allowed for str")
reject("template-reject-comma", "{observation:,}", 13, "',' grouping with s")
reject("template-reject-underscore", "{observation:_}", 13, "'_' grouping with s")
reject("template-reject-type-d", "{observation:d}", 13, "unknown format code d for str")
reject("template-reject-type-x", "{observation:5x}", 14, "unknown format code x after a width")
reject("template-reject-type-percent", "{observation:%}", 13, "unknown format code %")
reject("template-reject-type-newline", "{observation:\n}", 13, "a newline alone is a (bad) type character")
reject("template-reject-missing-precision", "{observation:5.}", 14, "format spec missing precision")
reject("template-reject-two-types", "{observation:ss}", 13, "invalid format specifier")
reject("template-reject-fill-open-brace", "{observation:{<5}", 0, "{ cannot be a fill (unbalanced braces)")
reject("template-reject-fill-close-brace", "{observation:}<5}", 16, "} ends the field; a lone } follows")
reject("template-reject-precision-then-type-x", "{observation!s:.1x}", 17, "precision followed by an unknown type")
reject(
    "template-reject-precision-2-pow-63",
    "{observation:.9223372036854775808}",
    14,
    "precision 2^63 overflows Py_ssize_t (CPython: too many decimal digits)",
)
reject("template-reject-width-superscript", "{observation:\u00b2}", 13, "superscript two is a digit but not Nd: a bad type")
reject("template-reject-width-vulgar-fraction", "{observation:\u2155}", 13, "a numeric non-digit is a bad type")
reject("template-reject-brace-in-field-name", "{observation{}}", 12, "a { inside the field name")
reject("template-reject-bracket-close-in-name", "{observation]}", 1, "a ] in the field name (CPython KeyError)")
reject(
    "template-reject-offset-code-points",
    "\u00e9\U0001f600\u4e2d{observation!q}",
    16,
    "offsets count code points: 3 before the field (9 UTF-8 bytes), the conversion q at 16",
)
reject("template-reject-offset-first-escape", "ab{{c}}{{", 2, "no field: the offset is the first '{{'")
reject(
    "template-reject-offset-astral-close",
    "\U0001f600\U0001f600}{observation}",
    2,
    "a lone '}' after two astral code points (8 bytes, 4 UTF-16 units): offset 2",
)
reject("template-reject-conv-brace-then-close", "{observation!}}", 12, "'!' then '}}': no conversion, at the '!'")
reject("template-reject-comma-underscore", "{observation:,_}", 14, "both ',' and '_': at the second")
reject("template-reject-underscore-comma", "{observation:_,}", 14, "both '_' and ',': at the second")
reject(
    "template-reject-width-overflow-offset",
    "{observation:>99999999999999999999}",
    14,
    "a width beyond Py_ssize_t: at its first digit",
)
reject(
    "template-reject-precision-overflow-offset",
    "{observation:5.99999999999999999999}",
    15,
    "a precision beyond Py_ssize_t: at its first digit",
)
reject("template-reject-name-before-conversion", "{obs!x}", 1, "an unknown name wins over an unknown conversion")
reject("template-reject-conversion-before-nested", "{observation!x:{y}}", 13, "an unknown conversion wins over a nested field")
reject(
    "template-reject-semantic-before-later-syntax",
    "{x}}",
    1,
    "a field's own problem comes before a syntax error after it (left to right)",
)
reject("template-reject-sign-before-equals", "{observation:=+5}", 14, "the sign is reported before the '=' alignment")
reject("template-reject-type-before-sign", "{observation:+d}", 14, "the type is reported before the sign")
reject("template-reject-gap-nested-after-align", "{observation:>{}}", 14, "GAP: a nested field after an alignment")

# ===========================================================================
B.file(
    "sizes",
    "Sizes (docs/SPEC.md §4): a text block's size is its number of Unicode code points "
    "(Python len()), never UTF-16 units or bytes; message_chars per message, prompt_chars the sum.",
)


def size_case(name, t, chars, description):
    B.ok(name, description, request(goal_messages=[msg("user", t)]), chars=chars)


size_case("sizes-ascii", "hello", 5, "ASCII: 5")
size_case("sizes-empty", "", 0, "empty text: 0")
size_case("sizes-astral-emoji", "\U0001f600", 1, "one astral emoji: 1 (2 UTF-16 units, 4 bytes)")
size_case("sizes-mixed-byte-lengths", "a\u00e9\u4e2d\U0001f600", 4, "1-, 2-, 3- and 4-byte characters: 4")
size_case("sizes-combining-mark", "e\u0301", 2, "e + combining acute: 2")
size_case("sizes-stacked-combining", "a\u0300\u0301\u0302\u0303", 5, "four combining marks on one base: 5")
size_case(
    "sizes-zwj-family",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
    7,
    "family emoji ZWJ sequence: 7 code points",
)
size_case("sizes-flag", "\U0001f1eb\U0001f1f7", 2, "regional indicator flag: 2")
size_case("sizes-skin-tone", "\U0001f44d\U0001f3fd", 2, "emoji with skin tone modifier: 2")
size_case("sizes-variation-selector", "\u2764\ufe0f", 2, "heart + VS16: 2")
size_case(
    "sizes-tag-sequence",
    "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
    7,
    "England flag tag sequence: 7",
)
size_case("sizes-devanagari-conjunct", "\u0915\u094d\u0937\u093f", 4, "Devanagari conjunct: 4")
size_case("sizes-hangul-jamo", "\u1100\u1161\uac00", 3, "conjoining jamo (2) and precomposed syllable (1)")
size_case("sizes-nul", "a\x00b", 3, "U+0000 counts: 3")
size_case("sizes-only-nul", "\x00\x00", 2, "two U+0000")
size_case("sizes-noncharacters", "\ufdd0\ufffe\uffff\U0001fffe\U0010ffff", 5, "noncharacters are characters: 5")
size_case("sizes-unassigned", "\u0378\u1c89\U000e0080", 3, "unassigned code points: 3")
size_case("sizes-private-use", "\ue000\U000f0000\U00100000", 3, "private use: 3")
size_case("sizes-bom", "\ufeffx", 2, "a BOM is a character: 2")
size_case("sizes-crlf", "a\r\nb", 4, "CR LF counts 2")
size_case("sizes-max-code-point", "\U0010ffff", 1, "U+10FFFF: 1")
size_case("sizes-surrogate-neighbours", "\ud7ff\ue000", 2, "U+D7FF and U+E000 (around the surrogates): 2")
size_case("sizes-c1-controls", "\x80\x85\x9f", 3, "C1 controls: 3")
size_case("sizes-long-emoji-run", "\U0001f600" * 300, 300, "300 astral emoji: 300 (1200 bytes)")
B.ok(
    "sizes-multi-block-sum",
    "a message's size is the sum of its blocks",
    request(run_messages=[M("user", "a", "\U0001f600\U0001f600", "", "xyz")]),
    chars=6,
)
B.ok(
    "sizes-message-chars-parallel",
    "message_chars has one entry per message, across segments",
    request(
        run_messages=[msg("system", "abc")],
        injections={"c": [inj("e", "\U0001f600")]},
        goal_messages=[M("user", "de", "f")],
        steps=[step("xy", "z")],
        observation_template="<{observation}>",
    ),
    chars=12,
    mchars=[3, 1, 3, 2, 3],
)
B.ok(
    "sizes-render-padding-counted",
    "padding from the template counts",
    request(steps=[step("", "\U0001f600")], observation_template="{observation:*^10}"),
    chars=10,
)
B.ok(
    "sizes-render-conv-r-counted",
    "the quotes added by !r count",
    request(steps=[step("", "\U0001f600")], observation_template="{observation!r}"),
    chars=3,
)
B.ok(
    "sizes-render-conv-a-counted",
    "the escape written by !a counts (12 ASCII characters)",
    request(steps=[step("", "\U0001f600")], observation_template="{observation!a}"),
    chars=12,
)
B.ok(
    "sizes-render-template-literal-counted",
    "template literal text counts; {{ counts once",
    request(steps=[step("", "x")], observation_template="{{\u00e9{observation}}}"),
    chars=4,
)

# ===========================================================================
B.file(
    "budget",
    "Budget (docs/SPEC.md §4): context_overflow is true iff max_prompt_chars is given and "
    "prompt_chars > max_prompt_chars; the messages are never truncated.",
)

FIVE = dict(goal_messages=[msg("user", "hello")])  # 5 code points
B.ok("budget-absent", "no budget: never overflows", request(**FIVE), chars=5, overflow=False, same="budget-none")
B.ok(
    "budget-nil",
    "nil budget is the same as absent",
    request(**FIVE, max_prompt_chars=None),
    chars=5,
    overflow=False,
    same="budget-none",
)
B.ok(
    "budget-nil-first", "nil budget as the first key", request(max_prompt_chars=None, **FIVE), overflow=False, same="budget-none"
)
B.ok("budget-equal", "prompt_chars equal to the budget: no overflow", request(**FIVE, max_prompt_chars=5), overflow=False)
B.ok("budget-one-over", "prompt_chars one over the budget: overflow", request(**FIVE, max_prompt_chars=4), overflow=True)
B.ok("budget-one-under", "budget one above prompt_chars", request(**FIVE, max_prompt_chars=6), overflow=False)
B.ok("budget-zero-empty", "budget 0 with nothing: 0 > 0 is false", request(max_prompt_chars=0), chars=0, overflow=False)
B.ok(
    "budget-zero-empty-text",
    "budget 0 with empty texts: no overflow",
    request(goal_messages=[msg("user", "")], max_prompt_chars=0),
    chars=0,
    overflow=False,
)
B.ok(
    "budget-zero-nonempty",
    "budget 0 with one character: overflow",
    request(goal_messages=[msg("user", "x")], max_prompt_chars=0),
    overflow=True,
)
B.ok(
    "budget-code-points-not-utf16",
    "two emoji are 2 code points (4 UTF-16 units): budget 2 holds",
    request(goal_messages=[msg("user", "\U0001f600\U0001f601")], max_prompt_chars=2),
    chars=2,
    overflow=False,
)
B.ok(
    "budget-code-points-not-bytes",
    "'\u00e9\u00e9\u00e9' is 3 code points (6 bytes): budget 3 holds",
    request(goal_messages=[msg("user", "\u00e9\u00e9\u00e9")], max_prompt_chars=3),
    overflow=False,
)
B.ok(
    "budget-overflow-not-truncated",
    "an overflowing request still returns every message whole",
    request(
        run_messages=[msg("system", "s" * 40)],
        goal_messages=[msg("user", "g" * 40)],
        steps=[step("a" * 10, "o" * 10)],
        max_prompt_chars=10,
    ),
    chars=100,
    overflow=True,
)
B.ok(
    "budget-counts-rendered-history",
    "the rendered template counts toward the budget",
    request(steps=[step("ab", "cd")], observation_template="Output: {observation}", max_prompt_chars=11),
    chars=12,
    overflow=True,
)
B.ok("budget-large-uint32", "a budget needing uint32", request(**FIVE, max_prompt_chars=4_000_000_000), overflow=False)
B.ok("budget-int64-max", "budget 2^63-1", request(**FIVE, max_prompt_chars=(1 << 63) - 1), overflow=False)
B.ok(
    "budget-uint64-max",
    "budget 2^64-1 (uint64, above int64): an int >= 0, accepted, no overflow",
    request(**FIVE, max_prompt_chars=(1 << 64) - 1),
    overflow=False,
)
B.ok(
    "budget-int64-encoded",
    "budget 4 sent as int64: same as fixint",
    request(**FIVE, max_prompt_chars=Int(4, "int64")),
    overflow=True,
    same="budget-4",
)
B.ok(
    "budget-int8-encoded",
    "budget 4 sent as int8",
    request(**FIVE, max_prompt_chars=Int(4, "int8")),
    overflow=True,
    same="budget-4",
)
B.ok(
    "budget-uint16-encoded",
    "budget 4 sent as uint16",
    request(**FIVE, max_prompt_chars=Int(4, "uint16")),
    overflow=True,
    same="budget-4",
)
B.ok("budget-fixint-encoded", "budget 4 as positive fixint", request(**FIVE, max_prompt_chars=4), overflow=True, same="budget-4")
B.err("budget-negative-one", "budget -1", request(**FIVE, max_prompt_chars=-1), BUDGET, "max_prompt_chars")
B.err(
    "budget-negative-fixint-min",
    "budget -32 (negative fixint)",
    request(**FIVE, max_prompt_chars=-32),
    BUDGET,
    "max_prompt_chars",
)
B.err("budget-negative-int8", "budget -33 (int8)", request(**FIVE, max_prompt_chars=-33), BUDGET, "max_prompt_chars")
B.err("budget-negative-int64-min", "budget -2^63", request(**FIVE, max_prompt_chars=-(1 << 63)), BUDGET, "max_prompt_chars")
B.err(
    "budget-negative-as-int64",
    "budget -1 sent as int64",
    request(**FIVE, max_prompt_chars=Int(-1, "int64")),
    BUDGET,
    "max_prompt_chars",
)
B.err("budget-float", "a float budget", request(**FIVE, max_prompt_chars=Float(5.0)), MAL, "max_prompt_chars")
B.err("budget-float32", "a float32 budget", request(**FIVE, max_prompt_chars=Float(5.0, double=False)), MAL, "max_prompt_chars")
B.err("budget-string", "a str budget", request(**FIVE, max_prompt_chars="5"), MAL, "max_prompt_chars")
B.err("budget-bool", "a bool budget", request(**FIVE, max_prompt_chars=True), MAL, "max_prompt_chars")
B.err("budget-array", "an array budget", request(**FIVE, max_prompt_chars=[5]), MAL, "max_prompt_chars")
B.err("budget-ext", "an ext budget", request(**FIVE, max_prompt_chars=Ext(1, b"\x05")), MAL, "max_prompt_chars")

# ===========================================================================
B.file(
    "digests",
    "prefix_digests (docs/SPEC.md §6): lowercase hex SHA-256 of the canonical msgpack of "
    "messages[0:end of run], [0:end of injections], [0:end of goal].",
)

B.ok("digests-all-empty", "three digests of the empty array (sha256 of 0x90)", request())
B.ok("digests-run-only", "injections and goal digests equal the run digest", request(run_messages=RUN))
B.ok("digests-injections-only", "run digest of the empty array", request(injections=TOOLS))
B.ok("digests-goal-only", "run and injections digests of the empty array", request(goal_messages=GOAL))
B.ok(
    "digests-all-segments",
    "three different digests",
    request(run_messages=RUN, injections=TOOLS, goal_messages=GOAL),
    same="digests-steps",
)
B.ok(
    "digests-explicit-empty-steps",
    "steps: [] given explicitly: identical to digests-all-segments",
    request(run_messages=RUN, injections=TOOLS, goal_messages=GOAL, steps=[]),
    same="digests-steps",
)
B.ok(
    "digests-with-steps",
    "the digests stop at the goal: steps do not enter them",
    request(run_messages=RUN, injections=TOOLS, goal_messages=GOAL, steps=STEPS),
)
B.ok(
    "digests-multi-block",
    "multi-block messages are hashed with every block",
    request(run_messages=[M("system", "a", "b")], goal_messages=[M("user", "c", "", "d")]),
)
B.ok("digests-empty-content", "a message with no blocks is hashed as such", request(run_messages=[M("system")]))
B.ok(
    "digests-sixteen-run-messages",
    "16 run messages: the hashed array has an array16 header",
    request(run_messages=[msg("user", "m")] * 16, goal_messages=[msg("user", "g")]),
)
B.ok(
    "digests-long-text",
    "a 300-character text is hashed with a str16 header",
    request(run_messages=[msg("system", "\u00e9" * 150)]),
)
B.ok(
    "digests-unicode",
    "astral and combining text hashed as UTF-8",
    request(run_messages=[msg("system", "\U0001f600e\u0301")], injections={"\uffff": [inj("x", "\x00")]}),
)
full_a = B.ok(
    "digests-goal-a",
    "same run and injections as digests-goal-b, different goal",
    request(run_messages=RUN, injections=TOOLS, goal_messages=[msg("user", "goal A")]),
)
full_b = B.ok(
    "digests-goal-b",
    "same run and injections as digests-goal-a, different goal",
    request(run_messages=RUN, injections=TOOLS, goal_messages=[msg("user", "goal B")]),
)
assert full_a["prefix_digests"]["injections"] == full_b["prefix_digests"]["injections"]
assert full_a["prefix_digests"]["goal"] != full_b["prefix_digests"]["goal"]

# ===========================================================================
B.file(
    "encoding",
    "Decoding accepts any valid msgpack encoding (docs/SPEC.md §2) and the response is "
    "canonical (docs/SPEC.md §6). Cases named encoding-<form>-<base> of one base give identical responses.",
)

BASE_A = dict(
    v=1,
    run_messages=[msg("system", "sys")],
    injections={"c": [inj("e", "inj")]},
    goal_messages=[msg("user", "goal")],
    steps=[step("raw", "obs")],
    observation_template=T,
    max_prompt_chars=100,
)


def base_a(**over):
    """BASE_A with some values replaced by other encodings."""
    d = dict(BASE_A)
    d.update(over)
    return request(**d)


def S(s, fmt):
    return Str(s, fmt)


def msg_enc(role, t, sfmt=None, mfmt=None, afmt=None, role_key_fmt=None):
    return Map(
        [
            (S("role", role_key_fmt), S(role, sfmt)),
            (
                S("content", role_key_fmt),
                Arr([Map([(S("type", role_key_fmt), S("text", sfmt)), (S("text", role_key_fmt), S(t, sfmt))], mfmt)], afmt),
            ),
        ],
        mfmt,
    )


B.ok("encoding-canonical-a", "base request A, canonical encoding", base_a(), same="a")
B.ok("encoding-v-uint8-a", "v as uint8", base_a(v=Int(1, "uint8")), same="a")
B.ok("encoding-v-uint16-a", "v as uint16", base_a(v=Int(1, "uint16")), same="a")
B.ok("encoding-v-uint32-a", "v as uint32", base_a(v=Int(1, "uint32")), same="a")
B.ok("encoding-v-uint64-a", "v as uint64", base_a(v=Int(1, "uint64")), same="a")
B.ok("encoding-v-int8-a", "v as int8", base_a(v=Int(1, "int8")), same="a")
B.ok("encoding-v-int16-a", "v as int16", base_a(v=Int(1, "int16")), same="a")
B.ok("encoding-v-int32-a", "v as int32", base_a(v=Int(1, "int32")), same="a")
B.ok("encoding-v-int64-a", "v as int64", base_a(v=Int(1, "int64")), same="a")
B.ok("encoding-budget-uint64-a", "max_prompt_chars 100 as uint64", base_a(max_prompt_chars=Int(100, "uint64")), same="a")
B.ok("encoding-budget-int16-a", "max_prompt_chars 100 as int16", base_a(max_prompt_chars=Int(100, "int16")), same="a")
B.ok("encoding-str8-template-a", "the template as str8", base_a(observation_template=S(T, "str8")), same="a")
B.ok("encoding-str16-template-a", "the template as str16", base_a(observation_template=S(T, "str16")), same="a")
B.ok("encoding-str32-template-a", "the template as str32", base_a(observation_template=S(T, "str32")), same="a")
B.ok(
    "encoding-str8-step-a",
    "raw_output and observation as str8",
    base_a(steps=[Map([("raw_output", S("raw", "str8")), ("observation", S("obs", "str8"))])]),
    same="a",
)
B.ok(
    "encoding-str16-messages-a",
    "role, type and text as str16",
    base_a(run_messages=[msg_enc("system", "sys", sfmt="str16")], goal_messages=[msg_enc("user", "goal", sfmt="str16")]),
    same="a",
)
B.ok(
    "encoding-str32-injection-a",
    "channel, entry_id and content as str32",
    base_a(injections=Map([(S("c", "str32"), [Map([("entry_id", S("e", "str32")), ("content", S("inj", "str32"))])])])),
    same="a",
)
B.ok(
    "encoding-str8-keys-a",
    "every key of the request as str8",
    pack(
        Map(
            [
                (S(k, "str8"), v)
                for k, v in [
                    ("v", 1),
                    ("run_messages", [msg_enc("system", "sys", role_key_fmt="str8")]),
                    ("injections", {"c": [Map([(S("entry_id", "str8"), "e"), (S("content", "str8"), "inj")])]}),
                    ("goal_messages", [msg_enc("user", "goal", role_key_fmt="str8")]),
                    ("steps", [Map([(S("raw_output", "str8"), "raw"), (S("observation", "str8"), "obs")])]),
                    ("observation_template", T),
                    ("max_prompt_chars", 100),
                ]
            ]
        )
    ),
    same="a",
)
B.ok("encoding-map16-top-a", "the request map as map16", pack(Map(list(BASE_A.items()), "map16")), same="a")
B.ok("encoding-map32-top-a", "the request map as map32", pack(Map(list(BASE_A.items()), "map32")), same="a")
B.ok(
    "encoding-map16-nested-a",
    "message and block maps as map16",
    base_a(run_messages=[msg_enc("system", "sys", mfmt="map16")]),
    same="a",
)
B.ok(
    "encoding-map32-injections-a",
    "injections map and entry maps as map32",
    base_a(injections=Map([("c", [Map([("entry_id", "e"), ("content", "inj")], "map32")])], "map32")),
    same="a",
)
B.ok(
    "encoding-array16-a",
    "run_messages, content and steps arrays as array16",
    base_a(run_messages=Arr([msg_enc("system", "sys", afmt="array16")], "array16"), steps=Arr([step("raw", "obs")], "array16")),
    same="a",
)
B.ok(
    "encoding-array32-a",
    "goal_messages, content and channel arrays as array32",
    base_a(
        goal_messages=Arr([msg_enc("user", "goal", afmt="array32")], "array32"),
        injections={"c": Arr([inj("e", "inj")], "array32")},
    ),
    same="a",
)
B.ok("encoding-keys-reordered-a", "top-level keys in another order", pack(dict(reversed(list(BASE_A.items())))), same="a")
B.ok(
    "encoding-nested-keys-reordered-a",
    "content before role, text before type, content before entry_id, observation before raw_output",
    base_a(
        run_messages=[{"content": [{"text": "sys", "type": "text"}], "role": "system"}],
        injections={"c": [{"content": "inj", "entry_id": "e"}]},
        steps=[{"observation": "obs", "raw_output": "raw"}],
    ),
    same="a",
)
B.ok("encoding-v-omitted-a", "v omitted (default 1)", request(**{k: v for k, v in BASE_A.items() if k != "v"}), same="a")
B.ok(
    "encoding-empty-channel-added-a",
    "an extra empty channel changes nothing",
    base_a(injections={"c": [inj("e", "inj")], "zz": []}),
    same="a",
)

BASE_B = dict(injections={"\U0001f600": [inj("1", "x")], "\uffff": [inj("2", "y")], "a": [inj("3", "z")]})
B.ok("encoding-canonical-b", "base request B: three channels", request(**BASE_B), same="b")
B.ok(
    "encoding-channels-permuted-b",
    "the same channels in another wire order",
    request(injections={"a": [inj("3", "z")], "\uffff": [inj("2", "y")], "\U0001f600": [inj("1", "x")]}),
    same="b",
)
B.ok(
    "encoding-channels-str8-map16-b",
    "channel names as str8 inside a map16",
    request(injections=Map([(S(k, "str8"), v) for k, v in BASE_B["injections"].items()], "map16")),
    same="b",
)

# canonical output boundaries
B.ok("encoding-out-fixstr-31", "a 31-byte text is a fixstr in the response", request(goal_messages=[msg("user", "x" * 31)]))
B.ok("encoding-out-str8-32", "a 32-byte text is a str8", request(goal_messages=[msg("user", "x" * 32)]))
B.ok("encoding-out-str8-255", "a 255-byte text is a str8", request(goal_messages=[msg("user", "x" * 255)]))
B.ok("encoding-out-str16-256", "a 256-byte text is a str16", request(goal_messages=[msg("user", "x" * 256)]))
B.ok(
    "encoding-out-str-header-counts-bytes",
    "8 emoji: 8 code points but 32 bytes, so a str8 header",
    request(goal_messages=[msg("user", "\U0001f600" * 8)]),
    chars=8,
)
B.ok(
    "encoding-out-str16-65535",
    "a 65535-byte text is a str16; prompt_chars a uint16",
    request(goal_messages=[msg("user", "x" * 65535)]),
    chars=65535,
)
B.ok(
    "encoding-out-str32-65536",
    "a 65536-byte text is a str32; prompt_chars a uint32",
    request(goal_messages=[msg("user", "x" * 65536)]),
    chars=65536,
)
B.ok("encoding-out-int-127", "prompt_chars 127 is a positive fixint", request(goal_messages=[msg("user", "x" * 127)]), chars=127)
B.ok("encoding-out-int-128", "prompt_chars 128 is a uint8", request(goal_messages=[msg("user", "x" * 128)]), chars=128)
B.ok("encoding-out-int-256", "prompt_chars 256 is a uint16", request(goal_messages=[msg("user", "x" * 256)]), chars=256)
B.ok("encoding-out-array-15", "15 messages: fixarray", request(run_messages=[M("user")] * 15))
B.ok(
    "encoding-out-message-index-128",
    "message_index 128 is a uint8",
    request(run_messages=[M("user")] * 128, injections={"c": [inj("e", "x")]}),
)
B.ok(
    "encoding-out-bools",
    "ok true, context_overflow true",
    request(goal_messages=[msg("user", "x")], max_prompt_chars=0),
    overflow=True,
)

# ===========================================================================
B.file(
    "utf8",
    "UTF-8 (docs/SPEC.md §2): every str must be valid UTF-8 (surrogates, overlongs and "
    "code points above U+10FFFF are invalid); invalid_utf8 at the value's path, at the map's "
    "path for a key, at injections for a channel name. Valid edge cases are accepted.",
)

BAD = {
    "surrogate-high": b"\xed\xa0\x80",
    "surrogate-low": b"\xed\xb0\x80",
    "cesu8-pair": b"\xed\xa0\xbd\xed\xb8\x80",
    "overlong-nul": b"\xc0\x80",
    "overlong-3byte": b"\xe0\x80\xaf",
    "overlong-4byte": b"\xf0\x80\x80\xaf",
    "above-max": b"\xf4\x90\x80\x80",
    "lone-continuation": b"a\x80b",
    "truncated-sequence-end": b"a\xe2\x82",
    "truncated-sequence-middle": b"\xe2\x82a",
    "byte-ff": b"\xff",
    "byte-fe": b"\xfe",
    "byte-f5": b"\xf5\x80\x80\x80",
    "byte-c1": b"\xc1\xbf",
}
for kind, raw in BAD.items():
    B.err(
        f"utf8-text-{kind}",
        f"invalid UTF-8 ({raw.hex()}) in a block text",
        request(goal_messages=[M("user", {"type": "text", "text": BadStr(raw)})]),
        UTF8,
        "goal_messages[0].content[0].text",
    )

B.err(
    "utf8-template",
    "surrogate in the template",
    request(observation_template=BadStr(b"{observation}\xed\xa0\x80")),
    UTF8,
    "observation_template",
)
B.err(
    "utf8-role",
    "invalid UTF-8 in role: invalid_utf8, not invalid_role",
    request(run_messages=[{"role": BadStr(b"user\xff"), "content": []}]),
    UTF8,
    "run_messages[0].role",
)
B.err(
    "utf8-type",
    "invalid UTF-8 in a block type",
    request(run_messages=[M("user", {"type": BadStr(b"\xc0\x80"), "text": ""})]),
    UTF8,
    "run_messages[0].content[0].type",
)
B.err(
    "utf8-entry-id",
    "invalid UTF-8 in entry_id",
    request(injections={"c": [{"entry_id": BadStr(b"\xed\xbf\xbf"), "content": ""}]}),
    UTF8,
    'injections["c"][0].entry_id',
)
B.err(
    "utf8-injection-content",
    "invalid UTF-8 in injection content",
    request(injections={"c": [inj("a", "ok"), {"entry_id": "b", "content": BadStr(b"\x80")}]}),
    UTF8,
    'injections["c"][1].content',
)
B.err(
    "utf8-raw-output",
    "invalid UTF-8 in raw_output",
    request(steps=[{"raw_output": BadStr(b"\xf8\x88\x80\x80\x80"), "observation": ""}]),
    UTF8,
    "steps[0].raw_output",
)
B.err(
    "utf8-observation",
    "invalid UTF-8 in observation",
    request(steps=[step("a", "b"), {"raw_output": "", "observation": BadStr(b"\xed\xa0\x80")}]),
    UTF8,
    "steps[1].observation",
)
B.err(
    "utf8-top-level-key",
    "invalid UTF-8 in a top-level key: at the map's path (empty)",
    pack(Map([(BadStr(b"v\xff"), 1)])),
    UTF8,
    "",
)
B.err(
    "utf8-message-key",
    "invalid UTF-8 in a message key: at the message's path",
    request(run_messages=[Map([(BadStr(b"\xed\xa0\x80"), "user")])]),
    UTF8,
    "run_messages[0]",
)
B.err(
    "utf8-block-key",
    "invalid UTF-8 in a block key: at the block's path",
    request(goal_messages=[{"role": "user", "content": [Map([(BadStr(b"typ\xe5"), "text")])]}]),
    UTF8,
    "goal_messages[0].content[0]",
)
B.err("utf8-step-key", "invalid UTF-8 in a step key", request(steps=[Map([(BadStr(b"\xff"), "")])]), UTF8, "steps[0]")
B.err(
    "utf8-injection-key",
    "invalid UTF-8 in an injection entry key",
    request(injections={"c": [Map([(BadStr(b"\xc3"), "")])]}),
    UTF8,
    'injections["c"][0]',
)
B.err(
    "utf8-channel-name",
    "invalid UTF-8 in a channel name: at injections",
    request(injections=Map([("ok", []), (BadStr(b"\xed\xa0\x80"), [])])),
    UTF8,
    "injections",
)
B.err(
    "utf8-channel-name-first",
    "a surrogate channel name as the first channel",
    request(injections=Map([(BadStr(b"a\xed\xb2\x80"), [inj("e", "x")])])),
    UTF8,
    "injections",
)
B.err(
    "utf8-str8-value",
    "invalid UTF-8 inside a str8 value",
    request(goal_messages=[M("user", {"type": "text", "text": BadStr(b"x" * 40 + b"\xff", "str8")})]),
    UTF8,
    "goal_messages[0].content[0].text",
)
B.ok(
    "utf8-valid-edges",
    "U+D7FF, U+E000, U+FFFD, U+FFFF, U+10000, U+10FFFF are valid",
    request(goal_messages=[msg("user", "\ud7ff\ue000\ufffd\uffff\U00010000\U0010ffff")]),
    chars=6,
)
B.ok("utf8-valid-nul", "U+0000 encoded as the single byte 00 is valid", request(goal_messages=[msg("user", "\x00")]), chars=1)
B.ok(
    "utf8-valid-channel-noncharacter",
    "a noncharacter channel name is valid",
    request(injections={"\ufdd0": [inj("\uffff", "\U0010ffff")]}),
)

# ===========================================================================
B.file(
    "errors-decode",
    "Broken msgpack (docs/SPEC.md §2.1, broken msgpack): empty input, a top-level "
    "non-map, 0xc1, truncation at every kind of position, huge headers, trailing bytes.",
)

OKREQ = request(goal_messages=[msg("user", "hi")])
B.err("decode-empty-input", "empty input", b"", MAL, "")
B.err("decode-top-array", "a top-level array", pack([]), MAL, "")
B.err("decode-top-str", "a top-level str", pack("{observation}"), MAL, "")
B.err("decode-top-nil", "a top-level nil", b"\xc0", MAL, "")
B.err("decode-top-int", "a top-level int", b"\x01", MAL, "")
B.err("decode-top-bool", "a top-level true", b"\xc3", MAL, "")
B.err("decode-top-bin", "a top-level bin", pack(Bin(OKREQ)), MAL, "")
B.err("decode-top-float", "a top-level float", pack(Float(1.0)), MAL, "")
B.err("decode-top-ext", "a top-level ext", pack(Ext(5, OKREQ[:4])), MAL, "")
B.err("decode-top-c1", "0xc1 alone", b"\xc1", MAL, "")
B.err("decode-top-c1-before-map", "0xc1 before a valid request", b"\xc1" + OKREQ, MAL, "")
B.err("decode-top-map16-header-cut", "a map16 header cut after one length byte", b"\xde\x00", MAL, "")
B.err("decode-top-map32-header-cut", "a map32 header cut", b"\xdf\x00\x00\x00", MAL, "")
B.err("decode-top-map-no-entries", "a map announcing 1 entry with no bytes after", b"\x81", MAL, "")
B.err(
    "decode-top-map-missing-entry",
    "a map announcing 2 entries with one present",
    pack(Map([("observation_template", T)], count=2)),
    MAL,
    "",
)
B.err(
    "decode-top-map32-huge-count",
    "map32 announcing 4294967295 entries, one present: never preallocate",
    pack(Map([("observation_template", T)], "map32", count=0xFFFFFFFF)),
    MAL,
    "",
)
B.err("decode-key-header-cut", "a str8 key header without its length", b"\x81\xd9", MAL, "")
B.err("decode-key-body-cut", "a key cut inside its bytes", b"\x81\xb4observation_temp", MAL, "")
B.err("decode-key-c1", "0xc1 where a key starts: at the map's path", b"\x81\xc1\x01", MAL, "")
B.err("decode-value-missing", "a key with no value after it", b"\x81" + pack("observation_template"), MAL, "observation_template")
B.err("decode-value-c1", "0xc1 where a value starts", b"\x81" + pack("v") + b"\xc1", MAL, "v")
B.err("decode-value-str-cut", "the template cut inside its bytes", request()[:-3], MAL, "observation_template")
B.err(
    "decode-value-str8-header-cut",
    "a str8 header without its length byte",
    b"\x81" + pack("observation_template") + b"\xd9",
    MAL,
    "observation_template",
)
B.err(
    "decode-value-str32-huge",
    "a str32 announcing 4 GiB with 3 bytes present",
    b"\x81" + pack("observation_template") + b"\xdb\xff\xff\xff\xffabc",
    MAL,
    "observation_template",
)
B.err("decode-value-int-cut", "v as uint16 cut after one byte", b"\x81" + pack("v") + b"\xcd\x00", MAL, "v")
B.err(
    "decode-value-budget-cut",
    "max_prompt_chars as uint64 cut",
    b"\x81" + pack("max_prompt_chars") + b"\xcf\x00\x00",
    MAL,
    "max_prompt_chars",
)
B.err(
    "decode-array-header-cut",
    "run_messages array16 header cut",
    b"\x81" + pack("run_messages") + b"\xdc\x00",
    MAL,
    "run_messages",
)
B.err(
    "decode-array-element-missing",
    "run_messages announcing 2 elements with one present: at the missing element",
    b"\x82" + pack("run_messages") + pack(Arr([msg("user", "a")], count=2)),
    MAL,
    "run_messages[1]",
)
B.err(
    "decode-array32-huge-count",
    "array32 announcing 4294967295 steps, one present",
    pack({"steps": Arr([step("a", "b")], "array32", count=0xFFFFFFFF)}),
    MAL,
    "steps[1]",
)
B.err(
    "decode-array-element-c1", "0xc1 as an array element", b"\x81" + pack("goal_messages") + b"\x91\xc1", MAL, "goal_messages[0]"
)
B.err(
    "decode-nested-map-cut",
    "a message map announcing 2 entries, cut after the first: at the message",
    b"\x81" + pack("run_messages") + b"\x91" + pack(Map([("role", "user")], count=2)),
    MAL,
    "run_messages[0]",
)
B.err(
    "decode-nested-key-c1",
    "0xc1 where a block key starts: at the block's path",
    b"\x81" + pack("run_messages") + b"\x91\x82" + pack("role") + pack("user") + pack("content") + b"\x91\x81\xc1",
    MAL,
    "run_messages[0].content[0]",
)
B.err(
    "decode-nested-value-c1",
    "0xc1 as an observation",
    pack({"steps": [Map([("raw_output", ""), ("observation", Raw(b"\xc1"))])]}),
    MAL,
    "steps[0].observation",
)
B.err(
    "decode-nested-text-cut",
    "a block text cut inside its bytes",
    request(goal_messages=[msg("user", "hello")], observation_template=OMIT)[:-2],
    MAL,
    "goal_messages[0].content[0].text",
)
B.err(
    "decode-channel-key-cut",
    "a channel name cut: at injections",
    b"\x81" + pack("injections") + b"\x81\xa5abc",
    MAL,
    "injections",
)
B.err(
    "decode-channel-value-missing",
    "a channel name with no value: at the channel",
    b"\x81" + pack("injections") + b"\x81" + pack("tools"),
    MAL,
    'injections["tools"]',
)
B.err(
    "decode-channel-entry-cut",
    "an injection entry cut in its entry_id",
    pack({"injections": {"c": [Map([("entry_id", Raw(b"\xa5ab"))])]}}),
    MAL,
    'injections["c"][0].entry_id',
)
B.err("decode-trailing-one-byte", "one byte after a valid request", OKREQ + b"\x00", MAL, "")
B.err("decode-trailing-c1", "0xc1 after a valid request", OKREQ + b"\xc1", MAL, "")
B.err("decode-trailing-nil", "nil after a valid request", OKREQ + b"\xc0", MAL, "")
B.err("decode-trailing-second-request", "two valid requests back to back", OKREQ + OKREQ, MAL, "")
B.err(
    "decode-trailing-after-missing-field",
    "trailing bytes after a request missing its template: missing_field wins",
    pack({"v": 1}) + b"\x00",
    MISS,
    "observation_template",
)
B.err(
    "decode-trailing-after-bad-version",
    "trailing bytes after v 2: unsupported_version wins",
    pack({"v": 2}) + b"\xff\xff",
    VER,
    "v",
)
B.err(
    "decode-trailing-after-bad-utf8",
    "trailing bytes after invalid UTF-8: invalid_utf8 wins",
    request(observation_template=BadStr(b"\xff")) + b"\x00",
    UTF8,
    "observation_template",
)
B.err(
    "decode-trailing-after-bad-template",
    "trailing bytes after an invalid template: invalid_template wins",
    request(observation_template="nope") + b"\x90",
    TPL,
    "observation_template",
    0,
)
B.err(
    "decode-cut-str-with-bad-utf8",
    "a str cut short whose present bytes are invalid UTF-8: the cut wins (malformed_request)",
    b"\x81" + pack("observation_template") + b"\xa5\xff\xfe",
    MAL,
    "observation_template",
)

# ===========================================================================
B.file(
    "errors-types",
    "Wrong msgpack types (docs/SPEC.md §2.1, the value table): malformed_request at "
    "the value's path; a non-str key at the map's path; nil is absent only for max_prompt_chars.",
)

WRONG_FOR_STR = {
    "bin": Bin(b"text"),
    "float64": Float(1.5),
    "float32": Float(1.5, double=False),
    "ext": Ext(1, b"abc"),
    "fixext": Ext(-1, b"abcd"),
    "bool": False,
    "nil": Nil,
    "int": 7,
    "array": ["text"],
    "map": {"text": "x"},
}
for kind, val in WRONG_FOR_STR.items():
    B.err(
        f"types-template-{kind}",
        f"observation_template is a {kind}",
        request(observation_template=val),
        MAL,
        "observation_template",
    )
STR_SITES = [
    ("role", lambda v: request(run_messages=[{"role": v, "content": []}]), "run_messages[0].role"),
    (
        "type",
        lambda v: request(goal_messages=[{"role": "user", "content": [{"type": v, "text": ""}]}]),
        "goal_messages[0].content[0].type",
    ),
    (
        "text",
        lambda v: request(goal_messages=[{"role": "user", "content": [text("a"), {"type": "text", "text": v}]}]),
        "goal_messages[0].content[1].text",
    ),
    ("entry-id", lambda v: request(injections={"c": [{"entry_id": v, "content": ""}]}), 'injections["c"][0].entry_id'),
    ("injection-content", lambda v: request(injections={"c": [{"entry_id": "e", "content": v}]}), 'injections["c"][0].content'),
    ("raw-output", lambda v: request(steps=[{"raw_output": v, "observation": ""}]), "steps[0].raw_output"),
    ("observation", lambda v: request(steps=[{"raw_output": "", "observation": v}]), "steps[0].observation"),
]
for (site, build, path), kind in zip(
    STR_SITES * 2,
    ["bin", "nil", "int", "float64", "ext", "bool", "array", "map", "fixext", "float32", "bin", "nil", "int", "bool"],
):
    B.err(f"types-{site}-{kind}", f"{site} is a {kind}", build(WRONG_FOR_STR[kind]), MAL, path)
B.err(
    "types-text-bin-valid-utf8",
    "a bin holding valid UTF-8 is still not a str",
    request(goal_messages=[{"role": "user", "content": [{"type": "text", "text": Bin(b"hello")}]}]),
    MAL,
    "goal_messages[0].content[0].text",
)
for kind, val in [
    ("str", "1"),
    ("float", Float(1.0)),
    ("bool", True),
    ("nil", Nil),
    ("bin", Bin(b"\x01")),
    ("array", [1]),
    ("ext", Ext(0, b"\x01")),
]:
    B.err(f"types-v-{kind}", f"v is a {kind}", request(v=val), MAL, "v")
for field in ["run_messages", "goal_messages", "steps"]:
    for kind, val in [("map", {}), ("str", ""), ("nil", Nil), ("int", 0)]:
        B.err(f"types-{field.replace('_', '-')}-{kind}", f"{field} is a {kind}", request(**{field: val}), MAL, field)
B.err(
    "types-content-map",
    "message content is a map",
    request(run_messages=[{"role": "user", "content": {}}]),
    MAL,
    "run_messages[0].content",
)
B.err(
    "types-content-str",
    "message content is a str (no shorthand)",
    request(run_messages=[{"role": "user", "content": "hi"}]),
    MAL,
    "run_messages[0].content",
)
B.err(
    "types-content-nil",
    "message content is nil",
    request(goal_messages=[{"role": "user", "content": Nil}]),
    MAL,
    "goal_messages[0].content",
)
B.err("types-injections-array", "injections is an array", request(injections=[]), MAL, "injections")
B.err("types-injections-nil", "injections is nil", request(injections=Nil), MAL, "injections")
B.err("types-injections-str", "injections is a str", request(injections="tools"), MAL, "injections")
B.err("types-channel-map", "a channel value is a map", request(injections={"c": {}}), MAL, 'injections["c"]')
B.err("types-channel-str", "a channel value is a str", request(injections={"c": "x"}), MAL, 'injections["c"]')
B.err("types-channel-nil", "a channel value is nil", request(injections={"c": Nil}), MAL, 'injections["c"]')
B.err("types-run-element-str", "a run message is a str", request(run_messages=["hi"]), MAL, "run_messages[0]")
B.err(
    "types-goal-element-array",
    "a goal message is an array",
    request(goal_messages=[msg("user", "a"), ["user", "b"]]),
    MAL,
    "goal_messages[1]",
)
B.err(
    "types-block-element-str",
    "a content block is a str",
    request(run_messages=[{"role": "user", "content": ["hi"]}]),
    MAL,
    "run_messages[0].content[0]",
)
B.err("types-step-element-nil", "a step is nil", request(steps=[step("a", "b"), Nil]), MAL, "steps[1]")
B.err("types-entry-element-int", "an injection entry is an int", request(injections={"c": [1]}), MAL, 'injections["c"][0]')
B.err("types-top-key-int", "an int key in the request: at the map's path (empty)", pack(Map([(1, 1)])), MAL, "")
B.err("types-top-key-nil", "a nil key in the request", pack(Map([("v", 1), (Nil, 1)])), MAL, "")
B.err("types-top-key-bin", "a bin key spelling v", pack(Map([(Bin(b"v"), 1)])), MAL, "")
B.err("types-top-key-array", "an array key", pack(Map([(["v"], 1)])), MAL, "")
B.err("types-top-key-float", "a float key", pack(Map([(Float(0.0), 1)])), MAL, "")
B.err(
    "types-message-key-int",
    "an int key in a message: at the message's path",
    request(run_messages=[Map([("role", "user"), (0, [])])]),
    MAL,
    "run_messages[0]",
)
B.err(
    "types-block-key-bool",
    "a bool key in a block",
    request(goal_messages=[{"role": "user", "content": [Map([(True, "text")])]}]),
    MAL,
    "goal_messages[0].content[0]",
)
B.err("types-step-key-bin", "a bin key in a step", request(steps=[Map([(Bin(b"raw_output"), "")])]), MAL, "steps[0]")
B.err(
    "types-entry-key-int",
    "an int key in an injection entry",
    request(injections={"c": [Map([(5, "")])]}),
    MAL,
    'injections["c"][0]',
)
B.err("types-channel-key-int", "an int channel name: at injections", request(injections=Map([(1, [])])), MAL, "injections")
B.err(
    "types-channel-key-bin",
    "a bin channel name: at injections",
    request(injections=Map([(Bin(b"tools"), [])])),
    MAL,
    "injections",
)

# ===========================================================================
B.file(
    "errors-fields",
    "Field errors: unknown_field, missing_field (table order), duplicate_key, "
    "unsupported_version, invalid_role, unknown_block_type, invalid_entry_id.",
)

B.err("fields-unknown-top", "an unknown top-level key", request(foo=1), UNK, "foo")
B.err("fields-unknown-top-case", "keys are case-sensitive: V", request(V=1), UNK, "V")
B.err("fields-unknown-top-typo", "run_message (singular)", request(run_message=[]), UNK, "run_message")
B.err(
    "fields-unknown-removed-field",
    "tool_section_template was removed (design decision 1)",
    request(tool_section_template="{tools}"),
    UNK,
    "tool_section_template",
)
B.err(
    "fields-unknown-message",
    "an unknown key in a message",
    request(run_messages=[{"role": "user", "name": "bob", "content": []}]),
    UNK,
    "run_messages[0].name",
)
B.err(
    "fields-unknown-block",
    "an unknown key in a block",
    request(goal_messages=[{"role": "user", "content": [{"type": "text", "text": "x", "cache_control": {}}]}]),
    UNK,
    "goal_messages[0].content[0].cache_control",
)
B.err(
    "fields-unknown-entry",
    "an unknown key in an injection entry",
    request(injections={"c": [{"id": "x"}]}),
    UNK,
    'injections["c"][0].id',
)
B.err(
    "fields-unknown-step",
    "an unknown key in a step",
    request(steps=[{"raw_output": "", "thought": "", "observation": ""}]),
    UNK,
    "steps[0].thought",
)
B.err(
    "fields-unknown-value-not-read",
    "an unknown key is reported whatever its value (here 0xc1)",
    pack(Map([("extra", Raw(b"\xc1"))])),
    UNK,
    "extra",
)
B.err("fields-missing-template", "the empty request map: observation_template missing", pack({}), MISS, "observation_template")
B.err(
    "fields-missing-template-with-others",
    "a request without a template",
    pack({"v": 1, "steps": []}),
    MISS,
    "observation_template",
)
B.err(
    "fields-missing-template-budget-nil",
    "nil budget does not stand for anything else",
    pack({"max_prompt_chars": None}),
    MISS,
    "observation_template",
)
B.err("fields-missing-role", "a message without role", request(run_messages=[{"content": []}]), MISS, "run_messages[0].role")
B.err(
    "fields-missing-content",
    "a message without content",
    request(goal_messages=[{"role": "user"}]),
    MISS,
    "goal_messages[0].content",
)
B.err(
    "fields-missing-both-message",
    "an empty message: role comes first in table order",
    request(run_messages=[{}]),
    MISS,
    "run_messages[0].role",
)
B.err(
    "fields-missing-type",
    "a block without type",
    request(run_messages=[{"role": "user", "content": [{"text": "x"}]}]),
    MISS,
    "run_messages[0].content[0].type",
)
B.err(
    "fields-missing-text",
    "a block without text",
    request(run_messages=[{"role": "user", "content": [{"type": "text"}]}]),
    MISS,
    "run_messages[0].content[0].text",
)
B.err(
    "fields-missing-both-block",
    "an empty block: type first",
    request(goal_messages=[{"role": "user", "content": [{}]}]),
    MISS,
    "goal_messages[0].content[0].type",
)
B.err(
    "fields-missing-entry-id",
    "an entry without entry_id",
    request(injections={"c": [{"content": "x"}]}),
    MISS,
    'injections["c"][0].entry_id',
)
B.err(
    "fields-missing-entry-content",
    "an entry without content",
    request(injections={"c": [{"entry_id": "x"}]}),
    MISS,
    'injections["c"][0].content',
)
B.err(
    "fields-missing-both-entry",
    "an empty entry: entry_id first",
    request(injections={"c": [{}]}),
    MISS,
    'injections["c"][0].entry_id',
)
B.err(
    "fields-missing-raw-output", "a step without raw_output", request(steps=[{"observation": "x"}]), MISS, "steps[0].raw_output"
)
B.err(
    "fields-missing-observation", "a step without observation", request(steps=[{"raw_output": "x"}]), MISS, "steps[0].observation"
)
B.err(
    "fields-missing-both-step",
    "an empty step: raw_output first",
    request(steps=[step("a", "b"), {}]),
    MISS,
    "steps[1].raw_output",
)
B.err("fields-duplicate-v", "v twice", with_key([("v", 1), ("v", 1), ("observation_template", T)]), DUP, "v")
B.err(
    "fields-duplicate-template",
    "the same template twice",
    with_key([("observation_template", T), ("observation_template", T)]),
    DUP,
    "observation_template",
)
B.err(
    "fields-duplicate-budget-nil",
    "max_prompt_chars nil twice",
    with_key([("max_prompt_chars", Nil), ("max_prompt_chars", Nil), ("observation_template", T)]),
    DUP,
    "max_prompt_chars",
)
B.err(
    "fields-duplicate-run-messages",
    "run_messages twice",
    with_key([("run_messages", []), ("observation_template", T), ("run_messages", [])]),
    DUP,
    "run_messages",
)
B.err(
    "fields-duplicate-other-encoding",
    "the same key once as fixstr and once as str8 is a duplicate",
    with_key([("steps", []), (Str("steps", "str8"), []), ("observation_template", T)]),
    DUP,
    "steps",
)
B.err(
    "fields-duplicate-role",
    "role twice in a message",
    request(run_messages=[Map([("role", "user"), ("role", "user"), ("content", [])])]),
    DUP,
    "run_messages[0].role",
)
B.err(
    "fields-duplicate-text",
    "text twice in a block",
    request(goal_messages=[{"role": "user", "content": [Map([("type", "text"), ("text", "a"), ("text", "b")])]}]),
    DUP,
    "goal_messages[0].content[0].text",
)
B.err(
    "fields-duplicate-entry-id",
    "entry_id twice in an entry",
    request(injections={"c": [Map([("entry_id", "a"), ("entry_id", "a"), ("content", "")])]}),
    DUP,
    'injections["c"][0].entry_id',
)
B.err(
    "fields-duplicate-observation",
    "observation twice in a step",
    request(steps=[Map([("observation", ""), ("raw_output", ""), ("observation", "")])]),
    DUP,
    "steps[0].observation",
)
B.err(
    "fields-duplicate-channel",
    "a channel twice",
    request(injections=Map([("c", []), ("d", []), ("c", [])])),
    DUP,
    'injections["c"]',
)
B.err(
    "fields-duplicate-empty-channel",
    "the empty channel name twice",
    request(injections=Map([("", []), ("", [])])),
    DUP,
    'injections[""]',
)
for name, val in [
    ("zero", 0),
    ("two", 2),
    ("minus-one", -1),
    ("255", 255),
    ("uint64-max", (1 << 64) - 1),
    ("int64-min", -(1 << 63)),
    ("2-pow-32-plus-1", (1 << 32) + 1),
    ("257-as-uint16", Int(257, "uint16")),
]:
    B.err(f"fields-version-{name}", f"v = {val.n if isinstance(val, Int) else val} is not 1", request(v=val), VER, "v")
B.err("fields-version-after-others", "v 2 as the last key", request(steps=[], observation_template=T, v=2), VER, "v")
for name, role in [
    ("empty", ""),
    ("capitalized", "User"),
    ("tool", "tool"),
    ("function", "function"),
    ("trailing-space", "system "),
    ("nul-suffix", "assistant\x00"),
    ("fullwidth", "\uff55ser"),
    ("developer", "developer"),
]:
    B.err(
        f"fields-role-{name}",
        f"role {role!r}",
        request(run_messages=[{"role": role, "content": []}]),
        ROLE,
        "run_messages[0].role",
    )
B.err(
    "fields-role-in-goal",
    "a bad role in the second goal message",
    request(goal_messages=[msg("user", "a"), {"role": "model", "content": []}]),
    ROLE,
    "goal_messages[1].role",
)
for name, btype in [
    ("image", "image"),
    ("empty", ""),
    ("capitalized", "Text"),
    ("trailing-space", "text "),
    ("tool-use", "tool_use"),
]:
    B.err(
        f"fields-block-type-{name}",
        f"block type {btype!r}",
        request(run_messages=[{"role": "user", "content": [{"type": btype, "text": ""}]}]),
        BTYPE,
        "run_messages[0].content[0].type",
    )
B.err(
    "fields-block-type-image-no-text",
    "an image block without text: the type is met first",
    request(goal_messages=[{"role": "user", "content": [text("a"), {"type": "image", "url": "x"}]}]),
    BTYPE,
    "goal_messages[0].content[1].type",
)
B.err("fields-entry-id-empty", "an empty entry_id", request(injections={"c": [inj("", "x")]}), EID, 'injections["c"][0].entry_id')
B.err(
    "fields-entry-id-empty-later",
    "an empty entry_id in the second channel's third entry",
    request(injections={"a": [inj("1", "")], "b": [inj("1", ""), inj("2", ""), inj("", "")]}),
    EID,
    'injections["b"][2].entry_id',
)

# ===========================================================================
B.file(
    "errors-paths",
    "Path forms (docs/SPEC.md §2.2): channel names quoted like "
    'json.dumps(ensure_ascii=False), unknown keys as .key or ["key"], nested and indexed paths.',
)

CHANNELS = {
    "quote": ('say "hi"', 'injections["say \\"hi\\""]'),
    "backslash": ("a\\b", 'injections["a\\\\b"]'),
    "newline": ("a\nb", 'injections["a\\nb"]'),
    "cr": ("a\rb", 'injections["a\\rb"]'),
    "tab": ("a\tb", 'injections["a\\tb"]'),
    "backspace": ("a\bb", 'injections["a\\bb"]'),
    "formfeed": ("a\fb", 'injections["a\\fb"]'),
    "nul": ("\x00", 'injections["\\u0000"]'),
    "c0-01": ("\x01", 'injections["\\u0001"]'),
    "c0-1f": ("\x1f", 'injections["\\u001f"]'),
    "c0-1b": ("\x1b[0m", 'injections["\\u001b[0m"]'),
    "del": ("\x7f", 'injections["\x7f"]'),
    "c1-85": ("\x85", 'injections["\x85"]'),
    "latin1": ("caf\u00e9", 'injections["caf\u00e9"]'),
    "cjk": ("\u5de5\u5177", 'injections["\u5de5\u5177"]'),
    "emoji": ("\U0001f600", 'injections["\U0001f600"]'),
    "line-separator": ("\u2028", 'injections["\u2028"]'),
    "slash": ("a/b", 'injections["a/b"]'),
    "single-quote": ("it's", 'injections["it\'s"]'),
    "empty": ("", 'injections[""]'),
    "brackets": ('["x"]', 'injections["[\\"x\\"]"]'),
    "unicode-escape-text": ("\\u0041", 'injections["\\\\u0041"]'),
}
for kind, (name, path) in CHANNELS.items():
    B.err(
        f"paths-channel-{kind}",
        f"channel name quoting: {kind}",
        request(injections={name: [{"content": "x"}]}),
        MISS,
        path + "[0].entry_id",
    )
B.err(
    "paths-channel-deep",
    "an error deep in the third entry of a quoted channel",
    request(injections={"x y": [inj("a", ""), inj("b", ""), {"entry_id": "c", "content": BadStr(b"\xff")}]}),
    UTF8,
    'injections["x y"][2].content',
)
B.err(
    "paths-channel-itself",
    "a channel's value of the wrong type: the channel's own path",
    request(injections={'a"b': 5}),
    MAL,
    'injections["a\\"b"]',
)
UNKNOWN_KEYS = {
    "space": ("a b", '["a b"]'),
    "leading-digit": ("1a", '["1a"]'),
    "dash": ("a-b", '["a-b"]'),
    "dot": ("a.b", '["a.b"]'),
    "non-ascii-letter": ("\u00e9", '["\u00e9"]'),
    "eszett": ("stra\u00dfe", '["stra\u00dfe"]'),
    "fullwidth": ("\uff41", '["\uff41"]'),
    "trailing-newline": ("foo\n", '["foo\\n"]'),
    "empty": ("", '[""]'),
    "quote": ('a"', '["a\\""]'),
    "backslash": ("a\\", '["a\\\\"]'),
    "nul": ("\x00", '["\\u0000"]'),
    "underscore": ("_", "_"),
    "underscore-digits": ("_9", "_9"),
    "upper-digits": ("A9", "A9"),
    "digits-only": ("123", '["123"]'),
    "dollar": ("$x", '["$x"]'),
}
for kind, (key, path) in UNKNOWN_KEYS.items():
    B.err(f"paths-unknown-top-{kind}", f"top-level unknown key quoting: {kind}", pack(Map([(key, 1)])), UNK, path)
for kind in ["space", "trailing-newline", "underscore", "empty", "quote"]:
    key, path = UNKNOWN_KEYS[kind]
    nested = "steps[0]" + (path if path.startswith("[") else "." + path)
    B.err(
        f"paths-unknown-step-{kind}",
        f"unknown key in a step: {kind}",
        request(steps=[Map([("raw_output", ""), (key, 1)])]),
        UNK,
        nested,
    )
B.err(
    "paths-unknown-block-quoted",
    "a quoted unknown key in a block",
    request(run_messages=[{"role": "user", "content": [Map([("x y", 1)])]}]),
    UNK,
    'run_messages[0].content[0]["x y"]',
)
B.err(
    "paths-unknown-entry-quoted",
    "a quoted unknown key in an injection entry",
    request(injections={"c": [Map([("id x", 1)])]}),
    UNK,
    'injections["c"][0]["id x"]',
)
B.err(
    "paths-unknown-message-plain",
    "a plain unknown key in the third run message",
    request(run_messages=[msg("user", "a"), msg("user", "b"), Map([("role", "user"), ("foo", 1)])]),
    UNK,
    "run_messages[2].foo",
)
B.err(
    "paths-deep-goal-block",
    "an error in the third block of the second goal message",
    request(goal_messages=[msg("user", "a"), {"role": "user", "content": [text("a"), text("b"), {"type": "text", "text": 1}]}]),
    MAL,
    "goal_messages[1].content[2].text",
)
B.err(
    "paths-two-digit-index",
    "steps[12].observation",
    request(steps=[step("a", "b")] * 12 + [{"raw_output": "", "observation": Nil}]),
    MAL,
    "steps[12].observation",
)
B.err(
    "paths-array16-index",
    "run_messages[16].role in an array16",
    request(run_messages=[msg("user", "x")] * 16 + [{"role": "bot", "content": []}]),
    ROLE,
    "run_messages[16].role",
)
B.err(
    "paths-duplicate-nested",
    "a nested duplicate names the key",
    request(steps=[Map([("raw_output", ""), ("raw_output", "")])]),
    DUP,
    "steps[0].raw_output",
)
B.err(
    "paths-missing-nested-deep",
    "a missing text in the second block of the first run message",
    request(run_messages=[{"role": "user", "content": [text("a"), {"type": "text"}]}]),
    MISS,
    "run_messages[0].content[1].text",
)

# ===========================================================================
B.file(
    "errors-order",
    "Decoding order (docs/SPEC.md §2.1): with several "
    "problems, the first one met in wire order wins; key before value; missing keys at the end "
    "of their map in table order; trailing bytes last.",
)

B.err(
    "order-err-unknown-before-version",
    "unknown key, then v 2: the unknown key wins",
    with_key([("foo", 1), ("v", 2)]),
    UNK,
    "foo",
)
B.err("order-err-version-before-unknown", "v 2, then an unknown key: v wins", with_key([("v", 2), ("foo", 1)]), VER, "v")
B.err(
    "order-err-template-before-version",
    "a bad template before v 2",
    with_key([("observation_template", "Output:"), ("v", 2)]),
    TPL,
    "observation_template",
    0,
)
B.err(
    "order-err-version-before-template",
    "v 2 before a bad template",
    with_key([("v", 2), ("observation_template", "Output:")]),
    VER,
    "v",
)
B.err(
    "order-err-run-before-version",
    "a bad role in run_messages before v 2",
    with_key([("run_messages", [{"role": "x", "content": []}]), ("v", 2)]),
    ROLE,
    "run_messages[0].role",
)
B.err(
    "order-err-budget-before-missing-template",
    "a negative budget before the missing template",
    with_key([("max_prompt_chars", -5)]),
    BUDGET,
    "max_prompt_chars",
)
B.err(
    "order-err-nested-missing-before-top-missing",
    "a message missing content in a request missing its template: the message's map ends first",
    with_key([("run_messages", [{"role": "user"}])]),
    MISS,
    "run_messages[0].content",
)
B.err(
    "order-err-missing-before-next-element",
    "the first message misses content, the second is not a map",
    request(run_messages=[{"role": "user"}, 5]),
    MISS,
    "run_messages[0].content",
)
B.err(
    "order-err-role-rule-before-later-key",
    "a bad role before a content of the wrong type",
    request(run_messages=[{"role": "robot", "content": 5}]),
    ROLE,
    "run_messages[0].role",
)
B.err(
    "order-err-content-type-before-missing-role",
    "content of the wrong type before the role is known missing",
    request(run_messages=[{"content": 5}]),
    MAL,
    "run_messages[0].content",
)
B.err(
    "order-err-unknown-before-missing",
    "an unknown key in a message before its missing keys",
    request(run_messages=[{"foo": 1}]),
    UNK,
    "run_messages[0].foo",
)
B.err(
    "order-err-first-element-wins",
    "two bad steps: the first is reported",
    request(steps=[{"raw_output": 1}, {"raw_output": 2}]),
    MAL,
    "steps[0].raw_output",
)
B.err("order-err-duplicate-before-unknown", "v twice then an unknown key", with_key([("v", 1), ("v", 1), ("foo", 1)]), DUP, "v")
B.err(
    "order-err-key-check-before-value",
    "a duplicate key whose value is of the wrong type: duplicate_key",
    with_key([("v", 1), ("v", "x")]),
    DUP,
    "v",
)
B.err(
    "order-err-unknown-key-before-cut-value",
    "an unknown key whose value is cut: unknown_field",
    b"\x81" + pack("extra") + b"\xd9",
    UNK,
    "extra",
)
B.err(
    "order-err-non-str-key-before-value",
    "an int key followed by 0xc1: malformed at the map",
    pack({"steps": [Map([(1, Raw(b"\xc1"))])]}),
    MAL,
    "steps[0]",
)
B.err(
    "order-err-utf8-before-role-rule",
    "an invalid UTF-8 role is invalid_utf8",
    request(goal_messages=[{"role": BadStr(b"\xffuser"), "content": []}]),
    UTF8,
    "goal_messages[0].role",
)
B.err(
    "order-err-type-before-utf8",
    "a bin holding invalid UTF-8: malformed_request (type first)",
    request(observation_template=Bin(b"\xff")),
    MAL,
    "observation_template",
)
B.err(
    "order-err-entry-id-before-missing-content",
    "an empty entry_id before the missing content",
    request(injections={"c": [{"entry_id": ""}]}),
    EID,
    'injections["c"][0].entry_id',
)
B.err(
    "order-err-channel-entry-before-duplicate",
    "a bad entry in the first 'c', then 'c' again: the entry wins",
    request(injections=Map([("c", [{"entry_id": ""}]), ("c", [])])),
    EID,
    'injections["c"][0].entry_id',
)
B.err(
    "order-err-duplicate-channel-before-entry",
    "'c' ok, then 'c' again with a bad entry: duplicate wins",
    request(injections=Map([("c", [inj("a", "")]), ("c", [{"entry_id": ""}])])),
    DUP,
    'injections["c"]',
)
B.err(
    "order-err-channels-in-wire-order",
    "errors in channels b then a: b (wire order, not sorted order) wins",
    request(injections=Map([("b", [{}]), ("a", [{}])])),
    MISS,
    'injections["b"][0].entry_id',
)
B.err(
    "order-err-template-before-steps",
    "a bad template before a bad step",
    with_key([("observation_template", "{x}"), ("steps", [{}])]),
    TPL,
    "observation_template",
    1,
)
B.err(
    "order-err-steps-before-template",
    "a bad step before a bad template",
    with_key([("steps", [{}]), ("observation_template", "{x}")]),
    MISS,
    "steps[0].raw_output",
)
B.err(
    "order-err-block-missing-before-next-block",
    "a block missing text, then a block of type image",
    request(run_messages=[{"role": "user", "content": [{"type": "text"}, {"type": "image", "text": ""}]}]),
    MISS,
    "run_messages[0].content[0].text",
)
B.err(
    "order-err-block-type-before-text",
    "an image block with invalid UTF-8 text: the type comes first",
    request(run_messages=[{"role": "user", "content": [{"type": "image", "text": BadStr(b"\xff")}]}]),
    BTYPE,
    "run_messages[0].content[0].type",
)
B.err(
    "order-err-block-text-before-type",
    "text (invalid UTF-8) sent before type image: the text comes first",
    request(run_messages=[{"role": "user", "content": [{"text": BadStr(b"\xff"), "type": "image"}]}]),
    UTF8,
    "run_messages[0].content[0].text",
)
B.err(
    "order-err-missing-run-before-goal",
    "run_messages ends with a missing field before goal_messages' problem",
    with_key([("run_messages", [{"role": "user"}]), ("goal_messages", 5), ("observation_template", T)]),
    MISS,
    "run_messages[0].content",
)
B.err("order-err-c1-after-bad-key", "an unknown key then 0xc1 as the next key", b"\x82" + pack("foo") + b"\x01\xc1", UNK, "foo")
B.err(
    "order-err-utf8-key-before-duplicate",
    "an invalid UTF-8 key beats a later duplicate",
    with_key([(BadStr(b"\xff"), 1), ("v", 1), ("v", 1)]),
    UTF8,
    "",
)
B.err(
    "order-err-trailing-after-cut-nothing",
    "a complete request with missing template and trailing 0xc1",
    pack({"steps": []}) + b"\xc1",
    MISS,
    "observation_template",
)
B.err("order-err-version-before-trailing", "v 0 and trailing bytes: unsupported_version", request(v=0) + b"\x00", VER, "v")
B.err(
    "order-err-missing-fields-table-order-top",
    "only v and steps present: observation_template is the one missing",
    pack({"steps": [], "v": 1}),
    MISS,
    "observation_template",
)
B.err(
    "order-err-missing-content-only",
    "role present, content missing, in goal",
    request(goal_messages=[msg("user", "a"), {"role": "assistant"}]),
    MISS,
    "goal_messages[1].content",
)
B.err(
    "order-err-wrong-element-before-later-utf8",
    "a nil message before an invalid UTF-8 text in the next",
    request(run_messages=[Nil, {"role": "user", "content": [{"type": "text", "text": BadStr(b"\xff")}]}]),
    MAL,
    "run_messages[0]",
)


# ===========================================================================
B.file(
    "limits-excerpts",
    "Bounded errors (docs/SPEC.md §6): a path quotes at most "
    "the first 256 code points of a channel name or key, then U+2026; messages are bounded "
    "alike (not compared here: the limits tests check every host's error response is a few KB).",
)


def long_key(n, unit="k"):
    return (unit * n)[:n]


for n, label in ((256, "256"), (257, "257"), (4096, "4096")):
    key = long_key(n - 1) + "!"  # not an identifier: quoted in the path
    B.err(
        f"excerpt-unknown-key-{label}",
        f"an unknown key of {n} code points",
        with_key([("observation_template", T), (key, 1)]),
        UNK,
        "[" + R.quote(key) + "]",
    )
    B.err(
        f"excerpt-channel-repeated-{label}",
        f"a channel of {n} code points given twice",
        with_key([("injections", Map([(key, []), (key, [])])), ("observation_template", T)]),
        DUP,
        "injections[" + R.quote(key) + "]",
    )
    B.err(
        f"excerpt-channel-deep-{label}",
        f"an error inside a channel of {n} code points",
        request(injections={key: [inj("", "x")]}),
        EID,
        "injections[" + R.quote(key) + "][0].entry_id",
    )
B.err(
    "excerpt-key-emoji",
    "a key of 300 four-byte code points: the excerpt counts code points, not bytes",
    with_key([("observation_template", T), ("\U0001f600" * 300, 1)]),
    UNK,
    "[" + R.quote("\U0001f600" * 300) + "]",
)
B.err(
    "excerpt-key-controls",
    "a key of 1000 U+0001: each is escaped as \\u0001 after the cut",
    with_key([("observation_template", T), ("\x01" * 1000, 1)]),
    UNK,
    "[" + R.quote("\x01" * 1000) + "]",
)
B.err(
    "excerpt-key-nested",
    "an unknown key of 5000 code points in a step",
    request(steps=[{"raw_output": "r", "observation": "o", "x" * 4999 + "-": 1}]),
    UNK,
    "steps[0][" + R.quote("x" * 4999 + "-") + "]",
)
B.err(
    "excerpt-role-long",
    "a role of 20,000 code points (the message quotes an excerpt)",
    request(run_messages=[msg("\x01" * 20_000, "a")]),
    ROLE,
    "run_messages[0].role",
)
B.err(
    "excerpt-block-type-long",
    "a block type of 20,000 code points (the message quotes an excerpt)",
    request(run_messages=[{"role": "user", "content": [{"type": "\x01" * 20_000, "text": "a"}]}]),
    BTYPE,
    "run_messages[0].content[0].type",
)
B.err(
    "excerpt-template-field-long",
    "a template whose unknown field name has 20,000 code points",
    request(observation_template="{" + "x" * 20_000 + "}"),
    TPL,
    "observation_template",
    offset=1,
)


# ===========================================================================
B.file(
    "limits-render",
    "Rendering shortcuts of the bounded-resources work (docs/SPEC.md §4): fields "
    "that never render (precision 0, no width) and repeated empty observations render as CPython does.",
)
EMPTY_AND_NOT = [step("r", o) for o in ("", "a", "", "\u00e9\U0001f600", "", "")]
B.ok(
    "render-silent-fields",
    "precision-0 fields render nothing; their literals are kept",
    request(observation_template="a{observation:.0}b{observation!r:.0}c{observation:<0.0}d{observation}e", steps=EMPTY_AND_NOT),
)
B.ok(
    "render-silent-only",
    "a template whose only fields are silent still renders its literals",
    request(observation_template="x{observation:.0}{{y}}{observation!a:.00}z", steps=EMPTY_AND_NOT),
)
B.ok(
    "render-silent-padded",
    "precision 0 with a width pads: not silent",
    request(observation_template="[{observation:*^5.0}][{observation!r:>3.0}]", steps=EMPTY_AND_NOT),
)
B.ok(
    "render-empty-repeated",
    "the same rendering of an empty observation over many steps",
    request(observation_template="<{observation:3}|{observation!r}|{observation:.1}>" * 3, steps=EMPTY_AND_NOT * 3),
)
B.ok(
    "render-many-fields",
    "200 identical fields over 30 steps",
    request(observation_template="{observation:.2}," * 200, steps=[step("", "" if i % 3 else "xyz") for i in range(30)]),
)


def main() -> int:
    B.write()
    print(B.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
