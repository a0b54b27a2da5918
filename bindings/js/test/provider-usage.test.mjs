// The usage shapes of every provider the report reads (docs/SPEC.md §7.12), on the recorded responses
// (testdata/provider-responses/: Bedrock Converse, Gemini, Anthropic with its cache diagnostics), whole and bare,
// through cacheReport and cacheRun alike; the expected classes and counts are written here by hand from the
// recorded files, as the Python test has them.
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { REPO, assembler } from "./common.mjs";

const asm = await assembler();
const recorded = (name) => JSON.parse(readFileSync(`${REPO}testdata/provider-responses/${name}.json`, "utf8"));

// Five calls: each of the first four extends the one before; the fifth changes the system message.
const run = () =>
  Array.from({ length: 5 }, (_, i) => ({
    run_messages: [{ role: "system", content: [{ type: "text", text: "You are a careful agent." + (i === 4 ? " Answer briefly." : "") }] }],
    goal_messages: [{ role: "user", content: [{ type: "text", text: "Find the build command." }] }],
    steps: Array.from({ length: i + 1 }, (_, s) => ({
      raw_output: `Thought ${s}.\nAction: look(${s})`,
      observation: `result ${s}: café ✓`,
    })),
    observation_template: "Observation: {observation}",
  }));

// [class, cached_tokens, written_tokens, miss_reason, miss_reason_disagrees] per call, for the whole response.
const CASES = [
  [
    "bedrock-converse",
    [0, 1, 2, 3, 2],
    "usage",
    [
      ["first", 0, 1024, null, null],
      ["hit", 1024, 96, null, null],
      ["write_only", 0, 1120, null, null],
      ["provider_miss", 0, 0, null, null],
      ["prefix_break", 0, 1120, null, null],
    ],
  ],
  [
    "gemini",
    [0, 1, 2, 1, 2],
    "usageMetadata",
    [
      ["first", 0, null, null, null],
      ["hit", 1100, null, null, null],
      ["provider_miss", 0, null, null, null],
      ["hit", 1100, null, null, null],
      ["prefix_break", 0, null, null, null],
    ],
  ],
  [
    "anthropic-diagnostics",
    [0, 1, 2, 3, 3],
    "usage",
    [
      ["first", 0, 1910, null, null],
      ["hit", 1910, 210, null, null],
      ["write_only", 0, 2150, "tools_changed", true],
      ["write_only", 0, 2236, "messages_changed", true],
      ["prefix_break", 0, 2236, "messages_changed", false],
    ],
  ],
];

const usageOf = (c) => {
  const u = c.usage;
  return [u.class, u.cached_tokens, u.written_tokens, u.miss_reason ?? null, u.miss_reason_disagrees ?? null];
};

for (const [name, answers, key, want] of CASES) {
  test(`usage: ${name}'s recorded responses, whole and bare`, () => {
    const requests = run();
    const responses = answers.map((k) => recorded(name)[k]);
    const report = asm.cacheReport(requests, responses);
    assert.deepEqual(report.calls.map(usageOf), want);
    const cacheRun = asm.cacheRun();
    assert.deepEqual(
      requests.map((q, i) => usageOf(cacheRun.call(q, responses[i]))),
      want,
    );
    assert.deepEqual(cacheRun.report(), report);
    const bare = asm.cacheReport(
      requests,
      responses.map((r) => r[key]),
    );
    assert.deepEqual(
      bare.calls.map(usageOf),
      want.map((w) => [...w.slice(0, 3), null, null]),
    );
  });
}

test("usage: a usage of no known shape is unknown_usage, never a miss", () => {
  const requests = run().slice(0, 2);
  for (const usage of [{ prompt_tokens: 900, total_tokens: 912 }, { inputTokens: 40, outputTokens: 12 }, {}]) {
    const report = asm.cacheReport(requests, [usage, usage]);
    for (const c of report.calls) {
      assert.deepEqual([c.usage.class, c.usage.cached_tokens, c.usage.written_tokens], ["unknown_usage", null, null]);
      assert.match(c.usage.note, /Gemini's usageMetadata/);
    }
    assert.equal(report.totals.usage_errors, 0);
  }
});
