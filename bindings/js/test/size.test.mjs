// The incremental prompt against one assemble of the whole request
// (docs/SPEC.md §7.3): after each addStep, the prompt's response() equals
// assemble() of the request with the same steps and its responseBytes the
// length of assembleBytes() of it, across the widths that change in a msgpack
// encoding (array headers at 15/16 and 65535/65536 messages, the prompt_chars
// uint at 127/128, 255/256, 65535/65536, str headers), with injections,
// budgets and 64-bit budgets; and addStep is too_large exactly where the whole
// response passes 1.5 GiB. The rules are the core's (add_step, §7.3.1); the
// oracle is the module's own answer to one whole request. The full-size
// boundary is the core's property tests' and the limits family's.

import test from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { AssemblyError } from "@polyloop/assembly";
import { assembler, decode, errorOf } from "./common.mjs";
import { encodeRequest } from "../src/encode.js";
import { MAX_RESPONSE_BYTES, MSG_RESPONSE_TOO_LARGE } from "../src/consts.js";

const asm = await assembler();
const T = "{observation}";
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

/** The prompt equals one assemble of `req` with `steps`: its response and the size of its bytes. */
function assertWhole(p, req, steps, what) {
  const bytes = asm.assembleBytes(encodeRequest({ ...req, steps }));
  assert.equal(p.responseBytes, bytes.length, `responseBytes ${what}`);
  assert.deepEqual(p.response(), decode(bytes), `response() ${what}`);
  assert.equal(p.stepCount, steps.length, `stepCount ${what}`);
}

test("after each addStep the prompt is one assemble of the whole request: response() and responseBytes", () => {
  fc.assert(
    fc.property(request, fc.array(step, { maxLength: 4 }), (g, more) => {
      const req = toRequest(g);
      const p = asm.prompt(req);
      const steps = [...req.steps];
      assertWhole(p, req, steps, "before any addStep");
      for (const s of more) {
        assert.equal(p.addStep(s.raw_output, s.observation), p);
        steps.push(s);
        assertWhole(p, req, steps, `after ${steps.length - req.steps.length} addStep calls`);
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
    assertWhole(p, req, steps, `at ${p.messages.length} messages`);
  }
  assert.deepEqual(
    sizes.map(([n]) => n),
    [65533, 65535, 65537],
  );
});

/**
 * A prompt whose history stands in for nearly 1.5 GiB: its kept size (the
 * state add_step is sent, docs/SPEC.md §7.3.1) set to `room` bytes below the
 * limit. The core accepts such a state (a size between the smallest response
 * of its messages and the limit).
 */
function nearLimit(a, room) {
  const p = a.prompt({ observation_template: T });
  /** @type {any} */ (p).state.response_bytes = MAX_RESPONSE_BYTES - room;
  return p;
}

/** Bytes one step adds to the whole response, by the oracle: assembleBytes of the request with and without it. */
function growth(raw, obs) {
  const size = (steps) => asm.assembleBytes(encodeRequest({ observation_template: T, steps })).length;
  return size([{ raw_output: raw, observation: obs }]) - size([]);
}

test('addStep is too_large at path "" (the core\'s message) exactly where the whole response passes the limit; the prompt is unchanged', () => {
  for (const [raw, obs] of [
    ["", "x".repeat(200)],
    ["é".repeat(70), "😀".repeat(40000)],
  ]) {
    const d = growth(raw, obs);
    const fits = nearLimit(asm, d);
    fits.addStep(raw, obs);
    assert.equal(fits.responseBytes, MAX_RESPONSE_BYTES, "a step that reaches the limit exactly is accepted");
    const p = nearLimit(asm, d - 1);
    const before = [p.responseBytes, p.stepCount, p.messages.length, p.prompt_chars];
    const e = errorOf(() => p.addStep(raw, obs));
    assert.ok(e instanceof AssemblyError, String(e));
    assert.deepEqual([e.code, e.path, e.message], ["too_large", "", MSG_RESPONSE_TOO_LARGE]);
    assert.deepEqual([p.responseBytes, p.stepCount, p.messages.length, p.prompt_chars], before);
    p.addStep("", ""); // the prompt still works
    assert.equal(p.stepCount, 1);
  }
});

test("a step both over the response limit and over the engine's string ceiling is the limit's too_large, as assemble() of the whole is", async () => {
  const { loadAssembler } = await import("@polyloop/assembly");
  const a = await loadAssembler({ module: asm.module, maxInstances: 1 });
  a.crossing.maxStringUnits = 1000; // stands in for V8's 536,870,888 units
  // Within the limit, the ceiling's error names the string in the whole prompt.
  const p = a.prompt({ observation_template: T });
  const e1 = errorOf(() => p.addStep("", "x".repeat(1001)));
  assert.deepEqual([e1.code, e1.path], ["too_large", "messages[1].content[0].text"]);
  // With the history near 1.5 GiB, the core refuses the whole response first.
  const q = nearLimit(a, 500);
  const e2 = errorOf(() => q.addStep("", "x".repeat(1001)));
  assert.deepEqual([e2.code, e2.path], ["too_large", ""]);
  assert.equal(q.messages.length, 0);
});
