"""Self-test of the pure-Python reference, against hand-written bytes.

The expected values here are written by hand from docs/SPEC.md
(msgpack bytes spelled out, digests from hashlib over hand-written bytes),
never taken from the reference's own output.

Run: python3.12 -m unittest testdata/gen/test_reference.py
"""

import hashlib
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import reference as R  # noqa: E402
import schema  # noqa: E402


def s(text: str) -> bytes:
    """fixstr by hand (text shorter than 32 bytes)."""
    b = text.encode()
    assert len(b) < 32
    return bytes([0xA0 | len(b)]) + b


def s8(text: str) -> bytes:
    b = text.encode()
    return b"\xd9" + bytes([len(b)]) + b


def sha(b: bytes) -> bytes:
    """The digest as a canonical str value (64 hex chars: str8)."""
    return b"\xd9\x40" + hashlib.sha256(b).hexdigest().encode()


MINIMAL = b"\x81" + s("observation_template") + s("{observation}")


class TestOkResponses(unittest.TestCase):
    def test_minimal(self):
        empty = sha(b"\x90")
        want = (
            b"\x88"
            + s("v")
            + b"\x01"
            + s("ok")
            + b"\xc3"
            + s("messages")
            + b"\x90"
            + s("message_chars")
            + b"\x90"
            + s("prompt_chars")
            + b"\x00"
            + s("context_overflow")
            + b"\xc2"
            + s("injected")
            + b"\x90"
            + s("prefix_digests")
            + b"\x83"
            + s("run")
            + empty
            + s("injections")
            + empty
            + s("goal")
            + empty
        )
        self.assertEqual(R.assemble_bytes(MINIMAL), (want, None))

    def test_all_segments(self):
        # run: system "ab"; injections: {"z": [b1 "é"], "a": [a1 "🙂"]};
        # goal: user "go"; one step raw "R" obs "x", template "<{observation}>"
        block = lambda t: b"\x82" + s("type") + s("text") + s("text") + s(t)
        message = lambda role, *ts: (
            b"\x82" + s("role") + s(role) + s("content") + bytes([0x90 | len(ts)]) + b"".join(block(t) for t in ts)
        )
        req = (
            b"\x86"
            + s("v")
            + b"\x01"
            + s("run_messages")
            + b"\x91"
            + message("system", "a", "b")
            + s("injections")
            + b"\x82"
            + s("z")
            + b"\x91\x82"
            + s("entry_id")
            + s("b1")
            + s("content")
            + s("é")
            + s("a")
            + b"\x91\x82"
            + s("entry_id")
            + s("a1")
            + s("content")
            + s("🙂")
            + s("goal_messages")
            + b"\x91"
            + message("user", "go")
            + s("steps")
            + b"\x91\x82"
            + s("raw_output")
            + s("R")
            + s("observation")
            + s("x")
            + s("observation_template")
            + s("<{observation}>")
        )
        msgs = [
            message("system", "a", "b"),
            message("user", "🙂"),
            message("user", "é"),
            message("user", "go"),
            message("assistant", "R"),
            message("user", "<x>"),
        ]

        def prefix(n):
            return bytes([0x90 | n]) + b"".join(msgs[:n])

        want = (
            b"\x88"
            + s("v")
            + b"\x01"
            + s("ok")
            + b"\xc3"
            + s("messages")
            + b"\x96"
            + b"".join(msgs)
            + s("message_chars")
            + b"\x96\x02\x01\x01\x02\x01\x03"
            + s("prompt_chars")
            + b"\x0a"
            + s("context_overflow")
            + b"\xc2"
            + s("injected")
            + b"\x92"
            + b"\x83"
            + s("channel")
            + s("a")
            + s("entry_id")
            + s("a1")
            + s("message_index")
            + b"\x01"
            + b"\x83"
            + s("channel")
            + s("z")
            + s("entry_id")
            + s("b1")
            + s("message_index")
            + b"\x02"
            + s("prefix_digests")
            + b"\x83"
            + s("run")
            + sha(prefix(1))
            + s("injections")
            + sha(prefix(3))
            + s("goal")
            + sha(prefix(4))
        )
        self.assertEqual(R.assemble_bytes(req), (want, None))

    def test_budget_overflow_and_large_ints(self):
        # 200 code points of text: prompt_chars is uint8 0xcc 0xc8
        t = "x" * 200
        req = (
            b"\x83"
            + s("goal_messages")
            + b"\x91\x82"
            + s("role")
            + s("user")
            + s("content")
            + b"\x91\x82"
            + s("type")
            + s("text")
            + s("text")
            + s8(t)
            + s("observation_template")
            + s("{observation}")
            + s("max_prompt_chars")
            + b"\xd3"
            + (199).to_bytes(8, "big")
        )
        resp, err = R.assemble_bytes(req)
        self.assertIsNone(err)
        self.assertIn(
            s("message_chars") + b"\x91\xcc\xc8" + s("prompt_chars") + b"\xcc\xc8" + s("context_overflow") + b"\xc3", resp
        )


class TestErrors(unittest.TestCase):
    def check(self, req: bytes, code: str, path: str, offset=None):
        self.assertEqual(R.assemble_bytes(req), (None, (code, path)))
        resp, e = R.answer(req)
        self.assertEqual((resp, e.code, e.path, e.offset), (None, code, path, offset))

    def test_template_error_has_offset(self):
        req = b"\x81" + s("observation_template") + s("ab}{observation}")
        self.check(req, "invalid_template", "observation_template", 2)
        self.assertEqual(
            R.error_response("invalid_template", "m", "observation_template", 2),
            b"\x83"
            + s("v")
            + b"\x01"
            + s("ok")
            + b"\xc2"
            + s("error")
            + b"\x84"
            + s("code")
            + s("invalid_template")
            + s("message")
            + s("m")
            + s("path")
            + s("observation_template")
            + s("offset")
            + b"\x02",
        )

    def test_broken_msgpack(self):
        self.check(b"", "malformed_request", "")
        self.check(b"\x90", "malformed_request", "")
        self.check(b"\xc1", "malformed_request", "")
        self.check(MINIMAL + b"\x00", "malformed_request", "")
        self.check(MINIMAL[:-1], "malformed_request", "observation_template")
        self.check(b"\x82" + s("v") + b"\x01", "malformed_request", "")  # no second key
        self.check(b"\x82" + s("v") + b"\x01" + b"\xc1", "malformed_request", "")
        self.check(b"\x82" + s("v"), "malformed_request", "v")
        self.check(b"\x82" + s("v") + b"\xc1", "malformed_request", "v")
        self.check(b"\x81\xd9", "malformed_request", "")  # inside a key

    def test_types_and_rules(self):
        self.check(b"\x81" + s("v") + b"\xcb" + b"\x3f\xf0" + b"\0" * 6, "malformed_request", "v")
        self.check(b"\x81" + s("v") + b"\x02", "unsupported_version", "v")
        self.check(b"\x81" + s("v") + b"\xcf" + b"\0" * 7 + b"\x01", "missing_field", "observation_template")
        self.check(b"\x81\x01\x01", "malformed_request", "")  # int key
        self.check(b"\x81\xa3\xed\xa0", "malformed_request", "")  # key truncated
        self.check(b"\x81\xa3\xed\xa0\x80\x01", "invalid_utf8", "")  # surrogate key
        self.check(b"\x82" + s("v") + b"\x01" + s("v") + b"\x01", "duplicate_key", "v")
        self.check(b"\x81" + s("a b") + b"\x01", "unknown_field", '["a b"]')
        self.check(b"\x81" + s("foo\n") + b"\x01", "unknown_field", '["foo\\n"]')
        self.check(b"\x81" + s("max_prompt_chars") + b"\xff", "invalid_budget", "max_prompt_chars")
        self.check(b"\x81" + s("max_prompt_chars") + b"\xc0", "missing_field", "observation_template")
        self.check(b"\x81" + s("observation_template") + s("Output:"), "invalid_template", "observation_template", 0)
        self.check(
            b"\x81" + s("injections") + b"\x81" + s('q"\\\n\x01é') + b"\x91\x80",
            "missing_field",
            'injections["q\\"\\\\\\n\\u0001é"][0].entry_id',
        )
        self.check(b"\x81" + s("injections") + b"\x82" + s("c") + b"\x90" + s("c") + b"\x90", "duplicate_key", 'injections["c"]')
        self.check(b"\x81" + s("injections") + b"\x81\xa1\xff\x90", "invalid_utf8", "injections")
        self.check(b"\x81" + s("steps") + b"\x91\x81" + s("a-b") + b"\xc0", "unknown_field", 'steps[0]["a-b"]')
        self.check(b"\x81" + s("steps") + b"\x91\x81" + s("_x9") + b"\xc0", "unknown_field", "steps[0]._x9")
        self.check(b"\x81" + s("steps") + b"\x92\x80", "missing_field", "steps[0].raw_output")
        self.check(b"\x81" + s("run_messages") + b"\x92\x82" + s("role") + s("tool"), "invalid_role", "run_messages[0].role")
        self.check(
            b"\x81"
            + s("run_messages")
            + b"\x91\x82"
            + s("role")
            + s("user")
            + s("content")
            + b"\x91\x81"
            + s("type")
            + s("image"),
            "unknown_block_type",
            "run_messages[0].content[0].type",
        )
        self.check(
            b"\x81" + s("injections") + b"\x81\xa0\x91\x81" + s("entry_id") + s(""),
            "invalid_entry_id",
            'injections[""][0].entry_id',
        )
        self.check(b"\x81" + s("run_messages") + b"\xdd\xff\xff\xff\xff", "malformed_request", "run_messages[0]")


class TestExcerpts(unittest.TestCase):
    """docs/SPEC.md §6: errors quote 256 code points of a key, then U+2026."""

    def test_cut(self):
        self.assertEqual(R.excerpt("a" * 256), "a" * 256)
        self.assertEqual(R.excerpt("a" * 257), "a" * 256 + "\u2026")
        self.assertEqual(R.excerpt("\U0001f600" * 300), "\U0001f600" * 256 + "\u2026")

    def test_paths(self):
        key = "x" * 1000 + "-"
        self.assertEqual(R.key_path("", key), '["' + "x" * 256 + '\u2026"]')
        self.assertEqual(R.channel_path(key), 'injections["' + "x" * 256 + '\u2026"]')
        self.assertEqual(R.quote("\x01" * 300), '"' + "\\u0001" * 256 + '\u2026"')


class TestTemplates(unittest.TestCase):
    def test_accepted(self):
        for t in [
            "{observation}",
            "Output:\n```\n{observation}\n```\n\n",
            "{observation!r}",
            "{observation!a:>10.3}",
            "{{{observation}}}",
            "{observation:\u0661\u0660}",
            "{observation:x^1048576}",
            "{observation:01048576}",
            "{observation}{observation:.0}",
            "{observation:.99999999999}",
        ]:
            self.assertIsNone(R.validate_template(t), t)

    def test_rejected(self):
        for t in [
            "",
            "Output:",
            "{{observation}}",
            "{}",
            "{0}",
            "{obs}",
            "{observation.x}",
            "{observation.upper}",
            "{observation[0]}",
            "{observation:{x}}",
            "{observation:1048577}",
            "{observation:0001048577}",
            "{observation:\u0661\u0660\u0664\u0668\u0665\u0667\u0667}",
            "{observation",
            "}{observation}",
            "{observation!x}",
            "{observation:=5}",
            "{observation:+}",
            "{observation:d}",
            "{observation:,}",
            "{observation}{x}",
            "{observation:99999999999999999999}",
        ]:
            self.assertIsNotNone(R.validate_template(t), t)

    def test_offsets(self):
        # Each offset counted by hand in code points (docs/SPEC.md §5 "Offsets").
        cases = {
            "": 0,
            "plain": 0,
            "a{{b": 1,
            "{}": 0,
            "{0}": 1,
            "{obs}": 1,
            "x{observation.y}": 13,
            "{observation[0]}": 12,
            "{observation:{x}}": 13,
            "\u00e9{observation:1048577}": 14,
            "{observation": 0,
            "}{observation}": 0,
            "{observation}{": 13,
            "{observation!x}": 13,
            "{observation!}": 12,
            "{observation!}}": 12,
            "{observation!rr}": 14,
            "{observation!": 12,
            "{observation:=5}": 13,
            "{observation:x=5}": 14,
            "{observation:+}": 13,
            "{observation:5.}": 14,
            "{observation:.5d}": 15,
            "{observation:,_}": 14,
            "{observation:ss}": 13,
            "{observation:{<5}": 0,
            "{observation{}}": 12,
            "\U0001f600{observation:z}": 14,
            "{observation}{x}}": 14,
        }
        for t, want in cases.items():
            self.assertEqual(R.template_error_offset(t), want, t)
            self.assertIsNotNone(R.validate_template(t), t)
        for t in ["{observation}", "{observation!r:x^10.3s}", "{{{observation}}}", "{observation!\x00}"]:
            self.assertIsNone(R.template_error_offset(t), t)

    def test_width_parse(self):
        self.assertEqual(R._spec_width("x<05"), 5)  # fill given: 0 is a width digit
        self.assertEqual(R._spec_width("05"), 5)
        self.assertEqual(R._spec_width("0<5"), 5)
        self.assertEqual(R._spec_width("<"), None)
        self.assertEqual(R._spec_width(".5"), None)
        self.assertEqual(R._spec_width("\u0663\u0032"), 32)


class TestWriter(unittest.TestCase):
    def test_forms(self):
        self.assertEqual(R.pack(R.Str("a", "str8")), b"\xd9\x01a")
        self.assertEqual(R.pack(R.Str("a", "str16")), b"\xda\x00\x01a")
        self.assertEqual(R.pack(R.Str("a", "str32")), b"\xdb\x00\x00\x00\x01a")
        self.assertEqual(R.pack(R.Int(1, "int64")), b"\xd3" + b"\0" * 7 + b"\x01")
        self.assertEqual(R.pack(R.Int(1, "uint8")), b"\xcc\x01")
        self.assertEqual(R.pack(-1), b"\xff")
        self.assertEqual(R.pack(-33), b"\xd0\xdf")
        self.assertEqual(R.pack(1 << 32), b"\xcf\x00\x00\x00\x01\x00\x00\x00\x00")
        self.assertEqual(R.pack(R.Map([], "map16")), b"\xde\x00\x00")
        self.assertEqual(R.pack(R.Arr([], "array32")), b"\xdd\x00\x00\x00\x00")
        self.assertEqual(R.pack([None, True, False]), b"\x93\xc0\xc3\xc2")
        self.assertEqual(R.pack(R.BadStr(b"\xed\xa0\x80")), b"\xa3\xed\xa0\x80")
        self.assertEqual(R.pack(R.Bin(b"a")), b"\xc4\x01a")
        self.assertEqual(R.pack(R.Ext(1, b"ab")), b"\xd5\x01ab")
        self.assertEqual(R.pack("x" * 32), b"\xd9\x20" + b"x" * 32)
        self.assertEqual(R.pack(list(range(16)))[:3], b"\xdc\x00\x10")


class TestVectorsCurrent(unittest.TestCase):
    def test_committed_vectors_match_the_generator(self):
        import gen_vectors

        want = gen_vectors.B.render()
        have = sorted(f for f in os.listdir(gen_vectors.OUT_DIR) if f.endswith(".json"))
        self.assertEqual(have, sorted(want), "run `make vectors`")
        for name, body in want.items():
            with open(os.path.join(gen_vectors.OUT_DIR, name), encoding="ascii") as f:
                self.assertTrue(f.read() == body, f"{name} is stale: run `make vectors`")


class TestAgainstMsgpackPackage(unittest.TestCase):
    """Optional cross-check, skipped unless the PyPI `msgpack` package is
    importable: every ok vector's response equals a naive assembly of the
    request decoded and re-encoded by `msgpack` (which also encodes in the
    shortest form, maps in insertion order)."""

    def test_ok_vectors(self):
        try:
            import msgpack
        except ImportError:
            self.skipTest("PyPI msgpack not installed")
        import base64
        import glob
        import json

        vdir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vectors")
        n = 0
        for path in sorted(glob.glob(os.path.join(vdir, "*.json"))):
            with open(path, encoding="ascii") as f:
                cases = json.load(f)["cases"]
            for c in cases:
                if "response" not in c:
                    continue
                r = msgpack.unpackb(base64.b64decode(c["request"]), raw=False)
                copy = lambda ms: [
                    {"role": m["role"], "content": [{"type": "text", "text": b["text"]} for b in m["content"]]} for m in ms
                ]
                msgs = copy(r.get("run_messages", []))
                ends, injected = [len(msgs)], []
                for ch in sorted(r.get("injections", {}), key=lambda k: [ord(x) for x in k]):
                    for e in r["injections"][ch]:
                        injected.append({"channel": ch, "entry_id": e["entry_id"], "message_index": len(msgs)})
                        msgs.append({"role": "user", "content": [{"type": "text", "text": e["content"]}]})
                ends.append(len(msgs))
                msgs += copy(r.get("goal_messages", []))
                ends.append(len(msgs))
                for st in r.get("steps", []):
                    msgs.append({"role": "assistant", "content": [{"type": "text", "text": st["raw_output"]}]})
                    msgs.append(
                        {
                            "role": "user",
                            "content": [
                                {"type": "text", "text": r["observation_template"].format(observation=st["observation"])}
                            ],
                        }
                    )
                chars = [sum(len(b["text"]) for b in m["content"]) for m in msgs]
                budget = r.get("max_prompt_chars")
                digests = [hashlib.sha256(msgpack.packb(msgs[:e])).hexdigest() for e in ends]
                want = {
                    "v": 1,
                    "ok": True,
                    "messages": msgs,
                    "message_chars": chars,
                    "prompt_chars": sum(chars),
                    "context_overflow": budget is not None and sum(chars) > budget,
                    "injected": injected,
                    "prefix_digests": dict(zip(("run", "injections", "goal"), digests)),
                }
                self.assertTrue(msgpack.packb(want) == base64.b64decode(c["response"]), c["name"])
                n += 1
        self.assertGreater(n, 200)


class TestVectorFileSchema(unittest.TestCase):
    """The committed files of every set are in the one format of schema.py
    (which the generators also check before writing), so hosts read them
    without re-validating their shape."""

    def test_committed_files(self):
        counts = {name: schema.check_dir(name) for name in schema.SETS}
        self.assertGreater(counts["vectors"], 600)
        self.assertGreater(counts["json-vectors"], 100)
        self.assertGreaterEqual(counts["prompt-vectors"], 8)

    def test_rejects_what_the_formats_forbid(self):
        ok = {"name": "a-case", "description": "d", "request": "gA==", "response": "gA=="}
        err = {
            "name": "b-case",
            "description": "d",
            "request": "gA==",
            "error": {"code": R.INVALID_TEMPLATE, "path": "observation_template", "offset": 3},
        }
        doc = lambda *cases: {"f.json": json.dumps({"description": "x", "cases": list(cases)})}  # noqa: E731
        self.assertEqual(schema.check_texts("vectors", doc(ok, err)), 2)
        bad = [
            doc(dict(ok, extra=1)),  # an unknown key
            doc(dict(ok, error=err["error"])),  # both response and error
            doc({k: v for k, v in ok.items() if k != "response"}),  # neither
            doc(dict(ok, response="gA")),  # base64 without padding
            doc(dict(ok, name="A_case")),  # not kebab-case
            doc(err, ok),  # not sorted
            doc(ok, ok),  # a repeated name
            doc(dict(err, error={"code": R.MISSING_FIELD, "path": "", "offset": 3})),  # offset without a template error
            doc(dict(err, error={"code": R.INVALID_TEMPLATE, "path": ""})),  # a template error without its offset
            doc(dict(err, error={"code": "no_such_code", "path": ""})),
            {"f.json": '{"description": "x", "description": "y", "cases": []}'},  # a repeated key
        ]
        for texts in bad:
            with self.assertRaises(schema.SchemaError, msg=texts):
                schema.check_texts("vectors", texts)
        syntax = {"name": "s", "description": "d", "request": "gA==", "syntax": True, "error": {"code": R.MALFORMED, "path": ""}}
        self.assertEqual(schema.check_texts("json-vectors", doc(syntax)), 1)
        with self.assertRaises(schema.SchemaError):
            schema.check_texts("json-vectors", doc(dict(syntax, msgpack="gA==")))
        step = {"raw_output": "r", "observation": "o", "error": {"code": R.INVALID_UTF8, "path": "steps[0].observation"}}
        prompt = {"name": "p", "description": "d", "request": {}, "response": "gA==", "steps": [step]}
        self.assertEqual(schema.check_texts("prompt-vectors", doc(prompt)), 1)
        with self.assertRaises(schema.SchemaError):
            schema.check_texts("prompt-vectors", doc(dict(prompt, steps=[dict(step, response="gA==")])))


if __name__ == "__main__":
    unittest.main()
