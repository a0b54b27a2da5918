// JavaScript's own values (docs/SPEC.md §7 "a host binding turns the host's own bad
// values into the same error codes"): every row is a JavaScript request and the
// hand-made wire bytes of the same request. The row states the code and path
// the core must give; assemble(object) must throw exactly what the core answers
// for the hand-made bytes (code, path and message), and an ok row must give the
// same response.

import test from "node:test";
import assert from "node:assert/strict";
import { AssemblyError } from "@polyloop/assembly";
import { assembler, decode, errorOf } from "./common.mjs";
import * as W from "./hand.mjs";
import { encodeRequest } from "../src/encode.js";
import { CALL_ASSEMBLE, EXT_UNREADABLE, WORDS_JS } from "../src/consts.js";

const T = "{observation}";
const tpl = ["observation_template", W.str(T)];
const step = (raw, obs) => W.map(["raw_output", raw], ["observation", obs]);
const long = "x".repeat(80); // past the library's short-string path (50 units)
const longBytes = [...Buffer.from(long)];

class Message {
  constructor() {
    this.role = "user";
    this.content = [{ type: "text", text: "hi" }];
  }
}

/** ExtUnreadable by hand (docs/SPEC.md §7.6): ext 8 of type 1 holding [type, error type, error text]. */
function unreadable(type, errorType, text) {
  const data = W.arr(W.str(type), W.str(errorType), W.str(text));
  return W.cat(Uint8Array.of(0xc7, data.length, EXT_UNREADABLE), data);
}
const boom = () => {
  throw new Error("boom");
};
const elementGetter = [];
Object.defineProperty(elementGetter, 0, { get: boom, enumerable: true });
elementGetter.length = 1;
const revocable = Proxy.revocable({}, {});
revocable.revoke();
const revokedText = (() => {
  try {
    Array.isArray(revocable.proxy);
  } catch (e) {
    return e.message; // the engine's own words, whatever they are
  }
})();
class BadMap extends Map {
  [Symbol.iterator]() {
    throw new RangeError("no entries");
  }
}

const cyclic = [];
cyclic.push(cyclic);
const selfRef = { role: "user" };
selfRef.content = [selfRef];

/** @type {{name: string, js: any, wire: Uint8Array, code?: string, path?: string}[]} */
const rows = [
  // Lone surrogates: WTF-8 bytes inside a str, never U+FFFD.
  {
    name: "lone high surrogate, short string",
    js: { observation_template: T, steps: [{ raw_output: "a\uD800b", observation: "" }] },
    wire: W.map(tpl, ["steps", W.arr(step(W.rawStr([0x61, 0xed, 0xa0, 0x80, 0x62]), W.str("")))]),
    code: "invalid_utf8",
    path: "steps[0].raw_output",
  },
  {
    name: "lone low surrogate, long string (TextEncoder path)",
    js: { observation_template: T, steps: [{ raw_output: "", observation: long + "\uDC00" }] },
    wire: W.map(tpl, ["steps", W.arr(step(W.str(""), W.rawStr([...longBytes, 0xed, 0xb0, 0x80])))]),
    code: "invalid_utf8",
    path: "steps[0].observation",
  },
  {
    name: "high surrogate at the end of a long string",
    js: { observation_template: long + "{observation}\uDBFF" },
    wire: W.map(["observation_template", W.rawStr([...longBytes, ...Buffer.from("{observation}"), 0xed, 0xaf, 0xbf])]),
    code: "invalid_utf8",
    path: "observation_template",
  },
  {
    name: "reversed pair (low then high) in a long string",
    js: { observation_template: T, goal_messages: [{ role: "user", content: [{ type: "text", text: long + "\uDC00\uD800" }] }] },
    wire: W.map(tpl, [
      "goal_messages",
      W.arr(
        W.map(
          ["role", W.str("user")],
          ["content", W.arr(W.map(["type", W.str("text")], ["text", W.rawStr([...longBytes, 0xed, 0xb0, 0x80, 0xed, 0xa0, 0x80])]))],
        ),
      ),
    ]),
    code: "invalid_utf8",
    path: "goal_messages[0].content[0].text",
  },
  {
    name: "lone surrogate in a channel name",
    js: { observation_template: T, injections: { ["ch\uD83D"]: [] } },
    wire: W.map(tpl, ["injections", W.map([W.rawStr([0x63, 0x68, 0xed, 0xa0, 0xbd]), W.arr()])]),
    code: "invalid_utf8",
    path: "injections",
  },
  {
    name: "lone surrogate in an unknown key",
    js: { observation_template: T, ["k\uDE00"]: 1 },
    wire: W.map(tpl, [W.rawStr([0x6b, 0xed, 0xb8, 0x80]), W.int(1)]),
    code: "invalid_utf8",
    path: "",
  },
  {
    name: "lone surrogate in an entry_id",
    js: { observation_template: T, injections: { tools: [{ entry_id: "\uD800", content: "c" }] } },
    wire: W.map(tpl, ["injections", W.map(["tools", W.arr(W.map(["entry_id", W.rawStr([0xed, 0xa0, 0x80])], ["content", W.str("c")]))])]),
    code: "invalid_utf8",
    path: 'injections["tools"][0].entry_id',
  },
  {
    name: "well-formed astral pair is fine",
    js: { observation_template: T, steps: [{ raw_output: long + "\uD83D\uDE00", observation: "\uD83D\uDE00" }] },
    wire: W.map(tpl, ["steps", W.arr(step(W.str(long + "\u{1F600}"), W.str("\u{1F600}")))]),
  },

  // Numbers.
  {
    name: "v = 1.5 (a fraction is a float64)",
    js: { v: 1.5, observation_template: T },
    wire: W.map(["v", W.f64(1.5)], tpl),
    code: "malformed_request",
    path: "v",
  },
  {
    name: "v = 2**53 (not a safe integer: float64)",
    js: { v: 2 ** 53, observation_template: T },
    wire: W.map(["v", W.f64(2 ** 53)], tpl),
    code: "malformed_request",
    path: "v",
  },
  {
    name: "v = 2 (an int; the core's own rule)",
    js: { v: 2, observation_template: T },
    wire: W.map(["v", W.int(2)], tpl),
    code: "unsupported_version",
    path: "v",
  },
  { name: "v = 1n (bigint)", js: { v: 1n, observation_template: T }, wire: W.map(["v", W.int(1)], tpl) },
  {
    name: "v = -0 (a safe integer: int 0)",
    js: { v: -0, observation_template: T },
    wire: W.map(["v", W.int(0)], tpl),
    code: "unsupported_version",
    path: "v",
  },
  {
    name: "budget NaN",
    js: { observation_template: T, max_prompt_chars: NaN },
    wire: W.map(tpl, ["max_prompt_chars", W.f64(NaN)]),
    code: "malformed_request",
    path: "max_prompt_chars",
  },
  {
    name: "budget Infinity",
    js: { observation_template: T, max_prompt_chars: Infinity },
    wire: W.map(tpl, ["max_prompt_chars", W.f64(Infinity)]),
    code: "malformed_request",
    path: "max_prompt_chars",
  },
  {
    name: "budget -1",
    js: { observation_template: T, max_prompt_chars: -1 },
    wire: W.map(tpl, ["max_prompt_chars", W.int(-1)]),
    code: "invalid_budget",
    path: "max_prompt_chars",
  },
  {
    name: "budget 2**53 + 2 (float64)",
    js: { observation_template: T, max_prompt_chars: 2 ** 53 + 2 },
    wire: W.map(tpl, ["max_prompt_chars", W.f64(2 ** 53 + 2)]),
    code: "malformed_request",
    path: "max_prompt_chars",
  },
  {
    name: "budget 5e9 (a safe integer above 32 bits: int)",
    js: { observation_template: T, max_prompt_chars: 5e9 },
    wire: W.map(tpl, ["max_prompt_chars", W.int(5_000_000_000)]),
  },
  {
    name: "budget 2**53 - 1",
    js: { observation_template: T, max_prompt_chars: Number.MAX_SAFE_INTEGER },
    wire: W.map(tpl, ["max_prompt_chars", W.int(Number.MAX_SAFE_INTEGER)]),
  },
  {
    name: "budget -(2**53 - 1)",
    js: { observation_template: T, max_prompt_chars: Number.MIN_SAFE_INTEGER },
    wire: W.map(tpl, ["max_prompt_chars", W.int(Number.MIN_SAFE_INTEGER)]),
    code: "invalid_budget",
    path: "max_prompt_chars",
  },
  {
    name: "budget 2n**64n - 1n (uint64)",
    js: { observation_template: T, max_prompt_chars: 2n ** 64n - 1n },
    wire: W.map(tpl, ["max_prompt_chars", W.int(2n ** 64n - 1n)]),
  },
  {
    name: "budget 2n**64n (no msgpack int: float64)",
    js: { observation_template: T, max_prompt_chars: 2n ** 64n },
    wire: W.map(tpl, ["max_prompt_chars", W.f64(2 ** 64)]),
    code: "malformed_request",
    path: "max_prompt_chars",
  },
  {
    name: "budget -(2n**63n) (int64)",
    js: { observation_template: T, max_prompt_chars: -(2n ** 63n) },
    wire: W.map(tpl, ["max_prompt_chars", W.int(-(2n ** 63n))]),
    code: "invalid_budget",
    path: "max_prompt_chars",
  },
  { name: "budget null (absent)", js: { observation_template: T, max_prompt_chars: null }, wire: W.map(tpl, ["max_prompt_chars", W.nil]) },
  { name: "budget undefined (left out)", js: { observation_template: T, max_prompt_chars: undefined }, wire: W.map(tpl) },
  {
    name: "budget as a string",
    js: { observation_template: T, max_prompt_chars: "10" },
    wire: W.map(tpl, ["max_prompt_chars", W.str("10")]),
    code: "malformed_request",
    path: "max_prompt_chars",
  },

  // Booleans, null, undefined where a string belongs.
  {
    name: "template null",
    js: { observation_template: null },
    wire: W.map(["observation_template", W.nil]),
    code: "malformed_request",
    path: "observation_template",
  },
  {
    name: "template true",
    js: { observation_template: true },
    wire: W.map(["observation_template", W.T]),
    code: "malformed_request",
    path: "observation_template",
  },
  {
    name: "template undefined (left out, so missing)",
    js: { observation_template: undefined },
    wire: W.map(),
    code: "missing_field",
    path: "observation_template",
  },
  {
    name: "raw_output false",
    js: { observation_template: T, steps: [{ raw_output: false, observation: "" }] },
    wire: W.map(tpl, ["steps", W.arr(step(W.F, W.str("")))]),
    code: "malformed_request",
    path: "steps[0].raw_output",
  },
  {
    name: "observation a number",
    js: { observation_template: T, steps: [{ raw_output: "", observation: 42 }] },
    wire: W.map(tpl, ["steps", W.arr(step(W.str(""), W.int(42)))]),
    code: "malformed_request",
    path: "steps[0].observation",
  },
  {
    name: "role null",
    js: { observation_template: T, run_messages: [{ role: null, content: [] }] },
    wire: W.map(tpl, ["run_messages", W.arr(W.map(["role", W.nil], ["content", W.arr()]))]),
    code: "malformed_request",
    path: "run_messages[0].role",
  },
  {
    name: "undefined array element (nil)",
    js: { observation_template: T, steps: [undefined] },
    wire: W.map(tpl, ["steps", W.arr(W.nil)]),
    code: "malformed_request",
    path: "steps[0]",
  },
  {
    name: "sparse array hole (nil)",
    js: { observation_template: T, steps: [, { raw_output: "", observation: "" }] },
    wire: W.map(tpl, ["steps", W.arr(W.nil, step(W.str(""), W.str("")))]),
    code: "malformed_request",
    path: "steps[0]",
  },
  {
    name: "undefined entry_id (left out, so missing)",
    js: { observation_template: T, injections: { a: [{ entry_id: undefined, content: "" }] } },
    wire: W.map(tpl, ["injections", W.map(["a", W.arr(W.map(["content", W.str("")]))])]),
    code: "missing_field",
    path: 'injections["a"][0].entry_id',
  },

  // Objects.
  {
    name: "Map for injections (entries in insertion order)",
    js: {
      observation_template: T,
      injections: new Map([
        ["b", [{ entry_id: "1", content: "B" }]],
        ["a", [{ entry_id: "2", content: "A" }]],
      ]),
    },
    wire: W.map(tpl, [
      "injections",
      W.map(
        ["b", W.arr(W.map(["entry_id", W.str("1")], ["content", W.str("B")]))],
        ["a", W.arr(W.map(["entry_id", W.str("2")], ["content", W.str("A")]))],
      ),
    ]),
  },
  {
    name: "Map with a number key",
    js: { observation_template: T, injections: new Map([[1, []]]) },
    wire: W.map(tpl, ["injections", W.map([W.int(1), W.arr()])]),
    code: "malformed_request",
    path: "injections",
  },
  {
    name: "Map as the request",
    js: new Map([
      ["observation_template", T],
      ["v", 3],
    ]),
    wire: W.map(tpl, ["v", W.int(3)]),
    code: "unsupported_version",
    path: "v",
  },
  {
    name: "Map with an undefined value (left out)",
    js: new Map([
      ["observation_template", T],
      ["max_prompt_chars", undefined],
    ]),
    wire: W.map(tpl),
  },
  { name: "null-prototype object", js: Object.assign(Object.create(null), { observation_template: T }), wire: W.map(tpl) },
  {
    name: "object where an array belongs",
    js: { observation_template: T, steps: {} },
    wire: W.map(tpl, ["steps", W.map()]),
    code: "malformed_request",
    path: "steps",
  },
  {
    name: "array where a map belongs",
    js: { observation_template: T, injections: [] },
    wire: W.map(tpl, ["injections", W.arr()]),
    code: "malformed_request",
    path: "injections",
  },
  {
    name: "Uint8Array text (bin)",
    js: { observation_template: T, steps: [{ raw_output: new Uint8Array([104, 105]), observation: "" }] },
    wire: W.map(tpl, ["steps", W.arr(step(W.bin([104, 105]), W.str("")))]),
    code: "malformed_request",
    path: "steps[0].raw_output",
  },
  {
    name: "Set where an array belongs (opaque ext)",
    js: { observation_template: T, steps: new Set() },
    wire: W.map(tpl, ["steps", W.ext1(0x7f, 0)]),
    code: "malformed_request",
    path: "steps",
  },
  {
    name: "Date text (opaque ext)",
    js: { observation_template: T, steps: [{ raw_output: new Date(0), observation: "" }] },
    wire: W.map(tpl, ["steps", W.arr(step(W.ext1(0x7f, 0), W.str("")))]),
    code: "malformed_request",
    path: "steps[0].raw_output",
  },
  {
    name: "function text (opaque ext)",
    js: { observation_template: () => T },
    wire: W.map(["observation_template", W.ext1(0x7f, 0)]),
    code: "malformed_request",
    path: "observation_template",
  },
  {
    name: "symbol text (opaque ext)",
    js: { observation_template: Symbol("t") },
    wire: W.map(["observation_template", W.ext1(0x7f, 0)]),
    code: "malformed_request",
    path: "observation_template",
  },
  {
    name: "boxed String (opaque ext)",
    js: { observation_template: new String(T) },
    wire: W.map(["observation_template", W.ext1(0x7f, 0)]),
    code: "malformed_request",
    path: "observation_template",
  },
  {
    name: "class instance message (opaque ext)",
    js: { observation_template: T, run_messages: [new Message()] },
    wire: W.map(tpl, ["run_messages", W.arr(W.ext1(0x7f, 0))]),
    code: "malformed_request",
    path: "run_messages[0]",
  },
  {
    name: "cyclic array text (an array where a str belongs)",
    js: { observation_template: T, goal_messages: [{ role: "user", content: [{ type: "text", text: cyclic }] }] },
    wire: W.map(tpl, [
      "goal_messages",
      W.arr(W.map(["role", W.str("user")], ["content", W.arr(W.map(["type", W.str("text")], ["text", W.arr(W.arr())]))])),
    ]),
    code: "malformed_request",
    path: "goal_messages[0].content[0].text",
  },
  {
    name: "self-referencing message",
    js: { observation_template: T, run_messages: [selfRef] },
    wire: W.map(tpl, ["run_messages", W.arr(W.map(["role", W.str("user")], ["content", W.arr(W.map(["role", W.str("user")]))]))]),
    code: "unknown_field",
    path: "run_messages[0].content[0].role",
  },

  // A value whose reading throws: the ExtUnreadable value in its place, so the
  // core names its path and writes the message (docs/SPEC.md §7.6).
  {
    name: "a getter that throws",
    js: {
      observation_template: T,
      get goal_messages() {
        return boom();
      },
    },
    wire: W.map(tpl, ["goal_messages", unreadable("Object property", "Error", "boom")]),
    code: "malformed_request",
    path: "goal_messages",
  },
  {
    name: "a Proxy whose ownKeys trap throws",
    js: {
      observation_template: T,
      steps: [
        new Proxy(
          {},
          {
            ownKeys() {
              throw new TypeError("no keys");
            },
          },
        ),
      ],
    },
    wire: W.map(tpl, ["steps", W.arr(unreadable("Object", "TypeError", "no keys"))]),
    code: "malformed_request",
    path: "steps[0]",
  },
  {
    name: "a Proxy whose get trap throws: its first entry",
    js: {
      observation_template: T,
      steps: [
        new Proxy(
          { raw_output: "a", observation: "b" },
          {
            get() {
              throw new RangeError("trap");
            },
          },
        ),
      ],
    },
    wire: W.map(tpl, [
      "steps",
      W.arr(
        W.map(
          ["raw_output", unreadable("Object property", "RangeError", "trap")],
          ["observation", unreadable("Object property", "RangeError", "trap")],
        ),
      ),
    ]),
    code: "malformed_request",
    path: "steps[0].raw_output",
  },
  {
    name: "an array element whose getter throws",
    js: { observation_template: T, run_messages: elementGetter },
    wire: W.map(tpl, ["run_messages", W.arr(unreadable("Array element", "Error", "boom"))]),
    code: "malformed_request",
    path: "run_messages[0]",
  },
  {
    name: "a revoked Proxy",
    js: { observation_template: T, goal_messages: [revocable.proxy] },
    wire: W.map(tpl, ["goal_messages", W.arr(unreadable("Object", "TypeError", revokedText))]),
    code: "malformed_request",
    path: "goal_messages[0]",
  },
  {
    name: "a Map whose iteration throws",
    js: { observation_template: T, injections: new BadMap() },
    wire: W.map(tpl, ["injections", unreadable("BadMap", "RangeError", "no entries")]),
    code: "malformed_request",
    path: "injections",
  },
  {
    name: "a thrown string",
    js: {
      observation_template: T,
      get run_messages() {
        throw "plain";
      },
    },
    wire: W.map(tpl, ["run_messages", unreadable("Object property", "String", "plain")]),
    code: "malformed_request",
    path: "run_messages",
  },
  {
    name: "an unreadable value after an earlier problem: the earlier one wins",
    js: {
      steps: [{ raw_output: 1, observation: "" }],
      get goal_messages() {
        return boom();
      },
      observation_template: T,
    },
    wire: W.map(["steps", W.arr(step(W.int(1), W.str("")))], ["goal_messages", unreadable("Object property", "Error", "boom")], tpl),
    code: "malformed_request",
    path: "steps[0].raw_output",
  },

  // Order: the first problem in JavaScript property order is the first on the wire.
  {
    name: "two problems: the first in property order wins",
    js: { steps: [{ raw_output: 1, observation: "" }], v: 2, observation_template: T },
    wire: W.map(["steps", W.arr(step(W.int(1), W.str("")))], ["v", W.int(2)], tpl),
    code: "malformed_request",
    path: "steps[0].raw_output",
  },
  {
    name: "integer-like keys come first in a JavaScript object",
    js: { observation_template: T, 7: "x" },
    wire: W.map(["7", W.str("x")], tpl),
    code: "unknown_field",
    path: '["7"]',
  },
];

const asm = await assembler();

/** The core's answer to `bytes` with its messages in a JavaScript user's words (WORDS_JS, what assemble() raises). */
function inJsWords(bytes) {
  const inst = asm.pool.acquire();
  try {
    return decode(inst.invoke(bytes, CALL_ASSEMBLE | WORDS_JS).slice());
  } finally {
    asm.pool.release(inst);
  }
}

for (const row of rows) {
  test(`value: ${row.name}`, () => {
    const wireResp = asm.assembleBytes(row.wire);
    const expected = decode(wireResp);
    // The row states what the core says for the hand-made bytes.
    if (row.code) {
      assert.equal(expected.ok, false, "the hand-made bytes should be rejected");
      assert.deepEqual({ code: expected.error.code, path: expected.error.path }, { code: row.code, path: row.path });
      const err = errorOf(() => asm.assemble(row.js));
      assert.ok(err instanceof AssemblyError, `expected an AssemblyError, got ${err}`);
      // assemble() raises in a JavaScript user's words (WORDS_JS); assembleBytes() answers the wire's.
      assert.deepEqual({ code: err.code, path: err.path, message: err.message }, inJsWords(row.wire).error);
    } else {
      assert.equal(expected.ok, true, `the hand-made bytes should be accepted: ${JSON.stringify(expected.error)}`);
      assert.deepEqual(asm.assemble(row.js), expected);
      // Byte for byte the same response through assembleBytes too.
      assert.deepEqual(asm.assembleBytes(encodeRequest(row.js)), wireResp);
    }
  });
}

test("a lone surrogate is never sent as U+FFFD", () => {
  for (const s of ["\uD800", "a\uDC00", long + "\uD800", "\uDBFF" + long, long + "\uDFFF" + long]) {
    const bytes = Buffer.from(encodeRequest(s));
    assert.equal(bytes.includes(Buffer.from([0xef, 0xbf, 0xbd])), false, `U+FFFD in ${bytes.toString("hex")}`);
  }
});
