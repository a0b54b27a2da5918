// Every code point survives every encode and decode path (docs/SPEC.md §7.2:
// assemble() dropped a leading U+FEFF of texts over 200 bytes). Strings are
// built from U+FEFF, U+FFFE, NUL, lone surrogates and characters of every
// UTF-8 length (1 to 4 bytes), placed at the start, middle and end, in short
// and long strings whose lengths cross every threshold of the paths: the
// encoder's 50-unit short-string path, the decoder's 32-byte JavaScript path,
// the old library's 200-byte TextDecoder path, and the msgpack str 8/16/32
// headers. Oracles: the string itself (a run message is pasted as given),
// JavaScript's code-point iterator, Node's Buffer UTF-8 encoder, and
// JSON.stringify for assembleJSON.

import test from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { assembler, decode, errorOf } from "./common.mjs";
import * as W from "./hand.mjs";
import { decodeResponse } from "../src/decode.js";
import { encodeRequest } from "../src/encode.js";

const asm = await assembler();
const RUNS = Number(process.env.POLYLOOP_FC_RUNS ?? 300);

/** One character of each UTF-8 length, and the special ones. */
const SPECIAL = ["\uFEFF", "\uFFFE", "\0", "\uFFFF", "\u200B"];
const BY_LENGTH = ["a", "~", "\x7f", "é", "\u07ff", "€", "\uFFFD", "\uE000", "😀", "\u{10FFFF}", "\u{10000}"];
const LONE = ["\uD800", "\uDBFF", "\uDC00", "\uDFFF"];

/** Lengths of the filler that put a string on both sides of each threshold. */
const FILL = [
  0, 1, 15, 16, 28, 29, 30, 31, 32, 33, 47, 48, 49, 50, 51, 63, 64, 100, 195, 196, 197, 198, 199, 200, 201, 254, 255, 256, 300, 1000, 65534,
  65535, 65536, 70000,
];
const filler = fc.tuple(fc.constantFrom(...FILL), fc.constantFrom("x", "é", "€", "😀")).map(([n, c]) => c.repeat(Math.ceil(n / c.length)));

/** A string with `mark` at the start, middle or end of a filler. */
const placed = (marks) =>
  fc.tuple(fc.constantFrom(...marks), filler, fc.constantFrom("start", "middle", "end", "both")).map(([m, f, where]) => {
    const half = f.length >> 1;
    // Never split a surrogate pair of the filler.
    const cut = half > 0 && f.charCodeAt(half - 1) >= 0xd800 && f.charCodeAt(half - 1) <= 0xdbff ? half + 1 : half;
    switch (where) {
      case "start":
        return m + f;
      case "middle":
        return f.slice(0, cut) + m + f.slice(cut);
      case "end":
        return f + m;
      default:
        return m + f + m;
    }
  });
const wellFormed = placed([...SPECIAL, ...BY_LENGTH]);
const malformed = placed(LONE);

const runMessage = (text) => ({
  observation_template: "{observation}",
  run_messages: [{ role: "user", content: [{ type: "text", text }] }],
});
const codePoints = (s) => [...s].length;

test("assemble(object): every well-formed text comes back unchanged, counted in code points", () => {
  fc.assert(
    fc.property(wellFormed, (s) => {
      const r = asm.assemble(runMessage(s));
      assert.equal(r.messages[0].content[0].text, s);
      assert.equal(r.message_chars[0], codePoints(s));
      // The request bytes are Node's UTF-8 of the string, byte for byte.
      assert.deepEqual(
        Buffer.from(encodeRequest(runMessage(s))),
        Buffer.from(W.map(["observation_template", W.str("{observation}")], ["run_messages", W.arr(W.message("user", s))])),
      );
    }),
    { numRuns: RUNS, examples: [["\uFEFF" + "x".repeat(300)], ["\uFEFF"], ["\uFEFF".repeat(3)], ["x".repeat(300) + "\uFEFF"]] },
  );
});

test("a leading U+FEFF before 300 characters", () => {
  const s = "\uFEFF" + "x".repeat(300);
  const r = asm.assemble(runMessage(s));
  assert.equal(r.messages[0].content[0].text.length, 301);
  assert.equal(r.message_chars[0], 301);
  // And through an observation and a step of a Prompt.
  const p = asm.prompt({ observation_template: "{observation}" });
  p.addStep(s, s);
  assert.deepEqual(
    p.messages.map((m) => m.content[0].text),
    [s, s],
  );
});

test("decodeResponse: every well-formed string of the wire comes back, on every decoding path", () => {
  fc.assert(
    fc.property(fc.array(wellFormed, { minLength: 1, maxLength: 4 }), (strs) => {
      const bytes = W.arr(...strs.map((s) => W.str(s)));
      assert.deepEqual(decodeResponse(bytes), strs);
      assert.deepEqual(decode(bytes), strs, "the test oracle agrees");
    }),
    { numRuns: RUNS },
  );
});

// assemble() reuses a request string whose bytes come back unchanged (alone,
// or between the template's literal prefix and suffix); the templates below
// give plain, escaped, multi-byte and non-plain renderings (where the bytes
// differ and the text must be decoded).
const TEMPLATES = [
  "{observation}",
  "Output:\n```\n{observation}\n```\n\n",
  "\uFEFF{observation}\uFEFF",
  "{{é}} {observation} {{😀}}",
  "{observation!r}",
  "[{observation:>300}]",
  "{observation}{observation}",
  "x{observation:.70}y",
  "{observation!s} ✓",
];

test("assembleBytes and assemble agree on every string, whatever the template", () => {
  fc.assert(
    fc.property(wellFormed, wellFormed, fc.constantFrom(...TEMPLATES), fc.array(wellFormed, { maxLength: 3 }), (a, b, t, more) => {
      const req = {
        observation_template: t,
        steps: [{ raw_output: a, observation: b }, ...more.map((m) => ({ raw_output: b, observation: m }))],
        run_messages: [{ role: "user", content: [{ type: "text", text: b }] }],
      };
      assert.deepEqual(asm.assemble(req), decode(asm.assembleBytes(encodeRequest(req))));
      // Three times: the second keeps the long strings' bytes, the third
      // copies them from the encoder's cache.
      assert.deepEqual(asm.assemble(req), decode(asm.assembleBytes(encodeRequest(req))));
      assert.deepEqual(asm.assemble(req), decode(asm.assembleBytes(encodeRequest(req))));
    }),
    { numRuns: RUNS },
  );
});

test("a lone surrogate anywhere is invalid_utf8 at its path, in assemble and assembleJSON alike", () => {
  fc.assert(
    fc.property(malformed, fc.constantFrom("raw_output", "observation"), (s, field) => {
      const req = { observation_template: "{observation}", steps: [{ raw_output: "r", observation: "o", [field]: s }] };
      for (const e of [errorOf(() => asm.assemble(req)), errorOf(() => asm.assembleJSON(JSON.stringify(req)))]) {
        assert.ok(e, "no error");
        assert.deepEqual([e.code, e.path], ["invalid_utf8", `steps[0].${field}`]);
      }
      // A raw (unescaped) lone surrogate in JSON text given as a string: its
      // WTF-8 bytes, never U+FFFD.
      const other = field === "raw_output" ? "observation" : "raw_output";
      const raw = `{"observation_template": "{observation}", "steps": [{"${other}": "x", "${field}": "${s.replace(/[\\"]/g, "\\$&")}"}]}`;
      const e = errorOf(() => asm.assembleJSON(raw));
      assert.deepEqual([e.code, e.path], ["invalid_utf8", `steps[0].${field}`]);
    }),
    { numRuns: RUNS },
  );
});

test("assembleJSON: every well-formed text comes back unchanged (escaped or raw in the JSON text)", () => {
  fc.assert(
    fc.property(wellFormed, (s) => {
      const req = runMessage(s);
      const want = asm.assemble(req);
      assert.deepEqual(asm.assembleJSON(JSON.stringify(req)), want);
      assert.deepEqual(asm.assembleJSON(Buffer.from(JSON.stringify(req), "utf8")), want);
      // Every non-ASCII character as a \u escape.
      const escaped = JSON.stringify(req).replace(/[\u007f-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
      assert.deepEqual(asm.assembleJSON(escaped), want);
    }),
    { numRuns: Math.ceil(RUNS / 3) },
  );
});
