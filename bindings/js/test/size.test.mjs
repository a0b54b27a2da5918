// The incremental prompt's response size (src/size.js; docs/SPEC.md §7.3, issue
// 10.6): the size the Prompt keeps step by step is exactly the length of what
// assembleBytes answers for the whole request, across the widths that change
// in a msgpack encoding (array headers at 15/16 and 65535/65536 messages, the
// prompt_chars uint at 127/128, 255/256, 65535/65536, str headers), with
// injections, budgets and 64-bit budgets. The oracle is the module's own
// answer to one request, never the binding's size rule.

import test from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { AssemblyError } from "@polyloop/assembly";
import { assembler, errorOf } from "./common.mjs";
import { encodeRequest } from "../src/wire.js";
import { MAX_RESPONSE_BYTES, ResponseSize, STEP_FIXED } from "../src/size.js";

const asm = await assembler();
const RUNS = Number(process.env.POLYLOOP_FC_RUNS ?? 60);

const tiny = { role: "user", content: [{ type: "text", text: "a" }] };
// Message counts around the first array header width (the rest of the
// request adds a few more; the second width, 65535/65536, has its own test).
const count = fc.integer({ min: 0, max: 18 });
// Lengths around the prompt_chars uint widths and the str header widths.
const LENGTHS = [0, 1, 31, 32, 60, 126, 127, 128, 200, 255, 256, 4000, 65535, 65536, 70000];
const CHARS = ["a", "é", "日", "😀", "\0", "\uFEFF"];
const text = fc.oneof(
  fc.string({ unit: fc.constantFrom(...CHARS), maxLength: 8 }),
  fc.tuple(fc.constantFrom(...LENGTHS), fc.constantFrom(...CHARS)).map(([n, c]) => c.repeat(n)),
);
const step = fc.record({ raw_output: text, observation: text });
const budget = fc.oneof(fc.constant(null), fc.nat({ max: 300 }), fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }));
const injections = fc.dictionary(
  fc.constantFrom("memory", "tools", "é"),
  fc.array(fc.record({ entry_id: fc.string({ minLength: 1, maxLength: 4 }), content: text }), { maxLength: 2 }),
  { maxKeys: 2 },
);
const TEMPLATES = ["{observation}", "Obs: {observation}\n", "{observation!r}", "[{observation:^300}]", "{observation:70000}"];
const request = fc.record({
  run: count,
  goal: fc.integer({ min: 0, max: 2 }),
  injections,
  steps: fc.array(step, { maxLength: 3 }),
  observation_template: fc.constantFrom(...TEMPLATES),
  max_prompt_chars: budget,
});

function toRequest(g) {
  const req = {
    run_messages: Array(g.run).fill(tiny),
    goal_messages: Array(g.goal).fill(tiny),
    injections: g.injections,
    steps: g.steps,
    observation_template: g.observation_template,
  };
  if (g.max_prompt_chars !== null) req.max_prompt_chars = g.max_prompt_chars;
  return req;
}

test("after k addStep calls the prompt's size is assembleBytes' length for the whole request", () => {
  fc.assert(
    fc.property(request, fc.array(step, { maxLength: 4 }), (g, more) => {
      const req = toRequest(g);
      const p = asm.prompt(req);
      const steps = [...req.steps];
      const whole = () => asm.assembleBytes(encodeRequest({ ...req, steps })).length;
      assert.equal(p.responseBytes, whole(), "before any addStep");
      for (const s of more) {
        p.addStep(s.raw_output, s.observation);
        steps.push(s);
        assert.equal(p.responseBytes, whole(), `after ${steps.length - req.steps.length} addStep calls`);
      }
    }),
    { numRuns: RUNS },
  );
});

test("the size across 65535/65536 messages (array headers of 3 and 5 bytes), with injections and a 64-bit budget", () => {
  const req = toRequest({
    run: 65533 - 1,
    goal: 0,
    injections: { memory: [{ entry_id: "m", content: "é".repeat(200) }] },
    steps: [],
    observation_template: "{observation}",
    max_prompt_chars: 2n ** 63n - 1n,
  });
  const p = asm.prompt(req);
  const steps = [];
  const sizes = [];
  for (const s of [null, ["a", "b"], ["", "😀".repeat(70000)]]) {
    if (s) {
      p.addStep(...s);
      steps.push({ raw_output: s[0], observation: s[1] });
    }
    sizes.push([p.messages.length, p.responseBytes]);
    assert.equal(p.responseBytes, asm.assembleBytes(encodeRequest({ ...req, steps })).length, `at ${p.messages.length} messages`);
  }
  assert.deepEqual(
    sizes.map(([n]) => n),
    [65533, 65535, 65537],
  );
});

test("STEP_FIXED is the size of an ok response without messages or injections", () => {
  const bytes = asm.assembleBytes(encodeRequest({ observation_template: "{observation}" }));
  assert.equal(bytes.length, STEP_FIXED + 2 + 1); // two empty arrays, prompt_chars 0
});

test("the limit: add refuses exactly past MAX_RESPONSE_BYTES and changes nothing", () => {
  const s = new ResponseSize(STEP_FIXED + 3, 0, 0);
  // A step response of 2 messages and prompt_chars 0 adding exactly d bytes of messages.
  const step = (d) => STEP_FIXED + 2 + 1 + d;
  const room = MAX_RESPONSE_BYTES - s.bytes;
  assert.equal(s.after(step(room), 2, 0), MAX_RESPONSE_BYTES);
  assert.equal(s.add(step(room + 1), 2, 0), false);
  assert.equal(s.bytes, STEP_FIXED + 3);
  assert.equal(s.add(step(room), 2, 0), true);
  assert.equal(s.bytes, MAX_RESPONSE_BYTES);
});

test('addStep past the limit is too_large at path "" with the core\'s message; the prompt is unchanged', () => {
  const p = asm.prompt({ observation_template: "{observation}" });
  // Stand in for 1.5 GiB of history: the size the prompt keeps, near the limit.
  const size = /** @type {any} */ (p).size;
  size.body += MAX_RESPONSE_BYTES - size.bytes - 200;
  const before = p.responseBytes;
  p.addStep("", "");
  assert.ok(p.responseBytes <= MAX_RESPONSE_BYTES);
  const e = errorOf(() => p.addStep("", "x".repeat(200)));
  assert.ok(e instanceof AssemblyError, String(e));
  assert.deepEqual([e.code, e.path], ["too_large", ""]);
  // The core's message for the same condition.
  assert.equal(e.message, "the response would be over the 1.5 GiB limit; split the request (fewer steps, or a narrower template width)");
  assert.equal(p.messages.length, 2);
  assert.equal(p.stepCount, 1);
  assert.ok(p.responseBytes > before);
});

test("a step both over the response limit and over the engine's string ceiling is the limit's too_large, as assemble() of the whole is", async () => {
  const { loadAssembler } = await import("@polyloop/assembly");
  const a = await loadAssembler({ module: asm.module, maxInstances: 1 });
  a.maxStringUnits = 1000; // stands in for V8's 536,870,888 units
  const p = a.prompt({ observation_template: "{observation}" });
  const size = /** @type {any} */ (p).size;
  // Within the limit, the ceiling's error names the string.
  const e1 = errorOf(() => p.addStep("", "x".repeat(1001)));
  assert.deepEqual([e1.code, e1.path], ["too_large", "messages[1].content[0].text"]);
  // With the history near 1.5 GiB, the core would refuse the whole response first.
  size.body += MAX_RESPONSE_BYTES - size.bytes - 500;
  const e2 = errorOf(() => p.addStep("", "x".repeat(1001)));
  assert.deepEqual([e2.code, e2.path], ["too_large", ""]);
  assert.equal(p.messages.length, 0);
});
