// Host limits of JavaScript (docs/SPEC.md §7.6, §2's 1 GiB) and the error fields of
// docs/SPEC.md §6 (`offset`): a string the engine cannot make is `too_large`
// with its path while assembleBytes keeps working; the encoder's 1 GiB limit
// gives the exact size; AssemblyError.offset comes from the wire.
// POLYLOOP_HEAVY_TESTS=1 (make test.js.limits, part of make test.limits) adds
// the full-size cases. The cross-host bounded-resources family is limits.test.mjs.

import test from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { AssemblyError } from "@polyloop/assembly";
import { assembler, decode, errorOf } from "./common.mjs";
import * as W from "./hand.mjs";
import { StringCeiling, decodeResponse } from "../src/decode.js";
import { RequestEncoder, RequestTooLarge, encodeRequest } from "../src/encode.js";
import { CALL_ASSEMBLE, CALL_ERROR, MAX_STRING_UNITS } from "../src/consts.js";

const asm = await assembler();
const heavy = !process.env.POLYLOOP_HEAVY_TESTS && "set POLYLOOP_HEAVY_TESTS=1 (make test.limits): over 2 GB of memory";
const T = "{observation}";

test("a response string over the engine's ceiling: too_large at its path, and assembleBytes still answers", async () => {
  const { loadAssembler } = await import("@polyloop/assembly");
  const a = await loadAssembler({ module: asm.module, maxInstances: 1 });
  a.crossing.maxStringUnits = 1000; // a lower ceiling stands in for V8's 536,870,888 units
  const req = {
    observation_template: T,
    run_messages: [{ role: "system", content: [{ type: "text", text: "short" }] }],
    steps: [
      { raw_output: "r", observation: "o" },
      { raw_output: "r", observation: "x".repeat(1001) },
    ],
  };
  const e = errorOf(() => a.assemble(req));
  assert.ok(e instanceof AssemblyError, String(e));
  assert.equal(e.code, "too_large");
  assert.equal(e.path, "messages[4].content[0].text");
  assert.match(e.message, /longer than this JavaScript engine's strings allow/);
  assert.match(e.message, /assembleBytes\(\) still returns the response bytes/);
  const bytes = a.assembleBytes(encodeRequest(req));
  assert.equal(decode(bytes).messages[4].content[0].text.length, 1001);
  // addStep names the message's place in the whole prompt; the prompt is unchanged.
  const p = a.prompt({ observation_template: T, steps: [{ raw_output: "a", observation: "b" }] });
  const e2 = errorOf(() => p.addStep("r", "x".repeat(1001)));
  assert.deepEqual([e2.code, e2.path], ["too_large", "messages[3].content[0].text"]);
  assert.match(e2.message, /at messages\[3\]\.content\[0\]\.text/);
  assert.equal(p.messages.length, 2);
  // The instance is fine afterwards.
  assert.equal(a.assemble({ observation_template: T }).ok, true);
  assert.equal(a.instancesCreated, 1);
});

test("decodeResponse gives the position of a string over the ceiling as keys and indexes, for the core to spell", () => {
  const long = W.str("y".repeat(100));
  const cases = [
    [W.map(["messages", W.arr(W.map(["content", W.arr(W.map(["text", long]))]))]), ["messages", 0, "content", 0, "text"]],
    [W.map(["error", W.map(["message", long])]), ["error", "message"]],
    [W.map(["odd key", long]), ["odd key"]],
    [long, []],
    [W.arr(W.str("a"), W.arr(long)), [1, 0]],
    [
      W.map(["messages", W.arr(W.map(["role", W.str("user")], ["content", W.arr(W.map(["type", W.str("text")], ["text", long]))]))]),
      ["messages", 0, "content", 0, "text"],
    ],
    [W.map(["messages", W.arr(W.map(["role", long], ["content", W.arr()]))]), ["messages", 0, "role"]],
    [W.arr(W.map(["type", long], ["text", W.str("t")])), [0, "type"]],
    [W.arr(W.map(["role", W.str("user")], ["contents", long])), [0, "contents"]],
  ];
  for (const [bytes, path] of cases) {
    const e = errorOf(() => decodeResponse(bytes, { maxStringUnits: 50 }));
    assert.ok(e instanceof StringCeiling, String(e));
    assert.deepEqual(e.path, path);
    assert.equal(e.bytes, 100);
    assert.deepEqual(decodeResponse(bytes, { maxStringUnits: 100 }), decode(bytes));
  }
  assert.equal(MAX_STRING_UNITS, 2 ** 29 - 24);
});

test("decodeResponse: maps shaped like a message or a block, or nearly, give what a generic msgpack decoder gives", () => {
  const v = W.str("user");
  const cases = [
    W.map(["role", v], ["content", W.arr(W.map(["type", W.str("text")], ["text", W.str("hi")]))]),
    W.map(["role", v], ["contents", W.arr()]),
    W.map(["role", v], ["text", v]),
    W.map(["content", W.arr()], ["role", v]),
    W.map(["type", v], ["content", v]),
    W.map(["text", v], ["type", v]),
    W.map(["role", v]),
    W.map(["role", v], ["content", v], ["type", v]),
    W.map(["roles", v], ["content", v]),
    W.map(["roleXYZ", v], ["content", v]),
    W.map(["role", v], ["contenu", v]),
    W.map(["role", v], ["conte", v]),
    W.map(["type", v], ["textual", v]),
    W.map(["type", v], ["tex", v]),
    W.map(["type", W.map(["role", v], ["content", v])], ["text", W.map(["type", v], ["x", v])]),
  ];
  for (const bytes of cases) {
    const got = decodeResponse(bytes);
    assert.deepEqual(got, decode(bytes));
    assert.deepEqual(Object.keys(got), Object.keys(decode(bytes)), "the keys in the wire's order");
  }
  // "__proto__" is an own key like any other (the generic decoder above drops it).
  for (const [bytes, keys] of [
    [W.map(["role", v], ["__proto__", v]), ["role", "__proto__"]],
    [W.map(["type", v], ["__proto__", v]), ["type", "__proto__"]],
    [W.map(["__proto__", v], ["text", v]), ["__proto__", "text"]],
  ]) {
    const got = decodeResponse(bytes);
    assert.deepEqual(Object.keys(got), keys);
    assert.equal(Object.getPrototypeOf(got), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(got, "__proto__")?.value, "user");
  }
});

test("the ceiling's paths are spelled as the core spells the same positions (docs/SPEC.md §2.2)", () => {
  // One source for both sides: each request puts `x` at one position. With a
  // lone surrogate there, the core's invalid_utf8 error names the position in
  // its own spelling; with a long string there, the decoder's StringCeiling
  // (read from the same bytes) names it in the binding's. A response holds
  // only fixed keys and arrays (no channel-named map), as these do.
  const text = (x) => [
    {
      role: "user",
      content: [
        { type: "text", text: "a" },
        { type: "text", text: x },
      ],
    },
  ];
  const requests = [
    (x) => ({ observation_template: T, run_messages: text(x) }),
    (x) => ({ observation_template: T, goal_messages: [...text("b"), ...text(x)] }),
    (x) => ({
      observation_template: T,
      steps: [
        { raw_output: "r", observation: "o" },
        { raw_output: x, observation: "o" },
      ],
    }),
    (x) => ({ observation_template: T, steps: [{ raw_output: "r", observation: x }] }),
    (x) => ({ observation_template: x }),
  ];
  const paths = [];
  for (const req of requests) {
    const e = errorOf(() => asm.assemble(req("\uD800")));
    assert.ok(e instanceof AssemblyError && e.code === "invalid_utf8", String(e));
    const ceiling = errorOf(() => decodeResponse(encodeRequest(req("y".repeat(100))), { maxStringUnits: 50 }));
    assert.ok(ceiling instanceof StringCeiling, String(ceiling));
    // The core's error call spells the position the decoder found.
    const args = { call: CALL_ASSEMBLE, error: "string_ceiling", size: ceiling.bytes, path: ceiling.path };
    const spelled = errorOf(() => asm.crossing.run({ request: encodeRequest(args), op: CALL_ERROR, read: (r) => asm.crossing.read(r) }));
    assert.equal(spelled.code, "too_large");
    assert.equal(spelled.path, e.path);
    paths.push(e.path);
  }
  assert.equal(new Set(paths).size, requests.length, `five positions: ${paths}`);
});

test("the encoder's limit: past it the request is counted, not written, and the count is exact", () => {
  const text = fc.string({ unit: fc.constantFrom("a", "é", "€", "😀", "\uD800"), maxLength: 300 });
  const value = fc.record({
    observation_template: text,
    steps: fc.array(fc.record({ raw_output: text, observation: text }), { maxLength: 8 }),
    extra: fc.oneof(fc.constant(undefined), fc.uint8Array({ maxLength: 400 }), fc.bigInt(), fc.double()),
  });
  fc.assert(
    fc.property(value, fc.nat(3000), (v, limit) => {
      const full = encodeRequest(v);
      const enc = new RequestEncoder(limit);
      let got;
      try {
        got = enc.encodeShared(v).slice();
      } catch (e) {
        assert.ok(e instanceof RequestTooLarge, String(e));
        assert.ok(full.length > limit, `${full.length} bytes fit in ${limit}`);
        assert.equal(e.size, full.length);
        return;
      }
      assert.ok(full.length <= limit, `${full.length} bytes over ${limit} were written`);
      assert.deepEqual(got, full);
    }),
    { numRuns: 400 },
  );
});

test("AssemblyError.offset comes from the wire's offset key, and is undefined without it", () => {
  const err = (extra) =>
    W.map(
      ["v", W.int(1)],
      ["ok", [0xc2]],
      ["error", W.map(["code", W.str("invalid_template")], ["message", W.str("m")], ["path", W.str("observation_template")], ...extra)],
    );
  const e = errorOf(() => asm.crossing.read(err([["offset", W.int(7)]])));
  assert.deepEqual([e.code, e.path, e.message, e.offset], ["invalid_template", "observation_template", "m", 7]);
  const none = errorOf(() => asm.crossing.read(err([])));
  assert.equal(none.offset, undefined);
  // From the module: the offset in code points of a bad template, when the
  // core sends it (docs/SPEC.md §6).
  const real = errorOf(() => asm.validateTemplate("😀😀 {observation} {"));
  assert.equal(real.code, "invalid_template");
  if (real.offset !== undefined) assert.equal(real.offset, 17);
  // addStep keeps it when it rewrites the path.
  assert.equal(errorOf(() => asm.prompt({ observation_template: T }).addStep("", "\uD800")).offset, undefined);
});

test("a 629 MB response of a 13 KB request is too_large at its path; assembleBytes answers it", { skip: heavy, timeout: 600_000 }, () => {
  const req = { observation_template: "{observation:1048576}".repeat(600), steps: [{ raw_output: "", observation: "" }] };
  const e = errorOf(() => asm.assemble(req));
  assert.deepEqual([e.code, e.path], ["too_large", "messages[1].content[0].text"]);
  const bytes = asm.assembleBytes(encodeRequest(req));
  assert.ok(bytes.length > 600e6);
  assert.deepEqual(bytes.subarray(0, 3), Uint8Array.of(0x88, 0xa1, 0x76)); // {v: … an ok response
});
