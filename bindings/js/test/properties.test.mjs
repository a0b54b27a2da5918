// Properties (fast-check) of the JavaScript traps: `.length` counts
// UTF-16 units, the default sort is by UTF-16 units, lone surrogates are legal
// in JavaScript strings. The oracles are JavaScript's string iterator (code
// points) and a code-point comparator written here, never the binding itself.

import test from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { AssemblyError } from "@polyloop/assembly";
import { assembler, compareCodePoints, errorOf } from "./common.mjs";
import { encodeRequest } from "../src/encode.js";
import { encode } from "@msgpack/msgpack";
import { encodeWtf8Into, encodedStrings, forgetEncodedStrings, holdsReplacementScan } from "../src/strings.js";

const asm = await assembler();
const RUNS = Number(process.env.POLYLOOP_FC_RUNS ?? 150);
const opts = { numRuns: RUNS };

/** Text that stresses the UTF-16 / code point difference. */
const CHARS = [
  "a",
  "Z",
  " ",
  "\n",
  "{",
  "}",
  "é",
  "\u00ad",
  "日",
  "\uFFFD",
  "\uFF5E",
  "\uE000",
  "😀",
  "\u{10000}",
  "\u{10FFFF}",
  "\u{1D11E}",
  "e\u0301",
  "\0",
];
const text = fc.oneof(
  fc.string({ unit: fc.constantFrom(...CHARS), maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.string({ unit: "grapheme", maxLength: 10 }),
);
const longText = fc.string({ unit: fc.constantFrom(...CHARS), minLength: 40, maxLength: 200 });
const anyText = fc.oneof(text, longText);
const role = fc.constantFrom("system", "user", "assistant");
const message = fc.record({ role, content: fc.array(fc.record({ type: fc.constant("text"), text: anyText }), { maxLength: 3 }) });
const step = fc.record({ raw_output: anyText, observation: anyText });
const TEMPLATES = [
  "{observation}",
  "Obs: {observation}\n",
  "{observation!r}",
  "{observation!a}",
  "[{observation:^12.5}]",
  "😀{observation:😀>7}",
  "{{x}}{observation}{observation!s}",
];
const injections = fc.dictionary(
  fc.string({ unit: fc.constantFrom("a", "b", "é", "😀", "\uFFFD", "\uE000", "\u{10000}", "Z"), maxLength: 4 }),
  fc.array(fc.record({ entry_id: fc.string({ minLength: 1, maxLength: 5 }), content: anyText }), { maxLength: 3 }),
  { maxKeys: 5 },
);
const request = fc.record(
  {
    run_messages: fc.array(message, { maxLength: 3 }),
    injections,
    goal_messages: fc.array(message, { maxLength: 2 }),
    steps: fc.array(step, { maxLength: 4 }),
    observation_template: fc.constantFrom(...TEMPLATES),
    max_prompt_chars: fc.option(fc.nat({ max: 400 }), { nil: null }),
  },
  { requiredKeys: ["observation_template"] },
);

test("prompt after k addStep calls equals one assemble with those k steps", () => {
  fc.assert(
    fc.property(request, fc.array(step, { maxLength: 6 }), (req, more) => {
      const p = asm.prompt(req);
      for (const s of more) p.addStep(s.raw_output, s.observation);
      const whole = asm.assemble({ ...req, steps: [...(req.steps ?? []), ...more] });
      assert.deepEqual(p.response(), whole);
      assert.equal(p.stepCount, (req.steps?.length ?? 0) + more.length);
    }),
    opts,
  );
});

test("sizes are code points, not .length", () => {
  fc.assert(
    fc.property(fc.array(anyText, { minLength: 1, maxLength: 4 }), (texts) => {
      const r = asm.assemble({
        observation_template: "{observation}",
        goal_messages: [{ role: "user", content: texts.map((t) => ({ type: "text", text: t })) }],
      });
      const cps = texts.reduce((a, t) => a + [...t].length, 0);
      assert.deepEqual(r.message_chars, [cps]);
      assert.equal(r.prompt_chars, cps);
      // Texts come back unchanged, character for character.
      assert.deepEqual(
        r.messages[0].content.map((b) => b.text),
        texts,
      );
      const units = texts.reduce((a, t) => a + t.length, 0);
      if (texts.some((t) => /[\u{10000}-\u{10FFFF}]/u.test(t))) assert.notEqual(cps, units);
    }),
    opts,
  );
});

test("the budget compares code points", () => {
  fc.assert(
    fc.property(
      fc.string({ unit: fc.constantFrom("😀", "a", "\u{10FFFF}"), minLength: 1, maxLength: 20 }),
      fc.integer({ min: -2, max: 2 }),
      (t, d) => {
        const cps = [...t].length;
        const budget = Math.max(0, cps + d);
        const r = asm.assemble({
          observation_template: "{observation}",
          goal_messages: [{ role: "user", content: [{ type: "text", text: t }] }],
          max_prompt_chars: budget,
        });
        assert.equal(r.context_overflow, cps > budget);
      },
    ),
    opts,
  );
});

test("channel order is code-point order, not JavaScript's sort", () => {
  fc.assert(
    fc.property(injections, (inj) => {
      const r = asm.assemble({ observation_template: "{observation}", injections: inj });
      const expected = Object.keys(inj)
        .filter((k) => inj[k].length > 0)
        .sort(compareCodePoints);
      const got = [];
      for (const x of r.injected) if (got.at(-1) !== x.channel) got.push(x.channel);
      assert.deepEqual(got, expected);
      // Inside a channel, entries keep their order; message_index points at them.
      const flat = expected.flatMap((k) => inj[k].map((e) => [k, e.entry_id, e.content]));
      assert.deepEqual(
        r.injected.map((x) => [x.channel, x.entry_id, r.messages[x.message_index].content[0].text]),
        flat,
      );
    }),
    opts,
  );
  // A case where the two orders differ, stated by hand.
  const r = asm.assemble({
    observation_template: "{observation}",
    injections: { "\u{1F600}": [{ entry_id: "e", content: "emoji" }], "\uFFFD": [{ entry_id: "e", content: "fffd" }] },
  });
  assert.deepEqual(["\u{1F600}", "\uFFFD"].sort(), ["\u{1F600}", "\uFFFD"], "JavaScript's sort puts the emoji first");
  assert.deepEqual(
    r.injected.map((x) => x.channel),
    ["\uFFFD", "\u{1F600}"],
  );
});

/** A string with one lone surrogate somewhere. */
const withLoneSurrogate = fc
  .tuple(anyText, anyText, fc.integer({ min: 0xd800, max: 0xdfff }))
  .map(([a, b, s]) => a + String.fromCharCode(s) + (s <= 0xdbff ? "x" : "") + b)
  .filter((s) => !s.isWellFormed());

test("a lone surrogate anywhere is invalid_utf8 at its path", () => {
  const places = [
    [(s) => ({ observation_template: "{observation}", steps: [{ raw_output: s, observation: "" }] }), "steps[0].raw_output"],
    [(s) => ({ observation_template: "{observation}", steps: [{ raw_output: "", observation: s }] }), "steps[0].observation"],
    [
      (s) => ({ observation_template: "{observation}", run_messages: [{ role: "user", content: [{ type: "text", text: s }] }] }),
      "run_messages[0].content[0].text",
    ],
    [(s) => ({ observation_template: "{observation}", injections: { c: [{ entry_id: s, content: "" }] } }), 'injections["c"][0].entry_id'],
    [(s) => ({ observation_template: "{observation}", injections: { c: [{ entry_id: "e", content: s }] } }), 'injections["c"][0].content'],
    [(s) => ({ observation_template: "{observation}", injections: { [s]: [] } }), "injections"],
    [(s) => ({ observation_template: "{observation}" + s }), "observation_template"],
  ];
  fc.assert(
    fc.property(withLoneSurrogate, fc.constantFrom(...places), (s, [make, path]) => {
      const e = errorOf(() => asm.assemble(make(s)));
      assert.ok(e instanceof AssemblyError, String(e));
      assert.deepEqual([e.code, e.path], ["invalid_utf8", path]);
    }),
    opts,
  );
});

/** WTF-8 written from code points, independently of the binding's loop. */
function wtf8Oracle(s) {
  const out = [];
  for (const ch of s) {
    const cp = ch.codePointAt(0);
    if (cp < 0x80) out.push(cp);
    else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
    else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
    else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
  }
  return Buffer.from(out);
}

function strHeader(n) {
  return Buffer.from(
    n < 32
      ? [0xa0 | n]
      : n < 256
        ? [0xd9, n]
        : n < 65536
          ? [0xda, n >> 8, n & 255]
          : [0xdb, n >>> 24, (n >> 16) & 255, (n >> 8) & 255, n & 255],
  );
}

test("strings are encoded as UTF-8 (WTF-8 for lone surrogates) with the shortest header, on every path", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        anyText,
        withLoneSurrogate,
        fc.string({ unit: fc.constantFrom("a", "é", "😀", "\uD800", "\uDC00", "\uFFFD", "\uEFBF"), maxLength: 30000 }),
      ),
      (s) => {
        const want = wtf8Oracle(s);
        if (s.isWellFormed()) assert.ok(want.equals(Buffer.from(s, "utf8")));
        assert.ok(Buffer.from(encodeRequest(s)).equals(Buffer.concat([strHeader(want.length), want])));
        const out = new Uint8Array(3 * s.length);
        assert.ok(Buffer.from(out.subarray(0, encodeWtf8Into(s, out, 0))).equals(want));
        // The search for U+FFFD without Node's Buffer (browsers) agrees.
        assert.equal(holdsReplacementScan(want, 0, want.length), want.includes(Buffer.from([0xef, 0xbf, 0xbd])));
      },
    ),
    { numRuns: Math.min(RUNS, 100) },
  );
});

test("the encoder's cache of long strings answers their own bytes, across its growth and its restart at 8 MiB", () => {
  // 700 distinct strings of about 13 KB (9 MB of UTF-8), each encoded three
  // times in a row (the first is new, the second keeps its bytes, the third
  // copies them from the cache) and all again (the cache started over).
  const strings = Array.from({ length: 700 }, (_, i) => `${i}:` + "é日a\uFFFD".repeat(1500).slice(0, 6000 + (i % 7)));
  for (let round = 0; round < 2; round++) {
    for (const s of strings) {
      const want = Buffer.concat([strHeader(Buffer.byteLength(s)), Buffer.from(s, "utf8")]);
      assert.ok(Buffer.from(encodeRequest(s)).equals(want));
      assert.ok(Buffer.from(encodeRequest([s, s])).equals(Buffer.concat([Buffer.of(0x92), want, want])));
      assert.ok(Buffer.from(encodeRequest([s, s])).equals(Buffer.concat([Buffer.of(0x92), want, want])));
    }
  }
});

test("the string cache: a one-off request leaves nothing in it; a string new in one request and met again in the next is kept", () => {
  forgetEncodedStrings();
  const step = (i) => ({ raw_output: `Thought: ${i} `.padEnd(80, "r"), observation: `${i}: `.padEnd(300, "é") });
  const window = (k) => ({ observation_template: "{observation}", steps: [step(k), step(k + 1), step(k + 2)] });
  const one = encodeRequest(window(0));
  assert.equal(encodedStrings.size, 0, "a string met once is not kept");
  assert.ok(Buffer.from(one).equals(Buffer.from(encode(window(0)))));
  // A sliding window (each request drops its oldest step and adds one): the
  // steps of request k that were in request k - 1 are kept after request k.
  for (let k = 1; k <= 5; k++) {
    const bytes = encodeRequest(window(k));
    assert.ok(Buffer.from(bytes).equals(Buffer.from(encode(window(k)))), `request ${k}`);
    for (const [j, kept] of [
      [k, true],
      [k + 1, true],
      [k + 2, false],
    ]) {
      const s = step(j);
      assert.equal(encodedStrings.has(s.raw_output) && encodedStrings.has(s.observation), kept, `request ${k}, step ${j}`);
    }
  }
});

test("requests of the same long strings in changing places and orders, one after another: every one's bytes are its own", () => {
  // The encoder copies a long string's bytes from its cache, or leaves them
  // where the request before wrote them (same string, same place): a request
  // that differs from the one before in any way must still be exactly its own
  // bytes (a generic msgpack encoder is the oracle).
  const pool = Array.from({ length: 6 }, (_, i) => `${i}`.repeat(1 + i) + "é✓x".repeat(30 + 7 * i));
  const piece = fc.oneof(
    fc.constantFrom(...pool),
    fc.string({ maxLength: 70 }).filter((t) => t.isWellFormed()),
  );
  const request = fc.record({
    observation_template: fc.constantFrom("{observation}", "Obs: {observation}"),
    steps: fc.array(fc.record({ raw_output: piece, observation: piece }), { maxLength: 6 }),
  });
  fc.assert(
    fc.property(fc.array(fc.tuple(request, fc.boolean()), { minLength: 2, maxLength: 8 }), (seq) => {
      for (const [req, forget] of seq) {
        if (forget) forgetEncodedStrings();
        assert.ok(Buffer.from(encodeRequest(req)).equals(Buffer.from(encode(req))));
        // Twice in a row too: the second in place.
        assert.ok(Buffer.from(encodeRequest(req)).equals(Buffer.from(encode(req))));
      }
    }),
    { numRuns: Math.min(RUNS, 100) },
  );
});

test("a long string with a lone surrogate beside long strings that hold U+FFFD: invalid_utf8 at its own path, every time", () => {
  // U+FFFD is what a fast UTF-8 writer makes of a lone surrogate; the strings
  // that really hold it are encoded as they are, from the cache too.
  const real = "\uFFFD".repeat(40) + "é".repeat(40);
  const lone = "a".repeat(60) + "\uD800" + "é".repeat(10);
  const wtf8Lone = Buffer.concat([Buffer.from("a".repeat(60)), Buffer.of(0xed, 0xa0, 0x80), Buffer.from("é".repeat(10))]);
  const req = (k) => ({
    observation_template: "{observation}",
    run_messages: [{ role: "user", content: [{ type: "text", text: real }] }],
    steps: [
      { raw_output: real, observation: real },
      { raw_output: real, observation: k === 1 ? lone : real },
    ],
  });
  for (let i = 0; i < 4; i++) {
    const ok = asm.assemble(req(0));
    assert.deepEqual(
      ok.messages.map((m) => m.content[0].text),
      [real, real, real, real, real],
    );
    const e = errorOf(() => asm.assemble(req(1)));
    assert.deepEqual([e.code, e.path], ["invalid_utf8", "steps[1].observation"]);
    // The string's bytes are its WTF-8 (ED A0 80 for U+D800), not U+FFFD, on every call.
    assert.ok(Buffer.from(encodeRequest(lone)).equals(Buffer.concat([strHeader(wtf8Lone.length), wtf8Lone])));
    assert.ok(
      Buffer.from(encodeRequest([real, lone]))
        .subarray(1)
        .includes(wtf8Lone),
    );
  }
});
